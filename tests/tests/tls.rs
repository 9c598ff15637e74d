//! Issue 27: `webdata serve` terminates TLS itself with `WEBDATA_TLS_CERT`
//! and `WEBDATA_TLS_KEY` (rustls), reloads them when the files change,
//! and sends security headers on every answer (HSTS when serving TLS).
//! The certificates come from `webdata tls self-signed`.

mod support;
use std::process::Command;
use std::time::{Duration, Instant};
use support::{binary, unique, Db, Server, ServerOptions};

fn self_signed(dir: &std::path::Path) -> (Vec<u8>, Vec<u8>) {
    let out = Command::new(binary("webdata"))
        .args(["tls", "self-signed", "--out"])
        .arg(dir)
        .output()
        .expect("webdata tls self-signed");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let cert = std::fs::read(dir.join("cert.pem")).expect("cert.pem");
    let key = std::fs::read(dir.join("key.pem")).expect("key.pem");
    (cert, key)
}

/// A client that trusts `cert_pem` only, on a fresh connection each time.
fn client(cert_pem: &[u8]) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(cert_pem).expect("pem"))
        .tls_info(true)
        .pool_max_idle_per_host(0)
        .build()
        .expect("client")
}

/// The DER of the certificate the server presented.
fn peer_der(resp: &reqwest::Response) -> Vec<u8> {
    resp.extensions()
        .get::<reqwest::tls::TlsInfo>()
        .and_then(|t| t.peer_certificate())
        .map(<[u8]>::to_vec)
        .expect("the server's certificate")
}

fn pem_to_der(pem: &[u8]) -> Vec<u8> {
    use base64::Engine as _;
    let text = String::from_utf8_lossy(pem);
    let body: String = text.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("base64")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serve_terminates_tls_and_reloads_a_renewed_certificate() {
    let dir = std::env::temp_dir().join(unique("tls"));
    let live = dir.join("live");
    let (cert1, _) = self_signed(&live);
    let s = Server::start_with(
        ServerOptions::new(Db::Sqlite)
            .env(
                "WEBDATA_TLS_CERT",
                &live.join("cert.pem").display().to_string(),
            )
            .env(
                "WEBDATA_TLS_KEY",
                &live.join("key.pem").display().to_string(),
            ),
    )
    .await;
    assert!(s.base.starts_with("https://127.0.0.1:"), "{}", s.base);
    let https = client(&cert1);
    let r = https
        .get(s.url("/v1/team/credit-usage"))
        .bearer_auth(&s.key)
        .send()
        .await
        .expect("https request");
    assert_eq!(r.status(), 200);
    assert_eq!(peer_der(&r), pem_to_der(&cert1));
    let h = r.headers();
    assert_eq!(
        h["strict-transport-security"],
        "max-age=31536000; includeSubDomains"
    );
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(h["x-frame-options"], "DENY");
    // Errors carry them too.
    let r = https
        .get(s.url("/v1/crawl/nope"))
        .send()
        .await
        .expect("401");
    assert_eq!(r.status(), 401);
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert!(r.headers().contains_key("strict-transport-security"));
    // Plain HTTP on the TLS port gets no answer.
    let plain = s.base.replacen("https://", "http://", 1);
    let p = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(5))
        .build()
        .expect("client")
        .get(format!("{plain}/healthz"))
        .send()
        .await;
    assert!(p.is_err() || p.is_ok_and(|r| r.status() != 200));

    // A renewed certificate (written over the files) is served to new
    // connections without a restart.
    let (cert2, key2) = self_signed(&dir.join("next"));
    assert_ne!(cert1, cert2);
    std::fs::write(live.join("key.pem"), &key2).expect("key");
    std::fs::write(live.join("cert.pem"), &cert2).expect("cert");
    let https2 = client(&cert2);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Ok(r) = https2.get(s.url("/healthz")).send().await {
            assert_eq!(peer_der(&r), pem_to_der(&cert2));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the renewed certificate was not served"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // A broken pair is refused and the current one kept.
    std::fs::write(live.join("cert.pem"), b"not a certificate").expect("cert");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let r = https2
        .get(s.url("/healthz"))
        .send()
        .await
        .expect("still served");
    assert_eq!(peer_der(&r), pem_to_der(&cert2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plain_http_answers_carry_security_headers_but_no_hsts_and_half_a_tls_setting_is_refused() {
    let dir = std::env::temp_dir().join(unique("tls-half"));
    let (_, _) = self_signed(&dir);
    let out = Command::new(binary("webdata"))
        .arg("serve")
        .env(
            "WEBDATA_DATABASE_URL",
            format!("sqlite://{}/w.db", dir.display()),
        )
        .env("WEBDATA_LISTEN", "127.0.0.1:0")
        .env("WEBDATA_TLS_CERT", dir.join("cert.pem"))
        .env_remove("WEBDATA_TLS_KEY")
        .env("WEBDATA_BROWSER", "off")
        .output()
        .expect("serve");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("WEBDATA_TLS_CERT and WEBDATA_TLS_KEY go together"),
        "{err}"
    );
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let s = Server::start(Db::Sqlite).await;
        assert!(s.base.starts_with("http://"));
        let r = s.http.get(s.url("/healthz")).send().await.expect("healthz");
        assert_eq!(r.headers()["x-content-type-options"], "nosniff");
        assert!(!r.headers().contains_key("strict-transport-security"));
    });
    let _ = std::fs::remove_dir_all(&dir);
}
