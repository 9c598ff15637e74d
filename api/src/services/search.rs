//! Web search behind a provider interface. SearXNG (self-hostable
//! metasearch with a JSON API) is the one backend; another provider
//! implements [`SearchProvider`] and is chosen in `cli::serve`.

use futures::future::BoxFuture;
use serde_json::Value;
use std::time::Duration;
use webdata_core::types::{SearchResult, TimeRange};
use webdata_core::ErrorCode;

/// What a provider is asked for (validated already).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchQuery {
    pub query: String,
    pub limit: usize,
    pub country: Option<String>,
    pub language: Option<String>,
    pub time_range: Option<TimeRange>,
}

/// A provider call that failed; the API answers with `code` at 0 credits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    pub code: ErrorCode,
    pub message: String,
}

/// A search backend: results in rank order, at most `query.limit`,
/// `position` numbered from 1.
pub trait SearchProvider: Send + Sync {
    /// The provider's name, for logs.
    fn name(&self) -> &'static str;
    /// Runs the query.
    fn search<'a>(
        &'a self,
        query: &'a SearchQuery,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, ProviderError>>;
}

/// Results SearXNG returns per page (its default); more pages are asked
/// for until `limit` is reached, at most this many.
const MAX_PAGES: usize = 6;

/// The SearXNG backend: `GET {base}/search?q=…&format=json&pageno=…`.
pub struct Searxng {
    base: url::Url,
    client: reqwest::Client,
}

impl Searxng {
    /// A client for the instance at `base` (e.g. `http://searxng:8080`).
    pub fn new(base: &str, timeout: Duration) -> anyhow::Result<Self> {
        let mut base = url::Url::parse(base.trim())
            .map_err(|e| anyhow::anyhow!("WEBDATA_SEARXNG_URL is not a URL: {e}"))?;
        if !matches!(base.scheme(), "http" | "https") {
            anyhow::bail!("WEBDATA_SEARXNG_URL must be an http or https URL");
        }
        if !base.path().ends_with('/') {
            let p = format!("{}/", base.path());
            base.set_path(&p);
        }
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .user_agent(concat!("webdata/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Searxng { base, client })
    }

    /// The URL of one result page for `q`.
    pub fn page_url(&self, q: &SearchQuery, pageno: usize) -> url::Url {
        let mut u = self
            .base
            .join("search")
            .unwrap_or_else(|_| self.base.clone());
        {
            let mut p = u.query_pairs_mut();
            p.append_pair("q", &q.query)
                .append_pair("format", "json")
                .append_pair("pageno", &pageno.to_string());
            if let Some(lang) = searxng_language(q.language.as_deref(), q.country.as_deref()) {
                p.append_pair("language", &lang);
            }
            if let Some(t) = q.time_range {
                p.append_pair("time_range", t.as_str());
            }
        }
        u
    }

    async fn page(&self, q: &SearchQuery, pageno: usize) -> Result<Vec<Value>, ProviderError> {
        let url = self.page_url(q, pageno);
        let resp = self
            .client
            .get(url)
            .header("Accept", "application/json")
            .send()
            .await
            .map_err(|e| provider_transport_error("search provider", &e))?;
        let status = resp.status();
        if !status.is_success() {
            let hint = if status.as_u16() == 403 {
                " (is `json` listed in `search.formats` of SearXNG's settings.yml?)"
            } else {
                ""
            };
            return Err(ProviderError {
                code: ErrorCode::FetchFailed,
                message: format!(
                    "the search provider answered HTTP {}{hint}",
                    status.as_u16()
                ),
            });
        }
        let body: Value = resp.json().await.map_err(|e| ProviderError {
            code: ErrorCode::FetchFailed,
            message: format!("the search provider's answer is not JSON: {e}"),
        })?;
        match body.get("results") {
            Some(Value::Array(a)) => Ok(a.clone()),
            _ => Err(ProviderError {
                code: ErrorCode::FetchFailed,
                message: "the search provider's answer has no `results` list".into(),
            }),
        }
    }
}

/// Maps a reqwest error of a configured provider (search or model) to
/// `timeout` or `fetch_failed`.
pub fn provider_transport_error(what: &str, e: &reqwest::Error) -> ProviderError {
    if e.is_timeout() {
        ProviderError {
            code: ErrorCode::Timeout,
            message: format!("the {what} did not answer in time"),
        }
    } else {
        ProviderError {
            code: ErrorCode::FetchFailed,
            message: format!("the {what} could not be reached: {e}"),
        }
    }
}

impl SearchProvider for Searxng {
    fn name(&self) -> &'static str {
        "searxng"
    }

    fn search<'a>(
        &'a self,
        q: &'a SearchQuery,
    ) -> BoxFuture<'a, Result<Vec<SearchResult>, ProviderError>> {
        Box::pin(async move {
            let mut raw = Vec::new();
            let mut mapped = Vec::new();
            for pageno in 1..=MAX_PAGES {
                let page = self.page(q, pageno).await?;
                if page.is_empty() {
                    break;
                }
                let before = mapped.len();
                raw.extend(page);
                mapped = map_results(&raw, q.limit);
                if mapped.len() >= q.limit || mapped.len() == before {
                    break;
                }
            }
            Ok(mapped)
        })
    }
}

/// SearXNG's `language` parameter from the request's language and country.
/// SearXNG has no region parameter; a region goes into the locale tag
/// (`en` + `gb` → `en-GB`). A country alone uses its most spoken language
/// (`de` → `de-DE`, `ch` → `de-CH`); a country not in that table is not
/// passed on. A language with its own region (`pt-BR`) wins over `country`.
pub fn searxng_language(language: Option<&str>, country: Option<&str>) -> Option<String> {
    let country = country.map(|c| c.to_ascii_uppercase());
    match (language, country) {
        (Some(l), _) if l.contains('-') => Some(l.to_string()),
        (Some(l), Some(c)) => Some(format!("{}-{c}", l.to_ascii_lowercase())),
        (Some(l), None) => Some(l.to_ascii_lowercase()),
        (None, Some(c)) => COUNTRY_LANGUAGE
            .iter()
            .find(|(cc, _)| cc.eq_ignore_ascii_case(&c))
            .map(|(_, l)| format!("{l}-{c}")),
        (None, None) => None,
    }
}

/// Most spoken language per country, for a `country` sent without `language`.
#[rustfmt::skip]
const COUNTRY_LANGUAGE: &[(&str, &str)] = &[
    ("ar", "es"), ("at", "de"), ("au", "en"), ("be", "nl"), ("bg", "bg"),
    ("br", "pt"), ("ca", "en"), ("ch", "de"), ("cl", "es"), ("cn", "zh"),
    ("co", "es"), ("cz", "cs"), ("de", "de"), ("dk", "da"), ("ee", "et"),
    ("eg", "ar"), ("es", "es"), ("fi", "fi"), ("fr", "fr"), ("gb", "en"),
    ("gr", "el"), ("hk", "zh"), ("hr", "hr"), ("hu", "hu"), ("id", "id"),
    ("ie", "en"), ("il", "he"), ("in", "en"), ("it", "it"), ("jp", "ja"),
    ("kr", "ko"), ("lt", "lt"), ("lv", "lv"), ("mx", "es"), ("my", "ms"),
    ("nl", "nl"), ("no", "nb"), ("nz", "en"), ("pe", "es"), ("ph", "en"),
    ("pk", "en"), ("pl", "pl"), ("pt", "pt"), ("ro", "ro"), ("rs", "sr"),
    ("ru", "ru"), ("sa", "ar"), ("se", "sv"), ("sg", "en"), ("si", "sl"),
    ("sk", "sk"), ("th", "th"), ("tr", "tr"), ("tw", "zh"), ("ua", "uk"),
    ("us", "en"), ("vn", "vi"), ("za", "en"),
];

/// SearXNG results (in rank order) to the spec's shape: http(s) URLs only,
/// each URL once, at most `limit`, `position` from 1.
pub fn map_results(raw: &[Value], limit: usize) -> Vec<SearchResult> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for r in raw {
        if out.len() >= limit {
            break;
        }
        let Some(url) = r.get("url").and_then(Value::as_str).map(str::trim) else {
            continue;
        };
        let Ok(parsed) = url::Url::parse(url) else {
            continue;
        };
        if !matches!(parsed.scheme(), "http" | "https") || !seen.insert(url.to_string()) {
            continue;
        }
        let text = |k: &str| {
            r.get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let source = text("source").or_else(|| {
            parsed
                .host_str()
                .map(|h| h.strip_prefix("www.").unwrap_or(h).to_string())
        });
        out.push(SearchResult {
            url: url.to_string(),
            title: text("title").unwrap_or_default(),
            snippet: text("content"),
            position: Some(out.len() as i64 + 1),
            date: text("publishedDate")
                .or_else(|| text("pubdate"))
                .map(|d| normalize_date(&d)),
            source,
            document: None,
        });
    }
    out
}

/// A provider's date as ISO 8601 when it can be read (RFC 3339, RFC 2822,
/// `YYYY-MM-DD[ T]HH:MM:SS[.fff][±HH:MM]`, `YYYY-MM-DD`), else the text as
/// given. Dates without an offset stay without one (the provider's local time).
pub fn normalize_date(s: &str) -> String {
    use jiff::fmt::strtime;
    use jiff::tz::{Offset, TimeZone};
    let s = s.trim();
    let with_offset = |ts: jiff::Timestamp, offset: Offset| {
        let local = ts.to_zoned(TimeZone::fixed(offset));
        let zone = if offset == Offset::UTC {
            "Z".to_string()
        } else {
            local.strftime("%:z").to_string()
        };
        format!("{}{zone}", local.strftime("%Y-%m-%dT%H:%M:%S%.f"))
    };
    // RFC 3339 and `YYYY-MM-DD[ T]HH:MM:SS[.fff]±HH:MM`; `Z` is +00:00.
    let with_t = s.replacen(' ', "T", 1);
    let mut t = with_t.replacen('t', "T", 1);
    if t.ends_with(['Z', 'z']) {
        t.pop();
        t.push_str("+00:00");
    }
    if let Ok(tm) = strtime::parse("%Y-%m-%dT%H:%M:%S%.f%:z", &t) {
        if let (Ok(ts), Some(offset)) = (tm.to_timestamp(), tm.offset()) {
            return with_offset(ts, offset);
        }
    }
    if let Ok(z) = jiff::fmt::rfc2822::DateTimeParser::new().parse_zoned(s) {
        return with_offset(z.timestamp(), z.offset());
    }
    if let Ok(dt) = strtime::parse("%Y-%m-%dT%H:%M:%S%.f", &with_t).and_then(|tm| tm.to_datetime())
    {
        return dt.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    }
    if let Ok(d) = strtime::parse("%Y-%m-%d", s).and_then(|tm| tm.to_date()) {
        return d.strftime("%Y-%m-%d").to_string();
    }
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dates_become_iso_8601_or_stay_as_given() {
        assert_eq!(
            normalize_date("2024-03-05T10:20:30Z"),
            "2024-03-05T10:20:30Z"
        );
        assert_eq!(
            normalize_date("2024-03-05T10:20:30+02:00"),
            "2024-03-05T10:20:30+02:00"
        );
        assert_eq!(
            normalize_date("Tue, 05 Mar 2024 10:20:30 GMT"),
            "2024-03-05T10:20:30Z"
        );
        assert_eq!(
            normalize_date("2024-03-05 10:20:30+00:00"),
            "2024-03-05T10:20:30Z"
        );
        assert_eq!(
            normalize_date("2024-03-05T10:20:30.123456"),
            "2024-03-05T10:20:30"
        );
        assert_eq!(normalize_date("2024-03-05 10:20:30"), "2024-03-05T10:20:30");
        assert_eq!(normalize_date("2024-03-05"), "2024-03-05");
        assert_eq!(normalize_date("3 days ago"), "3 days ago");
    }

    #[test]
    fn results_are_ranked_deduplicated_and_limited() {
        let raw = vec![
            json!({"url": "https://www.a.example/x", "title": "A", "content": "snip", "publishedDate": "2024-01-02T03:04:05"}),
            json!({"url": "https://www.a.example/x", "title": "A again"}),
            json!({"url": "javascript:alert(1)", "title": "bad"}),
            json!({"url": "https://b.example/", "title": "B", "source": "The B Times", "publishedDate": "yesterday"}),
            json!({"url": "https://c.example/", "title": "C"}),
        ];
        let r = map_results(&raw, 2);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].position, Some(1));
        assert_eq!(r[0].source.as_deref(), Some("a.example"));
        assert_eq!(r[0].snippet.as_deref(), Some("snip"));
        assert_eq!(r[0].date.as_deref(), Some("2024-01-02T03:04:05"));
        assert_eq!(r[1].url, "https://b.example/");
        assert_eq!(r[1].position, Some(2));
        assert_eq!(r[1].source.as_deref(), Some("The B Times"));
        assert_eq!(r[1].date.as_deref(), Some("yesterday"));
    }

    #[test]
    fn language_and_country_become_a_searxng_locale() {
        assert_eq!(
            searxng_language(Some("en"), Some("gb")).as_deref(),
            Some("en-GB")
        );
        assert_eq!(
            searxng_language(Some("pt-BR"), Some("pt")).as_deref(),
            Some("pt-BR")
        );
        assert_eq!(searxng_language(Some("FR"), None).as_deref(), Some("fr"));
        assert_eq!(searxng_language(None, Some("ch")).as_deref(), Some("de-CH"));
        assert_eq!(searxng_language(None, Some("zz")), None);
        assert_eq!(searxng_language(None, None), None);
    }

    #[test]
    fn page_urls_carry_every_parameter() {
        let s = Searxng::new("http://searx.local:8080/sx", Duration::from_secs(1)).unwrap();
        let q = SearchQuery {
            query: "rust & axum".into(),
            limit: 10,
            country: Some("de".into()),
            language: Some("de".into()),
            time_range: Some(TimeRange::Week),
        };
        assert_eq!(
            s.page_url(&q, 2).as_str(),
            "http://searx.local:8080/sx/search?q=rust+%26+axum&format=json&pageno=2&language=de-DE&time_range=week"
        );
    }
}
