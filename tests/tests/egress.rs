//! Issue 27: an operator's egress policy, `WEBDATA_EGRESS_ALLOW` and
//! `WEBDATA_EGRESS_DENY` (host names, addresses, CIDRs), enforced by the
//! guard for fetches, redirects and webhook targets, with `blocked_url`
//! naming the rule, and nothing charged. Host names are served on loopback
//! through `WEBDATA_RESOLVE`.

mod support;
use axum::response::{Html, IntoResponse, Redirect};
use axum::routing::get;
use serde_json::json;
use support::{article_page, Db, Server, ServerOptions, Site};

async fn sites() -> (Site, Site) {
    let other = Site::serve(
        axum::Router::new().route("/a", get(|| async { Html(article_page("Elsewhere")) })),
    )
    .await;
    // Site::serve binds 127.0.0.2; the second site is told apart by port.
    let target = other.url("/a");
    let main = Site::serve(
        axum::Router::new()
            .route("/a", get(|| async { Html(article_page("Harbour")) }))
            .route(
                "/away",
                get(move || {
                    let t = target.clone();
                    async move { Redirect::temporary(&t).into_response() }
                }),
            ),
    )
    .await;
    (main, other)
}

fn port(site: &Site) -> u16 {
    url::Url::parse(&site.base)
        .ok()
        .and_then(|u| u.port())
        .expect("port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deny_and_allow_refuse_by_name_and_address_naming_the_rule() {
    let (main, _other) = sites().await;
    let p = port(&main);
    let s = Server::start_with(
        ServerOptions::new(Db::Sqlite)
            .env(
                "WEBDATA_RESOLVE",
                "docs.test=127.0.0.2,ads.test=127.0.0.2,x.ads.test=127.0.0.2",
            )
            .env("WEBDATA_EGRESS_DENY", ".ads.test")
            .env("WEBDATA_BROWSER", "off"),
    )
    .await;
    let before = s.credits().await;
    let ok = s
        .post(
            "/v1/scrape",
            json!({"url": format!("http://docs.test:{p}/a")}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    for host in ["ads.test", "x.ads.test"] {
        let r = s
            .post("/v1/scrape", json!({"url": format!("http://{host}:{p}/a")}))
            .await;
        r.assert_error(400, "blocked_url");
        assert!(
            r.message()
                .contains("WEBDATA_EGRESS_DENY lists `.ads.test`"),
            "{}",
            r.message()
        );
    }
    // A webhook target is checked by the same rules.
    let r = s
        .post(
            "/v1/crawl",
            json!({"url": format!("http://docs.test:{p}/a"), "webhook": {"url": format!("http://ads.test:{p}/hook")}}),
        )
        .await;
    r.assert_error(400, "blocked_url");
    assert!(r.message().starts_with("webhook.url:"), "{}", r.message());
    assert_eq!(
        s.credits().await,
        before - 1,
        "only the allowed scrape is charged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_allow_list_admits_only_what_it_lists_also_after_a_redirect() {
    let (main, other) = sites().await;
    let (p, q) = (port(&main), port(&other));
    let s = Server::start_with(
        ServerOptions::new(Db::Sqlite)
            .env(
                "WEBDATA_RESOLVE",
                "docs.test=127.0.0.2,other.test=127.0.0.2",
            )
            .env("WEBDATA_EGRESS_ALLOW", "docs.test")
            .env("WEBDATA_BROWSER", "off"),
    )
    .await;
    let ok = s
        .post(
            "/v1/scrape",
            json!({"url": format!("http://docs.test:{p}/a")}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": format!("http://other.test:{q}/a")}),
        )
        .await;
    r.assert_error(400, "blocked_url");
    assert!(
        r.message()
            .contains("WEBDATA_EGRESS_ALLOW does not list other.test"),
        "{}",
        r.message()
    );
    // An IP literal is not on a names-only list.
    let r = s.post("/v1/scrape", json!({"url": other.url("/a")})).await;
    r.assert_error(400, "blocked_url");
    assert!(
        r.message().contains("WEBDATA_EGRESS_ALLOW"),
        "{}",
        r.message()
    );
    // A redirect from an allowed host to one that is not listed is refused.
    let r = s
        .post(
            "/v1/scrape",
            json!({"url": format!("http://docs.test:{p}/away")}),
        )
        .await;
    assert_ne!(r.status, 200, "{}", r.text);
    assert_eq!(r.json["error"]["code"], "blocked_url", "{}", r.text);
    assert!(
        r.message().contains("WEBDATA_EGRESS_ALLOW"),
        "{}",
        r.message()
    );
}

#[test]
fn a_bad_entry_stops_serve_naming_it() {
    let dir = std::env::temp_dir().join(support::unique("egress"));
    std::fs::create_dir_all(&dir).expect("dir");
    let out = std::process::Command::new(support::binary("webdata"))
        .arg("serve")
        .env(
            "WEBDATA_DATABASE_URL",
            format!("sqlite://{}/w.db", dir.display()),
        )
        .env("WEBDATA_LISTEN", "127.0.0.1:0")
        .env("WEBDATA_EGRESS_DENY", "exa mple.com")
        .env("WEBDATA_BROWSER", "off")
        .output()
        .expect("serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("WEBDATA_EGRESS_DENY") && err.contains("exa mple.com"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
