//! Charset detection and decoding of fetched bodies (`decode_body`): BOM,
//! Content-Type charset, `<meta charset>`/XML declaration, then detection.
//! An input whose first line is `Content-Type: <value>` gives that header;
//! the rest (or all of it) is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use webdata_engine::fetch::{decode_body, mime_of};

fuzz_target!(|data: &[u8]| {
    let (content_type, body) = match data.strip_prefix(b"Content-Type: ") {
        Some(rest) => {
            let end = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            let ct = String::from_utf8_lossy(&rest[..end]).into_owned();
            (Some(ct), rest.get(end + 1..).unwrap_or_default())
        }
        None => (None, data),
    };
    if let Some(ct) = &content_type {
        let _ = mime_of(ct);
    }
    let (text, _encoding) = decode_body(body, content_type.as_deref());

    // Without a BOM, valid UTF-8 declared as UTF-8 is the text itself.
    let bom = body.starts_with(b"\xEF\xBB\xBF")
        || body.starts_with(b"\xFE\xFF")
        || body.starts_with(b"\xFF\xFE");
    if let (false, Ok(s)) = (bom, std::str::from_utf8(body)) {
        let (declared, enc) = decode_body(body, Some("text/html; charset=utf-8"));
        assert_eq!(enc, encoding_rs::UTF_8);
        assert_eq!(declared, s);
        // With no hint at all, valid UTF-8 that names no charset stays itself.
        if content_type.is_none()
            && !s.to_ascii_lowercase().contains("charset")
            && !s.contains("<?xml")
        {
            assert_eq!(text, s);
        }
    }
});
