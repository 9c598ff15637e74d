//! Released clients of other services driven against the real `webdata`
//! binary: firecrawl-py (PyPI), @mendable/firecrawl-js and firecrawl-mcp (npm) through the
//! Firecrawl-compatible API, in `tests/clients/`. `make test` installs them
//! (`.venv`, `tests/clients/js/node_modules`).

mod support;
use support::{fresh_database, Db};

#[tokio::test]
async fn firecrawl_clients_work_unchanged_against_webdata_on_sqlite() {
    run(Db::Sqlite).await
}

#[tokio::test]
async fn firecrawl_clients_work_unchanged_against_webdata_on_postgres() {
    run(Db::Postgres).await
}

async fn run(db: Db) {
    let database_url = fresh_database(db).await;
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
        .env("WEBDATA_CLIENTS_DATABASE_URL", &database_url)
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
