//! Quality signals on fixtures, and the pure verdict.

use webdata_core::types::QualityIssue::{self, *};

use super::*;
use crate::{assess, needs_render, QualitySignals};

const EN: &str = include_str!("../../tests/fixtures/content/article_en.html");
const DE: &str = include_str!("../../tests/fixtures/content/article_de.html");
const JA: &str = include_str!("../../tests/fixtures/content/article_ja.html");

fn issues(page: &str, status: u16) -> Vec<QualityIssue> {
    assess(
        &run(page, &ContentOptions::default()).quality_signals,
        status,
    )
    .issues
}

/// A long article body to wrap around page furniture.
fn article(extra: &str) -> String {
    let para = "<p>The committee met on Tuesday to discuss the budget, the new library and the \
        repairs to the bridge, which residents have been asking about for years.</p>";
    format!("<html><head><title>Council meets</title></head><body>{extra}<article><h1>Council meets</h1>{}</article></body></html>",
        para.repeat(8))
}

#[test]
fn each_issue_is_detected() {
    let spa = "<html><head><title>App</title></head><body><div id=\"root\"></div>\
        <script src=\"/static/js/main.4f2a.js\"></script></body></html>";
    let noscript = "<body><noscript>You need to enable JavaScript to run this app.</noscript>\
        <div id=\"app\"><p>Loading</p></div><script src=\"/app.js\"></script></body>";
    let heavy =
        "<body><p>Welcome</p><script src=\"/a.js\"></script><script src=\"/b.js\"></script>\
        <script src=\"/c.js\"></script></body>";
    let cloudflare = "<html><head><title>Just a moment...</title></head><body>\
        <div id=\"challenge-running\">Checking your browser before accessing example.com.</div></body></html>";
    let attention = "<html><head><title>Attention Required! | Cloudflare</title></head><body>\
        <h1>Sorry, you have been blocked</h1></body></html>";
    let hcaptcha = "<body><p>Please verify you are human to continue.</p>\
        <iframe src=\"https://newassets.hcaptcha.com/captcha/v1/abc/static/hcaptcha.html\"></iframe></body>";
    let cookie = "<body><div id=\"onetrust-consent-sdk\" class=\"consent-overlay\"><h2>We value your privacy</h2>\
        <p>We and our 842 partners store and access information on your device, such as cookies, \
        and process personal data such as unique identifiers and standard information sent by your \
        device for personalised advertising and content, audience measurement and product development.</p>\
        <button>Accept all</button><button>Manage options</button></div><main></main></body>";
    let login = "<body><form action=\"/session\"><h1>Sign in to continue</h1><input type=\"email\" name=\"e\">\
        <input type=\"password\" name=\"p\"><button>Log in</button></form></body>";
    let not_found = |title: &str| {
        format!("<html><head><title>{title}</title></head><body><h1>{title}</h1><p>Try the search.</p></body></html>")
    };
    let cases: Vec<(&str, String, u16, &[QualityIssue])> = vec![
        (
            "thin",
            "<body><p>Hello there.</p></body>".into(),
            200,
            &[ThinContent],
        ),
        ("spa shell", spa.into(), 200, &[JsRequired, ThinContent]),
        ("noscript", noscript.into(), 200, &[JsRequired, ThinContent]),
        (
            "heavy scripts",
            heavy.into(),
            200,
            &[JsRequired, ThinContent],
        ),
        (
            "cloudflare",
            cloudflare.into(),
            503,
            &[BotWall, ThinContent],
        ),
        (
            "attention required",
            attention.into(),
            403,
            &[BotWall, ThinContent],
        ),
        ("hcaptcha", hcaptcha.into(), 200, &[BotWall, ThinContent]),
        (
            "cookie wall",
            cookie.into(),
            200,
            &[CookieWall, ThinContent],
        ),
        ("login wall", login.into(), 200, &[LoginWall, ThinContent]),
        (
            "404 en",
            not_found("Page not found"),
            200,
            &[Soft404, ThinContent],
        ),
        (
            "404 de",
            not_found("Seite nicht gefunden"),
            200,
            &[Soft404, ThinContent],
        ),
        (
            "404 ja",
            not_found("ページが見つかりません"),
            200,
            &[Soft404, ThinContent],
        ),
        (
            "404 es",
            not_found("Página no encontrada"),
            200,
            &[Soft404, ThinContent],
        ),
        (
            "404 fr",
            not_found("Page introuvable"),
            200,
            &[Soft404, ThinContent],
        ),
        (
            "404 code",
            not_found("Error 404"),
            200,
            &[Soft404, ThinContent],
        ),
        (
            "real 404 is not soft",
            not_found("Page not found"),
            404,
            &[ThinContent],
        ),
    ];
    for (name, page, status, want) in cases {
        assert_eq!(issues(&page, status), want.to_vec(), "case {name}");
    }
}

#[test]
fn normal_articles_have_no_issues() {
    let cases: Vec<(&str, String)> = vec![
        ("english", EN.into()),
        ("german", DE.into()),
        ("japanese", JA.into()),
        (
            "recaptcha on a comment form",
            article("<div class=\"g-recaptcha\"></div>"),
        ),
        (
            "login box in the header",
            article("<form><input type=\"password\"><button>Log in</button></form>"),
        ),
        (
            "noscript note",
            article("<noscript>Enable JavaScript to see comments.</noscript>"),
        ),
        (
            "cookie banner",
            article("<div class=\"cookie-banner\">We use cookies. <button>OK</button></div>"),
        ),
        (
            "empty widget mount",
            article("<div id=\"app\"></div><script src=\"/w.js\"></script>"),
        ),
        (
            "404 in the text only",
            article("<p>We fixed the 404 page not found errors.</p>"),
        ),
    ];
    for (name, page) in cases {
        let q = assess(&run(&page, &ContentOptions::default()).quality_signals, 200);
        assert!(q.issues.is_empty(), "{name}: {:?}", q.issues);
        assert!(q.score > 0.5, "{name}: score {}", q.score);
        assert_eq!(q.reason, None);
    }
}

#[test]
fn japanese_text_is_counted_by_characters() {
    let s = run(JA, &ContentOptions::default()).quality_signals;
    assert!(s.main_words > 200, "{} words", s.main_words);
    assert!(s.main_chars > 200);
}

#[test]
fn score_follows_the_documented_formula() {
    let words = |n| QualitySignals {
        main_words: n,
        body_words: n,
        ..QualitySignals::default()
    };
    let close = |a: f64, b: f64| (a - b).abs() < 0.002;
    // 0 words: 0.1 · thin 0.6.
    assert!(close(assess(&words(0), 200).score, 0.06));
    // 600 words: full richness.
    assert!(close(assess(&words(600), 200).score, 1.0));
    assert!(close(assess(&words(600), 500).score, 0.3));
    let mid = assess(&words(300), 200).score;
    assert!(mid > 0.85 && mid < 0.95, "{mid}");
    let mut bot = words(20);
    bot.challenge_marker = Some("challenge-form");
    let q = assess(&bot, 200);
    assert!(q.score < assess(&words(20), 200).score);
    assert_eq!(q.issues, vec![BotWall, ThinContent]);
    assert_eq!(q.reason.as_deref(), Some("bot challenge (challenge-form)"));
    assert!(q.escalations.is_empty());
}

#[test]
fn needs_render_names_the_reason() {
    let base = QualitySignals::default();
    let spa = QualitySignals {
        app_root_empty: true,
        scripts: 1,
        external_scripts: 1,
        ..base.clone()
    };
    let nos = QualitySignals {
        noscript_requires_js: true,
        ..base.clone()
    };
    let heavy = QualitySignals {
        script_bytes: 50_000,
        main_words: 10,
        ..base.clone()
    };
    let rich = QualitySignals {
        script_bytes: 500_000,
        main_words: 800,
        app_root_empty: true,
        scripts: 9,
        ..base.clone()
    };
    assert_eq!(needs_render(&spa), Some("spa_shell"));
    assert_eq!(needs_render(&nos), Some("noscript_requires_javascript"));
    assert_eq!(needs_render(&heavy), Some("thin_text_heavy_scripts"));
    assert_eq!(needs_render(&rich), None);
    assert_eq!(needs_render(&base), None);
}
