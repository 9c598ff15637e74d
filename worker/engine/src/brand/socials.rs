//! Social profiles: a link or JSON-LD `sameAs` URL normalised to one
//! canonical profile URL per network, share buttons and posts excluded.

use url::Url;
use webdata_core::brand::BrandSocial;

/// Path segments that are features of a network, not profiles.
const RESERVED: &[&str] = &[
    "share",
    "sharer",
    "sharer.php",
    "intent",
    "home",
    "hashtag",
    "search",
    "explore",
    "i",
    "login",
    "signup",
    "dialog",
    "plugins",
    "tr",
    "p",
    "reel",
    "reels",
    "watch",
    "embed",
    "shorts",
    "results",
    "pin",
    "status",
    "shareArticle",
    "sharing",
    "feed",
    "about",
    "privacy",
    "legal",
    "policies",
    "help",
    "settings",
    "notifications",
    "messages",
];

fn reserved(seg: &str) -> bool {
    RESERVED.iter().any(|r| r.eq_ignore_ascii_case(seg))
}

fn looks_like_share(url: &Url) -> bool {
    let path = url.path().to_ascii_lowercase();
    path.contains("/share")
        || path.contains("/intent/")
        || path.contains("sharer")
        || path.contains("sharearticle")
        || url
            .query_pairs()
            .any(|(k, _)| matches!(k.as_ref(), "url" | "u" | "text" | "mini"))
}

/// The canonical profile for `href`, or None when it is not a profile
/// (a share button, a post, another site).
pub fn normalise(href: &str) -> Option<BrandSocial> {
    let url = Url::parse(href.trim()).ok()?;
    if !matches!(url.scheme(), "http" | "https") || looks_like_share(&url) {
        return None;
    }
    let host = url.host_str()?.to_ascii_lowercase();
    let host = host
        .strip_prefix("www.")
        .or_else(|| host.strip_prefix("m."))
        .or_else(|| host.strip_prefix("mobile."))
        .unwrap_or(&host)
        .to_string();
    let segs: Vec<&str> = url
        .path_segments()
        .map(|s| s.filter(|p| !p.is_empty()).collect())
        .unwrap_or_default();
    let first = segs.first().copied();
    let one = |network: &str, base: &str, seg: Option<&str>| -> Option<BrandSocial> {
        let seg = seg?;
        if reserved(seg) {
            return None;
        }
        Some(BrandSocial {
            network: network.into(),
            url: format!("{base}{seg}"),
        })
    };
    match host.as_str() {
        "twitter.com" | "x.com" => {
            // A post (`/acme/status/1`) still names the profile, but a
            // brand's link to one post is not its profile: skip it.
            if segs.len() > 1 {
                return None;
            }
            let handle = first?.trim_start_matches('@');
            one("x", "https://x.com/", Some(handle))
        }
        "facebook.com" | "fb.com" => {
            if first == Some("profile.php") {
                let id = url.query_pairs().find(|(k, _)| k == "id")?.1.to_string();
                return Some(BrandSocial {
                    network: "facebook".into(),
                    url: format!("https://www.facebook.com/profile.php?id={id}"),
                });
            }
            if first == Some("pages") {
                return one(
                    "facebook",
                    "https://www.facebook.com/pages/",
                    segs.get(1).copied(),
                );
            }
            one("facebook", "https://www.facebook.com/", first)
        }
        "linkedin.com" => match first {
            Some(kind @ ("company" | "school" | "showcase")) => {
                let slug = segs.get(1)?;
                Some(BrandSocial {
                    network: "linkedin".into(),
                    url: format!("https://www.linkedin.com/{kind}/{slug}"),
                })
            }
            // `/in/…` is a person, not the brand.
            _ => None,
        },
        "instagram.com" => one("instagram", "https://www.instagram.com/", first),
        "youtube.com" => match first {
            Some(h) if h.starts_with('@') => one("youtube", "https://www.youtube.com/", Some(h)),
            Some(kind @ ("channel" | "c" | "user")) => {
                let id = segs.get(1)?;
                Some(BrandSocial {
                    network: "youtube".into(),
                    url: format!("https://www.youtube.com/{kind}/{id}"),
                })
            }
            _ => None,
        },
        "github.com" => one("github", "https://github.com/", first),
        "tiktok.com" => {
            let h = first.filter(|h| h.starts_with('@'))?;
            one("tiktok", "https://www.tiktok.com/", Some(h))
        }
        "pinterest.com" => one("pinterest", "https://www.pinterest.com/", first),
        "threads.net" | "threads.com" => {
            let h = first.filter(|h| h.starts_with('@'))?;
            one("threads", "https://www.threads.net/", Some(h))
        }
        "bsky.app" => {
            if first != Some("profile") {
                return None;
            }
            one("bluesky", "https://bsky.app/profile/", segs.get(1).copied())
        }
        "discord.gg" => one("discord", "https://discord.gg/", first),
        "discord.com" if first == Some("invite") => {
            one("discord", "https://discord.gg/", segs.get(1).copied())
        }
        "t.me" => one("telegram", "https://t.me/", first),
        "medium.com" => one("medium", "https://medium.com/", first),
        "dribbble.com" => one("dribbble", "https://dribbble.com/", first),
        "behance.net" => one("behance", "https://www.behance.net/", first),
        _ => None,
    }
}

/// Normalises every candidate and keeps the first profile per network
/// (callers put JSON-LD `sameAs` first: the site's own declaration).
pub fn collect<'a>(candidates: impl IntoIterator<Item = &'a str>) -> Vec<BrandSocial> {
    let mut out: Vec<BrandSocial> = Vec::new();
    for c in candidates {
        if let Some(s) = normalise(c) {
            if !out.iter().any(|o| o.network == s.network) {
                out.push(s);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(u: &str) -> Option<(String, String)> {
        normalise(u).map(|s| (s.network, s.url))
    }

    #[test]
    fn twitter_and_x_become_one_canonical_x_profile() {
        let want = Some(("x".to_string(), "https://x.com/acme".to_string()));
        assert_eq!(n("https://twitter.com/acme"), want);
        assert_eq!(n("http://www.twitter.com/acme/"), want);
        assert_eq!(n("https://mobile.twitter.com/acme?ref=footer"), want);
        assert_eq!(n("https://x.com/@acme"), want);
        assert_eq!(n("https://x.com/acme/status/123"), None, "a post");
    }

    #[test]
    fn share_buttons_are_not_profiles() {
        assert_eq!(
            n("https://twitter.com/intent/tweet?url=https%3A%2F%2Facme.test"),
            None
        );
        assert_eq!(n("https://twitter.com/share?text=hi"), None);
        assert_eq!(
            n("https://www.facebook.com/sharer/sharer.php?u=https://acme.test"),
            None
        );
        assert_eq!(n("https://www.facebook.com/sharer.php?u=x"), None);
        assert_eq!(
            n("https://www.linkedin.com/shareArticle?mini=true&url=x"),
            None
        );
        assert_eq!(
            n("https://www.linkedin.com/sharing/share-offsite/?url=x"),
            None
        );
        assert_eq!(n("https://pinterest.com/pin/create/button/?url=x"), None);
    }

    #[test]
    fn linkedin_company_pages_are_kept_and_people_are_not() {
        assert_eq!(
            n("https://linkedin.com/company/acme-inc/about/"),
            Some((
                "linkedin".into(),
                "https://www.linkedin.com/company/acme-inc".into()
            ))
        );
        assert_eq!(
            n("https://www.linkedin.com/showcase/acme-labs"),
            Some((
                "linkedin".into(),
                "https://www.linkedin.com/showcase/acme-labs".into()
            ))
        );
        assert_eq!(n("https://www.linkedin.com/in/jane-doe"), None);
        assert_eq!(n("https://www.linkedin.com/company/"), None);
    }

    #[test]
    fn other_networks_normalise() {
        assert_eq!(
            n("https://instagram.com/acme/"),
            Some(("instagram".into(), "https://www.instagram.com/acme".into()))
        );
        assert_eq!(n("https://www.instagram.com/p/Cx123/"), None);
        assert_eq!(
            n("https://youtube.com/@acme/videos"),
            Some(("youtube".into(), "https://www.youtube.com/@acme".into()))
        );
        assert_eq!(n("https://www.youtube.com/watch?v=abc"), None);
        assert_eq!(
            n("https://github.com/acme/repo"),
            Some(("github".into(), "https://github.com/acme".into()))
        );
        assert_eq!(
            n("https://www.tiktok.com/@acme"),
            Some(("tiktok".into(), "https://www.tiktok.com/@acme".into()))
        );
        assert_eq!(n("https://example.com/acme"), None);
        assert_eq!(n("mailto:hi@acme.test"), None);
    }

    #[test]
    fn collect_keeps_the_first_profile_per_network() {
        let got = collect([
            "https://x.com/acme",
            "https://twitter.com/acme_support",
            "https://twitter.com/intent/tweet?url=x",
            "https://github.com/acme",
        ]);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].url, "https://x.com/acme");
        assert_eq!(got[1].network, "github");
    }
}
