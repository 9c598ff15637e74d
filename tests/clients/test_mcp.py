"""webdata's own MCP server, driven by the official MCP Python SDK (`mcp` on
PyPI) as a host would: over Streamable HTTP at `POST /mcp` of a running
`webdata serve`, and over stdio by starting `webdata mcp` (against that
server with WEBDATA_URL/WEBDATA_API_KEY, and standalone on an embedded
store). Sites, search engine and model are on 127.0.0.2; nothing leaves
loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

import httpx2
import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_firecrawl_clients import BIN, Providers, Service, harness  # noqa: E402

TOOLS = {"scrape", "crawl", "crawl_status", "crawl_cancel", "map", "batch_scrape",
         "batch_scrape_status", "search", "extract", "brand", "llmstxt", "llmstxt_status"}


@pytest.fixture(scope="module")
def site():
    with harness.TestSite() as s:
        for n in range(1, 7):
            body = harness._article(f"Guide {n}", 3)
            if n < 6:
                body = body.replace("</body>", f'<a href="/guide/{n + 1}">next</a></body>')
            s.pages[f"/guide/{n}"] = (200, "text/html; charset=utf-8", body)
        s.pages["/guide/"] = (200, "text/html; charset=utf-8", harness._article("Guide", 1).replace(
            "</body>", '<a href="/guide/1">start</a></body>'))
        long_words = " ".join(f"word{i}" for i in range(6000))
        s.pages["/long"] = (200, "text/html; charset=utf-8",
                            f"<html><head><title>Long</title></head><body><main><h1>Long</h1>"
                            + "".join(f"<p>Paragraph {i}. {long_words[i * 400:(i + 1) * 400]}</p>" for i in range(100))
                            + "</main></body></html>")
        yield s


@pytest.fixture(scope="module")
def providers(site):
    with Providers(site.url) as p:
        yield p


@pytest.fixture(scope="module")
def service(providers):
    with tempfile.TemporaryDirectory() as tmp:
        # A database of its own (the Firecrawl tests' service has the other).
        database_url = os.environ.get("WEBDATA_MCP_DATABASE_URL") or f"sqlite://{tmp}/mcp.db"
        s = Service(tmp, {"WEBDATA_SEARXNG_URL": providers.url, "WEBDATA_LLM_BASE_URL": providers.url + "/v1",
                          "WEBDATA_LLM_MODEL": "test-model", "WEBDATA_DATABASE_URL": database_url})
        s.database_url = database_url
        try:
            yield s
        finally:
            s.stop()


@pytest.fixture(scope="module")
def broke_key(service):
    """A key of an organization with no credits, made with the CLI on the server's store."""
    env = dict(os.environ, WEBDATA_DATABASE_URL=service.database_url)
    org = json.loads(subprocess.run([BIN, "orgs", "create", "--name", "broke", "--credits", "0"],
                                    env=env, capture_output=True, text=True, check=True).stdout)
    out = subprocess.run([BIN, "keys", "create", "--org", org["id"], "--name", "broke"],
                         env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["secret"]


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "text", None))


def http_session(service, key):
    """An MCP session over Streamable HTTP with `key`."""
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, trust_env=False,
                                timeout=httpx2.Timeout(120))

    class _Ctx:
        async def __aenter__(self):
            self.stack = contextlib.AsyncExitStack()
            read, write = await self.stack.enter_async_context(
                streamable_http_client(service.base + "/mcp", http_client=client))
            self.session = await self.stack.enter_async_context(ClientSession(read, write))
            await self.session.initialize()
            return self.session

        async def __aexit__(self, *exc):
            await self.stack.aclose()
            await client.aclose()

    return _Ctx()


def stdio_session(env: dict):
    params = StdioServerParameters(command=BIN, args=["mcp"],
                                   env={"PATH": os.environ.get("PATH", ""), "RUST_LOG": "warn", **env})

    class _Ctx:
        async def __aenter__(self):
            self.stack = contextlib.AsyncExitStack()
            read, write = await self.stack.enter_async_context(stdio_client(params))
            self.session = await self.stack.enter_async_context(ClientSession(read, write))
            await self.session.initialize()
            return self.session

        async def __aexit__(self, *exc):
            await self.stack.aclose()

    return _Ctx()


def run(coro, timeout=180):
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def every_tool(session, site, service):
    """Lists the tools and calls each one; returns what the checks need."""
    seen = {}
    tools = (await session.list_tools()).tools
    seen["tools"] = tools
    seen["scrape"] = await session.call_tool("scrape", {"url": site.url + "/a", "formats": ["markdown", "links"]})
    seen["long"] = await session.call_tool("scrape", {"url": site.url + "/long", "maxTokens": 1000})
    crawl = await session.call_tool("crawl", {"url": site.url + "/guide/", "limit": 5})
    seen["crawl"] = crawl
    crawl_id = crawl.structured_content["id"]
    for _ in range(120):
        status = await session.call_tool("crawl_status", {"id": crawl_id, "limit": 2})
        if status.structured_content["status"] in ("completed", "failed", "cancelled"):
            break
        await asyncio.sleep(0.5)
    seen["crawl_status"] = status
    cursor = status.structured_content.get("next")
    pages = list(status.structured_content["data"])
    while cursor:
        more = await session.call_tool("crawl_status", {"id": crawl_id, "limit": 2, "cursor": cursor})
        pages += more.structured_content["data"]
        cursor = more.structured_content.get("next")
    seen["crawl_pages"] = pages
    second = await session.call_tool("crawl", {"url": site.url + "/guide/", "limit": 50})
    seen["cancel"] = await session.call_tool("crawl_cancel", {"id": second.structured_content["id"]})
    seen["map"] = await session.call_tool("map", {"url": site.url + "/"})
    batch = await session.call_tool("batch_scrape", {"urls": [site.url + "/a", site.url + "/b"]})
    seen["batch"] = batch
    for _ in range(120):
        bs = await session.call_tool("batch_scrape_status", {"id": batch.structured_content["id"]})
        if bs.structured_content["status"] in ("completed", "failed", "cancelled"):
            break
        await asyncio.sleep(0.5)
    seen["batch_status"] = bs
    seen["search"] = await session.call_tool("search", {"query": "harbour", "limit": 2})
    seen["extract"] = await session.call_tool("extract", {"urls": [site.url + "/a"], "prompt": "The title"})
    seen["brand"] = await session.call_tool("brand", {"domain": site.url})
    job = await session.call_tool("llmstxt", {"url": site.url + "/guide/", "limit": 3})
    seen["llmstxt"] = job
    for _ in range(120):
        lt = await session.call_tool("llmstxt_status", {"id": job.structured_content["id"]})
        if lt.structured_content["status"] in ("completed", "failed", "cancelled"):
            break
        await asyncio.sleep(0.5)
    seen["llmstxt_status"] = lt
    seen["llmstxt_full"] = await session.call_tool(
        "llmstxt_status", {"id": job.structured_content["id"], "file": "llms-full.txt", "maxTokens": 500})
    seen["bad_url"] = await session.call_tool("scrape", {"url": "not a url"})
    seen["bad_field"] = await session.call_tool("scrape", {"url": site.url + "/a", "colour": "red"})
    seen["blocked"] = await session.call_tool("scrape", {"url": "http://127.0.0.1:9/"})
    return seen


def check_every_tool(seen, site):
    tools = {t.name: t for t in seen["tools"]}
    assert set(tools) == TOOLS, set(tools)
    for t in tools.values():
        jsonschema.Draft202012Validator.check_schema(t.input_schema)
        assert t.input_schema["type"] == "object" and t.description and len(t.description) > 60, t.name
    # A tool's arguments validate against its own schema (what a host checks).
    jsonschema.validate({"url": site.url + "/a", "formats": ["markdown"]}, tools["scrape"].input_schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"formats": ["markdown"]}, tools["scrape"].input_schema)

    s = seen["scrape"]
    assert not s.is_error, text_of(s)
    assert "harbour town" in text_of(s)
    assert s.structured_content["url"] == site.url + "/a"
    assert isinstance(s.structured_content["links"], list)
    assert s.structured_content["creditsUsed"] == 1

    long = seen["long"]
    assert not long.is_error
    t = text_of(long)
    assert "Cut at maxTokens" in t and "offset=" in t, t[-300:]
    assert len(t) < 1000 * 4 + 400, len(t)

    c = seen["crawl"]
    assert not c.is_error and c.structured_content["id"].startswith("crawl_"), text_of(c)
    st = seen["crawl_status"]
    assert st.structured_content["status"] == "completed", text_of(st)
    urls = {p["url"] for p in seen["crawl_pages"]}
    assert len(urls) == 5 and site.url + "/guide/" in urls, urls
    assert "crawl_status" in text_of(st) or st.structured_content.get("next") is None

    assert not seen["cancel"].is_error and "cancelled" in text_of(seen["cancel"]), text_of(seen["cancel"])
    m = seen["map"]
    assert not m.is_error and site.url + "/b" in text_of(m), text_of(m)[:300]
    b = seen["batch_status"]
    assert b.structured_content["status"] == "completed", text_of(b)
    assert {d["url"] for d in b.structured_content["data"]} == {site.url + "/a", site.url + "/b"}
    assert "Boats come back" in text_of(seen["search"]) or "Article B" in text_of(seen["search"]), text_of(seen["search"])
    e = seen["extract"]
    assert not e.is_error and "Article A" in text_of(e), text_of(e)
    br = seen["brand"]
    assert not br.is_error and br.structured_content["data"], text_of(br)
    assert text_of(br).startswith("# "), text_of(br)

    j = seen["llmstxt"]
    assert not j.is_error and j.structured_content["id"].startswith("llmstxt_"), text_of(j)
    lt = seen["llmstxt_status"]
    assert lt.structured_content["status"] == "completed", text_of(lt)
    lines = text_of(lt).splitlines()
    assert lines[0].startswith("# ") and any(l.startswith(f"- [") and site.url + "/guide/" in l for l in lines), lines
    assert "llmsFullTxt" not in lt.structured_content["data"]
    full = seen["llmstxt_full"]
    assert "Source: " + site.url + "/guide/" in text_of(full), text_of(full)[:300]
    assert "llmsTxt" not in full.structured_content["data"]
    assert len(text_of(full)) <= 500 * 4 + 200, len(text_of(full))

    for name in ("bad_url", "bad_field"):
        r = seen[name]
        assert r.is_error, (name, text_of(r))
        assert text_of(r).startswith("invalid_request:"), text_of(r)
        assert r.structured_content["error"]["code"] == "invalid_request"
    assert "colour" in text_of(seen["bad_field"])
    assert "url" in text_of(seen["bad_url"])
    blocked = seen["blocked"]
    assert blocked.is_error and text_of(blocked).startswith("blocked_url:"), text_of(blocked)


def test_every_tool_over_streamable_http(service, site):
    async def drive():
        async with http_session(service, service.key) as session:
            return await every_tool(session, site, service)

    before = service.credits()
    seen = run(drive())
    check_every_tool(seen, site)
    # Tool calls are charged as their /v1 requests: scrapes, crawls, map, batch, brand…
    assert service.credits() < before - 10


def test_every_tool_over_stdio_against_a_server(service, site):
    async def drive():
        async with stdio_session({"WEBDATA_URL": service.base, "WEBDATA_API_KEY": service.key}) as session:
            return await every_tool(session, site, service)

    check_every_tool(run(drive()), site)


def test_stdio_standalone_on_the_embedded_store(site):
    """`webdata mcp` with no server: the embedded store and engine in the process."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {"WEBDATA_DATABASE_URL": f"sqlite://{tmp}/embedded.db",
               "WEBDATA_ALLOW_PRIVATE_NETWORKS": "127.0.0.2", "WEBDATA_BROWSER": "off"}

        async def drive():
            async with stdio_session(env) as session:
                tools = {t.name for t in (await session.list_tools()).tools}
                scraped = await session.call_tool("scrape", {"url": site.url + "/a"})
                crawl = await session.call_tool("crawl", {"url": site.url + "/guide/", "limit": 3})
                for _ in range(120):
                    st = await session.call_tool("crawl_status", {"id": crawl.structured_content["id"]})
                    if st.structured_content["status"] == "completed":
                        break
                    await asyncio.sleep(0.3)
                return tools, scraped, st

        tools, scraped, st = run(drive())
        assert tools == TOOLS
        assert not scraped.is_error and "harbour town" in text_of(scraped), text_of(scraped)
        assert st.structured_content["status"] == "completed" and st.structured_content["completed"] == 3


def test_errors_no_key_and_no_credits(service, site, broke_key):
    # No key: the API's 401 envelope, before any MCP.
    req = urllib.request.Request(service.base + "/mcp", data=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
                                 headers={"Content-Type": "application/json",
                                          "Accept": "application/json, text/event-stream"}, method="POST")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with pytest.raises(urllib.error.HTTPError) as err:
        opener.open(req, timeout=10)
    assert err.value.code == 401
    assert json.load(err.value)["error"]["code"] == "unauthorized"

    async def drive():
        async with http_session(service, broke_key) as session:
            tools = await session.list_tools()
            scraped = await session.call_tool("scrape", {"url": site.url + "/a"})
            crawl = await session.call_tool("crawl", {"url": site.url + "/guide/"})
            return tools, scraped, crawl

    tools, scraped, crawl = run(drive())
    assert len(tools.tools) == len(TOOLS)
    for r in (scraped, crawl):
        assert r.is_error and text_of(r).startswith("insufficient_credits:"), text_of(r)
        assert r.structured_content["error"]["code"] == "insufficient_credits"
