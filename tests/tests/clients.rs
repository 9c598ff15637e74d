//! Released clients of other services driven against the real `webdata`
//! binary: firecrawl-py (PyPI) and @mendable/firecrawl-js (npm) through the
//! Firecrawl-compatible API, in `tests/clients/`. `make test` installs them
//! (`.venv`, `tests/clients/js/node_modules`).

mod support;

#[test]
fn firecrawl_clients_work_unchanged_against_webdata() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf();
    let python = root.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `make test` (it installs the Python test tools)",
        python.display()
    );
    let out = std::process::Command::new(&python)
        .current_dir(&root)
        .args([
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/clients",
        ])
        .env("WEBDATA_BIN", support::binary("webdata"))
        .output()
        .expect("run pytest");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    eprintln!("{stderr}");
    assert!(
        out.status.success(),
        "the client tests failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains(" passed") && !stdout.contains(" failed"),
        "pytest ran no test: {stdout}"
    );
}
