#!/usr/bin/env python3
"""`webdata crawl --out` against the same crawl through the API (issue 25):
both on the real release binary, the embedded SQLite store and a real
documentation site of a few thousand pages on a private loopback nginx
(`site.sh start mixed`), interleaved rounds, medians.

  API: `webdata serve` is started, then timed from `POST /v1/crawl
       {"limit": 100000, markdown}` until `GET /v1/crawl/{id}` says completed
       (the crawl alone), and until every document was read (100 a page, as
       a user of the API gets the pages the CLI writes).
  CLI: `webdata crawl START --out DIR --limit 100000`, the whole command
       timed (process start, store, crawl, and every page written to disk).

Prints one RESULT line per run and the medians; `make bench` runs it.

  python3 bench/crawl-compare/cli_vs_api.py BIN START_URL [ROUNDS]
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def env_for(tmp: str) -> dict:
    env = dict(os.environ)
    env.update({"WEBDATA_ALLOW_PRIVATE_NETWORKS": "127.0.0.2", "WEBDATA_BROWSER": "off", "RUST_LOG": "warn",
                "XDG_DATA_HOME": f"{tmp}/data"})
    for k in ("WEBDATA_URL", "WEBDATA_API_KEY", "WEBDATA_DATABASE_URL"):
        env.pop(k, None)
    return env


def call(opener, method: str, url: str, key: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with opener.open(req, timeout=60) as r:
        return json.load(r)


def start_serve(binary: str, env: dict, log: str | None = None) -> tuple[subprocess.Popen, str]:
    """Starts `webdata serve`; returns it and its base URL once it listens.
    The rest of its log is drained (into the file `log` when given), so a
    full pipe never stalls it."""
    proc = subprocess.Popen([binary, "serve"], env=env, stderr=subprocess.PIPE, text=True)
    base = None
    for line in proc.stderr:
        if line.startswith("webdata listening on "):
            base = line.split()[-1]
            break
    assert base, "webdata serve did not start"
    sink = open(log, "a") if log else subprocess.DEVNULL
    subprocess.Popen(["cat"], stdin=proc.stderr, stdout=sink)
    return proc, base


def api_run(binary: str, start: str) -> dict:
    tmp = tempfile.mkdtemp(prefix="wd-bench-api-")
    try:
        key = subprocess.run([binary, "keys", "generate"], capture_output=True, text=True, check=True).stdout.strip()
        env = env_for(tmp)
        env.update({"WEBDATA_DATABASE_URL": f"sqlite://{tmp}/w.db", "WEBDATA_LISTEN": "127.0.0.1:0",
                    "WEBDATA_BOOTSTRAP_KEY": key, "WEBDATA_BOOTSTRAP_CREDITS": "10000000"})
        proc, base = start_serve(binary, env)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        cpu0 = cpu_s(proc.pid)
        t0 = time.monotonic()
        job = call(opener, "POST", base + "/v1/crawl", key,
                   {"url": start, "limit": 100000, "scrapeOptions": {"formats": ["markdown"]}})
        while True:
            st = call(opener, "GET", f"{base}/v1/crawl/{job['id']}?limit=1", key)
            if st["status"] in ("completed", "failed", "cancelled"):
                break
            time.sleep(0.1)
        wall = time.monotonic() - t0
        cpu = cpu_s(proc.pid) - cpu0
        # What a user of the API does next to have the pages the CLI wrote:
        # read every document (100 a page, following `next`).
        read = 0
        cursor = None
        while True:
            q = f"?limit=100&cursor={cursor}" if cursor else "?limit=100"
            page = call(opener, "GET", f"{base}/v1/crawl/{job['id']}{q}", key)
            read += len(page["data"])
            cursor = page.get("next")
            if not cursor:
                break
        wall_read = time.monotonic() - t0
        cpu_read = cpu_s(proc.pid) - cpu0
        rss = peak_rss_mb(proc.pid)
        proc.terminate()
        proc.wait(timeout=30)
        pages = st["completed"]
        assert read == pages, (read, pages)
        return {"tool": "api", "status": st["status"], "pages": pages, "failed": st["failed"], "wall_s": wall,
                "pps": pages / wall, "cpu_ms_page": cpu * 1000 / max(pages, 1), "cores": cpu / wall,
                "wall_read_s": wall_read, "pps_read": pages / wall_read,
                "cpu_ms_page_read": cpu_read * 1000 / max(pages, 1), "peak_rss_mb": rss}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cli_run(binary: str, start: str) -> dict:
    tmp = tempfile.mkdtemp(prefix="wd-bench-cli-")
    try:
        out = f"{tmp}/out"
        t0 = time.monotonic()
        proc = subprocess.Popen([binary, "crawl", start, "--out", out, "--limit", "100000", "--json"],
                                env=env_for(tmp), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        # wait4: this child's own CPU time and peak RSS.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout = proc.stdout.read()
        assert proc.returncode == 0, f"webdata crawl exited {proc.returncode}"
        summary = json.loads(stdout.strip().splitlines()[-1])
        files = sum(1 for _ in pathlib.Path(out).rglob("*.md"))
        pages = summary["pages"]
        cpu = usage.ru_utime + usage.ru_stime
        return {"tool": "cli", "status": summary["status"], "pages": pages, "failed": summary["failed"],
                "files": files, "wall_s": wall, "pps": pages / wall, "cpu_ms_page": cpu * 1000 / max(pages, 1),
                "cores": cpu / wall, "peak_rss_mb": usage.ru_maxrss / 1024}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    binary, start = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    runs: list[dict] = []
    for r in range(rounds):
        for fn in (api_run, cli_run) if r % 2 == 0 else (cli_run, api_run):
            res = fn(binary, start)
            runs.append(res)
            print("RESULT " + " ".join(f"{k}={round(v, 3) if isinstance(v, float) else v}" for k, v in res.items()),
                  flush=True)
    for tool in ("api", "cli"):
        mine = [r for r in runs if r["tool"] == tool]
        med = statistics.median(r["pps"] for r in mine)
        print(f"{tool}: median {med:.0f} pages/s over {len(mine)} runs "
              f"(min {min(r['pps'] for r in mine):.0f}, max {max(r['pps'] for r in mine):.0f}); "
              f"pages {sorted({r['pages'] for r in mine})}; "
              f"CPU ms/page median {statistics.median(r['cpu_ms_page'] for r in mine):.2f}; "
              f"cores median {statistics.median(r['cores'] for r in mine):.2f}")
    api_runs = [r for r in runs if r["tool"] == "api"]
    api = statistics.median(r["pps"] for r in api_runs)
    api_read = statistics.median(r["pps_read"] for r in api_runs)
    cli = statistics.median(r["pps"] for r in runs if r["tool"] == "cli")
    print(f"api with every document read: median {api_read:.0f} pages/s; "
          f"CPU ms/page {statistics.median(r['cpu_ms_page_read'] for r in api_runs):.2f}")
    print(f"cli/api = {cli / api:.3f} against the crawl alone; "
          f"{cli / api_read:.3f} against the crawl plus reading its documents (goal: at least 0.90)")


if __name__ == "__main__":
    main()
