//! Tests of the CSS reader and its colour and font evidence.

use super::*;
use crate::brand::colors::ColorEvidence;
use crate::brand::colors::Rgb;
use webdata_core::brand::{ColorRole, FontRole};

#[test]
fn imports_are_read_in_order_and_resolved_against_the_sheet() {
    let base = url::Url::parse("https://acme.com/css/main.css").expect("url");
    let got: Vec<String> = imports(
        "@charset \"utf-8\"; /* @import 'commented.css'; */\
         @import url(\"base.css\");\
         @import url(/theme/colors.css) screen;\
         @IMPORT 'fonts.css' layer(fonts);\
         @import \"print.css\" print;\
         @import url(dark.css) (prefers-color-scheme: dark);\
         @import url(https://fonts.googleapis.com/css2?family=Inter&display=swap);\
         @import url(base.css);\
         body{color:#111}",
        &base,
    )
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(
        got,
        vec![
            "https://acme.com/css/base.css",
            "https://acme.com/theme/colors.css",
            "https://acme.com/css/fonts.css",
            "https://fonts.googleapis.com/css2?family=Inter&display=swap",
        ]
    );
    assert!(imports("body{color:red}", &base).is_empty());
}

#[test]
fn reads_rules_media_and_font_faces() {
    let s = parse(
        "/* theme */ @charset \"utf-8\"; :root{--brand:#2563eb;--bg: var(--white, #fff)}\
         @font-face{font-family:'Acme Sans';src:url(data:font/woff2;base64,AAA=) format('woff2')}\
         @media (prefers-color-scheme: dark){ body{background:#000} }\
         @media (min-width: 600px){ .btn{background-color:#ff0000 !important} }\
         body { color: #111 }",
    );
    assert_eq!(s.font_faces, vec!["Acme Sans".to_string()]);
    assert_eq!(s.rules.len(), 4);
    assert!(s.rules[1].dark);
    assert_eq!(
        s.rules[2].decls,
        vec![("background-color".to_string(), "#ff0000".to_string())]
    );
    let vars = variables(&[s], &[]);
    assert_eq!(resolve("var(--bg)", &vars), "#fff");
    assert_eq!(resolve("var(--missing, #123)", &vars), "#123");
}

#[test]
fn evidence_gives_roles() {
    let s = parse(
        ":root{--wp--preset--color--primary:#0f766e;--color-primary-foreground:#fff}\
         body{background-color:#fafafa;color:#1f2937;font-family:-apple-system,\"Inter\",sans-serif}\
         h1,h2{font-family:var(--font-head, 'Playfair Display'),serif}\
         code{font-family:ui-monospace,'JetBrains Mono',monospace}\
         a{color:#db2777} a:hover{color:#000}\
         @media (prefers-color-scheme:dark){body{background:#000}}",
    );
    let (c, f) = evidence(&[s], &[]);
    assert!(c.contains(&ColorEvidence {
        color: Rgb(0x0f, 0x76, 0x6e),
        role: ColorRole::Primary,
        weight: 5
    }));
    assert!(c.contains(&ColorEvidence {
        color: Rgb(0xfa, 0xfa, 0xfa),
        role: ColorRole::Background,
        weight: 4
    }));
    assert!(c.contains(&ColorEvidence {
        color: Rgb(0xdb, 0x27, 0x77),
        role: ColorRole::Accent,
        weight: 2
    }));
    assert!(
        !c.iter().any(|e| e.color == Rgb(0, 0, 0)),
        "hover and dark rules are not brand colours"
    );
    assert!(
        !c.iter().any(|e| e.color == Rgb(255, 255, 255)),
        "foreground-on-primary is not a role"
    );
    let fam = |r: FontRole| {
        f.iter()
            .find(|e| e.role == Some(r))
            .map(|e| e.family.clone())
    };
    assert_eq!(fam(FontRole::Body).as_deref(), Some("Inter"));
    assert_eq!(fam(FontRole::Heading).as_deref(), Some("Playfair Display"));
    assert_eq!(fam(FontRole::Mono).as_deref(), Some("JetBrains Mono"));
}
