"""Helpers for the dashboard's end-to-end browser tests.

A plain library, no pytest fixtures:

- `browser()`: Playwright (sync API) driving Debian's /usr/bin/chromium,
  headless; `new_context()` / `phone_context()` open desktop (1280x800) or
  phone (390x844) contexts whose requests may only go to loopback addresses.
- `WebhookReceiver`: records signed webhook POSTs and checks the service's
  `Service-Signature` rule (docs/spec.md); its answer status can be switched
  at run time (500 makes deliveries fail).
- `SmtpSink`: an aiosmtpd server that keeps every message it receives.
- `TestSite`: a small site to crawl (/, /a, /b, /xss, /robots.txt, /slow).

Every server binds a 127.0.0.0/8 address only and stops at the end of its
`with` block.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import hashlib
import hmac
import html
import ipaddress
import json
import os
import re
import socket
import socketserver
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Callable, Iterator
from urllib.parse import urlsplit

if TYPE_CHECKING:  # playwright is imported when a browser is started
    from playwright.sync_api import Browser, BrowserContext, Route

CHROMIUM = os.environ.get("DASHBOARD_CHROMIUM", "/usr/bin/chromium")
DESKTOP_VIEWPORT = {"width": 1280, "height": 800}
PHONE_VIEWPORT = {"width": 390, "height": 844}
PHONE_USER_AGENT = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"
)
SIGNATURE_TOLERANCE = 300  # seconds, docs/spec.md "Signature rules" 5

XSS_TITLE = "<script>alert(1)</script>"
XSS_H1 = "Hostile <img src=x onerror=alert(2)>"


# --------------------------------------------------------------------------
# addresses


def _require_loopback(host: str) -> str:
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"{host!r}: give an IPv4 address in 127.0.0.0/8") from None
    if ip.version != 4 or not ip.is_loopback:
        raise ValueError(f"{host!r} is not in 127.0.0.0/8; test servers bind loopback only")
    return host


def is_loopback_host(host: str | None) -> bool:
    """True for localhost names and 127.0.0.0/8 / ::1 literals."""
    if not host:
        return False
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on `host` right now (the OS picks it)."""
    _require_loopback(host)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.05,
               message: str = "condition") -> Any:
    """Poll `predicate` until it returns something truthy; return that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise TimeoutError(f"{message} not met within {timeout}s")
        time.sleep(interval)


# --------------------------------------------------------------------------
# browser


def chromium_args() -> list[str]:
    """Extra Chromium flags. Playwright itself adds --headless, --no-sandbox
    (its default `chromium_sandbox=False`) and --disable-dev-shm-usage."""
    args = [
        # Never go through a proxy from the environment: the tests talk to 127.0.0.x.
        "--no-proxy-server",
        # Names other than localhost do not resolve, so nothing leaves the machine
        # (IP literals are not resolved and are covered by new_context's route guard).
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.*",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--no-sandbox")  # Chromium's sandbox cannot start as root
    return args


@contextlib.contextmanager
def browser(headless: bool = True, **launch_kwargs: Any) -> Iterator["Browser"]:
    """A Playwright sync `Browser` on Debian's Chromium; closed at exit.

    Must not be used inside a running asyncio loop (Playwright's sync API)."""
    from playwright.sync_api import sync_playwright

    args = chromium_args() + list(launch_kwargs.pop("args", []))
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=headless, args=args,
                               **launch_kwargs)
        try:
            yield b
        finally:
            b.close()


def guard_loopback(context: "BrowserContext") -> list[str]:
    """Abort every http(s)/ws(s) request of `context` whose host is not loopback.
    Returns the (live) list of blocked URLs so a test can assert it stays empty."""
    blocked: list[str] = []

    def handler(route: "Route") -> None:
        url = route.request.url
        parts = urlsplit(url)
        if parts.scheme in ("http", "https", "ws", "wss") and not is_loopback_host(parts.hostname):
            blocked.append(url)
            route.abort("blockedbyclient")
        else:
            route.fallback()

    context.route("**/*", handler)
    return blocked


def new_context(b: "Browser", *, phone: bool = False, block_external: bool = True,
                default_timeout_ms: float = 10_000, **kwargs: Any) -> "BrowserContext":
    """A fresh context (own cookies/storage): desktop 1280x800, or with
    `phone=True` a 390x844 touch device at 3x. UTC, en-US. Extra keyword
    arguments go to `Browser.new_context` (e.g. base_url=...). With
    `block_external` (default) non-loopback requests are aborted and listed
    in `context.blocked_requests`. Close it (or use it in a `with`)."""
    opts: dict[str, Any] = {"locale": "en-US", "timezone_id": "UTC"}
    if phone:
        opts.update(viewport=PHONE_VIEWPORT, screen=PHONE_VIEWPORT, device_scale_factor=3,
                    is_mobile=True, has_touch=True, user_agent=PHONE_USER_AGENT)
    else:
        opts.update(viewport=DESKTOP_VIEWPORT)
    opts.update(kwargs)
    ctx = b.new_context(**opts)
    ctx.set_default_timeout(default_timeout_ms)
    ctx.blocked_requests = guard_loopback(ctx) if block_external else []
    return ctx


def phone_context(b: "Browser", **kwargs: Any) -> "BrowserContext":
    """`new_context(b, phone=True, ...)`: 390x844, mobile, touch."""
    return new_context(b, phone=True, **kwargs)


# --------------------------------------------------------------------------
# threaded HTTP servers


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True  # a stuck handler never blocks shutdown

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(host), a reverse DNS
        # lookup that would leave the machine: bind without it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = host, port


class _Server:
    """A threaded HTTP server bound (at construction, so `port` is known) to
    a loopback address, serving in a thread between __enter__ and __exit__."""

    def __init__(self, host: str, port: int, handler: type[BaseHTTPRequestHandler]):
        _require_loopback(host)
        self.host = host
        self._httpd = _HTTPServer((host, port), handler)
        self._httpd.owner = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self):
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class _QuietHandler(BaseHTTPRequestHandler):
    server_version = "harness/1"

    def log_message(self, fmt: str, *args: Any) -> None:
        if os.environ.get("HARNESS_DEBUG"):
            super().log_message(fmt, *args)

    @property
    def owner(self):
        return self.server.owner  # type: ignore[attr-defined]

    def _send(self, status: int, content_type: str, body: bytes, head: bool = False) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if not head:
            self.wfile.write(body)


# --------------------------------------------------------------------------
# webhooks


@dataclass
class WebhookRequest:
    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    body: bytes  # raw bytes as received
    json: Any  # parsed body, or None if it is not JSON
    received_at: float  # time.time()
    status: int  # what the receiver answered

    def header(self, name: str, default: str | None = None) -> str | None:
        return self.headers.get(name.lower(), default)

    @property
    def event(self) -> str | None:
        return self.header("service-event")

    @property
    def attempt(self) -> int | None:
        v = self.header("service-delivery-attempt")
        return int(v) if v and v.isdigit() else None


def parse_signature(header: str | None) -> tuple[int | None, list[str]]:
    """`t=<unix>,v1=<hex>[,v1=<hex>...]` -> (t, [v1...]); other keys are ignored."""
    t: int | None = None
    v1: list[str] = []
    for part in (header or "").split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            continue
        if key == "t":
            try:
                t = int(value)
            except ValueError:
                t = None
        elif key == "v1":
            v1.append(value)
    return t, v1


def compute_signature(secret: str | bytes, t: int, body: bytes) -> str:
    """Lower-case hex HMAC-SHA256 over `f"{t}.".encode() + body`."""
    key = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(key, f"{t}.".encode() + body, hashlib.sha256).hexdigest()


def sign(body: bytes, *secrets: str | bytes, t: int | None = None) -> str:
    """A `Service-Signature` header value as the service makes it."""
    t = int(time.time()) if t is None else t
    return ",".join([f"t={t}"] + [f"v1={compute_signature(s, t, body)}" for s in secrets])


def verify_signature(header: str | None, body: bytes, secret: str | bytes, now: float | None = None,
                     tolerance: float = SIGNATURE_TOLERANCE) -> bool:
    """The receiver's rule from docs/spec.md: any v1 matches (constant-time
    compare, every value compared) and |now - t| <= tolerance."""
    t, values = parse_signature(header)
    if t is None or not values:
        return False
    now = time.time() if now is None else now
    if abs(now - t) > tolerance:
        return False
    expected = compute_signature(secret, t, body).encode()
    ok = False
    for v in values:
        ok |= hmac.compare_digest(expected, v.encode("utf-8", "replace"))
    return ok


class WebhookReceiver(_Server):
    """Records every POST (any path; `url` points at /hook) and answers
    `status` (200 by default; set `receiver.status = 500` at any time to make
    deliveries fail, `delay` seconds to make them slow)."""

    def __init__(self, host: str = "127.0.0.2", port: int = 0, status: int = 200,
                 delay: float = 0.0):
        super().__init__(host, port, _WebhookHandler)
        self.status = status
        self.delay = delay
        self._requests: list[WebhookRequest] = []
        self._cond = threading.Condition()

    @property
    def url(self) -> str:
        return f"{self.base_url}/hook"

    @property
    def requests(self) -> list[WebhookRequest]:
        with self._cond:
            return list(self._requests)

    def clear(self) -> None:
        with self._cond:
            self._requests.clear()

    def _record(self, req: WebhookRequest) -> None:
        with self._cond:
            self._requests.append(req)
            self._cond.notify_all()

    def wait_for(self, predicate: Callable[[WebhookRequest], bool] | None = None,
                 timeout: float = 10.0, count: int = 1) -> list[WebhookRequest]:
        """Wait until at least `count` recorded requests satisfy `predicate`
        (default: any request); return all that match, in arrival order."""
        pred = predicate or (lambda r: True)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                matching = [r for r in self._requests if pred(r)]
                if len(matching) >= count:
                    return matching
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [(r.event, r.status, r.path) for r in self._requests]
                    raise TimeoutError(f"{len(matching)}/{count} matching webhook requests after "
                                       f"{timeout}s; received (event, answered, path): {seen}")
                self._cond.wait(left)

    @staticmethod
    def v1_values(request: WebhookRequest) -> list[str]:
        return parse_signature(request.header("service-signature"))[1]

    @staticmethod
    def timestamp(request: WebhookRequest) -> int | None:
        return parse_signature(request.header("service-signature"))[0]

    @staticmethod
    def verify(request: WebhookRequest, secret: str | bytes, now: float | None = None) -> bool:
        """Signature check as a receiver would do it on arrival (`now`
        defaults to the request's `received_at`)."""
        return verify_signature(request.header("service-signature"), request.body, secret,
                                now=request.received_at if now is None else now)


class _WebhookHandler(_QuietHandler):
    def do_POST(self) -> None:
        owner: WebhookReceiver = self.owner
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        received = time.time()
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        headers: dict[str, str] = {}
        for k, v in self.headers.items():
            k = k.lower()
            headers[k] = f"{headers[k]}, {v}" if k in headers else v
        status, delay = owner.status, owner.delay
        if delay:
            time.sleep(delay)
        owner._record(WebhookRequest("POST", self.path, headers, body, parsed, received, status))
        self._send(status, "application/json", b'{"ok":true}' if status < 300 else b'{"ok":false}')

    def do_GET(self) -> None:
        self._send(405, "text/plain", b"POST only\n")


# --------------------------------------------------------------------------
# mail


@dataclass
class Mail:
    mail_from: str
    rcpt_tos: list[str]
    to: str  # the To: header
    subject: str
    text: str  # text/plain part, or the HTML part's text
    html: str | None
    raw: bytes
    message: email.message.EmailMessage
    received_at: float

    @property
    def links(self) -> list[str]:
        """http(s) URLs in the text and HTML parts, in order, without duplicates."""
        found = re.findall(r"https?://[^\s\"'<>]+", self.text + "\n" + (self.html or ""))
        return list(dict.fromkeys(html.unescape(u).rstrip(".,;)") for u in found))


def _html_text(markup: str) -> str:
    markup = re.sub(r"(?is)<(script|style)\b.*?</\1>", "", markup)
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


class SmtpSink:
    """An SMTP server (aiosmtpd) on 127.0.0.1 that keeps every message.
    `auth=("user", "pass")` advertises AUTH PLAIN/LOGIN without TLS."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0,
                 auth: tuple[str, str] | None = None):
        self.host = _require_loopback(host)
        self.port = port or free_port(host)
        self.auth = auth
        self._messages: list[Mail] = []
        self._cond = threading.Condition()
        self._controller = None

    @property
    def url(self) -> str:
        return f"smtp://{self.host}:{self.port}"

    @property
    def messages(self) -> list[Mail]:
        with self._cond:
            return list(self._messages)

    def clear(self) -> None:
        with self._cond:
            self._messages.clear()

    async def handle_DATA(self, server, session, envelope) -> str:  # aiosmtpd handler hook
        raw = envelope.original_content or envelope.content
        if isinstance(raw, str):
            raw = raw.encode()
        msg = email.message_from_bytes(raw, policy=email.policy.default)
        plain = msg.get_body(preferencelist=("plain",))
        html_part = msg.get_body(preferencelist=("html",))
        html_body = html_part.get_content() if html_part is not None else None
        text = plain.get_content() if plain is not None else _html_text(html_body or "")
        mail = Mail(envelope.mail_from, list(envelope.rcpt_tos), str(msg.get("To", "")),
                    str(msg.get("Subject", "")), text, html_body, raw, msg, time.time())
        with self._cond:
            self._messages.append(mail)
            self._cond.notify_all()
        return "250 Message accepted for delivery"

    def _authenticate(self, server, session, envelope, mechanism, auth_data):
        from aiosmtpd.smtp import AuthResult, LoginPassword

        ok = (isinstance(auth_data, LoginPassword) and self.auth is not None
              and auth_data.login.decode() == self.auth[0]
              and auth_data.password.decode() == self.auth[1])
        return AuthResult(success=ok, handled=False)

    def wait_for_message(self, to: str | None = None, timeout: float = 10.0,
                         subject_contains: str | None = None) -> Mail:
        """The first message to `to` (an envelope recipient or in the To:
        header, case-insensitive; None for any) whose subject contains
        `subject_contains` if given."""
        def match(m: Mail) -> bool:
            if to is not None:
                t = to.lower()
                if t not in (r.lower() for r in m.rcpt_tos) and t not in m.to.lower():
                    return False
            return subject_contains is None or subject_contains in m.subject

        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for m in self._messages:
                    if match(m):
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    seen = [(m.rcpt_tos, m.subject) for m in self._messages]
                    raise TimeoutError(f"no mail to {to!r} within {timeout}s; received: {seen}")
                self._cond.wait(left)

    def start(self) -> "SmtpSink":
        from aiosmtpd.controller import Controller

        kwargs: dict[str, Any] = {}
        if self.auth is not None:
            kwargs.update(authenticator=self._authenticate, auth_require_tls=False)
        # server_hostname: without it aiosmtpd calls socket.getfqdn() (DNS).
        self._controller = Controller(self, hostname=self.host, port=self.port,
                                      server_hostname="sink.test", ready_timeout=10, **kwargs)
        self._controller.start()
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def __enter__(self) -> "SmtpSink":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --------------------------------------------------------------------------
# a site to crawl

_LOREM = (
    "The harbour town wakes early, long before the ferries begin their crossings. "
    "Fishermen sort the night's catch while the bakeries open their shutters. "
    "By mid-morning the market square is full of visitors comparing prices. "
    "In the afternoon the wind turns and the boats come back to the quay. "
)

_VIEWPORT_META = '<meta name="viewport" content="width=device-width, initial-scale=1">'


def _article(title: str, paragraphs: int = 3) -> str:
    body = "".join(f"<p>{_LOREM}Paragraph {i + 1} of the {html.escape(title.lower())} article.</p>\n"
                   for i in range(paragraphs))
    return (f"<!doctype html><html><head><meta charset=\"utf-8\">{_VIEWPORT_META}<title>{html.escape(title)}</title>"
            f"</head><body><article><h1>{html.escape(title)}</h1>\n{body}</article>"
            f"<p><a href=\"/\">Home</a></p></body></html>")


def default_pages() -> dict[str, tuple[int, str, str | bytes]]:
    h = "text/html; charset=utf-8"
    return {
        "/": (200, h, f"<!doctype html><html><head><meta charset=\"utf-8\">{_VIEWPORT_META}"
                      "<title>Test site</title></head>"
                      "<body><h1>Test site</h1><ul><li><a href=\"/a\">Article A</a></li>"
                      "<li><a href=\"/b\">Article B</a></li><li><a href=\"/xss\">Hostile page</a></li>"
                      "</ul></body></html>"),
        "/a": (200, h, _article("Article A")),
        "/b": (200, h, _article("Article B", 4)),
        "/xss": (200, h, "<html><head><title><script>alert(1)</script></title></head><body>"
                         "<h1>Hostile &lt;img src=x onerror=alert(2)&gt;</h1>"
                         f"<p>{_LOREM}{_LOREM}This page tries to inject markup through its title "
                         "and heading, and a careful renderer shows that markup as plain text.</p>"
                         "</body></html>"),
        "/slow": (200, h, _article("Slow page", 2)),
        "/robots.txt": (200, "text/plain; charset=utf-8", "User-agent: *\nAllow: /\n"),
    }


@dataclass
class Hit:
    method: str
    path: str
    headers: dict[str, str]
    at: float


class TestSite(_Server):
    """Serves `pages` (path -> (status, content_type, body)); unknown paths
    are 404. `delays` (path -> seconds) holds answers back: /slow waits 1.5 s.
    Both dicts may be changed while it runs; `hits` lists the requests."""

    __test__ = False  # not a pytest test class

    def __init__(self, host: str = "127.0.0.2", port: int = 0,
                 pages: dict[str, tuple[int, str, str | bytes]] | None = None,
                 delays: dict[str, float] | None = None):
        super().__init__(host, port, _SiteHandler)
        self.pages = default_pages() if pages is None else dict(pages)
        self.delays = {"/slow": 1.5} if delays is None else dict(delays)
        self._hits: list[Hit] = []
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        """Base URL without a trailing slash: site.url + "/xss"."""
        return self.base_url

    def set_page(self, path: str, body: str | bytes, status: int = 200,
                 content_type: str = "text/html; charset=utf-8") -> None:
        self.pages[path] = (status, content_type, body)

    @property
    def hits(self) -> list[Hit]:
        with self._lock:
            return list(self._hits)

    def hit_count(self, path: str) -> int:
        return sum(1 for h in self.hits if h.path.split("?", 1)[0] == path)


class _SiteHandler(_QuietHandler):
    def _serve(self, head: bool) -> None:
        site: TestSite = self.owner
        with site._lock:
            site._hits.append(Hit(self.command, self.path,
                                  {k.lower(): v for k, v in self.headers.items()}, time.time()))
        path = self.path.split("#", 1)[0]
        bare = path.split("?", 1)[0]
        key = path if path in site.pages else bare
        delay = site.delays.get(key, 0.0)
        if delay:
            time.sleep(delay)
        status, ctype, body = site.pages.get(key, (404, "text/plain; charset=utf-8", "not found\n"))
        self._send(status, ctype, body.encode() if isinstance(body, str) else body, head=head)

    def do_GET(self) -> None:
        self._serve(head=False)

    def do_HEAD(self) -> None:
        self._serve(head=True)

