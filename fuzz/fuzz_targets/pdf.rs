//! PDF text (`webdata_content::pdf::pdf_to_text`).
//!
//! `pdf_to_text` runs the third-party parser (pdf-extract, lopdf) under
//! `catch_unwind` by design: a malformed file must give `Unreadable`, not
//! take the service down. libFuzzer's panic hook aborts on every panic, even
//! a caught one, so this target puts back a hook that lets panics raised in
//! a dependency's code (a crates.io source file) unwind into that
//! `catch_unwind`, and aborts (a crash) on any panic in webdata's own code.
#![no_main]

use std::sync::Once;

use libfuzzer_sys::fuzz_target;
use webdata_content::pdf::{pdf_to_text, PdfError};

static HOOK: Once = Once::new();

fn in_dependency(file: &str) -> bool {
    file.contains("/.cargo/registry/") || file.contains("/rustc/") || file.starts_with("/rust/deps")
}

fuzz_target!(|data: &[u8]| {
    HOOK.call_once(|| {
        let abort_hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !info.location().is_some_and(|l| in_dependency(l.file())) {
                abort_hook(info);
            }
        }));
    });
    match pdf_to_text(data) {
        Ok(text) => {
            assert!(!text.trim().is_empty(), "Ok with no text");
            assert!(!text.contains("\n\n\n"), "blank lines are collapsed");
        }
        Err(PdfError::Unreadable(_) | PdfError::NoText) => {}
    }
});
