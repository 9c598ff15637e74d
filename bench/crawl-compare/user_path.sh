#!/usr/bin/env bash
# The crawl as a user runs it (issue 24): the release `webdata serve` and its
# API on the mixed Debian manuals site (python3-doc + python-django-doc +
# postgresql-doc-15 under one root, ~2,400 pages) on a private nginx at
# 127.0.0.2, side by side in one run with spider + htmd and spider
# fetch-only; interleaved rounds, medians. `make bench` runs it.
#
# Env: ROUNDS (3), PORT (8092), SITE (mixed), SPIDER_TARGET (as run.sh),
#      PG=1 also runs the crawl on PostgreSQL (a private server on port
#      55433 with its default durability) with the API running no workers
#      and 1, then 2 webdata-worker processes.
#      BIG=1 also crawls a generated site of 100,000 pages (gen_site.py,
#      ~400 MB on disk) through the API with --trace: pages/s, RSS and the
#      status call's latency per tenth of the crawl.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-8092}
SITE=${SITE:-mixed}
if [ -z "${SPIDER_TARGET:-}" ]; then
    if [ -d /work ]; then SPIDER_TARGET=/work/spider-target; else SPIDER_TARGET=$HERE/spider/target; fi
fi
export CC_STATE=${CC_STATE:-$(mktemp -d /tmp/webdata-user-path.XXXXXX)}
cd "$REPO"
cargo build --release --bin webdata --bin webdata-worker
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
(
    cd "$HERE/spider"
    cargo fetch --locked
    if unshare -n true 2>/dev/null; then
        CARGO_TARGET_DIR=$SPIDER_TARGET nice -n 10 unshare -n cargo build --release --offline --locked
    else
        CARGO_TARGET_DIR=$SPIDER_TARGET nice -n 10 cargo build --release --offline --locked
    fi
)
cleanup() {
    "$HERE/site.sh" stop || true
    [ -z "${PG:-}" ] || WEBDATA_TEST_PG_PORT=55433 WEBDATA_TEST_PG_DURABLE=1 bash "$REPO/scripts/test-postgres.sh" stop
}
trap cleanup EXIT
info=$(ACCESS_LOG=1 "$HERE/site.sh" start "$SITE" "$PORT")
echo "$info"
START=$(sed -n 's/^START=//p' <<<"$info")
LOG=$(sed -n 's/^ACCESS_LOG=//p' <<<"$info")
common=(--webdata "$TARGET/release/webdata" --worker "$TARGET/release/webdata-worker"
        --spider "$SPIDER_TARGET/release/spider-htmd-bench" --start "$START" --access-log "$LOG" --rounds "$ROUNDS")
python3 "$HERE/user_path.py" "${common[@]}"
if [ -n "${PG:-}" ]; then
    PG_URL=$(WEBDATA_TEST_PG_PORT=55433 WEBDATA_TEST_PG_DURABLE=1 bash "$REPO/scripts/test-postgres.sh" start)
    for n in 1 2; do
        python3 "$HERE/user_path.py" "${common[@]}" --tools api,spider --postgres "$PG_URL" --workers "$n"
    done
fi
if [ -n "${BIG:-}" ]; then
    "$HERE/site.sh" stop
    info=$(ACCESS_LOG=1 "$HERE/site.sh" start gen-100000 "$PORT")
    python3 "$HERE/user_path.py" --webdata "$TARGET/release/webdata" --worker "$TARGET/release/webdata-worker" \
        --spider "$SPIDER_TARGET/release/spider-htmd-bench" --start "$(sed -n 's/^START=//p' <<<"$info")" \
        --access-log "$(sed -n 's/^ACCESS_LOG=//p' <<<"$info")" --rounds 1 --tools api --trace
fi
