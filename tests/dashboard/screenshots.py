"""Screenshots of every dashboard page for docs/dashboard/ and the README.

Starts the `webdata` binary on a fresh SQLite store (loopback only), fills
it the way a person would (sign in as the bootstrap owner, create a key,
run the playground, crawl a small local site, add a webhook endpoint whose
receiver fails so a dead letter appears, invite a teammate) and saves one
PNG per page. Run: `.venv/bin/python tests/dashboard/screenshots.py`
(WEBDATA_BIN defaults to target/debug/webdata).
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import harness  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "dashboard"
BIN = os.environ.get("WEBDATA_BIN", str(ROOT / "target" / "debug" / "webdata"))
OWNER, PASSWORD = "owner@webdata.local", "screenshot-password"


def start(tmp: str, key: str):
    env = dict(os.environ)
    env.update({
        "WEBDATA_DATABASE_URL": f"sqlite://{tmp}/w.db",
        "WEBDATA_LISTEN": "127.0.0.1:0",
        "WEBDATA_BOOTSTRAP_KEY": key,
        "WEBDATA_BOOTSTRAP_CREDITS": "1000",
        "WEBDATA_ALLOW_PRIVATE_NETWORKS": "127.0.0.2",
        "WEBDATA_WEBHOOK_DELAY_SCALE": "0.001",
        "WEBDATA_BOOTSTRAP_OWNER": OWNER,
        "WEBDATA_BOOTSTRAP_OWNER_PASSWORD": PASSWORD,
        "RUST_LOG": "warn",
    })
    proc = subprocess.Popen([BIN, "serve"], env=env, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if line.startswith("webdata listening on "):
            return proc, line.split()[-1]
    raise RuntimeError("webdata did not start")


def api(base: str, key: str, path: str, body: dict) -> dict:
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=60) as r:
        return json.load(r)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    key = subprocess.run([BIN, "keys", "generate"], capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp, harness.TestSite() as site, harness.WebhookReceiver(status=500) as hook:
        proc, base = start(tmp, key)
        try:
            for i in range(3):
                api(base, key, "/v1/scrape", {"url": f"{site.url}/a"})
            try:
                api(base, key, "/v1/scrape", {"url": "http://127.0.0.1:9/nothing"})
            except urllib.error.HTTPError:
                pass
            with harness.browser() as b:
                ctx = harness.new_context(b)
                page = ctx.new_page()
                page.on("dialog", lambda d: d.accept())
                page.goto(base + "/dashboard/login")
                page.screenshot(path=str(OUT / "login.png"))
                page.get_by_label("E-mail").fill(OWNER)
                page.get_by_label("Password").fill(PASSWORD)
                page.get_by_role("button", name="Sign in").click()
                page.wait_for_url(base + "/dashboard")
                page.goto(base + "/dashboard/playground")
                page.get_by_role("button", name="Mint a playground key").click()
                page.get_by_label("URL (or domain for brand)").fill(f"{site.url}/a")
                page.get_by_label("chunks").check()
                page.get_by_role("button", name="Run").click()
                page.wait_for_selector("#pg-result")
                page.screenshot(path=str(OUT / "playground.png"), full_page=True)
                page.get_by_label("Crawl a site").check()
                page.get_by_label("URL (or domain for brand)").fill(site.url + "/")
                page.get_by_role("button", name="Run").click()
                page.wait_for_selector('#crawl-live [data-field="status"]:text("completed")', timeout=60000)
                page.screenshot(path=str(OUT / "crawl.png"), full_page=True)
                page.goto(base + "/dashboard/keys")
                page.get_by_label("Name").fill("production")
                page.get_by_role("button", name="Create key").click()
                page.screenshot(path=str(OUT / "keys.png"), full_page=True)
                page.goto(base + "/dashboard/webhooks")
                page.get_by_label("Endpoint URL").fill(hook.url)
                page.get_by_role("button", name="Add endpoint").click()
                page.get_by_role("button", name="Send test event").click()
                harness.wait_until(lambda: len(hook.requests) >= 8, timeout=20)
                time.sleep(0.5)
                page.goto(base + "/dashboard/webhooks")
                page.screenshot(path=str(OUT / "webhooks.png"), full_page=True)
                page.goto(base + "/dashboard/team")
                page.get_by_label("Role").select_option("admin")
                page.get_by_role("button", name="Create invitation link").click()
                page.screenshot(path=str(OUT / "team.png"), full_page=True)
                for name, path in [("overview", ""), ("crawls", "/crawls"), ("usage", "/usage"),
                                   ("audit", "/audit"), ("settings", "/settings")]:
                    page.goto(base + "/dashboard" + path)
                    page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
                phone = harness.phone_context(b)
                p2 = phone.new_page()
                p2.goto(base + "/dashboard/login")
                p2.get_by_label("E-mail").fill(OWNER)
                p2.get_by_label("Password").fill(PASSWORD)
                p2.get_by_role("button", name="Sign in").click()
                p2.screenshot(path=str(OUT / "overview-phone.png"), full_page=True)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print("screenshots in", OUT)


if __name__ == "__main__":
    main()
