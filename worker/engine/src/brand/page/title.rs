//! The brand name in a page title.

/// Words that never name a brand in a title.
const GENERIC_TITLE_PARTS: &[&str] = &[
    "home",
    "homepage",
    "home page",
    "welcome",
    "start",
    "index",
    "official site",
    "official website",
    "startseite",
    "accueil",
    "inicio",
    "main page",
];

fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// The brand name in a page title: split at ` | `, ` - `, ` – `, ` — `,
/// ` · `, ` :: `, ` : ` and `: `; generic parts ("Home", "Welcome") are
/// dropped; the part that matches the domain's name wins, else the
/// shortest part (taglines are long), else the whole title.
pub fn name_from_title(title: &str, domain: &str) -> Option<String> {
    let title = title.trim();
    if title.is_empty() {
        return None;
    }
    let mut parts = vec![title.to_string()];
    for sep in [
        " | ", " - ", " – ", " — ", " · ", " • ", " :: ", " : ", ": ",
    ] {
        parts = parts
            .iter()
            .flat_map(|p| p.split(sep).map(|s| s.trim().to_string()))
            .collect();
    }
    parts.retain(|p| {
        !p.is_empty() && !GENERIC_TITLE_PARTS.contains(&p.to_ascii_lowercase().as_str())
    });
    let label = domain.split(':').next().unwrap_or(domain);
    let label = label
        .split('.')
        .find(|l| !matches!(*l, "www" | "shop" | "store" | "app"))
        .unwrap_or(label);
    let key = squash(label);
    if let Some(p) = parts.iter().find(|p| {
        !key.is_empty()
            && (squash(p) == key || (squash(p).contains(&key) && p.split_whitespace().count() <= 3))
    }) {
        return Some(p.clone());
    }
    if parts.len() > 1 {
        return parts.iter().min_by_key(|p| p.chars().count()).cloned();
    }
    parts.into_iter().next()
}
