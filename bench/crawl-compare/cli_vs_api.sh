#!/usr/bin/env bash
# `webdata crawl --out` vs the same crawl through the API (issue 25), on the
# release binary and the mixed Debian manuals site (~2,900 pages) served by
# a private nginx on 127.0.0.2. `make bench` runs it; ROUNDS (default 3)
# interleaved rounds, medians. Figures go in docs/benchmarks.md.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-8091}
SITE=${SITE:-mixed}
export CC_STATE=${CC_STATE:-$(mktemp -d /tmp/webdata-cli-vs-api.XXXXXX)}
cd "$REPO"
cargo build --release --bin webdata
# Wherever cargo put it (CARGO_TARGET_DIR, .cargo/config, or ./target).
TARGET=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
trap '"$HERE/site.sh" stop || true' EXIT
info=$("$HERE/site.sh" start "$SITE" "$PORT")
echo "$info"
START=$(sed -n 's/^START=//p' <<<"$info")
python3 "$HERE/cli_vs_api.py" "$TARGET/release/webdata" "$START" "$ROUNDS"
