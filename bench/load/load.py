#!/usr/bin/env python3
"""Sustained load on a real `webdata serve` (issue 27), on loopback only.

For `--duration` seconds, `--users` clients of one organization (limits
raised, so the service is measured, not its limiter) send a mix:

  scrape 70%   POST /v1/scrape of a page of the site (markdown; every 4th
               also links)
  map    10%   POST /v1/map of a section of the site (limit 200)
  crawl  10%   POST /v1/crawl of a section (limit 20), then getCrawl polled
               every 500 ms until it ends; every other crawl also has an SSE
               reader on /v1/crawl/{id}/events until `done`
  brand  10%   GET /v1/brand of the site's host (fresh once, then cached)

and one "noisy tenant" of a second organization with the default limits
(600 requests a minute, 2 jobs at once) scrapes as fast as it can without
honouring Retry-After: what the rate limiter does to it is recorded.

Every 5 s the server's RSS, open file descriptors (sockets among them) and
CPU are sampled. Prints a JSON report: per operation the count, rate,
p50/p95/p99 latency and statuses; errors (anything but 2xx and 429, plus
client-side failures); the samples.

  load.py --webdata BIN --site-dir DIR --site-url http://docs.test:PORT \
          [--database-url URL] [--duration 600] [--users 16] [--out FILE]

The site is served by nginx on 127.0.0.2 (bench/crawl-compare/site.sh);
`docs.test` is pinned to it with WEBDATA_RESOLVE, and it is the only
private address the service may reach. `make bench-load` runs it on SQLite
and PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import shutil
import tempfile
import time
import urllib.parse

import aiohttp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "crawl-compare"))
from cli_vs_api import start_serve  # noqa: E402  (starts serve, drains its log)

TICK = os.sysconf("SC_CLK_TCK")
ADMIN = "load-admin-token"


def pct(xs: list[float], p: float) -> float:
    if not xs:
        return 0.0
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


class Stats:
    def __init__(self) -> None:
        self.lat: dict[str, list[float]] = {}
        self.status: dict[str, dict[str, int]] = {}
        self.errors: list[str] = []

    def add(self, op: str, status: int | str, secs: float) -> None:
        self.lat.setdefault(op, []).append(secs)
        s = self.status.setdefault(op, {})
        s[str(status)] = s.get(str(status), 0) + 1
        if not (isinstance(status, int) and (200 <= status < 300 or status == 429)):
            if len(self.errors) < 50:
                self.errors.append(f"{op}: {status}")

    def report(self, wall: float) -> dict:
        out = {}
        for op, xs in sorted(self.lat.items()):
            out[op] = {"count": len(xs), "per_s": round(len(xs) / wall, 2),
                       "p50_ms": round(pct(xs, 50) * 1000, 1), "p95_ms": round(pct(xs, 95) * 1000, 1),
                       "p99_ms": round(pct(xs, 99) * 1000, 1), "max_ms": round(max(xs) * 1000, 1),
                       "statuses": self.status[op]}
        return out

    def error_count(self) -> int:
        return sum(n for st in self.status.values() for s, n in st.items()
                   if not (s.isdigit() and (200 <= int(s) < 300 or int(s) == 429)))


class Run:
    def __init__(self, base: str, key: str, noisy_key: str, pages: list[str], sections: list[str], host: str,
                 deadline: float):
        self.base, self.key, self.noisy_key = base, key, noisy_key
        self.pages, self.sections, self.host = pages, sections, host
        # brand takes a domain or a URL; the URL carries the site's port.
        self.site = pages[0].split("/", 3)[0] + "//" + pages[0].split("/", 3)[2] + "/"
        self.deadline = deadline
        self.stats = Stats()
        self.noisy = Stats()
        self.crawl_slots = asyncio.Semaphore(8)
        self.background: set[asyncio.Task] = set()
        self.rng = random.Random(27)
        self.retry_after: list[float] = []

    async def call(self, s: aiohttp.ClientSession, op: str, method: str, path: str, body=None, key=None,
                   stats: Stats | None = None):
        stats = stats or self.stats
        t0 = time.monotonic()
        try:
            async with s.request(method, self.base + path, json=body,
                                 headers={"Authorization": f"Bearer {key or self.key}"}) as r:
                data = await r.read()
                stats.add(op, r.status, time.monotonic() - t0)
                if r.status >= 500 and len(stats.errors) < 50:
                    stats.errors.append(f"{op} {r.status}: {data[:200]!r}")
                if r.status == 429 and "Retry-After" in r.headers:
                    self.retry_after.append(float(r.headers["Retry-After"]))
                return r.status, (json.loads(data) if data[:1] == b"{" else None)
        except Exception as e:  # noqa: BLE001 - every client-side failure is an error of the run
            stats.add(op, type(e).__name__, time.monotonic() - t0)
            return None, None

    async def user(self, s: aiohttp.ClientSession, n: int) -> None:
        rng = random.Random(n)
        i = 0
        while time.monotonic() < self.deadline:
            i += 1
            roll = rng.random()
            if roll < 0.70:
                formats = ["markdown", "links"] if i % 4 == 0 else ["markdown"]
                await self.call(s, "scrape", "POST", "/v1/scrape", {"url": rng.choice(self.pages), "formats": formats})
            elif roll < 0.80:
                await self.call(s, "map", "POST", "/v1/map", {"url": rng.choice(self.sections), "limit": 200})
            elif roll < 0.90:
                await self.start_crawl(s, rng)
            else:
                await self.call(s, "brand", "GET", "/v1/brand?domain=" + urllib.parse.quote(self.site, safe=""))

    async def start_crawl(self, s: aiohttp.ClientSession, rng: random.Random) -> None:
        if self.crawl_slots.locked():
            # As many crawls as the run follows at once are going: scrape instead.
            await self.call(s, "scrape", "POST", "/v1/scrape", {"url": rng.choice(self.pages)})
            return
        await self.crawl_slots.acquire()
        status, job = await self.call(s, "crawl.start", "POST", "/v1/crawl",
                                      {"url": rng.choice(self.sections), "limit": 20,
                                       "scrapeOptions": {"formats": ["markdown"]}})
        if status != 202 or not job:
            self.crawl_slots.release()
            return
        sse = rng.random() < 0.5
        t = asyncio.create_task(self.follow(s, job["id"], sse))
        self.background.add(t)
        t.add_done_callback(self.background.discard)

    async def follow(self, s: aiohttp.ClientSession, job: str, sse: bool) -> None:
        try:
            reader = asyncio.create_task(self.sse(s, job)) if sse else None
            while True:
                status, st = await self.call(s, "crawl.get", "GET", f"/v1/crawl/{job}?limit=20")
                if status != 200 or not st or st.get("status") in ("completed", "failed", "cancelled"):
                    break
                await asyncio.sleep(0.5)
            if reader:
                await asyncio.wait_for(reader, 60)
        except asyncio.TimeoutError:
            self.stats.add("crawl.events", "sse-no-done-60s", 60)
        finally:
            self.crawl_slots.release()

    async def sse(self, s: aiohttp.ClientSession, job: str) -> None:
        t0 = time.monotonic()
        try:
            async with s.get(f"{self.base}/v1/crawl/{job}/events",
                             headers={"Authorization": f"Bearer {self.key}"}) as r:
                if r.status != 200:
                    self.stats.add("crawl.events", r.status, time.monotonic() - t0)
                    return
                # Page events carry whole documents: scan chunks, not lines
                # (a line can be longer than any reader's line limit).
                tail = b""
                async for chunk in r.content.iter_any():
                    buf = tail + chunk
                    if b"event: done" in buf:
                        self.stats.add("crawl.events", 200, time.monotonic() - t0)
                        return
                    tail = buf[-16:]
                self.stats.add("crawl.events", "ended-without-done", time.monotonic() - t0)
        except Exception as e:  # noqa: BLE001
            self.stats.add("crawl.events", type(e).__name__, time.monotonic() - t0)

    async def noisy_tenant(self, s: aiohttp.ClientSession) -> None:
        rng = random.Random(99)
        while time.monotonic() < self.deadline:
            await self.call(s, "noisy.scrape", "POST", "/v1/scrape", {"url": rng.choice(self.pages)},
                            key=self.noisy_key, stats=self.noisy)


def sample(pid: int) -> dict:
    with open(f"/proc/{pid}/status") as f:
        rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    fds = os.listdir(f"/proc/{pid}/fd")
    sockets = 0
    for fd in fds:
        try:
            sockets += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return {"rss_mb": round(rss / 1024, 1), "fds": len(fds), "sockets": sockets,
            "cpu_s": round((int(fields[11]) + int(fields[12])) / TICK, 1), "threads": int(fields[17])}


async def sampler(pid: int, t0: float, deadline: float, out: list) -> None:
    while time.monotonic() < deadline:
        out.append({"t": round(time.monotonic() - t0), **sample(pid)})
        await asyncio.sleep(5)


async def admin(s: aiohttp.ClientSession, base: str, method: str, path: str, body=None) -> dict:
    async with s.request(method, base + path, json=body, headers={"Authorization": f"Bearer {ADMIN}"}) as r:
        data = await r.json()
        assert r.status < 300, (path, r.status, data)
        return data


def site_pages(site_dir: str, site_url: str) -> tuple[list[str], list[str]]:
    root = pathlib.Path(site_dir)
    pages = sorted(str(p.relative_to(root)) for p in root.rglob("*.html"))
    urls = [f"{site_url}/{urllib.parse.quote(p)}" for p in pages]
    # Sections: the folders with an index page (a folder without one answers
    # 403, and map then fails by design).
    sections = sorted(f"{site_url}/{urllib.parse.quote(p)}" for p in pages
                      if p == "index.html" or p.endswith("/index.html"))
    return urls, sections


async def main_async(args) -> dict:
    urls, sections = site_pages(args.site_dir, args.site_url)
    host = urllib.parse.urlparse(args.site_url).hostname
    tmp = tempfile.mkdtemp(prefix="wd-load-")
    key = subprocess.run([args.webdata, "keys", "generate"], capture_output=True, text=True, check=True).stdout.strip()
    env = dict(os.environ)
    for k in ("WEBDATA_URL", "WEBDATA_API_KEY"):
        env.pop(k, None)
    env.update({"WEBDATA_DATABASE_URL": args.database_url or f"sqlite://{tmp}/w.db", "WEBDATA_LISTEN": "127.0.0.1:0",
                "WEBDATA_BOOTSTRAP_KEY": key, "WEBDATA_BOOTSTRAP_CREDITS": "1000000000",
                "WEBDATA_ADMIN_TOKEN": ADMIN, "WEBDATA_ALLOW_PRIVATE_NETWORKS": "127.0.0.2",
                "WEBDATA_RESOLVE": f"{host}=127.0.0.2", "WEBDATA_EGRESS_ALLOW": host,
                "WEBDATA_BROWSER": "off", "RUST_LOG": "warn", "XDG_DATA_HOME": f"{tmp}/data"})
    # The server's log goes beside the report (its errors explain any 5xx).
    proc, base = start_serve(args.webdata, env, log=str(args.out) + ".log" if args.out else None)
    conn = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=conn, timeout=aiohttp.ClientTimeout(total=120)) as s:
        orgs = await admin(s, base, "GET", "/admin/v1/organizations")
        await admin(s, base, "PATCH", f"/admin/v1/organizations/{orgs['data'][0]['id']}",
                    {"rateLimitPerMinute": 10_000_000, "concurrencyLimit": 1000})
        noisy = await admin(s, base, "POST", "/admin/v1/organizations", {"name": "noisy", "credits": 1_000_000})
        nk = await admin(s, base, "POST", f"/admin/v1/organizations/{noisy['data']['id']}/keys", {"name": "noisy"})
        noisy_key = nk["data"]["secret"]
        t0 = time.monotonic()
        deadline = t0 + args.duration
        run = Run(base, key, noisy_key, urls, sections, host, deadline)
        samples: list = []
        cpu0 = sample(proc.pid)["cpu_s"]
        tasks = [asyncio.create_task(run.user(s, n)) for n in range(args.users)]
        tasks.append(asyncio.create_task(run.noisy_tenant(s)))
        tasks.append(asyncio.create_task(sampler(proc.pid, t0, deadline, samples)))
        await asyncio.gather(*tasks)
        if run.background:
            await asyncio.wait(run.background, timeout=90)
        wall = time.monotonic() - t0
        samples.append({"t": round(wall), **sample(proc.pid)})
        credits = (await (await s.get(base + "/v1/team/credit-usage",
                                      headers={"Authorization": f"Bearer {key}"})).json())["data"]
    proc.terminate()
    proc.wait(timeout=30)
    # Ten minutes of scrapes leave gigabytes of store behind: remove it.
    shutil.rmtree(tmp, ignore_errors=True)
    ok = sum(n for st in run.stats.status.values() for code, n in st.items() if code.startswith("2"))
    rss = [x["rss_mb"] for x in samples]
    return {
        "store": "postgres" if args.database_url else "sqlite",
        "duration_s": round(wall), "users": args.users,
        "requests": sum(len(v) for v in run.stats.lat.values()), "ok": ok,
        "requests_per_s": round(sum(len(v) for v in run.stats.lat.values()) / wall, 1),
        "errors_non_429": run.stats.error_count(), "error_samples": run.stats.errors[:20],
        "ops": run.stats.report(wall),
        "noisy_tenant": {**run.noisy.report(wall), "errors_non_429": run.noisy.error_count(),
                         "retry_after_s": sorted(set(run.retry_after))[:10]},
        "server_cpu_s": round(samples[-1]["cpu_s"] - cpu0, 1),
        "rss_mb": {"first_min_max": max(x["rss_mb"] for x in samples if x["t"] <= 60),
                   "last_min_max": max(x["rss_mb"] for x in samples if x["t"] >= wall - 65),
                   "peak": max(rss)},
        "fds": {"max": max(x["fds"] for x in samples), "end": samples[-1]["fds"],
                "sockets_max": max(x["sockets"] for x in samples)},
        "credits_used": credits.get("creditsUsed", credits),
        "samples": samples,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--webdata", required=True)
    ap.add_argument("--site-dir", required=True)
    ap.add_argument("--site-url", required=True)
    ap.add_argument("--database-url")
    ap.add_argument("--duration", type=int, default=600)
    ap.add_argument("--users", type=int, default=16)
    ap.add_argument("--out")
    args = ap.parse_args()
    report = asyncio.run(main_async(args))
    text = json.dumps(report, indent=1)
    if args.out:
        pathlib.Path(args.out).write_text(text)
    brief = {k: v for k, v in report.items() if k != "samples"}
    print(json.dumps(brief, indent=1))
    return 0 if report["errors_non_429"] == 0 and report["noisy_tenant"]["errors_non_429"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
