#!/usr/bin/env bash
# Ten minutes of sustained load (issue 27) against the release `webdata serve`
# on SQLite, then on PostgreSQL (a private server on port 55433 with its
# default durability): bench/load/load.py's mix against Python's manual
# (python3-doc) on a private nginx at 127.0.0.2. Loopback only.
#
# Env: DURATION (600 s per store), USERS (16), PORT (8093), STORES
#      ("sqlite postgres"), OUT (folder for the JSON reports, a temp dir),
#      WEBDATA_BIN (a built binary to load instead of building the release one).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
DURATION=${DURATION:-600}
USERS=${USERS:-16}
PORT=${PORT:-8093}
STORES=${STORES:-sqlite postgres}
OUT=${OUT:-$(mktemp -d /tmp/webdata-load.XXXXXX)}
export CC_STATE=${CC_STATE:-$(mktemp -d /tmp/webdata-load-site.XXXXXX)}
cd "$REPO"
bash scripts/install-test-deps.sh >/dev/null
if [ -z "${WEBDATA_BIN:-}" ]; then
    cargo build --release --bin webdata
    TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
    WEBDATA_BIN="$TARGET/release/webdata"
fi
SITE="$REPO/bench/crawl-compare/site.sh"
cleanup() {
    "$SITE" stop || true
    case " $STORES " in *" postgres "*)
        WEBDATA_TEST_PG_PORT=55433 WEBDATA_TEST_PG_DURABLE=1 bash "$REPO/scripts/test-postgres.sh" stop ;; esac
}
trap cleanup EXIT
info=$("$SITE" start python3-doc "$PORT")
echo "$info"
DIR=$(sed -n 's/^DIR=//p' <<<"$info")
status=0
for store in $STORES; do
    db=()
    if [ "$store" = postgres ]; then
        pg=$(WEBDATA_TEST_PG_PORT=55433 WEBDATA_TEST_PG_DURABLE=1 bash scripts/test-postgres.sh start)
        name=webdata_load_$$_$(date +%s)
        psql "$pg" -qc "CREATE DATABASE $name" >/dev/null
        db=(--database-url "${pg%/*}/$name")
    fi
    echo "== $store: ${DURATION}s, $USERS users"
    "$REPO/.venv/bin/python" "$HERE/load.py" --webdata "$WEBDATA_BIN" --site-dir "$DIR" \
        --site-url "http://docs.test:$PORT" --duration "$DURATION" --users "$USERS" \
        --out "$OUT/$store.json" "${db[@]}" || status=1
done
echo "reports: $OUT"
exit $status
