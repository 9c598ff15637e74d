//! Marking an operation deprecated: responses carry `Deprecation`
//! (RFC 9745), `Sunset` (RFC 8594) and `Link: <…>; rel="deprecation"`.
//!
//! Wrap a route with [`deprecate`]:
//! `.route("/v1/old", post(old).layer(deprecate(Deprecated { … })))`.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use std::time::{Duration, SystemTime};

/// When an operation was deprecated, when it goes away, and where the
/// migration notes are. The sunset must be at least 90 days after the
/// deprecation date.
#[derive(Debug, Clone)]
pub struct Deprecated {
    pub since: SystemTime,
    pub sunset: SystemTime,
    pub link: String,
}

/// The minimum notice between deprecation and removal.
pub const MIN_NOTICE: Duration = Duration::from_secs(90 * 24 * 60 * 60);

impl Deprecated {
    /// Refuses a sunset less than 90 days after the deprecation.
    pub fn new(
        since: SystemTime,
        sunset: SystemTime,
        link: impl Into<String>,
    ) -> Result<Self, String> {
        match sunset.duration_since(since) {
            Ok(d) if d >= MIN_NOTICE => Ok(Deprecated {
                since,
                sunset,
                link: link.into(),
            }),
            _ => Err("the sunset must be at least 90 days after the deprecation".into()),
        }
    }

    /// The three header values: Deprecation, Sunset, Link.
    pub fn header_values(&self) -> (String, String, String) {
        let since = self
            .since
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        (
            format!("@{since}"),
            httpdate::fmt_http_date(self.sunset),
            format!("<{}>; rel=\"deprecation\"; type=\"text/html\"", self.link),
        )
    }
}

/// The future the deprecation middleware returns.
type HeaderFuture = std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>>;

/// A layer that adds the deprecation headers to every response of a route.
pub fn deprecate(
    info: Deprecated,
) -> axum::middleware::FromFnLayer<impl Fn(Request, Next) -> HeaderFuture + Clone, (), (Request,)> {
    let (dep, sunset, link) = info.header_values();
    axum::middleware::from_fn(move |req: Request, next: Next| {
        let (dep, sunset, link) = (dep.clone(), sunset.clone(), link.clone());
        Box::pin(async move {
            let mut resp = next.run(req).await;
            let h = resp.headers_mut();
            if let Ok(v) = HeaderValue::from_str(&dep) {
                h.insert("deprecation", v);
            }
            if let Ok(v) = HeaderValue::from_str(&sunset) {
                h.insert("sunset", v);
            }
            if let Ok(v) = HeaderValue::from_str(&link) {
                h.append("link", v);
            }
            resp
        }) as HeaderFuture
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use tower::ServiceExt;

    #[tokio::test]
    async fn deprecated_route_carries_the_three_headers_and_others_do_not() {
        let since = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600); // 2026-01-01
        let sunset = since + MIN_NOTICE;
        let dep =
            Deprecated::new(since, sunset, "https://docs.example/migrate-v2").expect("notice");
        let app = axum::Router::new()
            .route("/v1/old", get(|| async { "old" }).layer(deprecate(dep)))
            .route("/v1/new", get(|| async { "new" }));
        let old = app
            .clone()
            .oneshot(
                Request::builder()
                    .uri("/v1/old")
                    .body(axum::body::Body::empty())
                    .expect("req"),
            )
            .await
            .expect("resp");
        let h = old.headers();
        assert_eq!(
            h.get("deprecation").and_then(|v| v.to_str().ok()),
            Some("@1767225600")
        );
        assert_eq!(
            h.get("sunset").and_then(|v| v.to_str().ok()),
            Some("Wed, 01 Apr 2026 00:00:00 GMT")
        );
        assert_eq!(
            h.get("link").and_then(|v| v.to_str().ok()),
            Some("<https://docs.example/migrate-v2>; rel=\"deprecation\"; type=\"text/html\"")
        );
        let new = app
            .oneshot(
                Request::builder()
                    .uri("/v1/new")
                    .body(axum::body::Body::empty())
                    .expect("req"),
            )
            .await
            .expect("resp");
        assert!(new.headers().get("deprecation").is_none());
        assert!(new.headers().get("sunset").is_none());
    }

    #[test]
    fn notice_shorter_than_90_days_is_refused() {
        let since = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        assert!(Deprecated::new(since, since + Duration::from_secs(89 * 86400), "x").is_err());
    }
}
