//! The spec's path globs for crawl and map `includePaths`/`excludePaths`.
//!
//! A pattern is matched against the path plus query of the normalised URL
//! (`/blog/post?id=3`, see [`crate::urlnorm::normalize`]), case-sensitively.
//! - `*` matches any run of characters within one path segment (never `/`);
//!   `**` matches any run of characters, `/` included; `***` is an error.
//! - Every other character is literal: `.`, `?`, `+`, `(`, `[` … mean
//!   themselves. Non-ASCII characters, spaces, `"`, `<` and `>` are
//!   percent-encoded and escapes are normalised as in the URL, so `/café`
//!   matches `/caf%C3%A9` and `/%7euser` matches `/~user`.
//! - A pattern starting with `/` matches from the start of the path. Any
//!   other pattern may match anywhere, but a pattern that starts with a
//!   letter, digit or `_` must start at a segment or parameter boundary (right
//!   after `/`, `?` or `&`): `blog/*` matches `/en/blog/x`, `blog` does not
//!   match `/myblog`, and `.pdf$` matches `/a/b.pdf`.
//! - A trailing `$` anchors the end: `/blog$` matches `/blog` only (not
//!   `/blog/`, not `/blog?page=2`). Any other `$` is an error.
//! - Without `$` a pattern matches a prefix, and a pattern that ends with a
//!   letter, digit or `_` must end at a segment or parameter boundary (before
//!   `/`, `?`, `&` or the end): `/blog` matches `/blog`, `/blog/`, `/blog/x`
//!   and `/blog?x`, but not `/blogging` (users mean the section). A pattern
//!   ending in anything else is a plain prefix: `/blog-` matches
//!   `/blog-post`, `/blog/` matches `/blog/x` but not `/blog`, and `/blog*`
//!   matches `/blogging`.
//! - `#` is an error: fragments never reach the server and are dropped.

use std::fmt;

use regex::bytes::{Regex, RegexBuilder};
use url::Url;

use crate::urlnorm;

/// Longest accepted pattern, in bytes.
pub const MAX_PATTERN_LEN: usize = 1000;

/// What is wrong with a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlobProblem {
    /// The pattern (or everything before its `$`) is empty.
    Empty,
    /// The pattern is longer than [`MAX_PATTERN_LEN`] bytes.
    TooLong,
    /// The pattern contains `***`.
    TripleStar,
    /// A `$` appears somewhere other than the last character.
    MisplacedDollar,
    /// The pattern contains a control character.
    ControlCharacter,
    /// The pattern contains `#`.
    Fragment,
}

impl fmt::Display for GlobProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Empty => "is empty; use `/` to match every path",
            Self::TooLong => "is longer than 1000 characters; shorten it",
            Self::TripleStar => "contains `***`; use `*` within a segment or `**` across segments",
            Self::MisplacedDollar => "has a `$` before its end; `$` may only end a pattern",
            Self::ControlCharacter => "contains a control character; remove it",
            Self::Fragment => "contains `#`; fragments are never matched, remove it",
        })
    }
}

/// An invalid path glob: which one, where it came from, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError {
    /// Where the pattern came from, e.g. `includePaths[2]`, when known.
    pub field: Option<String>,
    /// The pattern as given.
    pub pattern: String,
    /// What is wrong with it.
    pub problem: GlobProblem,
}

impl fmt::Display for GlobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        const SHOWN: usize = 80;
        let shown: String = self.pattern.chars().take(SHOWN).collect();
        let ellipsis = if shown.len() < self.pattern.len() {
            "…"
        } else {
            ""
        };
        write!(f, "path glob {:?}{ellipsis} {}", shown, self.problem)
    }
}

impl std::error::Error for GlobError {}

/// One compiled path glob.
#[derive(Debug, Clone)]
pub struct PathGlob {
    pattern: String,
    regex: Regex,
}

impl PathGlob {
    /// Compiles `pattern`, rejecting the forms the spec does not allow.
    pub fn compile(pattern: &str) -> Result<PathGlob, GlobError> {
        let fail = |problem| GlobError {
            field: None,
            pattern: pattern.to_owned(),
            problem,
        };
        if pattern.len() > MAX_PATTERN_LEN {
            return Err(fail(GlobProblem::TooLong));
        }
        if pattern.chars().any(char::is_control) {
            return Err(fail(GlobProblem::ControlCharacter));
        }
        if pattern.contains("***") {
            return Err(fail(GlobProblem::TripleStar));
        }
        if pattern.contains('#') {
            return Err(fail(GlobProblem::Fragment));
        }
        let (body, anchored_end) = match pattern.strip_suffix('$') {
            Some(body) => (body, true),
            None => (pattern, false),
        };
        if body.contains('$') {
            return Err(fail(GlobProblem::MisplacedDollar));
        }
        if body.is_empty() {
            return Err(fail(GlobProblem::Empty));
        }

        let mut re = String::with_capacity(body.len() * 2 + 32);
        let first = body.chars().next();
        if first == Some('/') {
            re.push('^');
        } else if first.is_some_and(is_word_char) {
            re.push_str("(?:^|[/?&])");
        }
        let mut rest = body;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix("**") {
                re.push_str("(?s-u:.*)");
                rest = after;
            } else if let Some(after) = rest.strip_prefix('*') {
                re.push_str("(?-u:[^/]*)");
                rest = after;
            } else {
                let end = rest.find('*').unwrap_or(rest.len());
                re.push_str(&regex::escape(&encode_literal(&rest[..end])));
                rest = &rest[end..];
            }
        }
        if anchored_end {
            re.push_str("\\z");
        } else if body.chars().next_back().is_some_and(is_word_char) {
            re.push_str("(?:[/?&]|\\z)");
        }

        let regex = RegexBuilder::new(&re)
            .size_limit(16 * 1024 * 1024)
            .build()
            // Every pattern under the length limit compiles; report it as too long if not.
            .map_err(|_| fail(GlobProblem::TooLong))?;
        Ok(PathGlob {
            pattern: pattern.to_owned(),
            regex,
        })
    }

    /// Whether the glob matches `path_and_query` (already normalised, e.g. `/blog/post?id=3`).
    pub fn is_match(&self, path_and_query: &str) -> bool {
        self.regex.is_match(path_and_query.as_bytes())
    }

    /// The pattern as given.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }
}

impl fmt::Display for PathGlob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.pattern)
    }
}

/// A request's `includePaths` and `excludePaths`, compiled.
#[derive(Debug, Clone, Default)]
pub struct PathFilter {
    include: Vec<PathGlob>,
    exclude: Vec<PathGlob>,
}

impl PathFilter {
    /// Compiles both lists; the error names the list and index, e.g. `includePaths[2]`.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Self, GlobError> {
        Ok(PathFilter {
            include: compile_list("includePaths", include)?,
            exclude: compile_list("excludePaths", exclude)?,
        })
    }

    /// Whether `url` may be crawled or returned: no exclude matches, and some
    /// include matches (or there are none). Matched against the path plus
    /// query of the normalised URL (tracking parameters removed, escapes
    /// normalised, still percent-encoded).
    pub fn allows(&self, url: &Url) -> bool {
        if self.include.is_empty() && self.exclude.is_empty() {
            return true;
        }
        let subject = match_subject(url);
        if self.exclude.iter().any(|g| g.is_match(&subject)) {
            return false;
        }
        self.include.is_empty() || self.include.iter().any(|g| g.is_match(&subject))
    }
}

/// The string globs are matched against: normalised path, then `?query` if any.
pub fn match_subject(url: &Url) -> String {
    let url = urlnorm::normalize(url);
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

fn compile_list(name: &str, patterns: &[String]) -> Result<Vec<PathGlob>, GlobError> {
    patterns
        .iter()
        .enumerate()
        .map(|(i, p)| {
            PathGlob::compile(p).map_err(|mut e| {
                e.field = Some(format!("{name}[{i}]"));
                e
            })
        })
        .collect()
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Spells a literal part of a pattern the way it appears in a normalised URL.
fn encode_literal(literal: &str) -> String {
    let mut out = String::with_capacity(literal.len());
    for c in literal.chars() {
        if c.is_ascii() && !matches!(c, ' ' | '"' | '<' | '>') {
            out.push(c);
        } else {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    urlnorm::normalize_percent_escapes(&out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn glob(p: &str) -> PathGlob {
        PathGlob::compile(p).unwrap()
    }

    fn check(cases: &[(&str, &str, bool)]) {
        for &(pattern, subject, want) in cases {
            assert_eq!(
                glob(pattern).is_match(subject),
                want,
                "{pattern:?} vs {subject:?}"
            );
        }
    }

    #[test]
    fn anchored_prefix_matches_the_section_not_longer_words() {
        check(&[
            ("/blog", "/blog", true),
            ("/blog", "/blog/", true),
            ("/blog", "/blog/x/y", true),
            ("/blog", "/blog?x=1", true),
            ("/blog", "/blogging", false),
            ("/blog", "/en/blog", false),
            ("/blog/", "/blog/x", true),
            ("/blog/", "/blog", false),
            ("/blog-", "/blog-post", true),
            ("/", "/anything/at?all", true),
            ("/search?q=a", "/search?q=a&page=2", true),
            ("/search?q=a", "/search?q=ab", false),
            ("/Blog", "/blog", false),
        ]);
    }

    #[test]
    fn single_star_stays_within_a_segment() {
        check(&[
            ("/blog/*", "/blog/post", true),
            ("/blog/*", "/blog/", true),
            ("/blog/*$", "/blog/a/b", false),
            ("/blog/*/comments", "/blog/p1/comments", true),
            ("/blog/*/comments", "/blog/2024/p1/comments", false),
            ("/blog*", "/blogging", true),
            ("/*.pdf$", "/a.pdf", true),
            ("/*.pdf$", "/dir/a.pdf", false),
            ("/p/*$", "/p/x?y=1", true),
        ]);
    }

    #[test]
    fn double_star_crosses_segments() {
        check(&[
            ("/blog/**/comments", "/blog/2024/p1/comments", true),
            ("/blog/**/comments", "/blog//comments", true),
            ("/docs/**.pdf$", "/docs/a/b/c.pdf", true),
            ("/docs/**.pdf$", "/docs/a/b/c.pdf?x", false),
            ("/a/**", "/a/", true),
            ("/a/**", "/a", false),
            ("**/edit$", "/x/y/edit", true),
        ]);
    }

    #[test]
    fn dollar_anchors_the_end_of_path_and_query() {
        check(&[
            ("/blog$", "/blog", true),
            ("/blog$", "/blog/", false),
            ("/blog$", "/blog?page=2", false),
            ("/blog$", "/blogx", false),
            ("/p?id=3$", "/p?id=3", true),
            ("/p?id=3$", "/p?id=34", false),
        ]);
    }

    #[test]
    fn unanchored_patterns_match_anywhere_from_a_boundary() {
        check(&[
            ("blog/*", "/en/blog/x", true),
            ("blog/*", "/blog/x", true),
            ("blog/*", "/myblog/x", false),
            ("blog", "/en/blog", true),
            ("blog", "/en/blog?x", true),
            ("blog", "/en/blogging", false),
            ("id=3", "/p?a=1&id=3", true),
            ("id=3", "/p?xid=3", false),
            (".pdf$", "/a/b.pdf", true),
            (".pdf$", "/a/b.pdfx", false),
            ("-draft", "/posts/x-draft/", true),
        ]);
    }

    #[test]
    fn regex_metacharacters_are_literal() {
        check(&[
            ("/a.c", "/a.c", true),
            ("/a.c", "/abc", false),
            ("/p?x", "/p?x", true),
            ("/p?x", "/x", false),
            ("/a+b$", "/a+b", true),
            ("/a+b$", "/aab", false),
            ("/(x)[y]{2}|z^\\", "/(x)[y]{2}|z^\\", true),
            ("/(x)", "/x", false),
        ]);
    }

    #[test]
    fn non_ascii_and_escapes_match_the_normalised_url() {
        let url = Url::parse("https://a.com/caf%c3%a9/%7euser/a b").unwrap();
        let subject = match_subject(&url);
        assert_eq!(subject, "/caf%C3%A9/~user/a%20b");
        assert!(glob("/café/").is_match(&subject));
        assert!(glob("/caf%c3%a9/%7Euser/a b$").is_match(&subject));
    }

    #[test]
    fn invalid_patterns_are_rejected_with_the_problem() {
        let long = format!("/{}", "a".repeat(MAX_PATTERN_LEN));
        let cases: &[(&str, GlobProblem)] = &[
            ("", GlobProblem::Empty),
            ("$", GlobProblem::Empty),
            (&long, GlobProblem::TooLong),
            ("/a/***", GlobProblem::TripleStar),
            ("/a$b", GlobProblem::MisplacedDollar),
            ("/a$$", GlobProblem::MisplacedDollar),
            ("/a\tb", GlobProblem::ControlCharacter),
            ("/a\nb", GlobProblem::ControlCharacter),
            ("/a#b", GlobProblem::Fragment),
        ];
        for (pattern, problem) in cases {
            let err = PathGlob::compile(pattern).unwrap_err();
            assert_eq!(err.problem, *problem, "{pattern:?}");
        }
        let err = PathGlob::compile("/a/***").unwrap_err();
        assert_eq!(
            err.to_string(),
            "path glob \"/a/***\" contains `***`; use `*` within a segment or `**` across segments"
        );
        assert!(PathGlob::compile(&long[..MAX_PATTERN_LEN]).is_ok());
    }

    #[test]
    fn worst_case_patterns_compile() {
        let subject = "/x".repeat(5_000);
        for (unit, want) in [("/*", true), ("**/", true), ("*a", false), ("/**", true)] {
            let p: String = unit.repeat(MAX_PATTERN_LEN / unit.len());
            assert_eq!(glob(&p).is_match(&subject), want, "{unit}");
        }
    }

    #[test]
    fn filter_error_names_list_and_index() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let err = PathFilter::new(&s(&["/a", "/b", "/c$d"]), &[]).unwrap_err();
        assert_eq!(err.field.as_deref(), Some("includePaths[2]"));
        assert!(err
            .to_string()
            .starts_with("includePaths[2]: path glob \"/c$d\""));
        let err = PathFilter::new(&[], &s(&[""])).unwrap_err();
        assert!(err.to_string().starts_with("excludePaths[0]: "), "{err}");
    }

    #[test]
    fn filter_exclude_wins_and_empty_include_allows_all() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let u = |p: &str| Url::parse(&format!("https://a.com{p}")).unwrap();
        let all = PathFilter::new(&[], &[]).unwrap();
        assert!(all.allows(&u("/anything")));

        let f = PathFilter::new(&s(&["/blog", "/docs/**.html$"]), &s(&["/blog/drafts"])).unwrap();
        assert!(f.allows(&u("/blog/post")));
        assert!(f.allows(&u("/docs/a/b.html")));
        assert!(f.allows(&u("/blog?utm_source=x#frag")));
        assert!(!f.allows(&u("/blog/drafts/x")));
        assert!(!f.allows(&u("/about")));
        assert!(!f.allows(&u("/docs/a/b.html?x=1")));

        let only_exclude = PathFilter::new(&[], &s(&["*.pdf$"])).unwrap();
        assert!(only_exclude.allows(&u("/a.html")));
        assert!(!only_exclude.allows(&u("/files/a.pdf")));
    }

    const LITERAL: &str = "/[a-zA-Z0-9._~!&'()+,;=:@?\\[\\]{}|^\\\\-]{0,20}";

    proptest! {
        #[test]
        fn literal_pattern_matches_itself(p in LITERAL) {
            prop_assert!(glob(&p).is_match(&p));
            let anchored = format!("{p}$");
            prop_assert!(glob(&anchored).is_match(&p));
        }

        #[test]
        fn anchored_literal_matches_only_itself(p in LITERAL, q in LITERAL) {
            let g = glob(&format!("{p}$"));
            prop_assert_eq!(g.is_match(&q), p == q);
        }

        #[test]
        fn double_star_matches_everything_below(rest in "\\PC{0,40}") {
            let subject = format!("/a/{rest}");
            prop_assert!(glob("/a/**").is_match(&subject));
        }

        #[test]
        fn single_star_never_crosses_a_slash(seg in "[^/#$*]{0,12}", tail in "[^/]{0,12}") {
            let g = glob("/a/*$");
            let inside = format!("/a/{seg}");
            let across = format!("/a/{seg}/{tail}");
            prop_assert!(g.is_match(&inside));
            prop_assert!(!g.is_match(&across));
        }

        #[test]
        fn unanchored_word_matches_inside_any_path(
            before in "(/[a-z0-9]{1,6}){0,3}",
            after in "(/[a-z0-9]{1,6}){0,3}",
        ) {
            let subject = format!("{before}/section{after}");
            prop_assert!(glob("section").is_match(&subject));
            let longer = format!("{before}/subsection{after}");
            prop_assert!(!glob("section").is_match(&longer));
        }
    }
}
