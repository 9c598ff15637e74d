//! Inline text: whitespace collapsing and markdown escaping.

use super::super::super::dom::is_html_space;
use super::{Brk, Writer};

impl Writer {
    pub(in super::super) fn text(&mut self, t: &str) {
        let mut at = 0;
        while let Some(c) = t[at..].chars().next() {
            let len = c.len_utf8();
            if is_html_space(c) || c == '\u{a0}' {
                self.raise(Brk::Space);
                at += len;
                continue;
            }
            if matches!(c, '\u{200b}' | '\u{feff}' | '\u{ad}') {
                at += len;
                continue;
            }
            self.flush();
            let raw = !self.md || self.code > 0;
            if raw || self.plain(c) {
                // Fast path: copy the run of characters that need no escaping.
                self.line_start = false;
                let end = run_end(t, at + len, raw, self.line_digits.is_some());
                self.out.push_str(&t[at..end]);
                self.line_digits = None;
                at = end;
                continue;
            }
            let next = t[at + len..].chars().next();
            self.escaped(c, next, &t[at..]);
            self.line_start = false;
            at += len;
        }
    }

    /// A character markdown never reads as syntax where it stands now.
    pub(in super::super) fn plain(&self, c: char) -> bool {
        // The same stops as `run_end`, which finds runs of these a byte at
        // a time; only the line-start marks depend on where the line stands.
        match c {
            '#' | '>' | '=' | '-' | '+' => !self.line_start,
            '0'..='9' | '.' | ')' => self.line_digits.is_none(),
            c if c.is_ascii() => !MD_STOPS[c as usize],
            c => !matches!(c, '\u{a0}' | '\u{200b}' | '\u{feff}' | '\u{ad}'),
        }
    }

    /// Writes `c` with a backslash where markdown would read it as syntax.
    pub(in super::super) fn escaped(&mut self, c: char, next: Option<char>, rest: &str) {
        let prev = self.out.chars().next_back();
        let space_or_none = |x: Option<char>| x.is_none_or(char::is_whitespace);
        let alnum = |x: Option<char>| x.is_some_and(char::is_alphanumeric);
        let escape = match c {
            '\\' => next.is_some_and(|n| n.is_ascii_punctuation()),
            '*' => !(space_or_none(prev) && space_or_none(next)) || self.line_start,
            '_' => !(alnum(prev) && alnum(next)),
            '`' | '[' | ']' | '~' => true,
            '<' => next.is_some_and(|n| n.is_ascii_alphabetic() || matches!(n, '/' | '!' | '?')),
            '&' => {
                next.is_some_and(|n| n.is_ascii_alphanumeric() || n == '#')
                    && rest.get(1..).is_some_and(|r| {
                        r.bytes().take(32).position(|b| b == b';').is_some_and(|p| {
                            r.as_bytes()[..p]
                                .iter()
                                .all(|b| b.is_ascii_alphanumeric() || *b == b'#')
                        })
                    })
            }
            '#' | '>' | '=' => self.line_start,
            '-' | '+' => self.line_start && (space_or_none(next) || next == Some('-')),
            _ => false,
        };
        // "1. text" or "2) text" at the start of a line would become a list item.
        let ordered = matches!(c, '.' | ')')
            && matches!(self.line_digits, Some(1..=9))
            && space_or_none(next);
        if escape || ordered {
            self.out.push('\\');
        }
        self.out.push(c);
        self.line_digits = match self.line_digits {
            Some(n) if c.is_ascii_digit() => Some(n.saturating_add(1)),
            _ => None,
        };
    }
}

/// ASCII bytes that end a run of plain text: whitespace always; in markdown
/// also the characters [`Writer::plain`] refuses mid-line.
const fn stops(markdown: bool) -> [bool; 128] {
    let mut t = [false; 128];
    let space = b" \t\n\r\x0c";
    let mut k = 0;
    while k < space.len() {
        t[space[k] as usize] = true;
        k += 1;
    }
    if markdown {
        let syntax = b"\\*_`[]<~&";
        let mut k = 0;
        while k < syntax.len() {
            t[syntax[k] as usize] = true;
            k += 1;
        }
    }
    t
}
const RAW_STOPS: [bool; 128] = stops(false);
const MD_STOPS: [bool; 128] = stops(true);

/// End of the run of plain characters from `i` (a character boundary), as
/// [`Writer::plain`] (markdown, mid-line) or the raw test (code, plain
/// text) would find it character by character, read a byte at a time.
/// After a line's leading digits (`digits`), digits, `.` and `)` end it too.
fn run_end(t: &str, mut i: usize, raw: bool, digits: bool) -> usize {
    let b = t.as_bytes();
    let table = if raw { &RAW_STOPS } else { &MD_STOPS };
    while i < b.len() {
        let x = b[i];
        if x < 0x80 {
            if table[x as usize] || (!raw && digits && matches!(x, b'0'..=b'9' | b'.' | b')')) {
                break;
            }
            i += 1;
        } else if matches!(x, 0xC2 | 0xE2 | 0xEF) {
            // U+00A0 and U+00AD start with C2, U+200B with E2, U+FEFF
            // with EF: a space, or invisible.
            let c = t[i..].chars().next().unwrap_or('\0');
            if matches!(c, '\u{a0}' | '\u{200b}' | '\u{feff}' | '\u{ad}') {
                break;
            }
            i += c.len_utf8();
        } else {
            // Any other lead or continuation byte of a plain character.
            i += 1;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::run_end;

    /// The character-at-a-time rule `run_end` replaces.
    fn reference(t: &str, from: usize, raw: bool, digits: bool) -> usize {
        for (j, c) in t[from..].char_indices() {
            let invisible = matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c')
                || matches!(c, '\u{a0}' | '\u{200b}' | '\u{feff}' | '\u{ad}');
            let plain = if raw {
                !invisible
            } else {
                match c {
                    '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '~' | '&' => false,
                    '0'..='9' | '.' | ')' => !digits,
                    _ => !invisible,
                }
            };
            if !plain {
                return from + j;
            }
        }
        t.len()
    }

    #[test]
    fn runs_end_where_the_character_rule_ends_them() {
        let samples = [
            "plain words",
            "a*b_c`d[e]f<g~h&i\\j",
            "12. item) x",
            "#>=-+ mid-line marks stay plain",
            "caf\u{e9} na\u{ef}ve \u{2014} \u{201c}quoted\u{201d}",
            "no\u{a0}break soft\u{ad}hyphen zero\u{200b}width bom\u{feff}end",
            "\u{c2}\u{e2}\u{ef}\u{10348} astral and Latin-1 \u{c2}",
            "tab\there\nnew\rline\x0cfeed",
            "日本語のテキスト、句読点。",
        ];
        for s in samples {
            for from in (0..=s.len()).filter(|&i| s.is_char_boundary(i)) {
                for raw in [false, true] {
                    for digits in [false, true] {
                        assert_eq!(
                            run_end(s, from, raw, digits),
                            reference(s, from, raw, digits),
                            "{s:?} from {from} raw {raw} digits {digits}"
                        );
                    }
                }
            }
        }
    }
}
