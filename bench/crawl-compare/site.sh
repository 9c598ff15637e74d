#!/usr/bin/env bash
# Serve a real documentation site from a Debian package on loopback with a
# private nginx (own config, pid and logs in a temp dir; no system service).
#
#   site.sh start <site> <port>   install what is missing, start nginx on
#                                 127.0.0.2:<port>, print "DIR=... START=... PAGES=..."
#   site.sh stop                  stop the private nginx (by its own pid file)
#
# <site>: python3-doc (default), postgresql-doc-15, or mixed (the three
# manuals of issue 24 under one root).
# State lives in ${CC_STATE:-/tmp/webdata-crawl-compare}. With ACCESS_LOG=1
# nginx logs "METHOD URI STATUS" per request to $STATE/access.log (the
# benchmarks count the requests each crawler made from it).
set -euo pipefail
STATE=${CC_STATE:-/tmp/webdata-crawl-compare}
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo

need_pkg() { # install Debian packages that are missing
    local missing=()
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    [ ${#missing[@]} = 0 ] && return 0
    echo "installing ${missing[*]}" >&2
    $SUDO apt-get install -y "${missing[@]}" >&2 || { $SUDO apt-get update >&2 && $SUDO apt-get install -y "${missing[@]}" >&2; }
}

site_root() { # <site> -> directory of the HTML docs
    case "$1" in
        python3-doc)
            need_pkg python3-doc
            # python3-doc depends on python3.X-doc, whose HTML lands in
            # /usr/share/doc/python3.X/html (python3-doc/html is a symlink).
            readlink -f /usr/share/doc/python3-doc/html ;;
        postgresql-doc-*)
            if ! need_pkg "$1"; then return 1; fi
            echo "/usr/share/doc/$1/html" ;;
        mixed)
            # Issue 24's site: Python's, Django's and PostgreSQL's manuals
            # glued under one root (a page linking to each), ~2,400 pages.
            need_pkg python3-doc python-django-doc postgresql-doc-15
            local m=$STATE/mixed
            mkdir -p "$m"
            ln -sfn "$(readlink -f /usr/share/doc/python3-doc/html)" "$m/python"
            ln -sfn /usr/share/doc/python-django-doc/html "$m/django"
            ln -sfn /usr/share/doc/postgresql-doc-15/html "$m/postgresql"
            printf '%s\n' '<!doctype html><html><head><title>Manuals</title></head><body><main><h1>Manuals</h1>' \
                '<p>Three manuals installed from Debian packages, served together.</p><ul>' \
                '<li><a href="python/index.html">Python</a></li>' \
                '<li><a href="django/index.html">Django</a></li>' \
                '<li><a href="postgresql/index.html">PostgreSQL</a></li></ul></main></body></html>' > "$m/index.html"
            echo "$m" ;;
        gen-*)
            # A generated site of N pages (gen-100000): bench/crawl-compare/gen_site.py.
            local n=${1#gen-} g=$STATE/$1
            if [ "$(cat "$g/.complete" 2>/dev/null)" != "$n" ]; then
                python3 "$(dirname "$0")/gen_site.py" "$n" "$g" >&2
            fi
            echo "$g" ;;
        *) echo "unknown site $1" >&2; return 1 ;;
    esac
}

site_version() {
    case "$1" in
        python3-doc) echo "python3-doc $(dpkg-query -W -f='${Version}' python3-doc), $(dpkg -S "$(readlink -f /usr/share/doc/python3-doc/html)" 2>/dev/null | cut -d: -f1 | head -1) $(dpkg-query -W -f='${Version}' "$(dpkg -S "$(readlink -f /usr/share/doc/python3-doc/html)" 2>/dev/null | cut -d: -f1 | head -1)" 2>/dev/null)" ;;
        gen-*) echo "generated, ${1#gen-} pages (gen_site.py)" ;;
        mixed) echo "mixed: python3-doc $(dpkg-query -W -f='${Version}' python3-doc), python-django-doc $(dpkg-query -W -f='${Version}' python-django-doc), postgresql-doc-15 $(dpkg-query -W -f='${Version}' postgresql-doc-15)" ;;
        *) echo "$1 $(dpkg-query -W -f='${Version}' "$1")" ;;
    esac
}

# Pages reachable from the start page: breadth-first over <a href> of HTML
# files on disk, same rules a crawler has (no fragment, no query, stays under
# the root, the file must exist). Prints "html_pages other_files".
count_reachable() {
    python3 - "$1" <<'PY'
import os, re, sys, urllib.parse
root = os.path.realpath(sys.argv[1])
href = re.compile(r'<a\s[^>]*?href\s*=\s*["\']([^"\'#]*)', re.I)
seen, queue, other = {"index.html"}, ["index.html"], set()
while queue:
    rel = queue.pop()
    try:
        text = open(os.path.join(root, rel), encoding="utf-8", errors="replace").read()
    except OSError:
        continue
    base = os.path.dirname(rel)
    for h in href.findall(text):
        h = h.split("?")[0]
        if not h or re.match(r"^[a-z][a-z0-9+.-]*:", h, re.I) or h.startswith("//"):
            continue
        p = os.path.normpath(os.path.join(base, urllib.parse.unquote(h)))
        if p.startswith(".."):
            continue
        full = os.path.join(root, p)
        if os.path.isdir(full):
            p = os.path.join(p, "index.html"); full = os.path.join(root, p)
        if not os.path.isfile(full):
            continue
        if p.endswith((".html", ".htm")):
            if p not in seen:
                seen.add(p); queue.append(p)
        else:
            other.add(p)
print(len(seen), len(other))
PY
}

cmd=${1:-}
case "$cmd" in
start)
    site=${2:-python3-doc}; port=${3:-8089}
    need_pkg nginx-light || need_pkg nginx
    root=$(site_root "$site")
    [ -f "$root/index.html" ] || { echo "no $root/index.html" >&2; exit 1; }
    mkdir -p "$STATE"
    # nginx's workers (www-data) read the mixed and generated sites under
    # it: a mktemp -d folder is 0700.
    chmod 755 "$STATE"
    "$0" stop >/dev/null 2>&1 || true
    if [ -n "${ACCESS_LOG:-}" ]; then ACCESS_LOG_DIRECTIVE="$STATE/access.log reqs"; else ACCESS_LOG_DIRECTIVE=off; fi
    cat > "$STATE/nginx.conf" <<CONF
worker_processes 1;
pid $STATE/nginx.pid;
error_log $STATE/error.log warn;
daemon on;
events { worker_connections 1024; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format reqs '\$request_method \$request_uri \$status';
    access_log ${ACCESS_LOG_DIRECTIVE};
    sendfile on;
    keepalive_requests 100000;
    client_body_temp_path $STATE/body;
    proxy_temp_path $STATE/proxy;
    fastcgi_temp_path $STATE/fastcgi;
    uwsgi_temp_path $STATE/uwsgi;
    scgi_temp_path $STATE/scgi;
    server {
        listen 127.0.0.2:$port;
        server_name _;
        root $root;
        index index.html;
    }
}
CONF
    nginx -c "$STATE/nginx.conf" -p "$STATE" -e "$STATE/error.log"
    for _ in $(seq 50); do curl -fsS -o /dev/null "http://127.0.0.2:$port/index.html" && break; sleep 0.1; done
    case "$site" in
        gen-*) pages=$(( ${site#gen-} + 1 )); other=0 ;;
        *) read -r pages other < <(count_reachable "$root") ;;
    esac
    echo "SITE=$site"
    echo "VERSION=$(site_version "$site")"
    echo "DIR=$root"
    echo "START=http://127.0.0.2:$port/index.html"
    echo "PAGES=$pages"
    echo "OTHER_LINKED_FILES=$other"
    echo "NGINX_PID=$(cat "$STATE/nginx.pid")"
    [ -z "${ACCESS_LOG:-}" ] || echo "ACCESS_LOG=$STATE/access.log"
    ;;
stop)
    if [ -s "$STATE/nginx.pid" ]; then
        kill -QUIT "$(cat "$STATE/nginx.pid")" 2>/dev/null || true
        for _ in $(seq 50); do [ -e "$STATE/nginx.pid" ] || break; sleep 0.1; done
    fi ;;
*) echo "usage: $0 start <site> <port> | stop" >&2; exit 2 ;;
esac
