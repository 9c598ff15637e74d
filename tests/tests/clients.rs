//! Released clients driven against the real `webdata` binary, in
//! `tests/clients/`, on a fresh SQLite and a fresh PostgreSQL database:
//! firecrawl-py (PyPI), @mendable/firecrawl-js and firecrawl-mcp (npm)
//! through the Firecrawl-compatible API, and the official MCP Python SDK
//! (`mcp` on PyPI) against webdata's own MCP server over Streamable HTTP
//! (`POST /mcp`) and stdio (`webdata mcp`). `make test` installs them
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
    // One fresh database for the Firecrawl clients' service, another for
    // the MCP tests' own service (each bootstraps its own organization).
    let database_url = fresh_database(db).await;
    let mcp_database_url = fresh_database(db).await;
    support::run_pytest(
        "tests/clients",
        &[
            ("WEBDATA_CLIENTS_DATABASE_URL", database_url.as_str()),
            ("WEBDATA_MCP_DATABASE_URL", mcp_database_url.as_str()),
        ],
    );
}
