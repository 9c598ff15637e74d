#!/usr/bin/env bash
# Starts (or stops) a throwaway PostgreSQL server on loopback for the tests.
#   scripts/test-postgres.sh start   -> prints the URL to export as WEBDATA_TEST_POSTGRES_URL
#   scripts/test-postgres.sh stop
# Uses Debian's binaries (/usr/lib/postgresql/*/bin); as root it runs them as
# the `postgres` user, since PostgreSQL refuses to run as root.
set -euo pipefail
PORT="${WEBDATA_TEST_PG_PORT:-55432}"
DIR="${WEBDATA_TEST_PG_DIR:-/tmp/webdata-test-pg-$PORT}"
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)"
[ -n "$BIN" ] || { echo "PostgreSQL server binaries not found (apt-get install postgresql)" >&2; exit 1; }

as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "${1:-start}" in
  start)
    if [ -f "$DIR/postmaster.pid" ] && as_pg "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
      echo "postgres://postgres@127.0.0.1:$PORT/postgres"; exit 0
    fi
    rm -rf "$DIR"; mkdir -p "$DIR"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
    as_pg "$BIN/initdb" -D "$DIR" -U postgres --auth=trust --no-sync -E UTF8 >"$DIR.initdb.log" 2>&1 \
      || { cat "$DIR.initdb.log" >&2; exit 1; }
    # Tests trade durability for speed; WEBDATA_TEST_PG_DURABLE=1 (the
    # benchmarks) keeps PostgreSQL's defaults.
    FAST="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    [ -z "${WEBDATA_TEST_PG_DURABLE:-}" ] || FAST=""
    as_pg "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" -w -t 30 \
      -o "-h 127.0.0.1 -p $PORT -k $DIR $FAST -c max_connections=400" \
      start >/dev/null || { cat "$DIR/server.log" >&2; exit 1; }
    echo "postgres://postgres@127.0.0.1:$PORT/postgres"
    ;;
  stop)
    [ -d "$DIR" ] && as_pg "$BIN/pg_ctl" -D "$DIR" -m fast stop >/dev/null 2>&1 || true
    rm -rf "$DIR" "$DIR.initdb.log"
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
