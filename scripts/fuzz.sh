#!/usr/bin/env bash
# Parser fuzzing (issue 27): builds the cargo-fuzz targets in fuzz/ and runs
# each for FUZZ_SECONDS, one after another, one libFuzzer process at a time.
#
#   make fuzz                         # every target, 60 s each
#   FUZZ_SECONDS=600 make fuzz        # longer
#   FUZZ_TARGETS="robots glob" make fuzz
#
# Needs the nightly toolchain and cargo-fuzz (`rustup toolchain install
# nightly`, `cargo install cargo-fuzz --locked`). Nothing is downloaded at run
# time beyond the crates cargo fetches for the first build.
#
# The working corpus is fuzz/corpus/<target> (seeded from the committed
# fuzz/seeds/<target>, not committed itself); crashes land in
# fuzz/artifacts/<target>/. Each run appends a line per target to
# fuzz/target/fuzz-runs.tsv (date, target, seconds, executions, corpus
# files, outcome), from which the totals per target are summed.
set -uo pipefail

cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_RSS_MB=${FUZZ_RSS_MB:-2048}
# An input slower than this (seconds) is reported as a timeout.
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-10}
FUZZ_SANITIZER=${FUZZ_SANITIZER:-address}
TOOLCHAIN=${FUZZ_TOOLCHAIN:-nightly}
LOG_DIR=fuzz/target/fuzz-logs
RUNS=fuzz/target/fuzz-runs.tsv

if ! cargo "+$TOOLCHAIN" --version >/dev/null 2>&1; then
    echo "make fuzz: the $TOOLCHAIN toolchain is missing (rustup toolchain install $TOOLCHAIN)" >&2
    exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "make fuzz: cargo-fuzz is missing (cargo install cargo-fuzz --locked)" >&2
    exit 1
fi

fuzz=(cargo "+$TOOLCHAIN" fuzz)
targets=${FUZZ_TARGETS:-$("${fuzz[@]}" list)}

echo "== building fuzz targets (sanitizer: $FUZZ_SANITIZER)"
"${fuzz[@]}" build --sanitizer "$FUZZ_SANITIZER" || exit 1
# The binaries are run directly, not through `cargo fuzz run`: that would
# rebuild whenever a source file changed since (the timings would include
# the build, and the targets would not all test the same code).
host=$(rustc "+$TOOLCHAIN" -vV | sed -n 's/^host: //p')
bin_dir=fuzz/target/$host/release
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_odr_violation=0}

mkdir -p "$LOG_DIR"
[ -s "$RUNS" ] || printf 'date\ttarget\tseconds\texecutions\tcorpus\toutcome\n' >"$RUNS"
summary=$(mktemp)
failed=0
for t in $targets; do
    corpus=fuzz/corpus/$t
    seeds=fuzz/seeds/$t
    mkdir -p "$corpus" "fuzz/artifacts/$t"
    [ -d "$seeds" ] && cp -n "$seeds"/* "$corpus"/ 2>/dev/null
    log=$LOG_DIR/$t.log
    echo "== $t: ${FUZZ_SECONDS}s (log: $log)"
    start=$(date +%s)
    # -close_fd_mask=1: the targets' stdout (a parser's debug prints) is noise.
    "$bin_dir/$t" "$corpus" -artifact_prefix="fuzz/artifacts/$t/" \
        -max_total_time="$FUZZ_SECONDS" -workers=1 \
        -rss_limit_mb="$FUZZ_RSS_MB" -timeout="$FUZZ_TIMEOUT" \
        -close_fd_mask=1 -print_final_stats=1 >"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -n 1)
    [ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\)[[:space:]].*/\1/p' "$log" | tail -n 1)
    files=$(find "$corpus" -type f | wc -l)
    if [ $rc -eq 0 ]; then
        outcome=ok
    else
        failed=1
        outcome="FAILED (exit $rc; see $log and fuzz/artifacts/$t/)"
        grep -m 3 -E 'ERROR: libFuzzer|panicked at|SUMMARY|Test unit written' "$log" | sed 's/^/   /'
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "$secs" "${execs:-?}" "$files" "$outcome" >>"$RUNS"
    printf '%-18s %8ss %14s execs %8s corpus  %s\n' "$t" "$secs" "${execs:-?}" "$files" "$outcome" | tee -a "$summary"
done

echo
echo "== this run"
cat "$summary"
rm -f "$summary"
echo
echo "== all runs recorded in $RUNS (per target: hours, executions)"
awk -F'\t' 'NR > 1 && $4 ~ /^[0-9]+$/ { s[$2] += $3; e[$2] += $4 }
    END { for (t in s) printf "%-18s %8.2f h %16d execs\n", t, s[t] / 3600, e[t] }' "$RUNS" | sort
exit $failed
