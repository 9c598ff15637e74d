"""Contract fuzzing: schemathesis (PyPI) against a real `webdata serve`'s
`/v1/openapi.json`, every `/v1` operation, stateless phases and the stateful
phase (the document's links: start crawl -> get, errors, cancel; the same for
batch scrape).

The service runs with its egress closed to everything but one loopback test
site: `WEBDATA_EGRESS_ALLOW=site.test` lists a single host *name*, which
`WEBDATA_RESOLVE` pins to 127.0.0.2 (the only private address allowed), so
every other generated URL -- a name, an IP literal, anything -- is refused
by the guard as `blocked_url` before any DNS lookup or connection. A stand-in
SearXNG and OpenAI-compatible model (the third parties search and extract
need; we cannot run them here) answer on loopback. The organization's rate
limit is raised so the run tests answers, not the limiter.

On top of schemathesis' checks, hooks.py checks that every answer outside 2xx
charged nothing.

    python tests/contract/contract.py --max-time 1800     # the long run (make fuzz-contract)

The bounded run in `make test` is tests/contract/test_contract.py.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests" / "dashboard"))
sys.path.insert(0, str(ROOT / "tests" / "clients"))
import harness  # noqa: E402
from test_firecrawl_clients import Providers, Service  # noqa: E402

ADMIN_TOKEN = "contract-admin-token"
SITE_HOST = "site.test"
# What schemathesis does not run, and why:
# - the event streams (`.../events`) stay open until their job ends and are
#   covered by the SSE tests;
# - use_after_free: after DELETE /v1/crawl/{id} (a cancel) the crawl stays
#   readable with status `cancelled`, by design (the spec keeps cancelled
#   jobs' pages available);
# - positive_data_acceptance: a schema-valid URL is refused (403 blocked_url)
#   by the closed egress of this run, as it should be.
EXCLUDE_PATH_REGEX = r"/events$"
# - not_a_server_error: replaced by hooks.py's no_server_error, which lets
#   the spec's 501 `not_configured` through (premium fetching, say).
# The response-time limit is raised from schemathesis' 10 s to the request
# timeout (60 s): a map that renders its start page in Chromium took 16.8 s
# while the suite's browser tests shared the 2 cores; speed is measured by
# the benchmarks (make bench, make bench-load), not here.
EXCLUDED_CHECKS = "use_after_free,positive_data_acceptance,not_a_server_error"
MAX_RESPONSE_SECONDS = "60"


def start(tmp: str, database_url: str | None):
    """The test site, the stand-in providers and the service, started."""
    site = harness.TestSite()
    for n in range(1, 6):
        site.set_page(f"/docs/{n}", harness._article(f"Doc {n}", 2).replace(
            "</body>", f'<a href="/docs/{n % 5 + 1}">next</a></body>'))
    site.start()
    site_url = f"http://{SITE_HOST}:{site.port}"
    providers = Providers(site_url).start()
    env = {
        "WEBDATA_SEARXNG_URL": providers.url,
        "WEBDATA_LLM_BASE_URL": providers.url + "/v1",
        "WEBDATA_LLM_MODEL": "test-model",
        "WEBDATA_ADMIN_TOKEN": ADMIN_TOKEN,
        "WEBDATA_BOOTSTRAP_CREDITS": "100000000",
        "WEBDATA_EGRESS_ALLOW": SITE_HOST,
        "WEBDATA_RESOLVE": f"{SITE_HOST}=127.0.0.2",
        "WEBDATA_ALLOW_PRIVATE_NETWORKS": "127.0.0.2",
        "WEBDATA_BROWSER_SESSIONS": "1",
    }
    if database_url:
        env["WEBDATA_DATABASE_URL"] = database_url
    service = Service(tmp, env)
    service.org = _admin(service, "GET", "/admin/v1/organizations")["data"][0]["id"]
    _admin(service, "PATCH", f"/admin/v1/organizations/{service.org}",
           {"rateLimitPerMinute": 1_000_000, "concurrencyLimit": 1000})
    return site, providers, service, site_url


def _admin(service: Service, method: str, path: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(service.base + path, data=data, method=method,
                                 headers={"Authorization": f"Bearer {ADMIN_TOKEN}",
                                          "Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=30) as r:
        return json.load(r)


def run_schemathesis(service: Service, site_url: str, report_dir: str, *, max_examples: int | None = None,
                     max_time: int | None = None, seed: int | None = None,
                     phases: str = "examples,coverage,fuzzing,stateful") -> tuple[int, dict, str]:
    """Runs the CLI; returns its exit code, its JSON report and its output."""
    env = dict(os.environ)
    env.update({
        "SCHEMATHESIS_HOOKS": "hooks",
        "PYTHONPATH": str(HERE) + os.pathsep + env.get("PYTHONPATH", ""),
        "WEBDATA_CONTRACT_BASE": service.base,
        "WEBDATA_CONTRACT_ADMIN": ADMIN_TOKEN,
        "WEBDATA_CONTRACT_ORG": service.org,
        "WEBDATA_CONTRACT_SITE": site_url,
        "NO_COLOR": "1",
    })
    report = pathlib.Path(report_dir) / "report.json"
    cmd = [str(pathlib.Path(sys.executable).parent / "schemathesis"), "run", service.base + "/v1/openapi.json",
           "-H", f"Authorization: Bearer {service.key}",
           "--include-path-regex", "^/v1/", "--exclude-path-regex", EXCLUDE_PATH_REGEX,
           "--phases", phases, "--checks", "all", "--exclude-checks", EXCLUDED_CHECKS,
           "-w", "1", "--request-timeout", "60", "--max-response-time", MAX_RESPONSE_SECONDS, "--suppress-health-check", "too_slow,filter_too_much",
           "--report", "json", "--report-json-path", str(report), "--output-truncate", "true"]
    if max_examples:
        cmd += ["--max-examples", str(max_examples)]
    if max_time:
        cmd += ["--max-time", str(max_time)]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    text = out.stdout + out.stderr
    data = json.loads(report.read_text()) if report.exists() else {}
    return out.returncode, data, text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-time", type=int, default=1800, help="seconds for the whole run")
    ap.add_argument("--max-examples", type=int, default=None)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--database-url", default=None, help="default: a fresh SQLite file")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    with tempfile.TemporaryDirectory() as tmp:
        site, providers, service, site_url = start(tmp, args.database_url)
        try:
            t0 = time.time()
            code, report, text = run_schemathesis(service, site_url, tmp, max_examples=args.max_examples,
                                                  max_time=args.max_time, seed=seed)
            print(text)
            print(f"seed {seed}, {time.time() - t0:.0f} s, exit {code}")
            print(json.dumps(summary(report), indent=1))
            return code
        finally:
            service.stop()
            providers.stop()
            site.stop()


def summary(report: dict) -> dict:
    """Operations, cases and failures from the JSON report (as far as it
    says; the full report stays in the run's folder)."""
    keys = ("operations", "summary", "statistic", "failures", "errors", "total")
    return {k: report[k] for k in keys if k in report} or {"report_keys": sorted(report)[:20]}


if __name__ == "__main__":
    sys.exit(main())
