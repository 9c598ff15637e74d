//! How the pipeline counts and collapses text: characters, words, commas, kept spaces.

/// Counts of one text node, taken once when the DOM is built.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextFacts {
    /// Non-whitespace characters.
    pub chars: u32,
    /// Words (each CJK character counts as one).
    pub words: u32,
    /// Commas of any script (`,`, `，`, `、`, `;`, ...).
    pub commas: u32,
    /// Runs of whitespace that follow a visible character: the spaces the
    /// text keeps once whitespace is collapsed (`chars + spaces` is about
    /// the length of the rendered text).
    pub spaces: u32,
}

/// Appends `text` with runs of whitespace collapsed to one space.
pub fn push_collapsed(out: &mut String, text: &str) {
    for (k, word) in text.split(is_html_space).enumerate() {
        if k > 0 && !out.is_empty() && !out.ends_with(' ') {
            out.push(' ');
        }
        out.push_str(word);
    }
}

/// Whitespace as HTML collapses it (not the no-break space).
pub fn is_html_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')
}

/// Scripts written without spaces between words: each character counts as a
/// word and as content (Han, kana).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xF900..=0xFAFF | 0xFF66..=0xFF9F | 0x20000..=0x2FFFF)
}

/// Visible characters and words of `text` (CJK characters count as words).
pub fn count_text(text: &str) -> (usize, usize) {
    let f = text_facts(text);
    (f.chars as usize, f.words as usize)
}

/// Characters, words and commas of `text` in one pass.
pub fn text_facts(text: &str) -> TextFacts {
    let mut f = TextFacts::default();
    let mut in_word = false;
    let mut after_space = false;
    for c in text.chars() {
        // ASCII first: most text is, and its classes are cheap to test.
        let (space, word, cjk) = if c.is_ascii() {
            (c.is_ascii_whitespace(), c.is_ascii_alphanumeric(), false)
        } else {
            let cjk = is_cjk(c);
            (c.is_whitespace(), !cjk && c.is_alphanumeric(), cjk)
        };
        if space {
            if !after_space {
                f.spaces += 1;
            }
            after_space = true;
            in_word = false;
            continue;
        }
        after_space = false;
        f.chars += 1;
        if word {
            if !in_word {
                f.words += 1;
            }
            in_word = true;
            continue;
        }
        in_word = false;
        if cjk {
            f.words += 1;
        } else if matches!(c, ',' | '，' | '、' | '،' | ';' | '；') {
            f.commas += 1;
        }
    }
    if f.chars == 0 {
        // Whitespace between blocks: collapses into its neighbours.
        f.spaces = 0;
    }
    f
}
