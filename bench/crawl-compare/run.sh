#!/usr/bin/env bash
# Side-by-side crawl benchmark (issue 5): webdata's CrawlRunner with the
# embedded SQLite store vs the `spider` crate + htmd, both crawling the same
# real documentation site (a Debian doc package) served by a private nginx
# on 127.0.0.2, markdown for every page. `make bench-compare` runs it.
#
# Env: SITES (default "python3-doc postgresql-doc-15"), CONCURRENCY (32),
#      ROUNDS (2: webdata, spider, webdata, spider, ...), PORT (8089),
#      WEBDATA_TARGET (cargo target dir for our example; default ./target of
#      the repo), SPIDER_TARGET (default /work/spider-target if /work exists,
#      else bench/crawl-compare/spider/target).
#
# Network: the spider project's dependencies are fetched from crates.io
# (cargo fetch) and then built offline inside an empty network namespace
# (unshare -n) when possible: spider_fingerprint's build script, which spider
# enables with `dynamic-versions`, would otherwise try to download Chrome
# version lists at build time (it falls back to its bundled file). Both
# crawlers are pointed at 127.0.0.2 only.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
SITES=${SITES:-"python3-doc postgresql-doc-15"}
CONCURRENCY=${CONCURRENCY:-32}
ROUNDS=${ROUNDS:-2}
PORT=${PORT:-8089}
WEBDATA_TARGET=${WEBDATA_TARGET:-${CARGO_TARGET_DIR:-$REPO/target}}
if [ -z "${SPIDER_TARGET:-}" ]; then
    if [ -d /work ]; then SPIDER_TARGET=/work/spider-target; else SPIDER_TARGET=$HERE/spider/target; fi
fi
export CC_STATE=${CC_STATE:-$(mktemp -d /tmp/webdata-crawl-compare.XXXXXX)}
OUT=$CC_STATE/results
mkdir -p "$OUT"
trap '"$HERE/site.sh" stop || true' EXIT

echo "== build (release)"
(cd "$REPO" && CARGO_TARGET_DIR=$WEBDATA_TARGET nice -n 10 cargo build --release -p webdata-engine --example crawl_site)
(
    cd "$HERE/spider"
    cargo fetch --locked
    if unshare -n true 2>/dev/null; then
        CARGO_TARGET_DIR=$SPIDER_TARGET nice -n 10 unshare -n cargo build --release --offline --locked
    else
        echo "unshare -n not available: building spider with the network (its build script may try to reach the internet)" >&2
        CARGO_TARGET_DIR=$SPIDER_TARGET nice -n 10 cargo build --release --offline --locked
    fi
)
WD=$WEBDATA_TARGET/release/examples/crawl_site
SP=$SPIDER_TARGET/release/spider-htmd-bench

ticks() { # utime+stime of a pid in ms
    awk '{ s=$0; sub(/.*\) /, "", s); split(s, f, " "); print (f[12] + f[13]) * 10 }' "/proc/$1/stat" 2>/dev/null || echo 0
}
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$2"; }

ROWS=$OUT/rows.tsv
printf "site\ttool\trun\tpages\tnon_200\tfailed\twall_s\tpages_s\tcpu_ms_page\tpeak_rss_mb\tnginx_cpu_ms_page\tload1\n" > "$ROWS"
for site in $SITES; do
    echo "== site $site"
    if ! info=$("$HERE/site.sh" start "$site" "$PORT"); then
        echo "site $site unavailable, skipped" >&2; continue
    fi
    echo "$info" | sed 's/^/   /'
    start=$(sed -n 's/^START=//p' <<<"$info")
    master=$(sed -n 's/^NGINX_PID=//p' <<<"$info")
    worker=$(pgrep -P "$master" | head -1)
    echo "$info" > "$OUT/$site.site"
    for r in $(seq "$ROUNDS"); do
        for tool in webdata spider; do
            n0=$(ticks "$worker")
            load=$(cut -d' ' -f1 /proc/loadavg)
            if [ $tool = webdata ]; then
                "$WD" "$start" "$CONCURRENCY" 100000 "$OUT/$site.webdata.urls" > "$OUT/$site.$tool.$r.log"
                notok=$(grep -vc ' 200$' "$OUT/$site.webdata.urls" || true)
            else
                "$SP" "$start" "$CONCURRENCY" "$OUT/$site.spider.urls" > "$OUT/$site.$tool.$r.log"
                notok=$(grep -vc ' 200$' "$OUT/$site.spider.urls" || true)
                failed=-
            fi
            n1=$(ticks "$worker")
            grep -v '^RESULT' "$OUT/$site.$tool.$r.log" | sed 's/^/   /'
            line=$(grep '^RESULT' "$OUT/$site.$tool.$r.log")
            [ $tool = webdata ] && failed=$(field failed "$line")
            pages=$(field pages "$line")
            ngx=$(awk -v a="$n0" -v b="$n1" -v p="$pages" 'BEGIN { printf "%.2f", (b - a) / (p > 0 ? p : 1) }')
            printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n" "$site" "$tool" "$r" "$pages" "$notok" "$failed" \
                "$(field secs "$line")" "$(field pps "$line")" "$(field cpu_ms_per_page "$line")" \
                "$(field peak_rss_mb "$line")" "$ngx" "$load" >> "$ROWS"
        done
    done
    # Page sets: URL lists (status after the URL) of the last round.
    awk '{print $1}' "$OUT/$site.webdata.urls" | sort > "$OUT/$site.webdata.set"
    awk '{print $1}' "$OUT/$site.spider.urls" | sort > "$OUT/$site.spider.set"
    echo "   page sets: webdata $(wc -l < "$OUT/$site.webdata.set") URLs stored, spider $(wc -l < "$OUT/$site.spider.set") pages delivered, reachable HTML on disk $(sed -n 's/^PAGES=//p' <<<"$info")"
    echo "   only webdata: $(comm -23 "$OUT/$site.webdata.set" "$OUT/$site.spider.set" | head -5 | tr '\n' ' ')"
    echo "   only spider:  $(comm -13 "$OUT/$site.webdata.set" "$OUT/$site.spider.set" | head -5 | tr '\n' ' ')"
    echo "   non-200 (webdata): $(grep -v ' 200$' "$OUT/$site.webdata.urls" | head -5 | tr '\n' ' ')"
    echo "   non-200 (spider):  $(grep -v ' 200$' "$OUT/$site.spider.urls" | head -5 | tr '\n' ' ')"
    "$HERE/site.sh" stop
done

echo
echo "== results (concurrency $CONCURRENCY; CPU ms/page is the crawler process only; nginx worker CPU separately; both share the 2 cores)"
column -t -s $'\t' "$ROWS"
echo "(raw: $ROWS)"
