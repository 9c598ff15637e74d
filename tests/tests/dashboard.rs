//! The dashboard's journeys in real Chromium: the Playwright suite in
//! `tests/dashboard/` (Python, from PyPI, driving Debian's chromium) run
//! against the `webdata` binary this build made. `make test` installs
//! Playwright into `.venv`.

mod support;

#[test]
fn dashboard_journeys_in_chromium() {
    support::run_pytest("tests/dashboard", &[]);
}
