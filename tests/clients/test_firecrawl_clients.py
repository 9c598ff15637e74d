"""The released firecrawl-py (PyPI) and @mendable/firecrawl-js (npm) against a real `webdata serve`.

Its v2 client (`Firecrawl`) drops any path of `api_url`, so it talks to the
Firecrawl listener (`WEBDATA_FIRECRAWL_LISTEN`) at its root; its v1 client
(`V1FirecrawlApp`) is driven both there and under `/firecrawl` on the main
listener. Sites are served on 127.0.0.2; nothing leaves loopback.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "dashboard"))
import harness  # noqa: E402

from firecrawl import Firecrawl, V1FirecrawlApp  # noqa: E402
from firecrawl.v2.utils.error_handler import BadRequestError, UnauthorizedError  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("WEBDATA_BIN", str(ROOT / "target" / "debug" / "webdata"))


class Providers(harness._Server):
    """A SearXNG and an OpenAI-compatible model, the third parties search and
    extract need (we cannot run them here): search answers two pages of the
    test site; the model answers the JSON it is asked for."""

    def __init__(self, site_url: str):
        self.site_url = site_url
        self.chats: list[dict] = []
        super().__init__("127.0.0.2", 0, _ProviderHandler)

    @property
    def url(self) -> str:
        return self.base_url


class _ProviderHandler(harness._QuietHandler):
    def do_GET(self) -> None:
        site = self.owner.site_url
        results = [{"url": f"{site}/a", "title": "Article A", "content": "The harbour town."},
                   {"url": f"{site}/b", "title": "Article B", "content": "Boats come back."}]
        self._send(200, "application/json", json.dumps({"results": results}).encode())

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
        self.owner.chats.append(body)
        # Change tracking's json mode asks for a page's price.
        price = re.search(r"costs (\d+) dollars", json.dumps(body.get("messages", [])))
        content = {"price": int(price.group(1))} if price else {"title": "Article A"}
        answer = {"choices": [{"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": json.dumps(content)}}],
                  "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
        self._send(200, "application/json", json.dumps(answer).encode())


class Service:
    def __init__(self, tmp: str, extra: dict | None = None):
        self.key = subprocess.run([BIN, "keys", "generate"], capture_output=True, text=True, check=True).stdout.strip()
        env = dict(os.environ)
        env.update({
            # The Rust wrapper passes a fresh SQLite or PostgreSQL database.
            "WEBDATA_DATABASE_URL": os.environ.get("WEBDATA_CLIENTS_DATABASE_URL") or f"sqlite://{tmp}/w.db",
            "WEBDATA_LISTEN": "127.0.0.1:0",
            "WEBDATA_FIRECRAWL_LISTEN": "127.0.0.1:0",
            "WEBDATA_BOOTSTRAP_KEY": self.key,
            "WEBDATA_BOOTSTRAP_CREDITS": "1000",
            "WEBDATA_ALLOW_PRIVATE_NETWORKS": "127.0.0.2",
            "RUST_LOG": "warn",
        })
        env.update(extra or {})
        self.proc = subprocess.Popen([BIN, "serve"], env=env, stderr=subprocess.PIPE, text=True)
        self.base = self.firecrawl = None
        deadline = time.time() + 60
        for line in self.proc.stderr:
            if line.startswith("firecrawl API listening on "):
                self.firecrawl = line.split()[-1]
            if line.startswith("webdata listening on "):
                self.base = line.split()[-1]
            if self.base and self.firecrawl:
                break
            assert time.time() < deadline, "webdata did not start"
        assert self.base and self.firecrawl, "webdata did not print both listeners"

    def credits(self) -> int:
        req = urllib.request.Request(self.base + "/v1/team/credit-usage", headers={"Authorization": f"Bearer {self.key}"})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(req, timeout=10) as r:
            return json.load(r)["data"]["remainingCredits"]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


@pytest.fixture(scope="module")
def providers(site):
    with Providers(site.url) as p:
        yield p


@pytest.fixture(scope="module")
def service(providers):
    with tempfile.TemporaryDirectory() as tmp:
        s = Service(tmp, {"WEBDATA_SEARXNG_URL": providers.url, "WEBDATA_LLM_BASE_URL": providers.url + "/v1",
                          "WEBDATA_LLM_MODEL": "test-model"})
        try:
            yield s
        finally:
            s.stop()


@pytest.fixture(scope="module")
def site():
    with harness.TestSite() as s:
        pages = {f"/docs/{n}": (200, "text/html; charset=utf-8", harness._article(f"Doc {n}", 2).replace(
            "</body>", f'<a href="/docs/{n + 1}">next</a></body>')) for n in range(1, 8)}
        pages["/docs/8"] = (200, "text/html; charset=utf-8", harness._article("Doc 8", 2))
        pages["/docs/"] = (200, "text/html; charset=utf-8", harness._article("Docs", 1).replace(
            "</body>", '<a href="/docs/1">start</a><a href="/a">outside the docs</a></body>'))
        s.pages.update(pages)
        s.pages["/robots.txt"] = (200, "text/plain", "User-agent: *\nDisallow: /docs/7\n")
        yield s


def test_scrape_with_several_formats(service, site):
    before = service.credits()
    fc = Firecrawl(api_key=service.key, api_url=service.firecrawl)
    doc = fc.scrape(site.url + "/a", formats=["markdown", "html", "links", "rawHtml"], only_main_content=True)
    assert "harbour town" in doc.markdown
    assert doc.html and "<p>" in doc.html
    assert doc.raw_html and "<html" in doc.raw_html.lower()
    assert isinstance(doc.links, list)
    assert doc.metadata.source_url == site.url + "/a"
    assert doc.metadata.status_code == 200
    assert doc.metadata.title == "Article A"
    assert service.credits() == before - 1


def test_change_tracking_through_the_sdk(service, site):
    """firecrawl-py's change tracking, as its docs show it: the string format
    and the ChangeTrackingFormat object with a tag, new → same → changed with
    a git diff; its JSON mode compares the fields the model reads."""
    from firecrawl.v2.types import ChangeTrackingFormat

    fc = Firecrawl(api_key=service.key, api_url=service.firecrawl)
    page = harness._article("Watched", 2)
    site.pages["/watched"] = (200, "text/html; charset=utf-8", page)
    url = site.url + "/watched"
    first = fc.scrape(url, formats=["markdown", "changeTracking"])
    assert first.change_tracking["changeStatus"] == "new"
    assert first.change_tracking["previousScrapeAt"] is None
    assert first.change_tracking["visibility"] == "visible"
    assert fc.scrape(url, formats=["markdown", "changeTracking"]).change_tracking["changeStatus"] == "same"
    tagged = ChangeTrackingFormat(modes=["git-diff"], tag="pricing")
    assert fc.scrape(url, formats=["markdown", tagged]).change_tracking["changeStatus"] == "new"
    site.pages["/watched"] = (200, "text/html; charset=utf-8",
                              page.replace("</p>", " Prices went up by ten percent this week.</p>", 1))
    changed = fc.scrape(url, formats=["markdown", tagged])
    assert changed.change_tracking["changeStatus"] == "changed"
    assert "+" in changed.change_tracking["diff"]["text"]
    assert "Prices went up by ten percent" in changed.change_tracking["diff"]["text"]
    # The JSON mode: the configured model reads the fields; a changed page
    # lists those that differ.
    priced = ChangeTrackingFormat(modes=["json"], tag="price", prompt="The monthly price.",
                                  schema={"type": "object", "properties": {"price": {"type": "number"}}})
    site.pages["/watched"] = (200, "text/html; charset=utf-8",
                              page.replace("</p>", " The plan costs 9 dollars a month.</p>", 1))
    before = service.credits()
    assert fc.scrape(url, formats=["markdown", priced]).change_tracking["changeStatus"] == "new"
    assert service.credits() == before - 6
    site.pages["/watched"] = (200, "text/html; charset=utf-8",
                              page.replace("</p>", " The plan costs 19 dollars a month.</p>", 1))
    changed = fc.scrape(url, formats=["markdown", priced])
    assert changed.change_tracking["changeStatus"] == "changed"
    assert changed.change_tracking["json"] == {"price": {"previous": 9, "current": 19}}
    with pytest.raises(BadRequestError) as e:
        fc.scrape(url, formats=["markdown", ChangeTrackingFormat(modes=["json"])])
    assert "formats[1].schema" in str(e.value)


def test_crawl_waits_and_pages_through_next(service, site):
    fc = Firecrawl(api_key=service.key, api_url=service.firecrawl)
    # Below the start path only (Firecrawl's default), robots.txt respected.
    job = fc.crawl(site.url + "/docs/", limit=20, poll_interval=1, timeout=120, sitemap="skip")
    assert job.status == "completed"
    urls = sorted(d.metadata.source_url for d in job.data)
    assert urls == sorted([f"{site.url}/docs/"] + [f"{site.url}/docs/{n}" for n in range(1, 7)]), urls
    assert job.credits_used == 7
    assert job.id and job.id.startswith("crawl_")
    errors = fc.get_crawl_errors(job.id)
    assert errors.errors == []
    assert errors.robots_blocked == [f"{site.url}/docs/7"]


def test_crawl_start_status_and_cancel(service, site):
    site.delays["/docs/slow"] = 5
    site.pages["/docs/slow"] = (200, "text/html", harness._article("Slow", 2))
    fc = Firecrawl(api_key=service.key, api_url=service.firecrawl)
    started = fc.start_crawl(site.url + "/docs/slow", limit=5, sitemap="skip")
    assert started.id.startswith("crawl_")
    assert started.url.endswith(f"/v2/crawl/{started.id}")
    status = fc.get_crawl_status(started.id)
    assert status.status == "scraping"
    assert fc.cancel_crawl(started.id) is True
    assert fc.get_crawl_status(started.id).status == "cancelled"
    active = fc.get_active_crawls()
    assert started.id not in [c.id for c in active.crawls]
    # An id is an id: one that only begins with a real job's id (here with
    # an encoded `?` after it) is a job that does not exist, on every
    # route that takes one.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    for method, path in [("GET", f"/v2/crawl/{started.id}%3Fx"), ("GET", f"/v1/crawl/{started.id}%3Fx"),
                         ("GET", f"/v2/crawl/{started.id}%3Fx/errors"), ("DELETE", f"/v2/crawl/{started.id}%3Fx"),
                         ("GET", f"/v2/batch/scrape/..%2Fcrawl%2F{started.id}")]:
        req = urllib.request.Request(service.firecrawl + path, method=method,
                                     headers={"Authorization": f"Bearer {service.key}"})
        with pytest.raises(urllib.error.HTTPError) as e:
            opener.open(req, timeout=10)
        assert e.value.code == 404, (method, path, e.value.code)
        body = json.load(e.value)
        assert body["success"] is False and "does not exist" in body["error"], (path, body)


def test_map_batch_and_credit_usage(service, site):
    fc = Firecrawl(api_key=service.key, api_url=service.firecrawl)
    before_map = service.credits()
    m = fc.map(site.url + "/", limit=50)
    urls = [l.url for l in m.links]
    assert site.url + "/a" in urls and site.url + "/b" in urls
    before = service.credits()
    assert before == before_map - 3, "a map of a few fetches costs 3"
    job = fc.batch_scrape([site.url + "/a", site.url + "/b"], formats=["markdown"], poll_interval=1, wait_timeout=120)
    assert job.status == "completed"
    assert sorted(d.metadata.source_url for d in job.data) == [site.url + "/a", site.url + "/b"]
    assert job.credits_used == 2
    usage = fc.get_credit_usage()
    assert usage.remaining_credits == service.credits() == before - 2


def test_errors_surface_as_the_sdks_exceptions_with_our_message(service, site):
    fc = Firecrawl(api_key=service.key, api_url=service.firecrawl)
    with pytest.raises(BadRequestError) as e:
        fc.scrape(site.url + "/a", formats=["markdown", "summary"])
    assert "formats[1]" in str(e.value) and "summary" in str(e.value)
    with pytest.raises(BadRequestError) as e:
        fc.scrape("http://127.0.0.1:9/")
    assert "loopback" in str(e.value)
    with pytest.raises(UnauthorizedError):
        Firecrawl(api_key="wd_" + "x" * 43, api_url=service.firecrawl).scrape(site.url + "/a")
    # A url of the wrong type is named as such (not as a missing one), and
    # costs nothing.
    before = service.credits()
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    for path in ("/v2/scrape", "/v1/scrape", "/v2/crawl", "/v1/crawl"):
        for body, reason in (({"url": 5}, "must be a string"), ({}, "is required")):
            req = urllib.request.Request(service.firecrawl + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Authorization": f"Bearer {service.key}",
                                                  "Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as e:
                opener.open(req, timeout=10)
            assert e.value.code == 400, (path, body)
            answer = json.load(e.value)
            assert answer["success"] is False and "url" in answer["error"] and reason in answer["error"], \
                (path, body, answer)
    assert service.credits() == before


def test_search_and_extract(service, site, providers):
    fc = Firecrawl(api_key=service.key, api_url=service.firecrawl)
    before = service.credits()
    found = fc.search("harbour", limit=2)
    assert [r.url for r in found.web] == [site.url + "/a", site.url + "/b"]
    assert found.web[0].title == "Article A"
    assert service.credits() == before - 1
    scraped = fc.search("harbour", limit=2, scrape_options={"formats": ["markdown"]})
    assert "harbour town" in scraped.web[0].markdown
    assert service.credits() == before - 1 - 3
    with pytest.raises(BadRequestError) as e:
        fc.search("harbour", sources=["news"])
    assert "sources" in str(e.value)
    result = fc.extract(urls=[site.url + "/a"], prompt="The article's title",
                        schema={"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
                        poll_interval=1, timeout=60)
    assert result.status == "completed"
    assert result.data == {"title": "Article A"}
    assert providers.chats, "the model was asked"
    assert service.credits() == before - 4 - 6  # 5 + 1 page read
    # A request extract cannot take is refused at once, through the SDK's
    # own exception, not started as a job that fails later.
    with pytest.raises(BadRequestError) as e:
        fc.start_extract(urls=[site.url + "/a"], prompt="title", schema={"type": 5})
    assert "schema" in str(e.value)
    with pytest.raises(BadRequestError) as e:
        fc.start_extract(urls=[], prompt="title")
    assert "urls" in str(e.value)
    assert service.credits() == before - 4 - 6
    # The json format of a scrape is answered by the model too.
    before = service.credits()
    doc = fc.scrape(site.url + "/a", formats=["markdown", {"type": "json", "prompt": "The title",
                    "schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}])
    assert doc.json == {"title": "Article A"} and "harbour town" in doc.markdown
    assert service.credits() == before - 1 - 6
    v1 = V1FirecrawlApp(api_key=service.key, api_url=service.firecrawl)
    assert [r["url"] for r in v1.search("harbour", limit=2).data] == [site.url + "/a", site.url + "/b"]


@pytest.mark.parametrize("where", ["root", "prefix"])
def test_v1_client(service, site, where):
    url = service.firecrawl if where == "root" else service.base + "/firecrawl"
    app = V1FirecrawlApp(api_key=service.key, api_url=url)
    doc = app.scrape_url(site.url + "/b", formats=["markdown"])
    assert "Paragraph 1 of the article b" in doc.markdown
    job = app.crawl_url(site.url + "/docs/5", limit=10, poll_interval=1, ignore_sitemap=True, allow_backward_links=True)
    assert job.status == "completed"
    got = {d.metadata["sourceURL"] for d in job.data}
    # allowBackwardLinks: the whole site, not only below /docs/5; robots.txt kept /docs/7 out.
    assert {f"{site.url}/docs/5", f"{site.url}/docs/6", f"{site.url}/", f"{site.url}/a"} <= got, got
    assert f"{site.url}/docs/7" not in got
    assert job.creditsUsed == len(got)
    m = app.map_url(site.url + "/")
    assert site.url + "/a" in m.links
    usage = app.get_credit_usage()
    assert usage.data.remaining_credits == service.credits()
    started = app.async_crawl_url(site.url + "/docs/6", limit=5, ignore_sitemap=True, allow_backward_links=True)
    crawl_id = started.id if hasattr(started, "id") else started["id"]
    for _ in range(100):
        if app.check_crawl_status(crawl_id).status == "completed":
            break
        time.sleep(0.2)
    errors = app.check_crawl_errors(crawl_id)
    assert f"{site.url}/docs/7" in errors.robotsBlocked
    # generate_llms_text: our llms.txt job, polled until completed.
    before = service.credits()
    with pytest.warns(DeprecationWarning):
        got = app.generate_llms_text(site.url + "/", max_urls=3)
    assert got.success and got.status == "completed", got
    text = got.data.llmstxt
    assert text.splitlines()[0] == "# Test site", text
    assert f"]({site.url}/a)" in text, text
    assert "Paragraph 1 of the article a" in got.data.llmsfulltxt
    assert service.credits() == before - 3


def test_firecrawl_js_works_unchanged(service, site):
    """The released @mendable/firecrawl-js (npm, tests/clients/js) over the
    same service: scrape, crawl with wait and paging, cancel, errors, map,
    batch, credit usage, a refused field as the SDK's own error, and its v1
    client (which polls batches on the crawl route)."""
    site.delays["/docs/slow"] = 5
    site.pages["/docs/slow"] = (200, "text/html", harness._article("Slow", 2))
    js = pathlib.Path(__file__).parent / "js"
    assert (js / "node_modules" / "@mendable" / "firecrawl-js").exists(), "run `make test` (npm ci in tests/clients/js)"
    before = service.credits()
    env = dict(os.environ, WD_API_URL=service.firecrawl, WD_KEY=service.key, WD_SITE=site.url, NO_PROXY="*")
    done = subprocess.run(["node", "run.mjs"], cwd=js, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "harbour town" in out["scrape"]["markdown"]
    assert out["scrape"]["sourceURL"] == site.url + "/a" and out["scrape"]["statusCode"] == 200
    assert out["crawl"]["status"] == "completed"
    assert out["crawl"]["urls"] == sorted([f"{site.url}/docs/"] + [f"{site.url}/docs/{n}" for n in range(1, 7)])
    assert out["crawl"]["creditsUsed"] == 7
    assert out["cancel"]["cancelled"] is True and out["cancel"]["after"] == "cancelled"
    assert out["errors"]["errors"] == [] and isinstance(out["errors"]["robotsBlocked"], list)
    assert site.url + "/a" in out["map"]
    assert out["batch"] == {"status": "completed", "urls": [site.url + "/a", site.url + "/b"], "creditsUsed": 2}
    # The v1 scrape and v1 batch (1 page each) ran after the credit check.
    assert out["credits"]["remainingCredits"] == service.credits() + 2
    assert out["invalid"]["thrown"] is True and out["invalid"]["status"] == 400
    assert "formats[1]" in out["invalid"]["message"], out["invalid"]
    assert out["v1scrape"]["success"] is True and "Paragraph 1 of the article b" in out["v1scrape"]["markdown"]
    assert out["v1batch"]["success"] is True and out["v1batch"]["status"] == "completed" and out["v1batch"]["count"] == 1
    assert service.credits() < before


def test_firecrawl_mcp_over_stdio(service, site):
    """The released firecrawl-mcp (npm) started by the official MCP Python
    SDK as a desktop host would, pointed at webdata with FIRECRAWL_API_URL:
    its scrape and map tools answer from our engine."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    js = pathlib.Path(__file__).parent / "js"
    server = StdioServerParameters(
        command="node", args=[str(js / "node_modules" / "firecrawl-mcp" / "dist" / "index.js")],
        env={"PATH": os.environ.get("PATH", ""), "FIRECRAWL_API_URL": service.firecrawl,
             "FIRECRAWL_API_KEY": service.key, "NO_PROXY": "*"},
    )

    async def drive():
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name for t in (await session.list_tools()).tools}
                assert {"firecrawl_scrape", "firecrawl_map"} <= tools, tools
                scraped = await session.call_tool("firecrawl_scrape", {"url": site.url + "/a", "formats": ["markdown"]})
                mapped = await session.call_tool("firecrawl_map", {"url": site.url + "/"})
                bad = await session.call_tool("firecrawl_scrape", {"url": "http://127.0.0.1:9/"})
                return scraped, mapped, bad

    scraped, mapped, bad = asyncio.run(asyncio.wait_for(drive(), 120))
    text = " ".join(c.text for c in scraped.content if getattr(c, "text", None))
    assert not scraped.is_error and "harbour town" in text, text[:500]
    text = " ".join(c.text for c in mapped.content if getattr(c, "text", None))
    assert site.url + "/b" in text, text[:500]
    text = " ".join(c.text for c in bad.content if getattr(c, "text", None))
    assert bad.is_error and "loopback" in text, text[:500]
