#!/usr/bin/env bash
# Obtains the article-extraction benchmark data from the package registries
# (crates.io, PyPI) and unpacks it under .bench-data/extraction/. Idempotent:
# every archive is checked against a pinned SHA-256 and nothing is downloaded
# twice. Only run by `make bench-extraction`, never by a build or a test.
#
#   readabilityrs 0.1.4 (crates.io)  tests/test-pages/: Mozilla Readability's
#                                    130 test pages (source + expected output)
#   trafilatura 0.6.0 (crates.io)    comparison-data/entries.json: trafilatura's
#                                    evaluation annotations (960 pages)
#   trafilatura 1.1.0 (PyPI sdist)   tests/cache/: the HTML of 100 of them
#   newspaper4k 0.9.6 (PyPI sdist)   tests/data/{html,txt}: 18 news pages in
#                                    8 languages with newspaper4k's text
#   bench/extraction/data/           scrapinghub-subset.tar.xz: ScrapingHub's
#                                    pages that could be copied here (in git)
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA=.bench-data/extraction
DL=$DATA/downloads
mkdir -p "$DL"

declare -A SHA=(
  [readabilityrs-0.1.4.crate]=7c42603b08707aa2d44baa0ff2ec8fb89d66fbce4bc8eb5eec894009b6d18159
  [trafilatura-0.6.0.crate]=939e0b721b81110ab7c91c5ba4e39697f367a3a61fbf7c0832f7e38c57972659
  [trafilatura-1.1.0.tar.gz]=650678fe3b3219795ccc72d8d37d2a9dc8c3070529598fddc2809ccd27c55bc4
  [newspaper4k-0.9.6.tar.gz]=a3f2f0e017dddb6f1019ee77aaa8980e13e6ecea0b949abc7167aae4770d2d0e
)

ok() { [ -s "$DL/$1" ] && echo "${SHA[$1]}  $DL/$1" | sha256sum -c --status; }

# Crates: `cargo fetch` of a throwaway package that depends on both, in a
# throwaway CARGO_HOME (cargo resolves and fetches their dependencies too;
# only the two .crate files are kept).
if ! ok readabilityrs-0.1.4.crate || ! ok trafilatura-0.6.0.crate; then
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/pkg/src" "$tmp/home"
  : > "$tmp/pkg/src/lib.rs"
  cat > "$tmp/pkg/Cargo.toml" <<'TOML'
[package]
name = "bench-data-fetch"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
readabilityrs = "=0.1.4"
trafilatura = "=0.6.0"

[workspace]
TOML
  echo "fetch.sh: cargo fetch readabilityrs 0.1.4 + trafilatura 0.6.0 (throwaway CARGO_HOME)"
  CARGO_HOME="$tmp/home" cargo fetch --quiet --manifest-path "$tmp/pkg/Cargo.toml" \
    --target x86_64-unknown-linux-gnu
  for c in readabilityrs-0.1.4.crate trafilatura-0.6.0.crate; do
    cp "$(find "$tmp/home/registry/cache" -name "$c" | head -n1)" "$DL/$c"
  done
fi

# PyPI sdists (source only, no dependencies).
if ! ok trafilatura-1.1.0.tar.gz; then
  echo "fetch.sh: pip download trafilatura==1.1.0 (sdist)"
  python3 -m pip download --quiet --no-deps --no-binary :all: -d "$DL" trafilatura==1.1.0
fi
if ! ok newspaper4k-0.9.6.tar.gz; then
  echo "fetch.sh: pip download newspaper4k==0.9.6 (sdist)"
  python3 -m pip download --quiet --no-deps --no-binary :all: -d "$DL" newspaper4k==0.9.6
fi

for f in "${!SHA[@]}"; do
  ok "$f" || { echo "fetch.sh: checksum mismatch for $DL/$f" >&2; exit 1; }
done

unpack() { # archive dir
  [ -d "$DATA/$2" ] && return 0
  rm -rf "$DATA.tmp.$$" && mkdir -p "$DATA.tmp.$$"
  tar -xzf "$DL/$1" -C "$DATA.tmp.$$"
  mv "$DATA.tmp.$$/$2" "$DATA/$2"
  rm -rf "$DATA.tmp.$$"
}
unpack readabilityrs-0.1.4.crate readabilityrs-0.1.4
unpack trafilatura-0.6.0.crate trafilatura-0.6.0
unpack trafilatura-1.1.0.tar.gz trafilatura-1.1.0
unpack newspaper4k-0.9.6.tar.gz newspaper4k-0.9.6
# Set D: the ScrapingHub pages copied into the repo (see eval.py's docstring).
SUBSET=bench/extraction/data/scrapinghub-subset.tar.xz
if [ ! -d "$DATA/scrapinghub-subset" ] || [ "$SUBSET" -nt "$DATA/scrapinghub-subset" ]; then
  rm -rf "$DATA/scrapinghub-subset"
  tar -xJf "$SUBSET" -C "$DATA"
fi

echo "fetch.sh: $(ls "$DATA/readabilityrs-0.1.4/tests/test-pages" | wc -l) Readability test pages," \
  "$(ls "$DATA/trafilatura-1.1.0/tests/cache" | wc -l) trafilatura cache pages," \
  "$(ls "$DATA/newspaper4k-0.9.6/tests/data/txt" | wc -l) newspaper4k texts," \
  "$(ls "$DATA/scrapinghub-subset/html" | wc -l) ScrapingHub pages in $DATA"

# The extractors we compare with: latest trafilatura (PyPI) in its own venv,
# Readability.js + jsdom (npm). Installed once; `FETCH_UPGRADE=1` refreshes.
VENV=.bench-data/venv
if [ ! -x "$VENV/bin/python" ] || [ "${FETCH_UPGRADE:-0}" = 1 ]; then
  echo "fetch.sh: trafilatura (latest) into $VENV"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  # lxml_html_clean: justext (a trafilatura dependency) imports lxml.html.clean,
  # split out of lxml 5.2+ and not always pulled in.
  "$VENV/bin/python" -m pip install --quiet --upgrade trafilatura lxml_html_clean
fi
NODE=.bench-data/node
if [ ! -d "$NODE/node_modules/@mozilla/readability" ] || [ ! -d "$NODE/node_modules/jsdom" ] \
   || [ "${FETCH_UPGRADE:-0}" = 1 ]; then
  echo "fetch.sh: @mozilla/readability (latest) + jsdom into $NODE"
  mkdir -p "$NODE"
  [ -f "$NODE/package.json" ] || echo '{"private": true}' > "$NODE/package.json"
  # jsdom 28+ needs Node 22; on Node 20 take the last line that runs there.
  jsdom=latest
  [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 22 ] || jsdom=27
  npm install --silent --no-audit --no-fund --prefix "$NODE" @mozilla/readability@latest "jsdom@$jsdom"
fi
echo "fetch.sh: trafilatura $("$VENV/bin/python" -c 'import trafilatura; print(trafilatura.__version__)')," \
  "readability $(node -p "require('./$NODE/node_modules/@mozilla/readability/package.json').version")," \
  "jsdom $(node -p "require('./$NODE/node_modules/jsdom/package.json').version")"
