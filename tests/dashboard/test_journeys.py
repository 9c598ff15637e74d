"""End-to-end journeys through the dashboard in real Chromium.

Each journey is a test that drives the UI the way a person would (labels,
roles, buttons), and checks what happened through the API, the admin API,
the webhook receiver or the mail sink. Journeys that are independent share
one service (each signs up people and organizations of its own); those that
need other settings start their own.

    cd /work/main && .venv/bin/python -m pytest -q tests/dashboard
"""

from __future__ import annotations

import csv
import json
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

import harness
from conftest import Service

expect.set_options(timeout=10_000)

PASSWORD = "correct-horse-battery-staple"
FREE_CREDITS = 500  # WEBDATA_FREE_CREDITS default
CSP_VIOLATIONS: list[str] = []  # console messages about the CSP, every context of this module
CSP_MISSING: list[str] = []  # dashboard responses without the expected CSP header


# --------------------------------------------------------------------------
# helpers


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def email_of(prefix: str) -> str:
    return f"{unique(prefix)}@example.test"


@dataclass
class Person:
    """Someone in a browser context of their own."""

    service: Service
    ctx: BrowserContext
    page: Page
    email: str = ""
    password: str = PASSWORD
    dialogs: list[tuple[str, str]] = field(default_factory=list)

    def goto(self, path: str):
        return self.page.goto(self.service.url(path))

    def nav(self, name: str) -> None:
        """Follows a link of the section navigation."""
        self.page.get_by_role("navigation", name="Sections").get_by_role(
            "link", name=name, exact=True).click()
        expect(self.page.get_by_role("heading", level=1)).to_be_visible()

    def csrf(self) -> str:
        return self.page.locator("input[name=_csrf]").first.input_value()

    def heading(self):
        return self.page.get_by_role("heading", level=1)

    def post(self, path: str, fields: dict[str, str], origin: str | None = None) -> dict[str, Any]:
        """A form POST sent by this person's browser page (fetch, with its
        cookies and its Origin). Redirects are not followed (status 303)."""
        return self.page.evaluate(
            """async ([url, fields]) => {
                const r = await fetch(url, {method: "POST", body: new URLSearchParams(fields),
                                           redirect: "manual", credentials: "same-origin"});
                return {status: r.type === "opaqueredirect" ? 303 : r.status,
                        text: r.type === "opaqueredirect" ? "" : await r.text()};
            }""",
            [self.service.url(path), fields],
        )

    def sign_out(self) -> None:
        self.page.get_by_role("button", name="Sign out").click()
        expect(self.page).to_have_url(re.compile(r"/dashboard/login"))

    def sign_in(self, password: str | None = None, email: str | None = None) -> int:
        """Fills the sign-in form; returns the HTTP status of the answer to the POST."""
        if "/dashboard/login" not in self.page.url:
            self.goto("/dashboard/login")
        self.page.get_by_label("E-mail").fill(email or self.email)
        self.page.get_by_label("Password").fill(password or self.password)
        with self.page.expect_response(
                lambda r: r.request.method == "POST" and r.url.endswith("/dashboard/login")) as resp:
            self.page.get_by_role("button", name="Sign in").click()
        self.page.wait_for_load_state()
        return resp.value.status

    def create_key(self, name: str) -> tuple[str, str]:
        """Creates an API key on the keys page; returns (id, secret)."""
        if not self.page.url.endswith("/dashboard/keys"):
            self.nav("API keys")
        self.page.get_by_label("Name", exact=True).fill(name)
        self.page.get_by_role("button", name="Create key").click()
        box = self.page.get_by_role("region", name="New API key")
        expect(box).to_be_visible()
        secret = box.locator("code#new-key").inner_text().strip()
        key_id = key_row(self.page, name).get_attribute("data-key")
        return key_id, secret

    def add_endpoint(self, url: str) -> str:
        """Adds a webhook endpoint; returns its secret (shown after adding)."""
        if not self.page.url.endswith("/dashboard/webhooks"):
            self.nav("Webhooks")
        self.page.get_by_label("Endpoint URL").fill(url)
        self.page.get_by_role("button", name="Add endpoint").click()
        box = self.page.get_by_role("region", name="Endpoint secret")
        expect(box).to_be_visible()
        return box.locator("code#endpoint-secret").inner_text().strip()

    def org_id(self) -> str:
        """The id of the organization this person is looking at (Settings)."""
        self.nav("Settings")
        return self.page.get_by_role("region", name="Organization", exact=True).locator("code").first.inner_text()


def open_person(browser, service: Service, opened: list, phone: bool = False,
                watch_csp: bool = True) -> Person:
    ctx = harness.new_context(browser, phone=phone)
    opened.append(ctx)
    person = Person(service, ctx, ctx.new_page())

    def on_console(msg) -> None:
        if "Content Security Policy" in msg.text or "Content-Security-Policy" in msg.text:
            CSP_VIOLATIONS.append(f"{msg.type}: {msg.text} ({msg.location.get('url')})")

    def on_response(resp) -> None:
        if resp.url.startswith(service.base_url + "/dashboard"):
            csp = resp.headers.get("content-security-policy", "")
            if "script-src 'self'" not in csp:
                CSP_MISSING.append(f"{resp.status} {resp.url}: {csp!r}")

    def on_dialog(d) -> None:
        person.dialogs.append((d.type, d.message))
        d.accept()

    if watch_csp:
        ctx.on("console", on_console)
        ctx.on("response", on_response)
    ctx.on("dialog", on_dialog)
    return person


@pytest.fixture
def people(browser):
    """`people(service, phone=False)` opens a person's browser context; all
    are closed at the end of the test. With `watch_csp` (default) its CSP
    violations and dashboard answers without the CSP are kept for test_csp."""
    opened: list[BrowserContext] = []

    def make(service: Service, phone: bool = False, watch_csp: bool = True) -> Person:
        return open_person(browser, service, opened, phone, watch_csp)

    yield make
    for ctx in opened:
        assert not ctx.blocked_requests, ctx.blocked_requests
        ctx.close()


def sign_up(person: Person, org: str | None = None, email: str | None = None) -> str:
    """Creates an account through /dashboard/signup; returns the org name.
    `org=""` leaves the organization name empty (the service names it)."""
    org = unique("Org") if org is None else org
    person.email = email or email_of("person")
    person.goto("/dashboard/signup")
    person.page.get_by_label("E-mail").fill(person.email)
    person.page.get_by_label("Password").fill(person.password)
    if org:
        person.page.get_by_label("Organization name").fill(org)
    else:
        org = f"{person.email}'s organization"
    person.page.get_by_role("button", name="Create account").click()
    person.page.wait_for_url(person.service.url("/dashboard"))
    expect(person.heading()).to_have_text(f"Overview of {org}")
    return org


def credits_left(person: Person) -> int:
    return int(person.page.locator("#credits-left").inner_text())


def key_row(page: Page, name: str):
    """The row of the keys table whose Name cell is `name`."""
    return page.locator("tr[data-key]").filter(has=page.get_by_role("cell", name=name, exact=True))


def endpoint_row(page: Page, url: str):
    """The row of the endpoints table for `url`."""
    return page.get_by_role("row").filter(has_text=url).filter(
        has=page.get_by_role("button", name="Send test event"))


def scrape(service: Service, key: str, url: str) -> Any:
    return service.api("POST", "/v1/scrape", key, {"url": url})


def wait_crawl(service: Service, key: str, crawl_id: str, timeout: float = 30) -> dict:
    def done():
        r = service.api("GET", f"/v1/crawl/{crawl_id}", key)
        return r.json if r.json and r.json.get("status") in ("completed", "failed", "cancelled") else None
    return harness.wait_until(done, timeout=timeout, interval=0.1, message=f"crawl {crawl_id} finished")


def reload_until(page: Page, predicate, timeout: float = 15, message: str = "page condition"):
    """Reloads `page` until `predicate(page)` is truthy (for server-rendered tables)."""
    def check():
        page.reload()
        return predicate(page)
    return harness.wait_until(check, timeout=timeout, interval=0.2, message=message)


def invitation_link(inviter: Person, role: str = "member", email: str = "") -> str:
    """Makes an invitation link on the Team page; returns it."""
    inviter.nav("Team")
    page = inviter.page
    if email:
        page.get_by_label("E-mail (optional)").fill(email)
    page.get_by_label("Role", exact=True).select_option(role)
    page.get_by_role("button", name="Create invitation link").click()
    box = page.get_by_role("region", name="Invitation link")
    expect(box).to_be_visible()
    return box.locator("code#invite-link").inner_text().strip()


def join_with_new_account(service: Service, people, link: str, org: str, role: str) -> Person:
    """Someone new opens an invitation link and creates their account with it."""
    p = people(service)
    p.email = email_of(role)
    p.page.goto(link)
    expect(p.page.get_by_text(f"You are invited to {org} as {role}.")).to_be_visible()
    p.page.get_by_label("E-mail").fill(p.email)
    p.page.get_by_label("Password").fill(p.password)
    p.page.get_by_role("button", name="Create account and join").click()
    p.page.wait_for_url(service.url("/dashboard"))
    expect(p.heading()).to_have_text(f"Overview of {org}")
    return p


def member_row(page: Page, email: str):
    """The row of the Team page's members table for `email`."""
    return page.locator("#members tbody tr").filter(has_text=email)


def member_id(manager: Person, email: str) -> str:
    """A member's user id, as the Team page of an owner or admin names it."""
    if not manager.page.url.endswith("/dashboard/team"):
        manager.nav("Team")
    return manager.page.get_by_label(f"Role of {email}").get_attribute("id").removeprefix("role-")


def switcher_options(person: Person) -> list[str]:
    return [t.strip() for t in person.page.locator("#org-switch option").all_inner_texts()]


def start_crawl(service: Service, key: str, url: str, **extra: Any) -> str:
    r = service.api("POST", "/v1/crawl", key, {"url": url, **extra})
    assert r.status in (200, 201, 202), r.text
    return r.json["id"]


# --------------------------------------------------------------------------
# journeys


def test_signup_key_scrape_revoke(service, people, site):
    alice = people(service)
    sign_up(alice)
    page = alice.page
    expect(page.get_by_role("status")).to_contain_text("Welcome")
    assert credits_left(alice) == FREE_CREDITS

    alice.nav("API keys")
    expect(page.get_by_text("No keys yet.")).to_be_visible()
    key_id, secret = alice.create_key("ci")
    assert secret.startswith("wd_") and len(secret) > 20
    box = page.get_by_role("region", name="New API key")
    alice.ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=service.base_url)
    copy = box.locator("button[data-copy=new-key]")
    expect(copy).to_have_accessible_name("Copy")
    copy.click()
    expect(copy).to_have_text("Copied")
    assert page.evaluate("() => navigator.clipboard.readText()") == secret
    row = key_row(page, "ci")
    expect(row).to_contain_text("active")
    expect(row).to_contain_text(alice.email)  # created by

    # Shown once: a fresh look at the page no longer has it.
    alice.goto("/dashboard/keys")
    expect(key_row(page, "ci")).to_have_count(1)
    expect(page.locator("#new-key")).to_have_count(0)
    assert secret not in page.content()

    r = scrape(service, secret, site.url + "/a")
    assert r.status == 200, r.text
    used = r.json["credits_used"]
    assert used >= 1 and "Paragraph 1" in r.json["data"]["markdown"]

    alice.nav("Overview")
    assert credits_left(alice) == FREE_CREDITS - used
    expect(page.locator("#spent-month")).to_have_text(str(used))

    alice.nav("API keys")
    key_row(page, "ci").get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status")).to_have_text('Key "ci" revoked.')
    assert alice.dialogs and alice.dialogs[-1][0] == "confirm"
    expect(key_row(page, "ci")).to_contain_text("revoked")
    expect(key_row(page, "ci").get_by_role("button", name="Revoke")).to_have_count(0)

    r = scrape(service, secret, site.url + "/a")
    assert r.status == 401 and r.error_code == "unauthorized", r.text
    assert scrape(service, secret, site.url + "/b").status == 401


def test_playground(service, people, site):
    bob = people(service)
    sign_up(bob)
    page = bob.page
    org_id = bob.org_id()

    bob.nav("Playground")
    page.get_by_role("button", name="Mint a playground key").click()
    expect(page.get_by_role("status")).to_contain_text("Playground key minted")
    expect(page.locator("#pg-key-state")).to_contain_text("Active until")

    expect(page.get_by_label("Scrape a page")).to_be_checked()
    page.get_by_label("URL (or domain for brand)").fill(site.url + "/a")
    expect(page.get_by_label("markdown", exact=True)).to_be_checked()
    page.get_by_label("chunks", exact=True).check()
    page.get_by_label("links", exact=True).check()
    page.get_by_role("button", name="Run").click()

    result = page.get_by_role("region", name="Result")
    expect(result).to_be_visible()
    expect(page.locator("#pg-status")).to_have_text("200")
    used = int(page.locator("#pg-credits").inner_text())
    assert used >= 1
    rendered = page.locator("#pg-rendered")
    expect(rendered).to_be_visible()
    expect(rendered).to_contain_text("Paragraph 1 of the article a article.")
    expect(rendered.locator("p").first).to_be_visible()  # markdown rendered as HTML

    page.get_by_text("Markdown, raw").click()
    raw = page.locator("#pg-markdown")
    expect(raw).to_be_visible()
    expect(raw).to_contain_text("Paragraph 3 of the article a article.")

    page.get_by_text("JSON", exact=True).click()
    expect(page.locator("#pg-json")).to_be_visible()
    answer = json.loads(page.locator("#pg-json").inner_text())
    assert answer["success"] is True and answer["credits_used"] == used
    assert answer["data"]["markdown"].strip() == raw.inner_text().strip()
    assert answer["data"]["metadata"]["title"] == "Article A"
    page.get_by_text(re.compile(r"^Chunks \(\d+\)$")).click()
    expect(page.locator("ol.chunks li").first).to_be_visible()
    page.get_by_text(re.compile(r"^Links \(\d+\)$")).click()
    expect(page.locator("ul.links")).to_contain_text(site.url + "/")
    # The form keeps what was asked.
    expect(page.get_by_label("chunks", exact=True)).to_be_checked()
    expect(page.locator("#pg-key-state")).to_contain_text(f"{used} of 50 credits spent")

    # The playground key is not an API key of the organization.
    keys = service.keys(org_id, include_playground=True)
    [pg] = [k for k in keys if k["kind"] == "playground"]
    assert pg["revokedAt"] is None
    bob.nav("API keys")
    expect(page.get_by_text("No keys yet.")).to_be_visible()
    assert pg["prefix"] not in page.content()
    assert service.keys(org_id) == []

    # Minting again revokes the previous key of this person.
    bob.nav("Playground")
    page.get_by_role("button", name="Mint a new key").click()
    expect(page.get_by_role("status")).to_contain_text("Playground key minted")
    assert bob.dialogs and bob.dialogs[-1][0] == "confirm"
    keys = [k for k in service.keys(org_id, include_playground=True) if k["kind"] == "playground"]
    assert len(keys) == 2
    active = [k for k in keys if k["revokedAt"] is None and k["expiresAt"] > time.time() * 1000]
    assert len(active) == 1 and active[0]["id"] != pg["id"], keys
    assert all(k.get("person") == active[0]["person"] for k in keys)

    bob.nav("Audit log")
    audit = page.locator("#audit")
    expect(audit.get_by_role("row").filter(has_text="playground_key.created")).to_have_count(2)


def test_playground_screenshot(service, people, site):
    """Only where the service has a browser tier (a WebDriver, or the local
    Chromium it reports at start-up)."""
    if "browser rendering available" not in service.log() and not os.environ.get("WEBDATA_WEBDRIVER_URL"):
        pytest.skip("the service has no browser tier for screenshots")
    uma = people(service)
    sign_up(uma)
    page = uma.page
    uma.nav("Playground")
    page.get_by_role("button", name="Mint a playground key").click()
    page.get_by_label("URL (or domain for brand)").fill(site.url + "/b")
    page.get_by_label("screenshot", exact=True).check()
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#pg-status")).to_have_text("200", timeout=60_000)
    shot = page.get_by_role("img", name="Screenshot of the page")
    expect(shot).to_be_visible()
    assert shot.get_attribute("src").startswith(service.url("/v1/blobs/"))
    harness.wait_until(lambda: shot.evaluate("i => i.complete && i.naturalWidth > 0"), timeout=10,
                       message="screenshot loaded")
    expect(page.locator("#pg-rendered")).to_contain_text("Paragraph 4 of the article b article.")


def test_live_crawl_from_playground(service, people, site):
    site.set_page("/", "<!doctype html><html><head><title>Crawl root</title></head><body>"
                       "<a href=\"/a\">A</a> <a href=\"/slow\">Slow</a> <a href=\"/b\">B</a></body></html>")
    site.delays["/slow"] = 3.0
    carol = people(service)
    sign_up(carol)
    page = carol.page
    carol.nav("Playground")
    page.get_by_role("button", name="Mint a playground key").click()
    page.get_by_label("Crawl a site").check()
    page.get_by_label("URL (or domain for brand)").fill(site.url + "/")
    page.get_by_label("Crawl page limit").fill("5")
    page.get_by_role("button", name="Run").click()

    expect(page).to_have_url(re.compile(r"/dashboard/crawls/crawl_[0-9a-z]+$"))
    crawl_id = page.url.rsplit("/", 1)[1]
    navigations = []
    page.on("framenavigated", lambda f: navigations.append(f.url) if f == page.main_frame else None)
    page.evaluate("() => { window.__sameDocument = true; }")
    rows = page.locator("#crawl-pages tr")
    at_load = [r.inner_text() for r in rows.all()]
    assert not any("Slow page" in r for r in at_load), "the slow page cannot be there yet"

    status = page.locator("#crawl-live [data-field=status]")
    expect(status).to_have_text("completed", timeout=20_000)
    expect(page.locator("#crawl-pages .page-title").filter(has_text="Slow page")).to_have_count(1)
    assert page.evaluate("() => window.__sameDocument === true"), "the page was reloaded"
    assert navigations == []
    final = [r.inner_text() for r in rows.all()]
    assert len(final) > len(at_load)

    completed = int(page.locator("#crawl-live [data-field=completed]").inner_text())
    assert completed == 4  # /, /a, /slow, /b
    urls = [page.locator("#crawl-pages tr").nth(i).locator("td").nth(2).inner_text()
            for i in range(rows.count())]
    assert sorted(urls) == sorted({site.url + p for p in ("/", "/a", "/slow", "/b")}), urls
    expect(page.locator("#crawl-live [data-field=total]")).to_have_text("4")

    # The crawl list shows it finished.
    carol.nav("Crawls")
    row = page.get_by_role("row").filter(has=page.locator(f'a[href="/dashboard/crawls/{crawl_id}"]'))
    expect(row.locator("[data-field=status]")).to_have_text("completed")
    expect(row.locator("[data-field=completed]")).to_have_text("4")


def test_xss_title_is_text(service, people, site):
    dave = people(service)
    sign_up(dave)
    page = dave.page

    def assert_inert() -> None:
        scripts = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
        assert scripts == ["/dashboard/assets/app.js"], scripts
        assert page.locator("img[onerror], [onerror], iframe, object, embed").count() == 0
        assert not [d for d in dave.dialogs if d[0] == "alert"], dave.dialogs

    # Scrape in the playground.
    dave.nav("Playground")
    page.get_by_role("button", name="Mint a playground key").click()
    page.get_by_label("URL (or domain for brand)").fill(site.url + "/xss")
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#pg-status")).to_have_text("200")
    expect(page.locator("strong.page-title")).to_have_text(harness.XSS_TITLE)
    expect(page.locator("#pg-rendered")).to_contain_text("Hostile <img src=x onerror=alert(2)>")
    page.get_by_text("JSON", exact=True).click()
    expect(page.locator("#pg-json")).to_contain_text(harness.XSS_TITLE)
    assert_inert()

    # Crawl it: live rows (built by app.js) and the server-rendered table.
    page.get_by_label("Crawl a site").check()
    page.get_by_label("URL (or domain for brand)").fill(site.url + "/")
    page.get_by_label("Crawl page limit").fill("5")
    page.get_by_role("button", name="Run").click()
    expect(page).to_have_url(re.compile(r"/dashboard/crawls/crawl_"))
    expect(page.locator("#crawl-live [data-field=status]")).to_have_text("completed", timeout=20_000)
    cell = page.get_by_role("cell", name=harness.XSS_TITLE, exact=True)
    expect(cell).to_have_count(1)
    expect(cell).to_have_text(harness.XSS_TITLE)
    assert_inert()
    page.reload()
    expect(page.get_by_role("cell", name=harness.XSS_TITLE, exact=True)).to_have_count(1)
    assert_inert()
    dave.nav("Crawls")
    assert_inert()


def test_roles_and_isolation(service, people, site):
    owner = people(service)
    org = sign_up(owner)
    org_id = owner.org_id()
    page = owner.page

    links = {}
    for role in ("admin", "member"):
        owner.nav("Team")
        page.get_by_label("Role", exact=True).select_option(role)
        page.get_by_role("button", name="Create invitation link").click()
        box = page.get_by_role("region", name="Invitation link")
        expect(box).to_be_visible()
        expect(box.get_by_role("button", name="Copy")).to_be_visible()
        links[role] = box.locator("code#invite-link").inner_text().strip()
        assert links[role].startswith(service.url("/dashboard/invite/"))
    expect(page.locator("#invitations").get_by_role("row").filter(has_text="open")).to_have_count(2)

    joined: dict[str, Person] = {}
    for role, link in links.items():
        p = people(service)
        p.email = email_of(role)
        p.page.goto(link)
        expect(p.page.get_by_text(f"You are invited to {org} as {role}.")).to_be_visible()
        p.page.get_by_label("E-mail").fill(p.email)
        p.page.get_by_label("Password").fill(p.password)
        p.page.get_by_role("button", name="Create account and join").click()
        expect(p.page).to_have_url(service.url("/dashboard"))
        expect(p.heading()).to_have_text(f"Overview of {org}")
        expect(p.page.get_by_role("status")).to_have_text("You joined the organization.")
        joined[role] = p
    admin, member = joined["admin"], joined["member"]
    owner.nav("Team")
    members = page.locator("#members")
    expect(members.get_by_role("row").filter(has_text=admin.email)).to_contain_text("admin")
    expect(members.get_by_role("row").filter(has_text=member.email)).to_contain_text("member")

    # The member: no keys, no webhooks, not even by URL or a forged form.
    nav = member.page.get_by_role("navigation", name="Sections")
    expect(nav.get_by_role("link", name="API keys")).to_have_count(0)
    expect(nav.get_by_role("link", name="Webhooks")).to_have_count(0)
    for path in ("/dashboard/keys", "/dashboard/webhooks"):
        resp = member.goto(path)
        assert resp.status == 403, path
        expect(member.heading()).to_have_text("Not allowed")
    member.goto("/dashboard")
    token = member.csrf()
    r = member.post("/dashboard/keys", {"_csrf": token, "name": "member-key"})
    assert r["status"] == 403, r
    r = member.post("/dashboard/webhooks/endpoints", {"_csrf": token, "url": "http://127.0.0.2:9/x"})
    assert r["status"] == 403, r
    assert service.keys(org_id) == []
    # ... but the playground and the usage page work for them.
    member.nav("Playground")
    member.page.get_by_role("button", name="Mint a playground key").click()
    member.page.get_by_label("URL (or domain for brand)").fill(site.url + "/a")
    member.page.get_by_role("button", name="Run").click()
    expect(member.page.locator("#pg-status")).to_have_text("200")
    member.nav("Usage")
    expect(member.page.locator("#ledger tbody tr")).to_have_count(1)
    expect(member.page.locator("#ledger tbody tr")).to_contain_text("playground")

    # The admin: keys yes, spend cap no.
    admin.nav("API keys")
    _, admin_secret = admin.create_key("admin-made")
    assert scrape(service, admin_secret, site.url + "/b").status == 200
    admin.nav("Settings")
    expect(admin.page.get_by_label("Monthly cap (empty for none)")).to_have_count(0)
    expect(admin.page.get_by_role("button", name="Save spend cap")).to_have_count(0)
    expect(admin.page.get_by_text("Only the owner changes it.")).to_be_visible()
    r = admin.post("/dashboard/settings/spend-cap", {"_csrf": admin.csrf(), "spendCap": "1"})
    assert r["status"] == 403, r
    r = admin.post("/dashboard/settings/alerts", {"_csrf": admin.csrf(), "threshold": "1"})
    assert r["status"] == 403, r
    assert service.org(org_id)["spendCap"] is None

    # The owner sets it.
    owner.nav("Settings")
    page.get_by_label("Monthly cap (empty for none)").fill("300")
    page.get_by_role("button", name="Save spend cap").click()
    expect(page.get_by_role("status")).to_have_text("Spend cap saved.")
    expect(page.locator("#cap-now")).to_have_text("300")
    assert service.org(org_id)["spendCap"] == 300

    # Another organization's key is out of reach.
    other = people(service)
    sign_up(other)
    other_id, other_secret = other.create_key("theirs")
    owner.nav("API keys")
    r = owner.post(f"/dashboard/keys/{other_id}/revoke", {"_csrf": owner.csrf()})
    assert r["status"] == 404, r
    r = owner.post(f"/dashboard/keys/{other_id}/rotate", {"_csrf": owner.csrf()})
    assert r["status"] == 404, r
    assert scrape(service, other_secret, site.url + "/a").status == 200


def test_org_switching(service, people):
    pat = people(service)
    alpha = sign_up(pat, org=unique("Alpha"))
    quinn = people(service)
    beta = sign_up(quinn, org=unique("Beta"))
    quinn.nav("Team")
    quinn.page.get_by_role("button", name="Create invitation link").click()
    link = quinn.page.locator("code#invite-link").inner_text().strip()

    # Pat, signed in, accepts and is now looking at Beta.
    pat.page.goto(link)
    expect(pat.page.get_by_text(f"Signed in as {pat.email}.")).to_be_visible()
    pat.page.get_by_role("button", name="Accept and join").click()
    expect(pat.heading()).to_have_text(f"Overview of {beta}")

    switcher = pat.page.get_by_role("combobox", name="Organization", exact=True)
    expect(switcher.locator("option")).to_have_count(2)
    switcher.select_option(label=f"{alpha} (owner)")
    pat.page.get_by_role("button", name="Switch").click()
    expect(pat.heading()).to_have_text(f"Overview of {alpha}")
    pat.nav("Settings")
    expect(pat.page.get_by_text(f"Name: {alpha}")).to_be_visible()
    expect(pat.page.get_by_text("your role: owner")).to_be_visible()

    pat.page.get_by_role("combobox", name="Organization", exact=True).select_option(label=f"{beta} (member)")
    pat.page.get_by_role("button", name="Switch").click()
    expect(pat.heading()).to_have_text(f"Overview of {beta}")
    expect(pat.page.get_by_role("navigation", name="Sections").get_by_role("link", name="API keys")) \
        .to_have_count(0)
    # A new page load stays in the chosen organization.
    pat.goto("/dashboard")
    expect(pat.heading()).to_have_text(f"Overview of {beta}")


def test_password_reset(service, people, smtp):
    elsewhere = people(service)  # stays signed in on another device
    sign_up(elsewhere)
    old = elsewhere.password
    erin = people(service)
    erin.email = elsewhere.email
    page = erin.page
    erin.goto("/dashboard/login")
    page.get_by_role("link", name="Forgot your password?").click()
    page.get_by_label("E-mail").fill(erin.email)
    page.get_by_role("button", name="Send a reset link").click()
    expect(erin.heading()).to_have_text("Check your mail")

    mail = smtp.wait_for_message(erin.email, timeout=15)
    assert "reset" in mail.subject.lower()
    [link] = [u for u in mail.links if "/dashboard/reset/" in u]
    assert link.startswith(service.url("/dashboard/reset/"))

    page.goto(link)
    new = "a-brand-new-password-42"
    page.get_by_label("New password").fill(new)
    page.get_by_role("button", name="Set password").click()
    expect(page).to_have_url(re.compile(r"/dashboard/login"))

    # Signed out everywhere.
    elsewhere.goto("/dashboard")
    expect(elsewhere.page).to_have_url(re.compile(r"/dashboard/login\?next="))

    assert erin.sign_in(password=new) == 303
    expect(erin.heading()).to_have_text(re.compile(r"^Overview of "))
    expect(page.get_by_text(erin.email)).to_be_visible()
    erin.sign_out()
    assert erin.sign_in(password=old) == 401
    expect(page.get_by_role("alert")).to_have_text("The e-mail or password is not right.")
    # The link worked once.
    resp = page.goto(link)
    assert resp.status == 404


def test_login_rate_limit(service_factory, people):
    svc = service_factory()
    person = people(svc)
    person.email = svc.owner_email
    person.goto("/dashboard/login")
    # The limit counts per clock minute: start with enough of the minute left
    # (15 s for the 7 attempts below, about 1 s each).
    harness.wait_until(lambda: (time.time() % 60) < 45, timeout=20, interval=0.2,
                       message="room in this minute")
    statuses = [person.sign_in(password=f"wrong-password-{i}") for i in range(6)]
    assert statuses == [401] * 5 + [429], statuses
    expect(person.page.get_by_role("alert")).to_contain_text("Too many sign-in attempts")
    with person.page.expect_response(lambda r: r.request.method == "POST") as resp:
        person.page.get_by_label("Password").fill(svc.owner_password)
        person.page.get_by_role("button", name="Sign in").click()
    assert resp.value.status == 429
    retry = int(resp.value.headers["retry-after"])
    assert 1 <= retry <= 60
    person.goto("/dashboard")
    expect(person.page).to_have_url(re.compile(r"/dashboard/login"))


def test_csrf(service, people, site):
    fay = people(service)
    sign_up(fay)
    org_id = fay.org_id()
    fay.nav("API keys")
    token = fay.csrf()

    r = fay.post("/dashboard/keys", {"name": "no-token"})
    assert r["status"] == 403 and "security token" in r["text"], r
    r = fay.post("/dashboard/keys", {"name": "bad-token", "_csrf": "x" * len(token)})
    assert r["status"] == 403, r
    # A valid token, but sent from another site.
    resp = fay.ctx.request.post(service.url("/dashboard/keys"), form={"_csrf": token, "name": "other-origin"},
                                headers={"Origin": site.url}, max_redirects=0)
    assert resp.status == 403 and "another site" in resp.text(), resp.text()
    resp = fay.ctx.request.post(service.url("/dashboard/settings/name"),
                                form={"_csrf": token, "name": "renamed"},
                                headers={"Origin": "null"}, max_redirects=0)
    assert resp.status == 403
    assert service.org(org_id)["name"] != "renamed"
    # A real cross-site form on another origin, even carrying a leaked token.
    site.set_page("/attack", f"""<!doctype html><html><body>
        <form method="post" action="{service.url('/dashboard/keys')}">
        <input type="hidden" name="_csrf" value="{token}"><input type="hidden" name="name" value="evil">
        <button type="submit">Win a prize</button></form></body></html>""")
    attack = fay.ctx.new_page()
    attack.goto(site.url + "/attack")
    with attack.expect_navigation() as nav:
        attack.get_by_role("button", name="Win a prize").click()
    assert nav.value.status == 403
    attack.close()
    assert service.keys(org_id) == []
    # The same form from the dashboard itself works.
    fay.page.reload()
    fay.create_key("legit")
    assert [k["name"] for k in service.keys(org_id)] == ["legit"]


def test_webhook_endpoint_and_secret_rotation(service, people, site, receiver, receiver2):
    gus = people(service)
    sign_up(gus)
    page = gus.page
    ep_secret = gus.add_endpoint(receiver.url)
    assert len(ep_secret) >= 16
    row = endpoint_row(page, receiver.url)
    expect(row).to_contain_text("enabled")
    row.get_by_role("button", name="Send test event").click()
    flash = page.get_by_role("status")
    expect(flash).to_contain_text("Test event evt_")
    event_id = re.search(r"(evt_[0-9a-zA-Z]+)", flash.inner_text()).group(1)
    [test_ev] = receiver.wait_for(lambda r: r.event == "webhook.test", timeout=10)
    assert test_ev.json["id"] == event_id and test_ev.json["type"] == "webhook.test"
    assert receiver.verify(test_ev, ep_secret)
    assert len(receiver.v1_values(test_ev)) == 1

    # Signing secret: reveal, rotate with an overlap.
    secret_box = page.get_by_role("region", name="Signing secret")
    secret_box.get_by_role("button", name="Reveal secret").click()
    shown = page.get_by_role("region", name="Signing secret").locator("code#signing-secret")
    expect(shown).to_be_visible()
    old = shown.inner_text().strip()
    page.get_by_label("Overlap (hours)").fill("24")
    page.get_by_role("button", name="Rotate secret").click()
    new_box = page.get_by_role("region", name="New signing secret")
    expect(new_box).to_be_visible()
    new = new_box.locator("code#signing-secret").inner_text().strip()
    assert new and new != old
    assert gus.dialogs and gus.dialogs[-1][0] == "confirm"

    _, key = gus.create_key("crawler")
    r = service.api("POST", "/v1/crawl", key, {"url": site.url + "/a", "limit": 1,
                                               "webhook": {"url": receiver2.url}})
    assert r.status in (200, 201, 202), r.text
    crawl_id = r.json["id"]
    # Deliveries may arrive in any order: wait for each kind.
    for event in ("crawl.started", "crawl.page", "crawl.completed"):
        receiver2.wait_for(lambda x, e=event: x.event == e, timeout=20)
    deliveries = receiver2.requests
    for d in deliveries:
        assert d.json["data"]["id"] == crawl_id
        values = receiver2.v1_values(d)
        assert len(values) == 2, d.header("service-signature")
        t = receiver2.timestamp(d)
        assert sorted(values) == sorted([harness.compute_signature(new, t, d.body),
                                         harness.compute_signature(old, t, d.body)])
        assert receiver2.verify(d, new) and receiver2.verify(d, old)
    # The dashboard endpoint got the crawl too, signed with its own secret only.
    [ep_done] = receiver.wait_for(lambda x: x.event == "crawl.completed", timeout=20)
    assert receiver.verify(ep_done, ep_secret) and not receiver.verify(ep_done, new)
    assert len(receiver.v1_values(ep_done)) == 1


def test_dead_letter_and_redrive(service, people, receiver):
    hal = people(service)
    sign_up(hal)
    page = hal.page
    receiver.status = 500
    ep_secret = hal.add_endpoint(receiver.url)
    endpoint_row(page, receiver.url).get_by_role("button", name="Send test event").click()
    event_id = re.search(r"(evt_[0-9a-zA-Z]+)", page.get_by_role("status").inner_text()).group(1)
    failed = receiver.wait_for(lambda r: r.event == "webhook.test", count=8, timeout=15)
    assert [r.attempt for r in failed] == list(range(1, 9))
    assert {r.json["id"] for r in failed} == {event_id}

    def dead_row(p: Page):
        row = p.locator("#dead-letters tbody tr").filter(has_text=event_id)
        return row if row.count() == 1 else None
    row = reload_until(page, dead_row, timeout=15, message="dead letter listed")
    cells = row.locator("td")
    expect(cells.nth(0)).to_contain_text("webhook.test")
    expect(cells.nth(1)).to_have_text(receiver.url)
    expect(cells.nth(2)).to_have_text("8")
    expect(cells.nth(3)).to_contain_text("HTTP 500")
    time.sleep(0.3)
    assert len(receiver.requests) == 8, "no attempt after the 8th"

    receiver.status = 200
    row.get_by_role("button", name="Re-drive").click()
    expect(page.get_by_role("status")).to_have_text("Dead letter sent again.")
    [ok] = receiver.wait_for(lambda r: r.status == 200, timeout=10)
    assert ok.json["id"] == event_id and ok.event == "webhook.test"
    assert receiver.verify(ok, ep_secret)

    def delivered(p: Page):
        rows = p.locator("#deliveries tbody tr").filter(has_text="webhook.test")
        return rows.count() == 1 and "delivered" in rows.first.inner_text()
    reload_until(page, delivered, timeout=10, message="delivery shown as delivered")
    expect(page.locator("#dead-letters tbody tr").filter(has_text=event_id)).to_have_count(0)


def test_usage_alerts_and_spend_cap(service, people, receiver, site):
    ida = people(service)
    sign_up(ida)
    page = ida.page
    org_id = ida.org_id()
    ep_secret = ida.add_endpoint(receiver.url)
    _, key = ida.create_key("alerts")

    ida.nav("Settings")
    credits = service.org(org_id)["credits"]
    assert credits == FREE_CREDITS
    page.get_by_label("Low-credit threshold").fill(str(credits - 1))
    page.get_by_role("button", name="Save threshold").click()
    expect(page.get_by_role("status")).to_have_text("Alert threshold saved.")
    expect(page.locator("#threshold-now")).to_have_text(str(credits - 1))

    r = scrape(service, key, site.url + "/a")
    assert r.status == 200 and r.json["credits_used"] == 1, r.text
    [low] = receiver.wait_for(lambda x: x.event == "usage.credits_low", timeout=10)
    assert receiver.verify(low, ep_secret)
    assert low.json["type"] == "usage.credits_low"
    assert low.json["data"]["credits"] == credits - 1
    assert low.json["data"]["threshold"] == credits - 1
    r = scrape(service, key, site.url + "/b")
    assert r.status == 200, r.text

    spent = service.org(org_id)["periodSpent"]
    assert spent == 2
    page.reload()
    page.get_by_label("Monthly cap (empty for none)").fill(str(spent))
    page.get_by_role("button", name="Save spend cap").click()
    expect(page.get_by_role("status")).to_have_text("Spend cap saved.")
    expect(page.locator("#cap-now")).to_have_text(str(spent))

    r = scrape(service, key, site.url + "/xss")
    assert r.status == 402 and r.error_code == "spend_cap_reached", r.text
    [cap] = receiver.wait_for(lambda x: x.event == "usage.spend_cap_reached", timeout=10)
    assert receiver.verify(cap, ep_secret)
    assert cap.json["data"]["spendCap"] == spent
    r = scrape(service, key, site.url + "/slow")
    assert r.status == 402 and r.error_code == "spend_cap_reached", r.text
    # Two more rounds of the alert check (each second) send nothing new.
    time.sleep(2.5)
    events = [x.event for x in receiver.requests]
    assert events.count("usage.credits_low") == 1, events
    assert events.count("usage.spend_cap_reached") == 1, events

    ida.nav("Overview")
    expect(page.locator("#spent-month")).to_have_text(str(spent))
    expect(page.locator("#cap-progress")).to_have_attribute("max", str(spent))
    # Recent failures: the two refused requests.
    failures = page.get_by_role("row").filter(has=page.get_by_role("cell", name="spend_cap_reached", exact=True))
    expect(failures.locator("td").nth(1)).to_have_text("2")


def test_usage_page_and_csv(service, people, site):
    jo = people(service)
    sign_up(jo)
    page = jo.page
    _, key = jo.create_key("usage")
    for path in ("/a", "/b"):
        assert scrape(service, key, site.url + path).status == 200
    r = service.api("POST", "/v1/crawl", key, {"url": site.url + "/a", "limit": 1})
    assert r.status in (200, 201, 202), r.text
    wait_crawl(service, key, r.json["id"])

    jo.nav("Usage")
    rows = page.locator("#ledger tbody tr")
    harness.wait_until(lambda: (page.reload() or rows.count() >= 3), timeout=10,
                       message="ledger rows")
    ops = [rows.nth(i).locator("td").nth(1).inner_text() for i in range(rows.count())]
    assert ops.count("scrape") == 2 and len(set(ops)) >= 2, ops
    total = int(page.locator("#usage-total").inner_text())
    assert total == sum(int(rows.nth(i).locator("td").nth(4).inner_text()) for i in range(rows.count()))

    page.get_by_label("Operation").select_option("scrape")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"operation=scrape"))
    expect(rows).to_have_count(2)
    shown = []
    for i in range(2):
        cells = rows.nth(i).locator("td")
        assert cells.nth(1).inner_text() == "scrape"
        assert cells.nth(2).inner_text() == "usage"
        shown.append((cells.nth(1).inner_text(), cells.nth(2).inner_text(), cells.nth(3).inner_text(),
                      cells.nth(4).inner_text(), cells.nth(5).inner_text()))

    with page.expect_download() as dl:
        page.get_by_role("link", name="Export CSV").click()
    download = dl.value
    assert download.suggested_filename.startswith("webdata-usage-") and \
        download.suggested_filename.endswith(".csv")
    with open(download.path(), newline="", encoding="utf-8") as f:
        table = list(csv.DictReader(f))
    assert [r["operation"] for r in table] == ["scrape", "scrape"], table
    from_csv = [(r["operation"], r["key_name"], r["reserved"], r["charged"], r["state"]) for r in table]
    assert sorted(from_csv) == sorted(shown)
    # Times in the CSV match the table's minutes.
    times = [rows.nth(i).locator("time").get_attribute("datetime") for i in range(2)]
    assert sorted(t[:16] for t in times) == sorted(r["time"][:16] for r in table)


def test_signup_off(service_factory, people):
    svc = service_factory({"WEBDATA_SIGNUP": "off"})
    kim = people(svc)
    resp = kim.goto("/dashboard/signup")
    assert resp.status == 404
    expect(kim.heading()).to_have_text("Sign-up is off")
    kim.goto("/dashboard/login")
    expect(kim.page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(kim.page.get_by_role("link", name="Create an account")).to_have_count(0)
    expect(kim.page.get_by_role("link", name=re.compile("sign ?up", re.I))).to_have_count(0)
    r = kim.post("/dashboard/signup", {"_csrf": kim.csrf(), "email": "sneaky@example.test",
                                       "password": PASSWORD, "org": "Sneaky"})
    assert r["status"] == 404, r
    assert [o["name"] for o in svc.admin("GET", "/organizations").json["data"]] == ["default"]

    done = svc.cli("users", "create", "--database-url", svc.database_url, "--org", "default",
                   "--email", "boss@example.test", "--role", "owner", "--password", "boss-password-1")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert "boss@example.test" in json.dumps(printed)

    kim.email, kim.password = "boss@example.test", "boss-password-1"
    assert kim.sign_in() == 303
    expect(kim.heading()).to_have_text("Overview of default")
    expect(kim.page.get_by_text("boss@example.test")).to_be_visible()


def test_key_rotation(service, people, site):
    kay = people(service)
    sign_up(kay)
    page = kay.page
    org_id = kay.org_id()
    old_id, old_secret = kay.create_key("deploy")
    assert scrape(service, old_secret, site.url + "/a").status == 200

    kay.goto("/dashboard/keys")
    key_row(page, "deploy").get_by_role("button", name="Rotate").click()
    box = page.get_by_role("region", name="New API key")
    expect(box).to_be_visible()
    expect(box).to_contain_text('the key "deploy" is shown (rotated; the old key is revoked)')
    assert kay.dialogs[-1] == ("confirm", "Rotate this key? The old key stops working now.")
    new_secret = box.locator("code#new-key").inner_text().strip()
    assert new_secret.startswith("wd_") and new_secret != old_secret

    # Same name: the old row is revoked, a new active row carries the secret shown.
    rows = key_row(page, "deploy")
    expect(rows).to_have_count(2)
    old_row = page.locator(f'tr[data-key="{old_id}"]')
    expect(old_row).to_contain_text("revoked")
    expect(old_row.get_by_role("button")).to_have_count(0)
    new_row = rows.filter(has_not_text="revoked")
    expect(new_row).to_have_count(1)
    expect(new_row).to_contain_text("active")
    new_id = new_row.get_attribute("data-key")
    assert new_id != old_id
    prefix = new_row.locator("td").nth(1).inner_text().rstrip("…")
    assert new_secret.startswith(prefix) and not old_secret.startswith(prefix), (prefix, new_secret)

    r = scrape(service, new_secret, site.url + "/b")
    assert r.status == 200, r.text
    r = scrape(service, old_secret, site.url + "/a")
    assert r.status == 401 and r.error_code == "unauthorized", r.text
    keys = {k["id"]: k for k in service.keys(org_id)}
    assert keys[new_id]["name"] == "deploy" and keys[new_id]["revokedAt"] is None, keys
    assert keys[old_id]["revokedAt"] is not None, keys

    # Shown once.
    kay.goto("/dashboard/keys")
    expect(key_row(page, "deploy")).to_have_count(2)
    expect(page.locator("#new-key")).to_have_count(0)
    assert new_secret not in page.content()
    kay.nav("Audit log")
    expect(page.locator("#audit").get_by_role("row").filter(has_text="key.rotated")).to_have_count(1)


def test_endpoint_disable_enable_delete(service, people, site, receiver, receiver2):
    """A disabled endpoint still gets test events (by design) but no crawl
    events; enabled again it gets the next crawl's; deleted it is gone.
    `receiver2` is the crawl's own webhook: once it has crawl.completed,
    every delivery of that crawl's events has been queued."""
    uma = people(service)
    sign_up(uma)
    page = uma.page
    org_id = uma.org_id()
    _, key = uma.create_key("hooks")
    ep_secret = uma.add_endpoint(receiver.url)
    row = endpoint_row(page, receiver.url)
    state = row.locator("td").nth(2)
    expect(state).to_have_text("enabled")

    row.get_by_role("button", name="Disable").click()
    expect(page.get_by_role("status")).to_have_text("Endpoint disabled.")
    expect(state).to_have_text(re.compile(r"^disabled \d{4}-\d\d-\d\d \d\d:\d\d UTC$"))
    expect(row.get_by_role("button", name="Disable")).to_have_count(0)
    expect(row.get_by_role("button", name="Enable")).to_be_visible()

    row.get_by_role("button", name="Send test event").click()
    expect(page.get_by_role("status")).to_contain_text("Test event evt_")
    [test_ev] = receiver.wait_for(lambda r: r.event == "webhook.test", timeout=10)
    assert receiver.verify(test_ev, ep_secret)

    first = start_crawl(service, key, site.url + "/a", limit=1, webhook={"url": receiver2.url})
    receiver2.wait_for(lambda x: x.event == "crawl.completed" and x.json["data"]["id"] == first, timeout=20)
    page.reload()
    deliveries = page.locator("#deliveries tbody tr")
    expect(deliveries.filter(has_text=receiver2.url).filter(has_text="crawl.completed")).to_have_count(1)
    to_endpoint = [deliveries.nth(i).inner_text() for i in range(deliveries.count())
                   if receiver.url in deliveries.nth(i).inner_text()]
    assert len(to_endpoint) == 1 and "webhook.test" in to_endpoint[0], to_endpoint
    assert [r.event for r in receiver.requests] == ["webhook.test"]

    row.get_by_role("button", name="Enable").click()
    expect(page.get_by_role("status")).to_have_text("Endpoint enabled.")
    expect(state).to_have_text("enabled")
    expect(row.get_by_role("button", name="Disable")).to_be_visible()
    second = start_crawl(service, key, site.url + "/b", limit=1)
    for event in ("crawl.started", "crawl.page", "crawl.completed"):
        [d] = receiver.wait_for(lambda x, e=event: x.event == e, timeout=20)
        assert d.json["data"]["id"] == second
        assert receiver.verify(d, ep_secret)
    crawl_ids = {r.json["data"]["id"] for r in receiver.requests if r.event.startswith("crawl.")}
    assert crawl_ids == {second}, "events of the crawl made while disabled were sent later"

    row.get_by_role("button", name="Delete").click()
    expect(page.get_by_role("status")).to_have_text("Endpoint deleted.")
    assert uma.dialogs[-1] == ("confirm", "Delete this endpoint? Its pending deliveries become dead letters.")
    expect(endpoint_row(page, receiver.url)).to_have_count(0)
    expect(page.get_by_text("No endpoints.")).to_be_visible()
    r = service.admin("GET", f"/organizations/{org_id}/webhook-endpoints")
    assert r.status == 200 and r.json["data"] == [], r.text


def test_transfer_ownership(service, people):
    olga = people(service)
    org = sign_up(olga)
    org_id = olga.org_id()
    ada = join_with_new_account(service, people, invitation_link(olga, "admin"), org, "admin")
    ada_id = member_id(olga, ada.email)

    olga.nav("Settings")
    page = olga.page
    page.get_by_label("New owner").select_option(label=ada.email)
    page.get_by_role("button", name="Transfer", exact=True).click()
    expect(page.get_by_role("status")).to_have_text(f"{ada.email} is now the owner; you are an admin.")
    assert olga.dialogs[-1] == ("confirm", "Transfer ownership? You become an admin.")

    # The old owner is an admin now: no spend cap, no transfer, no delete.
    expect(page.get_by_text("your role: admin")).to_be_visible()
    expect(page.get_by_label("Monthly cap (empty for none)")).to_have_count(0)
    expect(page.get_by_role("button", name="Save spend cap")).to_have_count(0)
    expect(page.get_by_text("Only the owner changes it.")).to_be_visible()
    expect(page.get_by_role("button", name="Transfer", exact=True)).to_have_count(0)
    expect(page.get_by_role("button", name="Delete organization")).to_have_count(0)
    assert switcher_options(olga) == [f"{org} (admin)"]
    token = olga.csrf()
    assert olga.post("/dashboard/settings/spend-cap", {"_csrf": token, "spendCap": "5"})["status"] == 403
    r = olga.post("/dashboard/settings/transfer", {"_csrf": token, "user": ada_id})
    assert r["status"] == 403, r
    assert service.org(org_id)["spendCap"] is None

    # The new owner has the owner's settings and uses them.
    ada.goto("/dashboard/settings")
    expect(ada.page.get_by_text("your role: owner")).to_be_visible()
    cap = ada.page.get_by_label("Monthly cap (empty for none)")
    expect(cap).to_be_visible()
    expect(ada.page.get_by_role("button", name="Transfer", exact=True)).to_be_visible()
    cap.fill("123")
    ada.page.get_by_role("button", name="Save spend cap").click()
    expect(ada.page.get_by_role("status")).to_have_text("Spend cap saved.")
    assert service.org(org_id)["spendCap"] == 123
    assert switcher_options(ada) == [f"{org} (owner)"]

    ada.nav("Team")
    expect(member_row(ada.page, ada.email).locator("td").nth(1)).to_have_text("owner")
    expect(member_row(ada.page, olga.email).locator("td").nth(1)).to_have_text("admin")
    ada.nav("Audit log")
    expect(ada.page.locator("#audit").get_by_role("row").filter(has_text="org.ownership_transferred")) \
        .to_contain_text(ada.email)


def test_delete_organization(service, people, site):
    dina = people(service)
    first = sign_up(dina, org=unique("Keep"))
    page = dina.page
    doomed = unique("Doomed")
    dina.nav("Settings")
    page.get_by_label("Name", exact=True).fill(doomed)
    page.get_by_role("button", name="Create organization").click()
    expect(dina.heading()).to_have_text(f"Overview of {doomed}")
    expect(page.get_by_role("status")).to_have_text("Organization created.")
    doomed_id = dina.org_id()
    _, key = dina.create_key("doomed-key")
    assert scrape(service, key, site.url + "/a").status == 200

    def delete(typed: str) -> int:
        dina.goto("/dashboard/settings")
        page.get_by_label("Organization name", exact=True).fill(typed)
        with page.expect_response(lambda r: r.request.method == "POST"
                                  and r.url.endswith("/dashboard/settings/delete")) as resp:
            page.get_by_role("button", name="Delete organization").click()
        page.wait_for_load_state()
        return resp.value.status

    # Wrong names (another organization's, a different case) are refused.
    for wrong in (first, doomed.lower()):
        assert delete(wrong) == 400, wrong
        expect(dina.heading()).to_have_text("Not possible")
        expect(page.get_by_role("alert")).to_have_text("Type the organization's exact name to delete it.")
    dina.goto("/dashboard")
    expect(dina.heading()).to_have_text(f"Overview of {doomed}")
    assert sorted(switcher_options(dina)) == sorted([f"{first} (owner)", f"{doomed} (owner)"])
    assert scrape(service, key, site.url + "/b").status == 200

    assert delete(doomed) == 303
    expect(dina.heading()).to_have_text(f"Overview of {first}")
    expect(page.get_by_role("status")).to_have_text("Organization deleted.")
    assert switcher_options(dina) == [f"{first} (owner)"]
    r = scrape(service, key, site.url + "/a")
    assert r.status == 401 and r.error_code == "unauthorized", r.text
    assert all(k["revokedAt"] is not None for k in service.keys(doomed_id))
    # Nothing of it is reachable by a forged switch.
    r = dina.post("/dashboard/switch", {"_csrf": dina.csrf(), "org": doomed_id})
    assert r["status"] == 404, r

    # The last one: nothing left but creating an organization.
    assert delete(first) == 303
    expect(dina.heading()).to_have_text("Create an organization")
    expect(page.get_by_text(f"You ({dina.email}) are not in any organization.")).to_be_visible()
    dina.goto("/dashboard/keys")
    expect(dina.heading()).to_have_text("Create an organization")
    fresh = unique("Fresh")
    page.get_by_label("Organization name").fill(fresh)
    page.get_by_role("button", name="Create organization").click()
    expect(dina.heading()).to_have_text(f"Overview of {fresh}")
    assert switcher_options(dina) == [f"{fresh} (owner)"]


def test_cancel_running_crawl(service, people, site):
    site.set_page("/", "<!doctype html><html><head><title>Root</title></head><body>"
                       "<a href=\"/slow\">Slow</a> <a href=\"/a\">A</a></body></html>")
    site.delays["/slow"] = 10.0  # in flight while the crawl is cancelled; nobody waits for it
    cleo = people(service)
    sign_up(cleo)
    page = cleo.page
    _, key = cleo.create_key("crawler")
    crawl_id = start_crawl(service, key, site.url + "/", limit=20)
    harness.wait_until(lambda: site.hit_count("/slow") >= 1, timeout=15, message="the crawl reached /slow")

    cleo.nav("Crawls")
    link = page.locator(f'a[href="/dashboard/crawls/{crawl_id}"]')
    expect(page.get_by_role("row").filter(has=link).locator("[data-field=status]")).to_have_text("running")
    link.click()
    expect(page).to_have_url(service.url(f"/dashboard/crawls/{crawl_id}"))
    cancel = page.get_by_role("button", name="Cancel crawl")
    expect(cancel).to_be_visible()
    cancel.click()
    assert cleo.dialogs[-1] == ("confirm", "Cancel this crawl? Pages already scraped stay available and charged.")
    expect(page.get_by_role("status")).to_have_text("Crawl cancelled.")
    expect(page.locator("#crawl-live [data-field=status]")).to_have_text("cancelled")
    expect(cancel).to_have_count(0)
    r = service.api("GET", f"/v1/crawl/{crawl_id}", key)
    assert r.status == 200 and r.json["status"] == "cancelled", r.text

    cleo.nav("Crawls")
    expect(page.get_by_role("row").filter(has=link).locator("[data-field=status]")).to_have_text("cancelled")
    # A forged second cancel changes nothing; the crawl stays cancelled.
    r = cleo.post(f"/dashboard/crawls/{crawl_id}/cancel", {"_csrf": cleo.csrf()})
    assert r["status"] == 303, r
    assert service.api("GET", f"/v1/crawl/{crawl_id}", key).json["status"] == "cancelled"


def make_due(service: Service, schedule_id: str) -> None:
    """Moves a schedule's next run into the past in the service's store (the
    scheduler ticks every 100 ms in `scheduled_service`): it starts now."""
    import sqlite3

    db = sqlite3.connect(service.database_url.removeprefix("sqlite://"), timeout=10)
    try:
        with db:
            n = db.execute("UPDATE schedules SET next_run_at = ? WHERE id = ?",
                           (int(time.time() * 1000) - 1000, schedule_id)).rowcount
        assert n == 1, schedule_id
    finally:
        db.close()


def ended_runs(service: Service, key: str, schedule_id: str, n: int, timeout: float = 60) -> list[dict]:
    """Waits until the schedule has `n` ended runs (and none open); returns its runs, newest first."""
    def done():
        r = service.api("GET", f"/v1/schedules/{schedule_id}", key)
        assert r.status == 200, r.text
        runs = r.json["data"]["runs"]
        ended = [x for x in runs if x["state"] not in ("starting", "running")]
        return runs if len(ended) >= n and len(ended) == len(runs) else None
    return harness.wait_until(done, timeout=timeout, interval=0.2, message=f"{n} runs of {schedule_id} ended")


def test_schedules_page(service_factory, people, site):
    svc = service_factory({"WEBDATA_SCHEDULER_TICK_MS": "100"})
    sara = people(svc)
    org = sign_up(sara)
    page = sara.page
    sara.nav("Schedules")
    expect(page.get_by_text("No schedules yet.")).to_be_visible()
    expect(page.locator("main pre")).to_contain_text("/v1/schedules")
    _, key = sara.create_key("scheduler")

    r = svc.api("POST", "/v1/schedules", key, {"name": "harbour watch", "every": "1d",
                                               "crawl": {"url": site.url + "/", "limit": 10}})
    assert r.status == 201, r.text
    sched_id = r.json["data"]["id"]
    make_due(svc, sched_id)
    [first] = ended_runs(svc, key, sched_id, 1)
    assert first["state"] == "completed" and first["summary"]["new"] >= 4, first

    # /xss changes (its title is markup; the added text too), then the next run.
    site.set_page("/xss", "<html><head><title><script>alert(1)</script></title></head><body>"
                          "<h1>Hostile &lt;img src=x onerror=alert(2)&gt;</h1>"
                          f"<p>{harness._LOREM}{harness._LOREM}This page tries to inject markup through its title "
                          "and heading, and a careful renderer shows that markup as plain text.</p>"
                          "<p>Added: the ferry timetable now lists night crossings "
                          "&lt;script&gt;alert(5)&lt;/script&gt; every Friday.</p></body></html>")
    make_due(svc, sched_id)
    runs = ended_runs(svc, key, sched_id, 2)
    newest = runs[0]
    assert newest["state"] == "completed" and newest["summary"]["changed"] == 1, runs
    s = newest["summary"]
    said = f"{s['pages']} pages: {s['new']} new, {s['same']} same, {s['changed']} changed, {s['removed']} removed"

    sara.nav("Schedules")
    row = page.locator(f'tr[data-schedule="{sched_id}"]')
    expect(row).to_contain_text("harbour watch")
    expect(row).to_contain_text("every 1d")
    expect(row).to_contain_text(site.url + "/")
    expect(row.locator("[data-field=state]")).to_have_text("active")
    expect(row.locator("[data-field=summary]")).to_have_text(said)

    row.get_by_role("link", name="harbour watch").click()
    expect(page).to_have_url(svc.url(f"/dashboard/schedules/{sched_id}"))
    expect(sara.heading()).to_have_text("Schedule harbour watch")
    run_rows = page.locator("#runs tbody tr")
    expect(run_rows).to_have_count(2)
    for i, run in enumerate(runs):
        expect(run_rows.nth(i).locator("[data-field=state]")).to_have_text("completed")
        expect(run_rows.nth(i).get_by_role("link", name=run["crawlId"])) \
            .to_have_attribute("href", f"/dashboard/crawls/{run['crawlId']}")
    expect(run_rows.nth(0).locator("[data-field=summary]")).to_have_text(said)
    changed = page.locator("#changes .change[data-change=changed]")
    expect(changed).to_have_count(1)
    expect(changed.locator(".page-title")).to_have_text(harness.XSS_TITLE)
    expect(changed.locator(".url")).to_have_text(site.url + "/xss")
    added = changed.locator("pre.diff .add")
    expect(added.filter(has_text="Added: the ferry timetable")).to_have_count(1)
    # Markup from the site is text: the only script is the dashboard's own.
    expect(added.filter(has_text="alert(5)")).to_have_count(1)
    expect(page.locator("script")).to_have_count(1)
    expect(changed.locator("pre.diff *:not(span)")).to_have_count(0)
    assert "<script>alert(1)</script>" not in page.content()
    assert not [d for d in sara.dialogs if d[0] == "alert"], sara.dialogs

    # A member sees it but may not pause it, not even with a forged form.
    mel = join_with_new_account(svc, people, invitation_link(sara, "member"), org, "member")
    mel.nav("Schedules")
    mel.page.locator(f'tr[data-schedule="{sched_id}"]').get_by_role("link", name="harbour watch").click()
    expect(mel.page.locator("#runs tbody tr")).to_have_count(2)
    expect(mel.page.get_by_role("button", name="Pause")).to_have_count(0)
    expect(mel.page.get_by_role("button", name="Delete")).to_have_count(0)
    token = mel.csrf()
    for action in ("pause", "delete"):
        r = mel.post(f"/dashboard/schedules/{sched_id}/{action}", {"_csrf": token})
        assert r["status"] == 403 and "This needs the admin role" in r["text"], (action, r)
    assert svc.api("GET", f"/v1/schedules/{sched_id}", key).json["data"]["suspend"] is False

    # Pause and resume with the buttons.
    sara.goto(f"/dashboard/schedules/{sched_id}")
    page.get_by_role("button", name="Pause").click()
    expect(page.get_by_role("status")).to_have_text("Schedule paused.")
    expect(page.locator("#schedule [data-field=state]")).to_have_text("paused")
    data = svc.api("GET", f"/v1/schedules/{sched_id}", key).json["data"]
    assert data["suspend"] is True and data["nextRunAt"] is None, data
    page.get_by_role("button", name="Resume").click()
    expect(page.get_by_role("status")).to_have_text("Schedule resumed.")
    expect(page.locator("#schedule [data-field=state]")).to_have_text("active")
    data = svc.api("GET", f"/v1/schedules/{sched_id}", key).json["data"]
    assert data["suspend"] is False and data["nextRunAt"], data

    # Delete, after confirming.
    page.get_by_role("button", name="Delete").click()
    assert sara.dialogs[-1] == ("confirm", "Delete this schedule? No more runs start; the crawls it started stay.")
    expect(page.get_by_role("status")).to_have_text('Schedule "harbour watch" deleted.')
    expect(page).to_have_url(svc.url("/dashboard/schedules"))
    expect(page.get_by_text("No schedules yet.")).to_be_visible()
    assert svc.api("GET", f"/v1/schedules/{sched_id}", key).status == 404
    actions = [a["action"] for a in svc.audit(sara.org_id())]
    assert {"schedule.paused", "schedule.resumed", "schedule.deleted"} <= set(actions), actions


def test_remove_member(service, people, site):
    rita = people(service)
    org = sign_up(rita)
    mel = join_with_new_account(service, people, invitation_link(rita, "member"), org, "member")
    # Sam has an organization of his own and joins too.
    sam = people(service)
    own = sign_up(sam)
    sam.page.goto(invitation_link(rita, "member"))
    sam.page.get_by_role("button", name="Accept and join").click()
    expect(sam.heading()).to_have_text(f"Overview of {org}")

    # Mel works with a playground key.
    mel.nav("Playground")
    mel.page.get_by_role("button", name="Mint a playground key").click()
    mel.page.get_by_label("URL (or domain for brand)").fill(site.url + "/a")
    mel.page.get_by_role("button", name="Run").click()
    expect(mel.page.locator("#pg-status")).to_have_text("200")
    [pg_secret] = [c["value"] for c in mel.ctx.cookies() if c["name"] == "wd_pg"]
    assert scrape(service, pg_secret, site.url + "/b").status == 200

    rita.nav("Team")
    page = rita.page
    for who in (mel, sam):
        member_row(page, who.email).get_by_role("button", name="Remove").click()
        expect(page.get_by_role("status")).to_have_text(f"{who.email} removed.")
        assert rita.dialogs[-1] == ("confirm", "Remove this person from the organization?")
        expect(member_row(page, who.email)).to_have_count(0)

    # Mel is in no organization now; her playground key is dead.
    mel.nav("Usage")
    expect(mel.heading()).to_have_text("Create an organization")
    assert org not in mel.page.content()
    r = scrape(service, pg_secret, site.url + "/a")
    assert r.status == 401 and r.error_code == "unauthorized", r.text
    # Sam is back in his own organization only.
    sam.nav("Team")
    expect(sam.heading()).to_have_text("Team")
    expect(member_row(sam.page, sam.email)).to_contain_text("owner")
    assert switcher_options(sam) == [f"{own} (owner)"]
    assert org not in sam.page.content()

    rita.nav("Audit log")
    expect(page.locator("#audit").get_by_role("row").filter(has_text="member.removed")).to_have_count(2)


def test_revoke_invitation(service, people):
    rob = people(service)
    org = sign_up(rob)
    link = invitation_link(rob, "admin")
    page = rob.page
    row = page.locator("#invitations tbody tr").filter(has_text="open")
    expect(row).to_have_count(1)
    row.get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("status")).to_have_text("Invitation revoked.")
    invitation = page.locator("#invitations tbody tr")
    expect(invitation).to_have_count(1)
    expect(invitation.locator("td").nth(3)).to_have_text("revoked")
    expect(invitation.get_by_role("button", name="Revoke")).to_have_count(0)

    visitor = people(service)
    resp = visitor.page.goto(link)
    assert resp.status == 404
    expect(visitor.heading()).to_have_text("This link does not work")
    expect(visitor.page.get_by_role("button")).to_have_count(0)
    # Sending the form anyway creates nothing.
    visitor.goto("/dashboard/login")
    email = email_of("late")
    r = visitor.post(link.removeprefix(service.base_url),
                     {"_csrf": visitor.csrf(), "email": email, "password": PASSWORD})
    assert r["status"] == 404, r
    rob.nav("Team")
    expect(page.locator("#members tbody tr")).to_have_count(1)


def test_members_and_admins_cannot_overreach(service, people):
    own = people(service)
    org = sign_up(own)
    org_id = own.org_id()
    adm = join_with_new_account(service, people, invitation_link(own, "admin"), org, "admin")
    mem = join_with_new_account(service, people, invitation_link(own, "member"), org, "member")
    # The owner's id (not shown on any page): from their playground key.
    own.nav("Playground")
    own.page.get_by_role("button", name="Mint a playground key").click()
    expect(own.page.get_by_role("status")).to_contain_text("Playground key minted")
    [owner_id] = {k["person"] for k in service.keys(org_id, include_playground=True)}
    adm_id, mem_id = member_id(own, adm.email), member_id(own, mem.email)
    assert len({owner_id, adm_id, mem_id}) == 3

    def roles(p: Person) -> dict[str, str]:
        p.nav("Team")
        rows = p.page.locator("#members tbody tr")
        return {rows.nth(i).locator("td").nth(0).inner_text().removesuffix(" (you)"):
                rows.nth(i).locator("td").nth(1).inner_text() for i in range(rows.count())}
    before = {own.email: "owner", adm.email: "admin", mem.email: "member"}
    assert roles(own) == before

    # A member sees no controls and is refused with a valid token of their own.
    mem.nav("Team")
    expect(mem.page.get_by_role("button", name="Change role")).to_have_count(0)
    expect(mem.page.get_by_role("button", name="Remove")).to_have_count(0)
    expect(mem.page.get_by_role("button", name="Create invitation link")).to_have_count(0)
    token = mem.csrf()
    forged = [(f"/dashboard/team/members/{adm_id}/role", {"role": "member"}),
              (f"/dashboard/team/members/{mem_id}/role", {"role": "admin"}),
              (f"/dashboard/team/members/{adm_id}/remove", {}),
              (f"/dashboard/team/members/{owner_id}/remove", {}),
              ("/dashboard/team/invitations", {"role": "admin"})]
    for path, fields in forged:
        r = mem.post(path, {"_csrf": token, **fields})
        assert r["status"] == 403 and "This needs the admin role" in r["text"], (path, r)

    # An admin manages members but cannot touch the owner.
    adm.nav("Team")
    expect(member_row(adm.page, own.email).get_by_role("button")).to_have_count(0)
    expect(adm.page.get_by_label(f"Role of {own.email}")).to_have_count(0)
    token = adm.csrf()
    for path, fields in [(f"/dashboard/team/members/{owner_id}/role", {"role": "member"}),
                         (f"/dashboard/team/members/{owner_id}/role", {"role": "admin"}),
                         (f"/dashboard/team/members/{owner_id}/remove", {})]:
        r = adm.post(path, {"_csrf": token, **fields})
        assert r["status"] == 403 and "only by transferring ownership" in r["text"], (path, r)
    r = adm.post("/dashboard/settings/transfer", {"_csrf": token, "user": adm_id})
    assert r["status"] == 403, r
    assert roles(own) == before

    # What an admin may do: make the member an admin.
    adm.nav("Team")
    adm.page.get_by_label(f"Role of {mem.email}").select_option("admin")
    member_row(adm.page, mem.email).get_by_role("button", name="Change role").click()
    expect(adm.page.get_by_role("status")).to_have_text(f"{mem.email} is now admin.")
    mem.goto("/dashboard")
    expect(mem.page.get_by_role("navigation", name="Sections").get_by_role("link", name="API keys")) \
        .to_be_visible()
    assert roles(own) == {**before, mem.email: "admin"}


def check_phone_pages(lee: Person) -> None:
    page = lee.page

    def width() -> int:
        page.wait_for_load_state("load")
        return page.evaluate("() => document.documentElement.scrollWidth")
    assert page.viewport_size["width"] == 390
    assert width() <= 390, f"overview is {width()} px wide"
    lee.nav("API keys")
    assert width() <= 390, f"keys page is {width()} px wide"
    lee.create_key("a-key-with-a-rather-long-name-for-a-phone-screen")
    expect(page.locator("#new-key")).to_be_visible()
    assert width() <= 390, f"keys page with a new key is {width()} px wide"
    lee.nav("Overview")
    assert width() <= 390, f"overview is {width()} px wide"


def test_phone_layout(service, people):
    lee = people(service, phone=True)
    sign_up(lee, org=unique("Phone Org"))
    check_phone_pages(lee)


# --------------------------------------------------------------------------
# regressions: bugs these journeys found, fixed since (04dc995)


def test_phone_layout_with_the_default_org_name(service, people):
    """The organization switcher shrinks: a long default name ("<e-mail>'s
    organization") used to make every signed-in page 479 px wide on a phone."""
    lee = people(service, phone=True)
    org = sign_up(lee, org="")  # like most people: the optional name left empty
    switcher = lee.page.get_by_role("combobox", name="Organization", exact=True)
    expect(switcher).to_be_visible()
    box = switcher.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    assert switcher_options(lee) == [f"{org} (owner)"]
    check_phone_pages(lee)


def test_invitation_for_an_email_is_refused_to_others(service, people):
    owner = people(service)
    org = sign_up(owner)
    invitee_email = email_of("invitee")
    link = invitation_link(owner, "member", email=invitee_email)
    expect(owner.page.locator("#invitations")).to_contain_text(invitee_email)

    # Someone else, signed in, is told why and has nothing to accept.
    eve = people(service)
    eve_org = sign_up(eve)
    eve.page.goto(link)
    expect(eve.heading()).to_have_text("Join an organization")
    expect(eve.page.get_by_role("alert")).to_have_text(
        f"This invitation is for {invitee_email}; you are signed in as {eve.email}. "
        "Sign out and open the link again as that person.")
    expect(eve.page.get_by_role("button", name="Accept and join")).to_have_count(0)
    # A forged acceptance with her own valid token: 403.
    eve.goto("/dashboard")
    r = eve.post(link.removeprefix(service.base_url), {"_csrf": eve.csrf()})
    assert r["status"] == 403 and "Not for you" in r["text"], r
    eve.goto("/dashboard")
    assert switcher_options(eve) == [f"{eve_org} (owner)"]
    assert org not in eve.page.content()
    owner.nav("Team")
    expect(member_row(owner.page, eve.email)).to_have_count(0)

    # The person it is for, signed in with that address, joins with it.
    ivy = people(service)
    sign_up(ivy, email=invitee_email)
    ivy.page.goto(link)
    expect(ivy.page.get_by_text(f"Signed in as {invitee_email}.")).to_be_visible()
    ivy.page.get_by_role("button", name="Accept and join").click()
    expect(ivy.heading()).to_have_text(f"Overview of {org}")
    owner.nav("Team")
    expect(member_row(owner.page, invitee_email).locator("td").nth(1)).to_have_text("member")
    expect(owner.page.locator("#invitations tbody tr").filter(has_text=invitee_email)) \
        .to_contain_text("accepted")


def test_unknown_dashboard_paths_get_the_dashboard_404(service, people):
    fox = people(service)
    sign_up(fox)
    anon = people(service)
    # A trailing slash is the page without it (a permanent redirect).
    fox.goto("/dashboard/keys/")
    fox.page.wait_for_url(service.url("/dashboard/keys"))
    expect(fox.heading()).to_have_text("API keys")
    fox.goto("/dashboard/")
    fox.page.wait_for_url(service.url("/dashboard"))
    for who, paths, back in ((fox, ("/dashboard/keys/extra/segments", "/dashboard/no-such-page"),
                              service.url("/dashboard")),
                             (anon, ("/dashboard/no-such-page",), service.url("/dashboard/login?next=%2Fdashboard"))):
        for path in paths:
            resp = who.goto(path)
            assert resp.status == 404, path
            assert "script-src 'self'" in resp.headers.get("content-security-policy", ""), path
            assert resp.headers.get("x-frame-options") == "DENY", path
            assert resp.headers.get("content-type", "").startswith("text/html"), path
            expect(who.heading()).to_have_text("Not found")
            expect(who.page.get_by_role("alert")).to_have_text("There is no such page in the dashboard.")
        who.page.get_by_role("link", name="Back to the dashboard").click()
        who.page.wait_for_url(back)
    # The API's unknown paths keep the API's JSON error.
    r = service.get("/v1/no-such-endpoint", headers={"Accept": "application/json"})
    assert r.status == 404 and r.error_code == "not_found", r.text
    assert r.headers.get("content-type", "").startswith("application/json")


def test_playground_page_with_an_image_has_no_csp_violation(service, people, site):
    """Pictures in rendered markdown become links: no <img> the dashboard's
    CSP (img-src 'self' data:) would block."""
    site.set_page("/picture", "<!doctype html><html><head><title>Picture</title></head><body><article>"
                  "<h1>Picture</h1><p>" + "A harbour at dawn, boats coming back. " * 12 + "</p>"
                  "<p><img src=\"/harbour.png\" alt=\"The harbour\"></p><p>"
                  + "The market opens at nine. " * 12 + "</p></article></body></html>")
    site.set_page("/harbour.png", b"\x89PNG\r\n\x1a\n", content_type="image/png")
    ned = people(service, watch_csp=False)
    violations: list[str] = []
    ned.ctx.on("console", lambda m: violations.append(m.text)
               if "Content Security Policy" in m.text else None)
    sign_up(ned)
    ned.nav("Playground")
    ned.page.get_by_role("button", name="Mint a playground key").click()
    ned.page.get_by_label("URL (or domain for brand)").fill(site.url + "/picture")
    ned.page.get_by_role("button", name="Run").click()
    expect(ned.page.locator("#pg-status")).to_have_text("200")
    rendered = ned.page.locator("#pg-rendered")
    expect(rendered).to_contain_text("The market opens at nine.")
    expect(rendered.locator("img")).to_have_count(0)
    picture = rendered.get_by_role("link", name="The harbour")
    expect(picture).to_have_attribute("href", site.url + "/harbour.png")
    expect(picture).to_have_attribute("rel", "noopener noreferrer nofollow")
    # The raw markdown still has the picture as markdown.
    assert "![The harbour](" + site.url + "/harbour.png)" in ned.page.locator("#pg-markdown").text_content()
    ned.page.wait_for_load_state("load")
    assert site.hit_count("/harbour.png") == 0, "the browser loaded the picture"
    assert violations == [], violations


def test_csp(service, people, site):
    mo = people(service)
    sign_up(mo)
    _, key = mo.create_key("csp")
    r = service.api("POST", "/v1/crawl", key, {"url": site.url + "/a", "limit": 1})
    crawl_id = r.json["id"]
    wait_crawl(service, key, crawl_id)
    paths = ["/dashboard", "/dashboard/keys", "/dashboard/playground", "/dashboard/crawls",
             f"/dashboard/crawls/{crawl_id}", "/dashboard/schedules", "/dashboard/webhooks", "/dashboard/usage",
             "/dashboard/audit", "/dashboard/team", "/dashboard/settings",
             "/dashboard/crawls/crawl_does_not_exist"]
    for path in paths:
        resp = mo.goto(path)
        assert resp is not None
        csp = resp.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp, (path, csp)
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp, (path, csp)
    mo.goto("/dashboard/playground")
    mo.page.get_by_role("button", name="Mint a playground key").click()
    mo.page.get_by_label("URL (or domain for brand)").fill(site.url + "/a")
    mo.page.get_by_role("button", name="Run").click()
    expect(mo.page.locator("#pg-status")).to_have_text("200")

    anon = people(service)
    for path in ("/dashboard/login", "/dashboard/signup", "/dashboard/forgot",
                 "/dashboard/reset/not-a-token", "/dashboard/invite/not-a-token",
                 "/dashboard/assets/app.js", "/dashboard/assets/app.css"):
        resp = anon.goto(path)
        csp = resp.headers.get("content-security-policy", "")
        assert "script-src 'self'" in csp, (path, resp.status, csp)
    # Answers outside page loads (CSV, event streams, forms) carry it too.
    for path in ("/dashboard/usage.csv", f"/dashboard/crawls/{crawl_id}/events"):
        resp = mo.ctx.request.get(service.url(path))
        assert "script-src 'self'" in resp.headers.get("content-security-policy", ""), path
    # Every dashboard response seen by any journey of this module so far.
    assert CSP_MISSING == [], CSP_MISSING
    assert CSP_VIOLATIONS == [], CSP_VIOLATIONS


# --------------------------------------------------------------------------
# bugs these journeys found (fixed; kept so they stay fixed)


def test_reset_link_ignores_a_forged_host_header(service, smtp):
    import urllib.parse

    from conftest import http
    victim = email_of("victim")
    done = service.cli("users", "create", "--database-url", service.database_url, "--org", "default",
                       "--email", victim, "--role", "member", "--password", PASSWORD)
    assert done.returncode == 0, done.stderr
    form = http("GET", service.url("/dashboard/forgot"))
    cookie = form.headers["set-cookie"].split(";", 1)[0]
    token = re.search(r'name="_csrf" value="([^"]+)"', form.text).group(1)
    r = http("POST", service.url("/dashboard/forgot"),
             headers={"Host": "attacker.example", "Cookie": cookie,
                      "Content-Type": "application/x-www-form-urlencoded"},
             data=urllib.parse.urlencode({"_csrf": token, "email": victim}).encode())
    assert r.status == 200
    mail = smtp.wait_for_message(victim, timeout=15)
    links = [u for u in mail.links if "/dashboard/reset/" in u]
    # WEBDATA_PUBLIC_URL is unset: the service's own listen address.
    assert links and all(u.startswith(service.url("/dashboard/reset/")) for u in links), links


def test_pages_render_in_standards_mode(service, people):
    gil = people(service)
    pages = ["/dashboard/login", "/dashboard/signup", "/dashboard/reset/not-a-token"]
    for path in pages:
        gil.goto(path)
        assert gil.page.evaluate("document.compatMode") == "CSS1Compat", path
    sign_up(gil)
    for path in ("/dashboard", "/dashboard/keys", "/dashboard/no-such-page"):
        gil.goto(path)
        assert gil.page.evaluate("document.compatMode") == "CSS1Compat", path
