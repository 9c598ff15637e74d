//! Tests of body decoding and request headers.

use super::*;

fn decode(body: &[u8], content_type: Option<&str>) -> (String, &'static str) {
    let (text, encoding) = decode_body(body, content_type);
    (text, encoding.name())
}

#[test]
fn bom_wins_over_a_wrong_header_charset() {
    let body = b"\xEF\xBB\xBF<p>caf\xC3\xA9</p>";
    assert_eq!(
        decode(body, Some("text/html; charset=iso-8859-1")),
        ("<p>café</p>".to_owned(), "UTF-8")
    );
    let utf16: Vec<u8> = [0xFF, 0xFE, b'h', 0, b'i', 0].to_vec();
    assert_eq!(
        decode(&utf16, Some("text/plain")),
        ("hi".to_owned(), "UTF-16LE")
    );
}

#[test]
fn header_charset_decodes_shift_jis() {
    let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode("<p>日本語のページ</p>");
    assert_eq!(
        decode(&bytes, Some("text/html; charset=\"Shift_JIS\"")),
        ("<p>日本語のページ</p>".to_owned(), "Shift_JIS")
    );
}

#[test]
fn meta_charset_decodes_latin1() {
    let body = b"<html><head><meta charset=\"iso-8859-1\"><title>Caf\xE9</title>";
    let (text, encoding) = decode(body, Some("text/html"));
    assert_eq!(encoding, "windows-1252");
    assert!(text.contains("Café"));
}

#[test]
fn meta_http_equiv_content_type_is_honoured() {
    let body = b"<!-- <meta charset=utf-8> --><META HTTP-EQUIV='Content-Type' CONTENT='text/html; charset=koi8-r'>\xF0\xD2\xC9\xD7\xC5\xD4";
    let (text, encoding) = decode(body, None);
    assert_eq!(encoding, "KOI8-R");
    assert!(text.ends_with("Привет"), "{text}");
}

#[test]
fn meta_content_without_http_equiv_is_ignored() {
    let body = "<meta content='text/html; charset=koi8-r'><p>naïve</p>".as_bytes();
    assert_eq!(decode(body, Some("text/html")).1, "UTF-8");
}

#[test]
fn meta_utf16_means_utf8() {
    let body = "<meta charset=utf-16><p>é</p>".as_bytes();
    assert_eq!(decode(body, Some("text/html")).1, "UTF-8");
}

#[test]
fn detection_finds_unlabelled_shift_jis_and_latin1() {
    let text = "<html><body><p>これは日本語で書かれたページです。文字コードの指定がありません。</p></body></html>";
    let (bytes, _, _) = encoding_rs::SHIFT_JIS.encode(text);
    assert_eq!(
        decode(&bytes, Some("text/html")),
        (text.to_owned(), "Shift_JIS")
    );
    let latin1 = b"<p>Le caf\xE9 est tr\xE8s bon, d\xE9j\xE0 pr\xEAt.</p>";
    assert_eq!(decode(latin1, Some("text/html")).1, "windows-1252");
    assert_eq!(decode("<p>déjà</p>".as_bytes(), None).1, "UTF-8");
}

#[test]
fn xml_declaration_encoding_is_honoured() {
    let body = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>\xE9</a>";
    assert_eq!(
        decode(body, Some("application/xml")).0,
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a>é</a>"
    );
}

#[test]
fn textual_types_are_recognised() {
    assert!(is_textual(Some("text/html"), b""));
    assert!(is_textual(Some("application/rss+xml"), b""));
    assert!(is_textual(Some("application/json"), b""));
    assert!(!is_textual(Some("application/pdf"), b"%PDF"));
    assert!(!is_textual(None, b"\x89PNG\0\0"));
    assert_eq!(
        mime_of("Text/HTML; charset=utf-8").as_deref(),
        Some("text/html")
    );
}

#[test]
fn caller_headers_override_defaults_and_transport_headers_are_dropped() {
    let mut req = FetchRequest::new("http://example.com/", Duration::from_secs(1));
    req.accept = Some("text/markdown".into());
    req.accept_language = Some("de-DE".into());
    req.headers = vec![
        ("X-Test".into(), "1".into()),
        ("Host".into(), "evil.example".into()),
        ("Accept-Encoding".into(), "identity".into()),
    ];
    let headers = request_headers(&req).unwrap();
    assert_eq!(headers["accept"], "text/markdown");
    assert_eq!(headers["accept-language"], "de-DE");
    assert_eq!(headers["x-test"], "1");
    assert!(!headers.contains_key("host") && !headers.contains_key("accept-encoding"));
    req.headers = vec![("Bad Name".into(), "x".into())];
    assert!(matches!(
        request_headers(&req),
        Err(FetchError::InvalidHeader { .. })
    ));
}
