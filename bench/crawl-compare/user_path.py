#!/usr/bin/env python3
"""The crawl as a user runs it (issue 24), side by side with spider in one run.

  webdata: the release `webdata serve` on its default store, `POST /v1/crawl
           {"url": START, "limit": 100000, "scrapeOptions": {"formats":
           ["markdown"]}}`, polled (`GET /v1/crawl/{id}?limit=1`, every
           100 ms) until it ends. With --postgres URL and --workers N the
           API runs no crawl workers of its own (WEBDATA_WORKER_CONCURRENCY=0)
           and N `webdata-worker` processes do the crawling.
  spider:  the `spider` crate with htmd converting every page
           (bench/crawl-compare/spider), and the same binary fetch-only.

Rounds are interleaved (the order rotates each round); medians per tool.
Per run: pages, wall s, pages/s, crawler CPU ms per page (all of webdata's
processes, or spider's), cores the crawler kept busy (its CPU / wall), the
machine's busy cores (from /proc/stat, nginx and Postgres included), peak
RSS (the largest of the crawler's processes), requests nginx answered
(from its access log) and, for webdata, the store's size per page.

  python3 user_path.py --webdata BIN --worker BIN --spider BIN --start URL
      --access-log FILE [--rounds 3] [--tools api,spider,spider-fetch]
      [--postgres URL --workers 1]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_vs_api import call, cpu_s, env_for, peak_rss_mb, start_serve  # noqa: E402


def machine_busy() -> tuple[float, float]:
    """(busy jiffies, all jiffies) summed over every CPU."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def minor_faults(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def log_lines(path: str) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def dir_bytes(path: str) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                pass
    return total


def pg_size(url: str) -> int:
    out = subprocess.run(["psql", url, "-Atc", "select pg_database_size(current_database())"],
                         capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def pg_reset(url: str) -> None:
    # A fresh schema per run: the store migrates an empty database itself.
    subprocess.run(["psql", url, "-qc", "drop schema public cascade; create schema public;"],
                   check=True, capture_output=True)


def rss_mb(pid: int, field: str = "VmRSS:") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return 0.0


def print_trace(samples: list) -> None:
    """Per tenth of the crawl's pages: rate, RSS at its end, status call latency."""
    total = samples[-1][1]
    print("| tenth of the pages | pages/s | RSS at its end MB (anonymous; the rest is the store's mmap) "
          "| GET /v1/crawl/{id} p50 / max ms |")
    print("|---|---|---|---|")
    prev = (0.0, 0)
    for k in range(1, 11):
        goal = total * k / 10
        part = [x for x in samples if prev[1] < x[1] <= goal] or [samples[-1]]
        end = part[-1]
        lat = sorted(x[3] for x in part)
        rate = (end[1] - prev[1]) / max(end[0] - prev[0], 1e-6)
        print(f"| {k * 10}% ({end[1]}) | {rate:.0f} | {end[2]:.0f} ({end[4]:.0f}) | {lat[len(lat) // 2]:.1f} / {lat[-1]:.1f} |")
        prev = (end[0], end[1])


def api_run(a: argparse.Namespace) -> dict:
    tmp = tempfile.mkdtemp(prefix="wd-userpath-")
    procs: list[subprocess.Popen] = []
    try:
        key = subprocess.run([a.webdata, "keys", "generate"], capture_output=True, text=True,
                             check=True).stdout.strip()
        env = env_for(tmp)
        db = f"sqlite://{tmp}/w.db"
        if a.postgres:
            pg_reset(a.postgres)
            db = a.postgres
        env.update({"WEBDATA_DATABASE_URL": db, "WEBDATA_LISTEN": "127.0.0.1:0",
                    "WEBDATA_BOOTSTRAP_KEY": key, "WEBDATA_BOOTSTRAP_CREDITS": "10000000"})
        if a.postgres:
            env["WEBDATA_WORKER_CONCURRENCY"] = "0"
        api, base = start_serve(a.webdata, env)
        procs.append(api)
        for i in range(a.workers if a.postgres else 0):
            wenv = dict(env)
            wenv.pop("WEBDATA_WORKER_CONCURRENCY", None)
            wenv["WEBDATA_WORKER_ID"] = f"bench-{i}"
            procs.append(subprocess.Popen([a.worker], env=wenv, stderr=subprocess.DEVNULL))
        time.sleep(0.5)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        cpu0 = sum(cpu_s(p.pid) for p in procs)
        faults0 = sum(minor_faults(p.pid) for p in procs)
        req0 = log_lines(a.access_log)
        busy0 = machine_busy()
        t0 = time.monotonic()
        job = call(opener, "POST", base + "/v1/crawl", key,
                   {"url": a.start, "limit": 100000, "scrapeOptions": {"formats": ["markdown"]}})
        # (seconds, pages done, RSS MB of the crawler's processes, status call ms, anonymous RSS MB)
        samples = []
        while True:
            c0 = time.monotonic()
            st = call(opener, "GET", f"{base}/v1/crawl/{job['id']}?limit=1", key)
            now = time.monotonic()
            samples.append((now - t0, st["completed"], sum(rss_mb(p.pid) for p in procs), (now - c0) * 1000,
                            sum(rss_mb(p.pid, "RssAnon:") for p in procs)))
            if st["status"] in ("completed", "failed", "cancelled"):
                break
            time.sleep(0.1)
        wall = time.monotonic() - t0
        if a.trace:
            print_trace(samples)
        busy1 = machine_busy()
        cpu = sum(cpu_s(p.pid) for p in procs) - cpu0
        faults = sum(minor_faults(p.pid) for p in procs) - faults0
        requests = log_lines(a.access_log) - req0
        rss = max(peak_rss_mb(p.pid) for p in procs)
        credits = call(opener, "GET", base + "/v1/team/credit-usage", key)["data"]["remainingCredits"]
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=60)
        pages = st["completed"]
        store = pg_size(a.postgres) if a.postgres else dir_bytes(tmp)
        tool = f"webdata-pg-{a.workers}w" if a.postgres else "webdata"
        return {"tool": tool, "status": st["status"], "pages": pages, "failed": st["failed"],
                "charged": 10000000 - credits, "wall_s": wall, "pps": pages / wall,
                "cpu_ms_page": cpu * 1000 / max(pages, 1), "cores": cpu / wall,
                "machine_cores": (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1) * os.cpu_count(),
                "peak_rss_mb": rss, "faults_page": faults / max(pages, 1), "requests": requests, "store_bytes_page": store / max(pages, 1)}
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


def spider_run(a: argparse.Namespace, fetch_only: bool) -> dict:
    req0 = log_lines(a.access_log)
    busy0 = machine_busy()
    t0 = time.monotonic()
    args = [a.spider, a.start, "32", "-"] + (["fetch-only"] if fetch_only else [])
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    busy1 = machine_busy()
    out = proc.stdout.read()
    assert os.waitstatus_to_exitcode(status) == 0, out
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    pages = int(dict(kv.split("=", 1) for kv in line.split()[1:])["pages"])
    cpu = usage.ru_utime + usage.ru_stime
    return {"tool": "spider-fetch" if fetch_only else "spider+htmd", "status": "completed", "pages": pages,
            "wall_s": wall, "pps": pages / wall, "cpu_ms_page": cpu * 1000 / max(pages, 1), "cores": cpu / wall,
            "machine_cores": (busy1[0] - busy0[0]) / max(busy1[1] - busy0[1], 1) * os.cpu_count(),
            "peak_rss_mb": usage.ru_maxrss / 1024, "requests": log_lines(a.access_log) - req0}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--webdata", required=True)
    p.add_argument("--worker")
    p.add_argument("--spider", required=True)
    p.add_argument("--start", required=True)
    p.add_argument("--access-log", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tools", default="api,spider,spider-fetch")
    p.add_argument("--postgres")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--trace", action="store_true", help="per tenth of the pages: rate, RSS, status latency")
    a = p.parse_args()
    host = a.start.split("://")[1].split("/")[0].split(":")[0]
    assert host.startswith("127."), f"refusing a non-loopback site: {host}"
    fns = {"api": lambda: api_run(a), "spider": lambda: spider_run(a, False),
           "spider-fetch": lambda: spider_run(a, True)}
    order = a.tools.split(",")
    runs: list[dict] = []
    for r in range(a.rounds):
        for name in order[r % len(order):] + order[:r % len(order)]:
            res = fns[name]()
            runs.append(res)
            print("RESULT " + " ".join(f"{k}={round(v, 3) if isinstance(v, float) else v}" for k, v in res.items()),
                  flush=True)
    med = {}
    print("\n| row (median of %d, same run) | pages | pages/s | CPU ms/page | cores (crawler) | cores (machine) "
          "| peak RSS MB | requests |" % a.rounds)
    print("|---|---|---|---|---|---|---|---|")
    for tool in dict.fromkeys(r["tool"] for r in runs):
        mine = [r for r in runs if r["tool"] == tool]
        m = {k: statistics.median(r[k] for r in mine) for k in
             ("pps", "cpu_ms_page", "cores", "machine_cores", "peak_rss_mb", "requests", "pages")}
        med[tool] = m
        print(f"| {tool} | {m['pages']:.0f} | **{m['pps']:.0f}** ({min(r['pps'] for r in mine):.0f}–"
              f"{max(r['pps'] for r in mine):.0f}) | {m['cpu_ms_page']:.2f} | {m['cores']:.2f} | "
              f"{m['machine_cores']:.2f} | {m['peak_rss_mb']:.0f} | {m['requests']:.0f} |")
    ours = [t for t in med if t.startswith("webdata")]
    if ours and "spider+htmd" in med:
        for t in ours:
            print(f"{t} / spider+htmd = {med[t]['pps'] / med['spider+htmd']['pps']:.2f}x "
                  f"(goal >= 1.5x with >= 1.7 cores busy; here {med[t]['cores']:.2f})")
    print("JSON " + json.dumps(runs))


if __name__ == "__main__":
    main()
