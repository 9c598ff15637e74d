//! Quality signals measured on the page, and the pure verdict drawn from them.

use webdata_core::types::{Quality, QualityIssue};

use super::dom::{class_id_tokens, is_one_of, starts_with_one_of, Dom, Kind, StrKey, Tag};
use super::main_content::{non_content, Selection, Stats};

/// Fewer words than this in the main content is thin.
pub const THIN_WORDS: usize = 50;
/// Characters of page text searched for phrases (walls live on short pages).
const SAMPLE_CHARS: usize = 20_000;
/// Pages with this many main-content words or more skip the phrase search.
const PHRASE_SEARCH_WORDS: usize = 300;

/// What the page looks like, measured once; [`assess`] and [`needs_render`] decide.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QualitySignals {
    /// Visible characters of the main content (CJK-aware: characters, not bytes).
    pub main_chars: usize,
    /// Words of the main content (each CJK character counts as one).
    pub main_words: usize,
    /// Visible characters of the whole body.
    pub body_chars: usize,
    /// Words of the whole body.
    pub body_words: usize,
    /// `<script>` elements other than data blocks (JSON-LD, templates).
    pub scripts: usize,
    /// Of those, scripts loaded from a `src`.
    pub external_scripts: usize,
    /// Bytes of inline script code.
    pub script_bytes: usize,
    /// An empty SPA mount point (`#root`, `#app`, `#__next`, ...).
    pub app_root_empty: bool,
    /// A `<noscript>` asking to enable JavaScript.
    pub noscript_requires_js: bool,
    /// The first captcha or anti-bot marker seen in the markup (a widget's
    /// class or id, a captcha or challenge script/iframe URL). Weak: normal
    /// pages carry these in comment, contact and newsletter forms.
    pub bot_marker: Option<&'static str>,
    /// The first marker that only a challenge interstitial carries (the
    /// vendors' challenge form and container ids, the challenge bootstrap
    /// code, a captcha iframe that fills the page).
    pub challenge_marker: Option<&'static str>,
    /// The title is a vendor interstitial's title ("Just a moment...",
    /// "Attention Required!", "Access Denied", ...).
    pub challenge_title: Option<&'static str>,
    /// A challenge phrase of the text ("verify you are human", ...;
    /// searched below 300 main-content words).
    pub challenge_phrase: Option<&'static str>,
    /// Characters inside cookie/consent containers.
    pub consent_chars: usize,
    /// The page talks about cookies or consent (searched below 300 words).
    pub cookie_terms: bool,
    /// The page has a password field.
    pub password_field: bool,
    /// The page asks to sign in (searched below 300 words).
    pub login_terms: bool,
    /// Title or first `<h1>` says "not found" (several languages).
    pub not_found_title: bool,
}

const APP_ROOT_IDS: &[&str] = &[
    "root",
    "app",
    "__next",
    "___gatsby",
    "__nuxt",
    "svelte",
    "app-root",
    "main-app",
];
/// Class or id of a captcha widget: on walls, and on comment or contact forms.
const BOT_ATTRS: &[&str] = &[
    "cf-turnstile",
    "g-recaptcha",
    "h-captcha",
    "captcha-container",
    "captcha-form",
];
/// Script or iframe URLs of captcha and anti-bot services: on walls, and on
/// normal pages (widgets, Cloudflare's injected `challenge-platform` script,
/// sensors).
const BOT_URLS: &[&str] = &[
    "challenges.cloudflare.com",
    "/cdn-cgi/challenge-platform",
    "hcaptcha.com",
    "google.com/recaptcha",
    "recaptcha/api",
    "captcha-delivery.com",
    "perimeterx",
    "px-cloud.net",
    "px-cdn.net",
    "awswaf.com",
];
/// Class or id that only a challenge interstitial has (Cloudflare's
/// challenge form and stage, its block page, PerimeterX's press-and-hold
/// box, Akamai's crypto challenge, Distil/Imperva's captcha form).
const CHALLENGE_ATTRS: &[&str] = &[
    "challenge-form",
    "challenge-running",
    "challenge-stage",
    "challenge-body-text",
    "cf-challenge",
    "cf-browser-verification",
    "cf-error-details",
    "cf-captcha-container",
    "px-captcha",
    "sec-cpt-if",
    "sec-if-cpt-container",
    "distilcaptchaform",
    "distilidentificationblock",
    "ddg-captcha",
];
/// Script or iframe URLs that only a challenge interstitial loads.
const CHALLENGE_URLS: &[&str] = &[
    "captcha-delivery.com/captcha",
    "/_sec/cp_challenge/",
    "/.well-known/ddos-guard/",
    "/.well-known/vercel/security/",
    "/orchestrate/chl_page",
    "/orchestrate/managed/",
    "/orchestrate/jsch/",
    "/orchestrate/captcha/",
    "/distil_r_",
];
/// Inline code of a challenge's bootstrap script.
/// (case-sensitive identifiers).
const CHALLENGE_CODE: &[&str] = &["_cf_chl_opt", "sucuri_cloudproxy_js", "pxCaptchaSrc"];
/// Titles of vendor interstitials (several languages); a page titled so
/// is a wall only with other evidence (see [`bot_wall`]).
const BOT_TITLES: &[&str] = &[
    "just a moment",
    "nur einen moment",
    "un instant",
    "un momento",
    "einen moment bitte",
    "attention required",
    "access denied",
    "access to this page has been denied",
    "security check",
    "sicherheitsüberprüfung",
    "are you a robot",
    "robot check",
    "pardon our interruption",
    "verify you are human",
    "human verification",
    "ddos-guard",
    "one more step",
    "checking your browser",
    "you are being redirected",
    "security checkpoint",
    "challenge validation",
    "website firewall",
];
const BOT_PHRASES: &[&str] = &[
    "verify you are human",
    "verifying you are human",
    "verify that you are human",
    "checking your browser",
    "checking if the site connection is secure",
    "are you a robot",
    "not a robot",
    "unusual traffic from your computer",
    "press & hold",
    "press and hold",
    "complete the security check",
    "ddos protection by",
    "enable javascript and cookies to continue",
    "incapsula incident",
    "_cf_chl_opt",
];
const JS_VERBS: &[&str] = &[
    "enable",
    "required",
    "requires",
    "disabled",
    "turn on",
    "activate",
    "need",
    "aktivieren",
    "einschalten",
    "activer",
    "activez",
    "habilita",
    "attiva",
    "有効",
    "启用",
    "開啟",
    "开启",
    "활성화",
    "включите",
];
const CONSENT_WORDS: &[&str] = &[
    "cookie",
    "cookies",
    "consent",
    "gdpr",
    "cmp",
    "onetrust",
    "didomi",
    "usercentrics",
    "cookiebot",
    "truste",
    "osano",
    "qc",
];
const COOKIE_TERMS: &[&str] = &[
    "cookie",
    "consent",
    "einwilligung",
    "クッキー",
    "쿠키",
    "同意",
];
const LOGIN_TERMS: &[&str] = &[
    "sign in",
    "log in",
    "login",
    "signin",
    "anmelden",
    "einloggen",
    "se connecter",
    "connexion",
    "iniciar sesión",
    "inicia sesión",
    "accedi",
    "entrar",
    "ログイン",
    "登录",
    "登入",
    "로그인",
    "войти",
    "zaloguj",
];
const NOT_FOUND: &[&str] = &[
    "not found",
    "doesn't exist",
    "does not exist",
    "no longer exists",
    "no longer available",
    "nicht gefunden",
    "existiert nicht",
    "no encontrada",
    "no se encontró",
    "introuvable",
    "non trouvée",
    "n'existe pas",
    "non trovata",
    "niet gevonden",
    "não encontrada",
    "nie znaleziono",
    "не найдена",
    "не найден",
    "見つかりません",
    "找不到",
    "页面不存在",
    "頁面不存在",
    "찾을 수 없",
    "bulunamadı",
    "hittades inte",
    "ikke fundet",
];

/// Measures the page. `main` is the main-content selection.
/// `stats` are the page's text sums with only never-content nodes dropped.
pub fn signals(
    dom: &Dom<'_>,
    main: &Selection,
    stats: &Stats,
    title: Option<&str>,
) -> QualitySignals {
    let body = dom.body();
    let mut s = QualitySignals::default();

    for &r in &main.roots {
        let end = dom.nodes[r].end as usize;
        let mut i = r;
        while i < end {
            if main.dead[i] {
                i = dom.nodes[i].end as usize;
                continue;
            }
            s.main_chars += dom.nodes[i].text.chars as usize;
            s.main_words += dom.nodes[i].text.words as usize;
            i += 1;
        }
    }
    s.body_chars = stats.chars[body] as usize;
    s.body_words = stats.words[body] as usize;
    // Walls and challenges live on short pages; long ones skip the phrase search.
    let sample: String = if s.main_words < PHRASE_SEARCH_WORDS {
        dom.text_of(body, Some(&non_content(dom)))
            .chars()
            .take(SAMPLE_CHARS)
            .collect::<String>()
            .to_lowercase()
    } else {
        String::new()
    };

    let mut consent_until = 0;
    let mut h1: Option<String> = None;
    // Class and id strings already searched for markers: a page repeats a
    // few on most of its elements, and a string answers the same each time
    // (a marker found is kept, so one searched once has nothing new to say).
    let mut searched: rustc_hash::FxHashSet<StrKey<'_>> = Default::default();
    for (i, node) in dom.nodes.iter().enumerate() {
        let Kind::Element(er, tag) = node.kind else {
            continue;
        };
        let el = er;
        let common = dom.common(i);
        match tag {
            Tag::Script => {
                let ty = dom
                    .attr(i, "type")
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                let code = ty.is_empty() || ty.contains("javascript") || ty == "module";
                if code {
                    s.scripts += 1;
                    if let Some(src) = dom.attr(i, "src") {
                        s.external_scripts += 1;
                        note_url(&mut s, src);
                    } else {
                        let raw = dom.text_of_raw(i);
                        s.script_bytes += raw.len();
                        if s.challenge_marker.is_none() {
                            s.challenge_marker =
                                CHALLENGE_CODE.iter().copied().find(|m| raw.contains(m));
                        }
                    }
                }
            }
            Tag::Iframe => {
                if let Some(src) = dom.attr(i, "src") {
                    note_url(&mut s, src);
                    // Incapsula's incident page is one iframe of its resource.
                    if contains_ignore_case(src, "_incapsula_resource") {
                        s.challenge_marker.get_or_insert("_Incapsula_Resource");
                    }
                }
            }
            Tag::Noscript => {
                let raw = dom.text_of_raw(i).to_lowercase();
                if raw.contains("javascript") && JS_VERBS.iter().any(|v| raw.contains(v)) {
                    s.noscript_requires_js = true;
                }
            }
            Tag::Input
                if dom
                    .attr(i, "type")
                    .is_some_and(|t| t.eq_ignore_ascii_case("password")) =>
            {
                s.password_field = true;
            }
            Tag::H(1) if h1.is_none() => h1 = Some(dom.text_of(i, None).to_lowercase()),
            _ => {}
        }
        for v in [common.class, common.id] {
            if !v.is_empty() && searched.insert(StrKey::new(v)) {
                if s.bot_marker.is_none() {
                    s.bot_marker = find_marker(v, BOT_ATTRS);
                }
                if s.challenge_marker.is_none() {
                    s.challenge_marker = find_marker(v, CHALLENGE_ATTRS);
                }
            }
        }
        // An empty mount point: nearly empty first, the cheapest test.
        if stats.chars[i] < 20
            && (APP_ROOT_IDS.contains(&common.id)
                || el.name() == "app-root"
                || el
                    .attrs()
                    .any(|(k, _)| k == "data-reactroot" || k == "ng-version"))
        {
            s.app_root_empty = true;
        }
        if i >= consent_until {
            let consent = class_id_tokens(common.class, common.id).any(|t| {
                is_one_of(t, CONSENT_WORDS) || starts_with_one_of(t, &["cookie", "consent"])
            });
            if consent {
                s.consent_chars += stats.chars[i] as usize;
                consent_until = dom.nodes[i].end as usize;
            }
        }
    }

    let title = title.unwrap_or("").to_lowercase();
    // An interstitial's title is the vendor's phrase, maybe with a site name.
    if title.split_whitespace().count() <= 8 {
        s.challenge_title = BOT_TITLES.iter().copied().find(|m| title.contains(m));
    }
    s.challenge_phrase = BOT_PHRASES.iter().copied().find(|m| sample.contains(m));
    s.cookie_terms = COOKIE_TERMS.iter().any(|t| sample.contains(t));
    s.login_terms = LOGIN_TERMS
        .iter()
        .any(|t| sample.contains(t) || title.contains(t));
    s.not_found_title = says_not_found(&title) || h1.as_deref().is_some_and(says_not_found);
    s
}

fn find_marker(haystack: &str, markers: &[&'static str]) -> Option<&'static str> {
    markers
        .iter()
        .copied()
        .find(|m| contains_ignore_case(haystack, m))
}

/// Notes a script or iframe URL: a captcha/anti-bot service, or a challenge.
fn note_url(s: &mut QualitySignals, url: &str) {
    if s.bot_marker.is_none() {
        s.bot_marker = find_marker(url, BOT_URLS);
    }
    if s.challenge_marker.is_none() {
        s.challenge_marker = find_marker(url, CHALLENGE_URLS);
    }
}

/// ASCII case-insensitive substring test (markers are lower-case ASCII).
fn contains_ignore_case(haystack: &str, needle: &str) -> bool {
    let (h, n) = (haystack.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

/// "404" as a word, or a "not found" phrase.
fn says_not_found(text: &str) -> bool {
    let has_404 = text
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "404");
    has_404 || NOT_FOUND.iter().any(|p| text.contains(p))
}

/// Why the page should be rendered in a browser, if it should: an empty SPA
/// shell, a `<noscript>` asking for JavaScript, or thin text under heavy scripts.
pub fn needs_render(s: &QualitySignals) -> Option<&'static str> {
    if s.app_root_empty && s.scripts > 0 && s.main_words < 100 {
        return Some("spa_shell");
    }
    if s.noscript_requires_js && s.main_words < 100 {
        return Some("noscript_requires_javascript");
    }
    if s.main_words < THIN_WORDS && (s.script_bytes >= 20_000 || s.external_scripts >= 3) {
        return Some("thin_text_heavy_scripts");
    }
    None
}

/// HTTP statuses challenge interstitials are served with.
const CHALLENGE_STATUSES: &[u16] = &[403, 405, 429, 503];

/// Main-content words beside which a page is not a challenge, whatever it
/// embeds: a short article is 80-150 words.
const WALL_MAX_WORDS: usize = 300;
/// Main-content words of a page that is nothing but a challenge: a
/// challenge at HTTP 200 without a vendor's structure is a wall only this bare.
const BARE_WORDS: usize = 40;

/// Whether the page *is* a bot challenge (then it is refused with
/// `blocked_by_site`), and the evidence. A captcha widget, an anti-bot
/// script or a phrase inside a readable page is never enough; it takes:
/// - a challenge interstitial's own structure (challenge form or container
///   ids, the challenge bootstrap code, a page-filling captcha iframe) on a
///   page with almost no text, or with little text and a challenge status
///   (403/405/429/503) or a vendor interstitial title; or
/// - a challenge status with a captcha marker or a vendor title, little
///   text (under 300 words) and no sign-in form; or
/// - at HTTP 200, a captcha marker with a vendor title or a challenge
///   phrase on a bare page (under 40 words) that is not a sign-in form.
pub fn bot_wall(s: &QualitySignals, status: u16) -> Option<&'static str> {
    if s.main_words >= WALL_MAX_WORDS {
        return None;
    }
    let challenge_status = CHALLENGE_STATUSES.contains(&status);
    if let Some(m) = s.challenge_marker {
        if s.main_words < BARE_WORDS || challenge_status || s.challenge_title.is_some() {
            return Some(m);
        }
    }
    if challenge_status && !s.password_field {
        if let Some(m) = s.bot_marker.or(s.challenge_title) {
            return Some(m);
        }
    }
    let bare = s.main_words < BARE_WORDS && !s.password_field;
    match (s.bot_marker, s.challenge_title.or(s.challenge_phrase)) {
        (Some(_), Some(m)) if bare => Some(m),
        _ => None,
    }
}

/// A cookie/consent layer dominates a page that has little else.
fn is_cookie_wall(s: &QualitySignals) -> bool {
    let dominant = s.consent_chars > 0 && s.consent_chars * 10 >= s.body_chars * 4;
    let only_cookie_text = s.cookie_terms && s.body_words < 80;
    s.main_words < 120 && (dominant || (only_cookie_text && s.main_words < 30))
}

/// The verdict for a page fetched with HTTP `status`.
///
/// score = (0.1 + 0.9 · richness) · Π penalty, where
/// richness = min(1, ln(1 + main_words) / ln(601)) (0 words → 0, 50 → 0.61,
/// 300 → 0.89, 600+ → 1) and each issue multiplies by its penalty:
/// bot_wall 0.1, soft_404 0.15, js_required 0.3, login_wall 0.3,
/// cookie_wall 0.4, thin_content 0.6; an HTTP status ≥ 400 multiplies by 0.3.
/// `escalations` is left empty for the caller; `reason` names the worst issue.
pub fn assess(s: &QualitySignals, status: u16) -> Quality {
    let mut issues: Vec<(QualityIssue, f64, String)> = Vec::new();
    if let Some(m) = bot_wall(s, status) {
        issues.push((QualityIssue::BotWall, 0.1, format!("bot challenge ({m})")));
    }
    if (200..300).contains(&status) && s.not_found_title && s.main_words < 300 {
        issues.push((
            QualityIssue::Soft404,
            0.15,
            "page says it was not found".into(),
        ));
    }
    if let Some(why) = needs_render(s) {
        issues.push((
            QualityIssue::JsRequired,
            0.3,
            format!("needs JavaScript ({why})"),
        ));
    }
    if s.password_field && s.login_terms && s.main_words < 150 {
        issues.push((QualityIssue::LoginWall, 0.3, "sign-in required".into()));
    }
    if is_cookie_wall(s) {
        issues.push((
            QualityIssue::CookieWall,
            0.4,
            "cookie consent hides the content".into(),
        ));
    }
    if s.main_words < THIN_WORDS {
        issues.push((
            QualityIssue::ThinContent,
            0.6,
            format!("only {} words of content", s.main_words),
        ));
    }
    let richness = ((1.0 + s.main_words as f64).ln() / 601f64.ln()).min(1.0);
    let mut score = 0.1 + 0.9 * richness;
    for (_, penalty, _) in &issues {
        score *= penalty;
    }
    if status >= 400 {
        score *= 0.3;
    }
    Quality {
        score: (score.clamp(0.0, 1.0) * 1000.0).round() / 1000.0,
        reason: issues.first().map(|(_, _, r)| r.clone()),
        issues: issues.into_iter().map(|(i, _, _)| i).collect(),
        escalations: Vec::new(),
    }
}
