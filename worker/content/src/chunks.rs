//! Token-bounded chunks of the markdown for retrieval.
//!
//! The text is split at headings first; sections that fit are packed
//! together, a section that does not fit is split at blank lines, then lines,
//! then sentences, then words (characters only for a single "word" longer than
//! a chunk, e.g. a base64 blob). A chunk is a contiguous slice of the markdown;
//! a code fence cut in two is closed and reopened. `headingPath` is what all
//! of a chunk's text sits under: the common prefix of its sections' headings.

use std::sync::LazyLock;

use regex::Regex;
use webdata_core::types::Chunk;

/// Smallest and largest chunk sizes the spec allows.
pub const CHUNK_SIZE_RANGE: (usize, usize) = (200, 8000);

/// Tokens of `text` in OpenAI's cl100k_base encoding (tables embedded at build time).
pub fn count_tokens(text: &str) -> usize {
    bpe_openai::cl100k_base().count(text)
}

/// The longest prefix of `text` that is at most `limit` tokens, and whether
/// it was cut. The cut falls on a token boundary (then back to a character
/// boundary), so the prefix never splits a UTF-8 sequence.
pub fn truncate_to_tokens(text: &str, limit: usize) -> (&str, bool) {
    let tokenizer = bpe_openai::cl100k_base();
    if tokens_within(text, limit).is_some() {
        return (text, false);
    }
    let tokens = tokenizer.encode(text);
    let n = limit.min(tokens.len());
    // The first `n` tokens decode to a prefix of `text` (cl100k does not
    // normalise), unless the cut splits a character: then step back.
    for k in (n.saturating_sub(4)..=n).rev() {
        if let Some(prefix) = tokenizer.decode(&tokens[..k]) {
            let mut end = prefix.len().min(text.len());
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            return (&text[..end], true);
        }
    }
    let mut end = (limit * 3).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

/// Tokens of `text` if there are at most `limit`; stops counting past it,
/// so a megabyte-long unit costs no more than a chunk.
fn tokens_within(text: &str, limit: usize) -> Option<usize> {
    let tokenizer = bpe_openai::cl100k_base();
    tokenizer.count_till_limit(&tokenizer.normalize(text), limit)
}

/// Split levels, strongest boundary first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    Section,
    Block,
    Line,
    Sentence,
    Word,
    Char,
}

impl Level {
    fn finer(self) -> Option<Level> {
        match self {
            Level::Section => Some(Level::Block),
            Level::Block => Some(Level::Line),
            Level::Line => Some(Level::Sentence),
            Level::Sentence => Some(Level::Word),
            Level::Word => Some(Level::Char),
            Level::Char => None,
        }
    }
}

/// A heading-delimited part of the markdown.
struct Section {
    start: usize,
    path: Vec<String>,
}

/// Splits `markdown` into chunks of at most `chunk_size` tokens (clamped to
/// the spec's range). `title`, the page's title heading when the content
/// pipeline took it out of the markdown, is the top of every `headingPath`.
pub fn chunk_markdown(markdown: &str, chunk_size: usize, title: Option<&str>) -> Vec<Chunk> {
    let limit = chunk_size.clamp(CHUNK_SIZE_RANGE.0, CHUNK_SIZE_RANGE.1);
    let sections = sections(markdown);
    let mut ranges = Vec::new();
    let mut cx = Packer {
        md: markdown,
        sections: &sections,
        out: &mut ranges,
    };
    cx.pack(0, markdown.len(), Level::Section, limit, Vec::new());
    let mut texts: Vec<Piece> = ranges
        .into_iter()
        .filter_map(|(s, e, tokens)| {
            let text = markdown[s..e].trim();
            (!text.is_empty()).then(|| Piece {
                start: s,
                end: e,
                text: text.to_string(),
                tokens,
            })
        })
        .collect();
    repair_fences(&mut texts, limit);
    texts
        .into_iter()
        .enumerate()
        .map(|(index, p)| Chunk {
            index: index as i64,
            tokens: Some(p.tokens as i64),
            heading_path: title
                .map(|t| t.to_string())
                .into_iter()
                .chain(heading_path(&sections, p.start, p.end))
                .collect(),
            text: p.text,
        })
        .collect()
}

/// A chunk before numbering: its source range, text and token count.
struct Piece {
    start: usize,
    end: usize,
    text: String,
    tokens: usize,
}

struct Packer<'a> {
    md: &'a str,
    sections: &'a [Section],
    /// Chunk ranges with the token count of their trimmed text.
    out: &'a mut Vec<(usize, usize, usize)>,
}

impl Packer<'_> {
    /// Packs `start..end` into chunk ranges of at most `budget` tokens;
    /// `carry` is a group from just before `start` that may join the first chunk.
    fn pack(
        &mut self,
        start: usize,
        end: usize,
        level: Level,
        budget: usize,
        carry: Vec<(usize, usize, usize)>,
    ) {
        let units = self.units(start, end, level);
        // The current group: its units with their token counts, and their sum.
        let mut sum: usize = carry.iter().map(|u| u.2).sum();
        let mut group = carry;
        for (s, e) in units {
            let Some(tokens) = tokens_within(&self.md[s..e], budget) else {
                // Sections stay apart; below that, what precedes may join.
                let carry = if level == Level::Section {
                    self.emit(&mut group, budget);
                    Vec::new()
                } else {
                    std::mem::take(&mut group)
                };
                sum = 0;
                match level.finer() {
                    Some(next) => {
                        let budget = self.fence_budget(s, e, next, budget);
                        self.pack(s, e, next, budget, carry);
                    }
                    None => {
                        let mut carry = carry;
                        self.emit(&mut carry, budget);
                        self.out.push((s, e, count_tokens(self.md[s..e].trim())));
                    }
                }
                continue;
            };
            if sum + tokens > budget {
                self.emit(&mut group, budget);
                sum = 0;
            }
            group.push((s, e, tokens));
            sum += tokens;
        }
        self.emit(&mut group, budget);
    }

    /// A code block split by lines gets its fence re-added around each piece.
    fn fence_budget(&self, s: usize, e: usize, next: Level, budget: usize) -> usize {
        let text = self.md[s..e].trim_start();
        if next == Level::Line && (text.starts_with("```") || text.starts_with("~~~")) {
            let open = text.lines().next().unwrap_or("");
            budget.saturating_sub(count_tokens(open) * 2 + 8).max(16)
        } else {
            budget
        }
    }

    /// Writes out the group, moving units to a new group while the real count is over.
    fn emit(&mut self, group: &mut Vec<(usize, usize, usize)>, budget: usize) {
        while !group.is_empty() {
            let mut n = group.len();
            loop {
                let (s, e) = (group[0].0, group[n - 1].1);
                let text = self.md[s..e].trim();
                if let Some(real) = tokens_within(text, budget) {
                    self.out.push((s, e, real));
                    break;
                }
                if n == 1 {
                    self.out.push((s, e, count_tokens(text)));
                    break;
                }
                n -= 1;
            }
            group.drain(..n);
        }
    }

    /// Consecutive pieces covering `start..end`, each ending after its separator.
    fn units(&self, start: usize, end: usize, level: Level) -> Vec<(usize, usize)> {
        let text = &self.md[start..end];
        let mut cuts: Vec<usize> = match level {
            Level::Section => self
                .sections
                .iter()
                .map(|s| s.start)
                .filter(|&p| p > start && p < end)
                .collect(),
            Level::Block => block_cuts(text).into_iter().map(|c| start + c).collect(),
            Level::Line => text
                .match_indices('\n')
                .map(|(i, _)| start + i + 1)
                .collect(),
            Level::Sentence => sentence_cuts(text).into_iter().map(|c| start + c).collect(),
            Level::Word => word_cuts(text).into_iter().map(|c| start + c).collect(),
            Level::Char => text
                .char_indices()
                .skip(1)
                .map(|(i, _)| start + i)
                .collect(),
        };
        cuts.retain(|&c| c > start && c < end);
        let mut units = Vec::with_capacity(cuts.len() + 1);
        let mut from = start;
        for c in cuts {
            if c > from {
                units.push((from, c));
                from = c;
            }
        }
        if from < end {
            units.push((from, end));
        }
        units
    }
}

/// Fence opener of a line (``` or ~~~, at most three spaces in).
fn fence_of(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let c = t.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = t.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

/// Offsets after blank lines that lie outside code fences.
fn block_cuts(text: &str) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        let next = pos + line.len();
        match (fence, fence_of(line)) {
            (None, Some(f)) => fence = Some(f),
            (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && line.trim().len() == n2 => {
                fence = None
            }
            _ => {}
        }
        if fence.is_none() && line.trim().is_empty() {
            cuts.push(next);
        }
        pos = next;
    }
    cuts
}

/// Offsets after sentence ends: `.!?` followed by whitespace, or CJK full stops.
fn sentence_cuts(text: &str) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        let after = i + c.len_utf8();
        if matches!(c, '。' | '！' | '？') {
            cuts.push(after);
        } else if matches!(c, '.' | '!' | '?') && it.peek().is_some_and(|(_, n)| n.is_whitespace())
        {
            let mut end = after;
            while let Some(&(j, n)) = it.peek() {
                if !n.is_whitespace() {
                    break;
                }
                end = j + n.len_utf8();
                it.next();
            }
            cuts.push(end);
        }
    }
    cuts
}

/// Offsets after each run of whitespace.
fn word_cuts(text: &str) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut prev_space = false;
    for (i, c) in text.char_indices() {
        let space = c.is_whitespace();
        if prev_space && !space {
            cuts.push(i);
        }
        prev_space = space;
    }
    cuts
}

static LINK: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"!?\[((?:\\.|[^\]\\])*)\]\([^)]*\)").ok());

/// Heading text without markdown syntax.
fn heading_text(line: &str) -> String {
    let t = line.trim().trim_start_matches('#').trim();
    let t = t.trim_end_matches('#').trim_end();
    let t = match LINK.as_ref() {
        Some(re) => re.replace_all(t, "$1").into_owned(),
        None => t.to_string(),
    };
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(char::is_ascii_punctuation) => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            '*' | '`' => {}
            '~' if chars.peek() == Some(&'~') => {
                chars.next();
            }
            c => out.push(c),
        }
    }
    out.trim().to_string()
}

/// ATX heading level of a line outside code.
fn heading_level(line: &str) -> Option<usize> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let n = t.bytes().take_while(|&b| b == b'#').count();
    let rest = &t[n..];
    ((1..=6).contains(&n) && (rest.is_empty() || rest.starts_with([' ', '\t']))).then_some(n)
}

/// Heading sections with their heading paths.
fn sections(md: &str) -> Vec<Section> {
    let mut out = vec![Section {
        start: 0,
        path: Vec::new(),
    }];
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut fence: Option<(char, usize)> = None;
    let mut pos = 0;
    for line in md.split_inclusive('\n') {
        let here = pos;
        pos += line.len();
        match (fence, fence_of(line)) {
            (None, Some(f)) => {
                fence = Some(f);
                continue;
            }
            (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && line.trim().len() == n2 => {
                fence = None;
                continue;
            }
            (Some(_), _) => continue,
            _ => {}
        }
        let Some(level) = heading_level(line) else {
            continue;
        };
        while stack.last().is_some_and(|(l, _)| *l >= level) {
            stack.pop();
        }
        stack.push((level, heading_text(line)));
        let path = stack.iter().map(|(_, t)| t.clone()).collect();
        if here == 0 {
            out[0].path = path;
        } else {
            out.push(Section { start: here, path });
        }
    }
    out
}

/// Headings enclosing all of `s..e`: the common prefix of the sections it touches.
fn heading_path(sections: &[Section], s: usize, e: usize) -> Vec<String> {
    let first = sections.partition_point(|x| x.start <= s).saturating_sub(1);
    let mut path: Option<Vec<String>> = None;
    for sec in sections[first..].iter().take_while(|x| x.start < e) {
        path = Some(match path {
            None => sec.path.clone(),
            Some(p) => p
                .into_iter()
                .zip(sec.path.iter())
                .take_while(|(a, b)| a == *b)
                .map(|(a, _)| a)
                .collect(),
        });
    }
    path.unwrap_or_default()
}

/// Closes a code fence left open at a chunk's end and reopens it in the next chunk.
fn repair_fences(chunks: &mut [Piece], limit: usize) {
    let mut carry: Option<String> = None;
    for piece in chunks.iter_mut() {
        if let Some(open) = carry.take() {
            let fixed = format!("{open}\n{}", piece.text);
            let tokens = count_tokens(&fixed);
            if tokens <= limit {
                piece.text = fixed;
                piece.tokens = tokens;
            }
        }
        let mut fence: Option<(char, usize, String)> = None;
        for line in piece.text.lines() {
            match (&fence, fence_of(line)) {
                (None, Some((c, n))) => fence = Some((c, n, line.trim().to_string())),
                (Some((c, n, _)), Some((c2, n2)))
                    if *c == c2 && n2 >= *n && line.trim().len() == n2 =>
                {
                    fence = None
                }
                _ => {}
            }
        }
        if let Some((c, n, open)) = fence {
            let close: String = std::iter::repeat_n(c, n).collect();
            let fixed = format!("{}\n{close}", piece.text);
            let tokens = count_tokens(&fixed);
            if tokens <= limit {
                piece.text = fixed;
                piece.tokens = tokens;
                carry = Some(open);
            }
        }
    }
}

#[cfg(test)]
mod truncate_tests {
    use super::{count_tokens, truncate_to_tokens};

    #[test]
    fn truncation_keeps_short_text_and_cuts_long_text_within_the_limit() {
        assert_eq!(truncate_to_tokens("short text", 100), ("short text", false));
        let long = "Grüße aus Köln, 東京 und überall. ".repeat(500);
        let (cut, trimmed) = truncate_to_tokens(&long, 300);
        assert!(trimmed);
        assert!(long.starts_with(cut));
        let n = count_tokens(cut);
        assert!(n <= 300 && n > 250, "{n}");
    }
}
