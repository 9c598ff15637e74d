"""Self-check of tests/dashboard/harness.py: the webhook receiver's signature
rule, the SMTP sink, the test site and Chromium through Playwright.

    .venv/bin/python -m pytest -q tests/dashboard/test_harness_selfcheck.py
"""

import hashlib
import hmac
import json
import smtplib
import sys
import time
import urllib.error
import urllib.request
from email.message import EmailMessage
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

SECRET = "whsec_test_0123456789"


def hmac_hex(secret: str, t: int, body: bytes) -> str:
    # Written out here rather than taken from the harness, so the check is independent.
    return hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()


def post(url: str, body: bytes, signature: str | None) -> int:
    headers = {"Content-Type": "application/json", "Service-Event": "crawl.page",
               "Service-Delivery-Attempt": "1"}
    if signature is not None:
        headers["Service-Signature"] = signature
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.fixture(scope="module")
def chromium():
    with harness.browser() as b:
        yield b


def test_receiver_verifies_signature():
    body = json.dumps({"id": "evt_1", "type": "crawl.page", "data": {"url": "x"}},
                      separators=(",", ":")).encode()
    t = int(time.time())
    with harness.WebhookReceiver() as rx:
        assert rx.url.startswith("http://127.0.0.2:") and rx.url.endswith("/hook")
        assert post(rx.url, body, f"t={t},v1={hmac_hex(SECRET, t, body)}") == 200
        [req] = rx.wait_for(timeout=5)
    assert req.body == body and req.json["id"] == "evt_1"
    assert req.event == "crawl.page" and req.attempt == 1 and req.status == 200
    assert rx.v1_values(req) == [hmac_hex(SECRET, t, body)]
    assert rx.verify(req, SECRET)
    assert not rx.verify(req, "whsec_wrong")
    # The same signature checked more than 300 s later, and a stale timestamp.
    assert rx.verify(req, SECRET, now=t + 300)
    assert not rx.verify(req, SECRET, now=t + 301)
    old = t - 301
    req.headers["service-signature"] = f"t={old},v1={hmac_hex(SECRET, old, body)}"
    assert not rx.verify(req, SECRET)
    # A body changed after signing, and headers missing parts.
    assert not harness.verify_signature(f"t={t},v1={hmac_hex(SECRET, t, body)}", body + b" ", SECRET,
                                        now=t)
    for bad in (None, "", f"t={t}", f"v1={hmac_hex(SECRET, t, body)}", "t=abc,v1=00"):
        assert not harness.verify_signature(bad, body, SECRET, now=t)


def test_two_v1_values_second_matches():
    body = b'{"id":"evt_2","type":"crawl.completed"}'
    t = int(time.time())
    wrong, right = hmac_hex("whsec_old", t, body), hmac_hex(SECRET, t, body)
    with harness.WebhookReceiver() as rx:
        post(rx.url, body, f"t={t},v1={wrong},v1={right}")
        post(rx.url, body, f"t={t},v1={wrong}")
        first, second = rx.wait_for(count=2, timeout=5)
    assert rx.v1_values(first) == [wrong, right]
    assert rx.verify(first, SECRET) and rx.verify(first, "whsec_old")
    assert not rx.verify(second, SECRET)
    assert harness.sign(body, "whsec_old", SECRET, t=t) == f"t={t},v1={wrong},v1={right}"


def test_receiver_status_switches_at_run_time():
    with harness.WebhookReceiver() as rx:
        rx.status = 500
        assert post(rx.url, b"{}", harness.sign(b"{}", SECRET)) == 500
        rx.status = 200
        assert post(rx.url, b"not json", None) == 200
        reqs = rx.wait_for(count=2, timeout=5)
    assert [r.status for r in reqs] == [500, 200]
    assert reqs[1].json is None and not rx.verify(reqs[1], SECRET)
    with pytest.raises(TimeoutError):
        rx.wait_for(lambda r: r.status == 410, timeout=0.1)


def test_smtp_sink_receives_mail():
    with harness.SmtpSink() as sink:
        assert sink.url == f"smtp://127.0.0.1:{sink.port}"
        msg = EmailMessage()
        msg["From"] = "webdata@example.test"
        msg["To"] = "alice@example.test"
        msg["Subject"] = "Your invitation"
        msg.set_content("Join the team: http://127.0.0.1:3002/dashboard/invite?token=abc123\n")
        with smtplib.SMTP(sink.host, sink.port, local_hostname="client.test", timeout=5) as s:
            s.send_message(msg)
        mail = sink.wait_for_message("alice@example.test", timeout=5)
        assert mail.subject == "Your invitation"
        assert mail.rcpt_tos == ["alice@example.test"]
        assert "Join the team" in mail.text
        assert mail.links == ["http://127.0.0.1:3002/dashboard/invite?token=abc123"]
        with pytest.raises(TimeoutError):
            sink.wait_for_message("bob@example.test", timeout=0.1)


def test_smtp_sink_with_auth():
    with harness.SmtpSink(auth=("mailer", "s3cret")) as sink:
        with smtplib.SMTP(sink.host, sink.port, local_hostname="client.test", timeout=5) as s:
            with pytest.raises(smtplib.SMTPAuthenticationError):
                s.login("mailer", "wrong")
            s.login("mailer", "s3cret")
            s.sendmail("a@example.test", ["b@example.test"], b"Subject: hi\r\n\r\nbody\r\n")
        assert sink.wait_for_message("b@example.test", timeout=5).subject == "hi"


def test_site_serves_pages():
    with harness.TestSite() as site:
        assert site.url.startswith("http://127.0.0.2:")
        with urllib.request.urlopen(site.url + "/robots.txt", timeout=5) as r:
            assert r.read() == b"User-agent: *\nAllow: /\n"
        with urllib.request.urlopen(site.url + "/", timeout=5) as r:
            home = r.read().decode()
        assert all(f'href="{p}"' in home for p in ("/a", "/b", "/xss"))
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(site.url + "/missing", timeout=5)
        assert e.value.code == 404
        site.set_page("/new", "<title>new</title>")
        started = time.monotonic()
        with urllib.request.urlopen(site.url + "/slow?x=1", timeout=5) as r:
            assert b"Slow page" in r.read()
        assert time.monotonic() - started >= 1.4
        assert site.hit_count("/slow") == 1


def test_xss_page_in_chromium(chromium):
    with harness.TestSite() as site, harness.new_context(chromium) as ctx:
        page = ctx.new_page()
        dialogs = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(site.url + "/xss")
        assert page.evaluate("document.title") == "<script>alert(1)</script>" == harness.XSS_TITLE
        assert page.locator("h1").inner_text() == "Hostile <img src=x onerror=alert(2)>"
        assert page.locator("img").count() == 0
        assert page.evaluate("[innerWidth, innerHeight]") == [1280, 800]
        # Requests to anything but loopback are aborted in the browser.
        out = page.evaluate("fetch('http://blocked.example.test/x').then(() => 'sent', () => 'failed')")
        assert out == "failed" and ctx.blocked_requests == ["http://blocked.example.test/x"]
        assert dialogs == []


def test_phone_context(chromium):
    with harness.TestSite() as site, harness.phone_context(chromium, base_url=site.url) as ctx:
        page = ctx.new_page()
        page.goto("/a")
        assert page.evaluate("[innerWidth, innerHeight]") == [390, 844]
        assert page.evaluate("'ontouchstart' in window")
        assert page.locator("h1").inner_text() == "Article A"
        # A phone lays out a page without <meta name="viewport"> 980 px wide.
        page.goto("/xss")
        assert page.evaluate("innerWidth") == 980
        assert ctx.blocked_requests == []
