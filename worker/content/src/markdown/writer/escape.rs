//! Inline text: whitespace collapsing and markdown escaping.

use super::super::super::dom::is_html_space;
use super::{Brk, Writer};

impl Writer {
    pub(in super::super) fn text(&mut self, t: &str) {
        let mut chars = t.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if is_html_space(c) || c == '\u{a0}' {
                self.raise(Brk::Space);
                continue;
            }
            if matches!(c, '\u{200b}' | '\u{feff}' | '\u{ad}') {
                continue;
            }
            self.flush();
            if !self.md || self.code > 0 || self.plain(c) {
                // Fast path: copy the run of characters that need no escaping.
                let mut end = at + c.len_utf8();
                self.line_start = false;
                while let Some(&(j, n)) = chars.peek() {
                    let ok = if !self.md || self.code > 0 {
                        !(is_html_space(n)
                            || matches!(n, '\u{a0}' | '\u{200b}' | '\u{feff}' | '\u{ad}'))
                    } else {
                        self.plain(n)
                    };
                    if !ok {
                        break;
                    }
                    end = j + n.len_utf8();
                    chars.next();
                }
                self.out.push_str(&t[at..end]);
                self.line_digits = None;
                continue;
            }
            let next = chars.peek().map(|&(_, n)| n);
            self.escaped(c, next, &t[at..]);
            self.line_start = false;
        }
    }

    /// A character markdown never reads as syntax where it stands now.
    pub(in super::super) fn plain(&self, c: char) -> bool {
        match c {
            '\\' | '*' | '_' | '`' | '[' | ']' | '<' | '~' | '&' => false,
            '#' | '>' | '=' | '-' | '+' => !self.line_start,
            '0'..='9' | '.' | ')' => self.line_digits.is_none(),
            c => !(is_html_space(c) || matches!(c, '\u{a0}' | '\u{200b}' | '\u{feff}' | '\u{ad}')),
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
