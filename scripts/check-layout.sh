#!/usr/bin/env bash
# The layout rules of docs/architecture.md, checked: no import cycle between
# the files of any crate, and the crate boundaries hold (the API uses the
# CRD types without the operator's runtime; the content pipeline reaches no
# network). Run by `make test` and `make lint`.
set -euo pipefail
cd "$(dirname "$0")/.."
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
