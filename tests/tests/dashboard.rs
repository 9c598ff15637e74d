//! The dashboard's journeys in real Chromium: the Playwright suite in
//! `tests/dashboard/` (Python, from PyPI, driving Debian's chromium) run
//! against the `webdata` binary this build made. `make test` installs
//! Playwright into `.venv`.

mod support;

#[test]
fn dashboard_journeys_in_chromium() {
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
            "tests/dashboard",
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
        "the dashboard journeys failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains(" passed") && !stdout.contains(" failed"),
        "pytest ran no journey: {stdout}"
    );
}
