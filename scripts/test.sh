#!/usr/bin/env bash
# Runs every test: formatting and lints, then unit, contract and end-to-end
# tests against SQLite and a PostgreSQL server started here on loopback.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

echo "== fmt, clippy and import cycles"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
python3 scripts/check-cycles.py core/src worker/content/src worker/engine/src worker/src \
  api/src operator/src operator/crd/src
# The API uses the CRD types without the operator's runtime; the content
# pipeline reaches no network.
for forbidden in "webdata-api kube-runtime" "webdata-api webdata-operator" \
  "webdata-content reqwest" "webdata-content webdata-engine"; do
  set -- $forbidden
  if cargo tree -q -p "$1" -e normal -i "$2" >/dev/null 2>&1; then
    echo "$1 must not depend on $2:"; cargo tree -p "$1" -e normal -i "$2"; exit 1
  fi
done

echo "== build"
cargo build --workspace --bins --tests

echo "== postgres on loopback"
PG_URL="$(bash scripts/test-postgres.sh start)"
trap 'bash scripts/test-postgres.sh stop' EXIT
export WEBDATA_TEST_POSTGRES_URL="$PG_URL"
echo "   $PG_URL"

echo "== tests"
if cargo nextest --version >/dev/null 2>&1; then
  cargo nextest run --workspace --no-fail-fast --test-threads "${WEBDATA_TEST_THREADS:-4}"
else
  cargo test --workspace --no-fail-fast
fi
