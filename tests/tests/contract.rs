//! Contract fuzzing, bounded: schemathesis (PyPI) against the real
//! `webdata serve`'s `/v1/openapi.json`, stateless and stateful, with the
//! service's egress closed to all but a loopback test site, and a check that
//! every refused request charged nothing (`tests/contract/`). The long run
//! is `make fuzz-contract`.

mod support;
use support::{fresh_database, Db};

#[tokio::test]
async fn every_operation_keeps_its_contract_under_schemathesis() {
    let database_url = fresh_database(Db::Sqlite).await;
    support::run_pytest(
        "tests/contract",
        &[("WEBDATA_CONTRACT_DATABASE_URL", database_url.as_str())],
    );
}
