#!/usr/bin/env bash
# Runs every test: formatting and lints, then unit, contract and end-to-end
# tests against SQLite and a PostgreSQL server started here on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

echo "== fmt, clippy and the layout rules"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
bash scripts/check-layout.sh

echo "== build"
cargo build --workspace --bins --tests

# Every test's temporary folders (SQLite stores, browser profiles, test
# sites) go under one folder of this run, removed at the end: repeated runs
# must not fill the disk the next build needs.
RUN_TMP="$(mktemp -d "${TMPDIR:-/tmp}/webdata-test-run.XXXXXX")"
# Like /tmp: tests that run a server as another user (PostgreSQL as
# `postgres`) make their folders in it too.
chmod 1777 "$RUN_TMP"
export TMPDIR="$RUN_TMP"
trap 'rm -rf "$RUN_TMP"' EXIT

echo "== postgres on loopback"
PG_URL="$(bash scripts/test-postgres.sh start)"
trap 'bash scripts/test-postgres.sh stop; rm -rf "$RUN_TMP"' EXIT
export WEBDATA_TEST_POSTGRES_URL="$PG_URL"
echo "   $PG_URL"

echo "== tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast --test-threads "${WEBDATA_TEST_THREADS:-4}"
else
  cargo test --workspace --no-fail-fast
fi
