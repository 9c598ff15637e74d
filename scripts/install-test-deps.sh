#!/usr/bin/env bash
# Installs what `make test` needs, only when it is missing: Debian's
# PostgreSQL server, Chromium and ChromeDriver (the render tier's tests),
# kubectl, the Python tools of the operator and chart tests (in .venv), and
# Node.js with the JavaScript clients of tests/clients.
# Without cargo-nextest the tests fall back to `cargo test`.
set -euo pipefail
need_apt=()
ls -d /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
command -v runuser >/dev/null 2>&1 || need_apt+=(util-linux)
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need_apt+=(chromium-driver)
command -v kubectl >/dev/null 2>&1 || need_apt+=(kubernetes-client)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing: ${need_apt[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi
# Python test tools (Kubernetes API emulator, chart checks) in .venv,
# reinstalled when tests/python/requirements.txt changes.
cd "$(dirname "$0")/.."
req=tests/python/requirements.txt
stamp=.venv/.requirements
if [ ! -x .venv/bin/python ] || ! cmp -s "$req" "$stamp"; then
  echo "installing Python test tools into .venv"
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check -r "$req"
  cp "$req" "$stamp"
fi
# Released JavaScript clients (tests/clients/js), from package-lock.json,
# reinstalled when the lock file changes.
js=tests/clients/js
if [ ! -d "$js/node_modules" ] || ! cmp -s "$js/package-lock.json" "$js/node_modules/.package-lock.stamp"; then
  echo "installing JavaScript test clients into $js/node_modules"
  (cd "$js" && npm ci --no-audit --no-fund --loglevel=error)
  cp "$js/package-lock.json" "$js/node_modules/.package-lock.stamp"
fi
# Debian's postgresql package starts a system cluster; the tests use their own.
exit 0
