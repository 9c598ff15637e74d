//! The bot-wall verdict on a labelled corpus (`tests/botwall/labels.tsv`):
//! vendor challenge interstitials, each with the HTTP status it is served
//! with, and real pages that merely embed captchas, Turnstile widgets or
//! anti-bot scripts. Every challenge must be caught and no article refused;
//! precision and recall are printed (`cargo test -p webdata-content --test
//! botwall -- --nocapture`).

use std::path::Path;

use url::Url;
use webdata_content::{assess, bot_wall, extract, ContentOptions};
use webdata_core::types::QualityIssue;

struct Case {
    file: String,
    status: u16,
    challenge: bool,
    kind: String,
}

fn corpus() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/botwall");
    let labels = std::fs::read_to_string(dir.join("labels.tsv")).expect("labels.tsv");
    labels
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 4, "bad label line: {l}");
            assert!(f[2] == "challenge" || f[2] == "article", "bad label: {l}");
            Case {
                file: f[0].to_string(),
                status: f[1].parse().expect("status"),
                challenge: f[2] == "challenge",
                kind: f[3].to_string(),
            }
        })
        .collect()
}

#[test]
fn bot_wall_verdict_on_the_labelled_corpus() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/botwall");
    let cases = corpus();
    let (mut tp, mut fp, mut fn_, mut tn) = (0usize, 0usize, 0usize, 0usize);
    let mut wrong = Vec::new();
    let mut login_not_walled = Vec::new();
    for c in &cases {
        let html = std::fs::read_to_string(dir.join(&c.file)).expect("fixture");
        let url = Url::parse("https://site.example/page").expect("url");
        let x = extract(&html, &url, &ContentOptions::default()).expect("extract");
        let q = assess(&x.quality_signals, c.status);
        let refused = q.issues.contains(&QualityIssue::BotWall);
        let s = &x.quality_signals;
        println!(
            "  {:<5} {:<48} {} words={:<4} wall={:?} marker={:?} challenge={:?} title={:?} phrase={:?}",
            refused, c.file, c.status, s.main_words, bot_wall(s, c.status), s.bot_marker,
            s.challenge_marker, s.challenge_title, s.challenge_phrase
        );
        match (c.challenge, refused) {
            (true, true) => tp += 1,
            (true, false) => fn_ += 1,
            (false, true) => fp += 1,
            (false, false) => tn += 1,
        }
        if c.challenge != refused {
            wrong.push(format!(
                "{} ({}, {}): refused={refused} words={} marker={:?} issues={:?}",
                c.file,
                c.status,
                c.kind,
                x.quality_signals.main_words,
                x.quality_signals.bot_marker,
                q.issues
            ));
        }
        // A sign-in page is a login wall, not a bot wall (spec: `login_wall`).
        if c.kind == "login" && !q.issues.contains(&QualityIssue::LoginWall) {
            login_not_walled.push(format!("{}: {:?}", c.file, q.issues));
        }
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    println!(
        "bot-wall verdict: {} challenges, {} articles; tp={tp} fp={fp} fn={fn_} tn={tn}; \
         precision={precision:.3} recall={recall:.3}",
        tp + fn_,
        fp + tn
    );
    for w in &wrong {
        println!("  wrong: {w}");
    }
    assert!(tp + fn_ >= 15 && fp + tn >= 25, "corpus too small");
    assert_eq!(fp, 0, "real pages refused as bot walls: {wrong:#?}");
    assert_eq!(fn_, 0, "challenges not caught: {wrong:#?}");
    assert!(login_not_walled.is_empty(), "{login_not_walled:#?}");
}
