#!/usr/bin/env bash
# Interleaved medians: runs each labelled command N times, alternating
# (a, b, a, b, ...), and prints the median pages/s of each (the `pps=` and
# `cpu_ms_per_page=` fields of the `RESULT` line that crawl_site and the
# spider harness print). For comparing builds or crawlers on a machine whose
# speed drifts: only runs close in time are compared.
#
#   bench/crawl-compare/median.sh 7 \
#     webdata "target/release/examples/crawl_site http://127.0.0.2:8089/index.html 32 100000" \
#     spider  "/work/spider-target/release/spider-htmd-bench http://127.0.0.2:8089/index.html 32"
#
# (start the site first: CC_STATE=/tmp/cc bash bench/crawl-compare/site.sh start postgresql-doc-15 8089)
set -euo pipefail
N=$1
shift
labels=()
cmds=()
while [ $# -gt 0 ]; do
    labels+=("$1")
    cmds+=("$2")
    shift 2
done
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for _ in $(seq "$N"); do
    for k in "${!labels[@]}"; do
        r=$(bash -c "${cmds[$k]}" 2>/dev/null | grep '^RESULT' |
            sed -n 's/.* pps=\([^ ]*\).*cpu_ms_per_page=\([^ ]*\).*/\1 \2/p')
        echo "${labels[$k]} $r" >> "$out"
    done
done
for k in "${!labels[@]}"; do
    grep "^${labels[$k]} " "$out" | awk '{print $2, $3}' | sort -n |
        awk -v l="${labels[$k]}" '{p[NR]=$1; c[NR]=$2} END {m=int((NR+1)/2); printf "%s: median %.0f pages/s (min %.0f, max %.0f), CPU ms/page at the median %s, %d runs\n", l, p[m], p[1], p[NR], c[m], NR}'
done
