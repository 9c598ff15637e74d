//! `make run` starts the binary cargo built, wherever cargo put it
//! (`CARGO_TARGET_DIR`, a `.cargo/config` target dir, or `./target`), and
//! prints how to call it. The build is stood in for by a `cargo` that
//! reports this test build's `webdata` the way `cargo build
//! --message-format=json` reports an artifact, and make runs from another
//! folder, so nothing can be found at `./target/release/webdata`.

mod support;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

#[test]
fn make_run_starts_the_binary_cargo_built_wherever_it_is() {
    let (banner, base, tmp) = make_run(&[]);
    assert!(base.starts_with("http://127.0.0.1:"), "{base}");
    assert!(
        banner.iter().any(|l| l.contains("Dashboard:   http://")),
        "{banner:?}"
    );
    let _ = std::fs::remove_dir_all(&tmp);
}

/// `make run TLS=1`: a self-signed pair is made on the first run and the
/// service answers HTTPS.
#[test]
fn make_run_tls_serves_https_with_a_self_signed_pair() {
    let (banner, base, tmp) = make_run(&["TLS=1"]);
    assert!(base.starts_with("https://127.0.0.1:"), "{base}");
    assert!(
        banner.iter().any(|l| l.contains("Dashboard:   https://")),
        "{banner:?}"
    );
    assert!(banner.iter().any(|l| l.contains("--cacert")), "{banner:?}");
    assert!(tmp.join("run/tls/cert.pem").exists() && tmp.join("run/tls/key.pem").exists());
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Runs `make run` (plus `extra`) from another folder with a stand-in
/// cargo, waits for the service, stops it; the banner, the URL it
/// listened on, and the folder.
fn make_run(extra: &[&str]) -> (Vec<String>, String, std::path::PathBuf) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let tmp = std::env::temp_dir().join(support::unique("make-run"));
    std::fs::create_dir_all(&tmp).expect("tmp");
    let bin = support::binary("webdata");
    let cargo = tmp.join("cargo");
    std::fs::write(
        &cargo,
        format!(
            "#!/bin/sh\n\
             echo '{{\"reason\":\"compiler-artifact\",\"target\":{{\"name\":\"webdata\"}},\"executable\":\"{}\",\"fresh\":true}}'\n\
             echo '{{\"reason\":\"build-finished\",\"success\":true}}'\n",
            bin.display()
        ),
    )
    .expect("write cargo");
    std::fs::set_permissions(&cargo, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let mut child = Command::new("make")
        .arg("-s")
        .arg("-f")
        .arg(root.join("Makefile"))
        .arg("-C")
        .arg(&tmp)
        .arg("run")
        .arg(format!("CARGO={}", cargo.display()))
        .arg(format!("RUN_DIR={}", tmp.join("run").display()))
        .arg("LISTEN=127.0.0.1:0")
        .arg("FIRECRAWL_LISTEN=127.0.0.1:0")
        .args(extra)
        .env("WEBDATA_BROWSER", "off")
        .env("CARGO_TARGET_DIR", tmp.join("elsewhere"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("make run");
    // Read everything make prints (a reader that stopped early would
    // kill the shell with SIGPIPE).
    let stdout = child.stdout.take().expect("stdout");
    let lines: std::sync::Arc<std::sync::Mutex<Vec<String>>> = Default::default();
    let sink = lines.clone();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            sink.lock().unwrap_or_else(|p| p.into_inner()).push(l);
        }
    });
    let (mut child, log, ready) = support::follow_stderr(child, "webdata listening on ");
    let base = ready.recv_timeout(Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(200));
    let banner = lines.lock().unwrap_or_else(|p| p.into_inner()).clone();
    // make, its shell and the service it started are one process group
    // (its own: checked, so no other process can be signalled).
    let pgrp = std::fs::read_to_string(format!("/proc/{}/stat", child.id()))
        .ok()
        .and_then(|s| s.rsplit_once(')').map(|(_, r)| r.to_string()))
        .and_then(|r| r.split_whitespace().nth(2).map(str::to_string));
    if pgrp == Some(child.id().to_string()) {
        let _ = Command::new("kill")
            .args(["-TERM", "--", &format!("-{}", child.id())])
            .status();
    } else {
        let _ = child.kill();
    }
    let _ = child.wait();
    let base = base.unwrap_or_else(|_| {
        panic!(
            "the service did not start; make printed:\n{}\n{}",
            banner.join("\n"),
            log.lock().unwrap_or_else(|p| p.into_inner()).join("\n")
        )
    });
    let key = banner
        .iter()
        .find_map(|l| l.trim().strip_prefix("API key:"))
        .map(|k| k.trim().to_string())
        .expect("the banner shows the API key");
    assert!(key.starts_with("wd_"), "{banner:?}");
    assert!(
        banner.iter().any(|l| l.contains("Dashboard:")),
        "{banner:?}"
    );
    assert!(
        banner
            .iter()
            .any(|l| l.contains("First login: owner@webdata.local / ")),
        "{banner:?}"
    );
    assert!(
        banner.iter().any(|l| l.contains("MCP (Streamable HTTP):")),
        "{banner:?}"
    );
    (banner, base, tmp)
}
