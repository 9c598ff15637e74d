//! Issue 8: the Helm chart renders and lints offline, every rendered
//! manifest passes kubernetes-validate --strict, sample CRs validate against
//! the generated CRD schemas and invalid ones are rejected
//! (`tests/chart/check_chart.py`, run with the Python tools `make test`
//! installs into .venv).

use std::process::Command;

#[test]
fn chart_renders_lints_and_validates() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let python = std::env::var("WEBDATA_TEST_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| root.join(".venv/bin/python"));
    assert!(
        python.exists(),
        "{} is missing: run `make test` (it installs the Python test tools into .venv)",
        python.display()
    );
    let out = Command::new(&python)
        .arg(root.join("tests/chart/check_chart.py"))
        .current_dir(&root)
        .output()
        .expect("run check_chart.py");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.contains("chart checks passed"), "{text}");
}
