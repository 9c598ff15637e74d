//! PDF → text and markdown. A PDF is a document users expect to scrape;
//! the text is extracted page by page (pure Rust, no external tools).

/// Largest PDF we try to parse.
pub const MAX_PDF_BYTES: usize = 10 * 1024 * 1024;

/// Why a PDF gave no text.
#[derive(Debug, thiserror::Error)]
pub enum PdfError {
    #[error("the PDF could not be read: {0}")]
    Unreadable(String),
    #[error("the PDF has no extractable text (it may be scanned images)")]
    NoText,
}

/// Text of a PDF: pages separated by blank lines, whitespace tidied.
/// Catches the parser's panics (malformed files must not take the service
/// down); it is CPU-bound, so async callers run it on a blocking thread.
pub fn pdf_to_text(bytes: &[u8]) -> Result<String, PdfError> {
    if bytes.len() > MAX_PDF_BYTES {
        return Err(PdfError::Unreadable(format!(
            "larger than {} MiB",
            MAX_PDF_BYTES >> 20
        )));
    }
    let joined = std::panic::catch_unwind(|| extract_text(bytes))
        .map_err(|_| PdfError::Unreadable("the parser gave up on this file".into()))??;
    let text = tidy(&joined);
    if text.split_whitespace().next().is_none() {
        return Err(PdfError::NoText);
    }
    Ok(text)
}

/// `pdf_extract::extract_text_from_mem`, with the page tree checked first:
/// pdf-extract looks up inherited page attributes (`MediaBox`, `Resources`)
/// by following `/Parent` until it finds them, forever when the chain loops
/// (found by fuzzing: a hostile PDF held a blocking thread for good).
fn extract_text(bytes: &[u8]) -> Result<String, PdfError> {
    use pdf_extract::{Document, PlainTextOutput};
    let unreadable = |e: &dyn std::fmt::Display| PdfError::Unreadable(e.to_string());
    let mut doc = Document::load_mem(bytes).map_err(|e| unreadable(&e))?;
    if doc.is_encrypted() {
        // What pdf-extract does: try the empty user password.
        doc.decrypt("").map_err(|e| unreadable(&e))?;
    }
    if has_parent_cycle(&doc) {
        return Err(PdfError::Unreadable(
            "the page tree's /Parent links form a cycle".into(),
        ));
    }
    let mut text = String::new();
    pdf_extract::output_doc(&doc, &mut PlainTextOutput::new(&mut text))
        .map_err(|e| unreadable(&e))?;
    Ok(text)
}

/// Whether following `/Parent` from some page (the way pdf-extract looks up
/// inherited attributes) comes back to an object already passed.
fn has_parent_cycle(doc: &pdf_extract::Document) -> bool {
    let mut seen = std::collections::HashSet::new();
    doc.get_pages().into_values().any(|page| {
        seen.clear();
        let mut id = page;
        loop {
            if !seen.insert(id) {
                return true;
            }
            let parent = doc
                .get_dictionary(id)
                .ok()
                .and_then(|d| d.get(b"Parent").ok())
                .and_then(|p| p.as_reference().ok());
            match parent {
                Some(next) => id = next,
                None => return false,
            }
        }
    })
}

/// Collapses runs of spaces and more than one blank line.
fn tidy(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut blank = 0;
    for line in raw.lines() {
        let line = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(&line);
    }
    out
}

/// A minimal one-page PDF showing `lines` in Helvetica (tests and fixtures).
pub fn simple_pdf(lines: &[&str]) -> Vec<u8> {
    let mut content = String::from("BT /F1 14 Tf 72 720 Td 18 TL\n");
    for l in lines {
        let esc = l
            .replace('\\', "\\\\")
            .replace('(', "\\(")
            .replace(')', "\\)");
        content.push_str(&format!("({esc}) Tj T*\n"));
    }
    content.push_str("ET");
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_string(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_string(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>".to_string(),
        format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len()),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_string(),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, obj) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{obj}\nendobj\n", i + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for o in offsets {
        pdf.extend_from_slice(format!("{o:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    pdf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_comes_out_of_a_simple_pdf() {
        let pdf = simple_pdf(&["Quarterly report (draft)", "Revenue grew by 12 percent."]);
        let text = pdf_to_text(&pdf).expect("text");
        assert!(text.contains("Quarterly report (draft)"), "{text:?}");
        assert!(text.contains("Revenue grew by 12 percent."), "{text:?}");
    }

    /// Fuzzing found it (fuzz/seeds/pdf/crash_parent_cycle.pdf): a page that
    /// is its own `/Parent` and has no `MediaBox` sent pdf-extract's lookup
    /// of inherited attributes round the loop forever.
    #[test]
    fn a_page_tree_that_loops_is_unreadable_not_a_hang() {
        let pdf = simple_pdf(&["x"]);
        let page = b"/Parent 2 0 R /MediaBox [0 0 612 792]";
        let at = pdf
            .windows(page.len())
            .position(|w| w == page)
            .expect("page object");
        // Same length, so the xref offsets stay right.
        let mut looped = pdf.clone();
        looped[at..at + page.len()]
            .copy_from_slice(format!("{:<1$}", "/Parent 3 0 R", page.len()).as_bytes());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || tx.send(pdf_to_text(&looped).map_err(|e| e.to_string())));
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("pdf_to_text returned (no endless /Parent walk)");
        assert!(got.as_ref().is_err_and(|e| e.contains("cycle")), "{got:?}");
        // The same file with its tree intact still reads.
        assert_eq!(pdf_to_text(&pdf).expect("text"), "x");
    }

    #[test]
    fn garbage_is_an_error_not_a_crash() {
        assert!(pdf_to_text(b"%PDF-1.4\nthis is not a pdf").is_err());
        let mut cut = simple_pdf(&["x"]);
        cut.truncate(cut.len() / 2);
        assert!(pdf_to_text(&cut).is_err());
    }
}
