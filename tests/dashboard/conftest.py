"""Fixtures of the dashboard's end-to-end browser tests.

- `Service`: the real `webdata serve` binary in a temporary directory
  (SQLite), listening on a free 127.0.0.1 port; env overrides per test; an
  `api()` helper (urllib, no proxies) for /v1 and /admin/v1; killed at the
  end (also on failure), its log dumped when a test using it failed.
- `service`: one service shared by the independent journeys of a module.
- `service_factory`: start a service of a test's own (other settings).
- `browser` (module), `receiver`, `receiver2`, `smtp` (module), `site`.
"""

from __future__ import annotations

import json as jsonlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("WEBDATA_BIN", ROOT / "target" / "debug" / "webdata"))
ADMIN_TOKEN = "admin-token-for-dashboard-tests-0123456789"
OWNER_EMAIL = "owner@example.test"
OWNER_PASSWORD = "owner-password-123"
READY = re.compile(r"webdata listening on (http://127\.0\.0\.1:\d+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# urllib without any proxy from the environment: everything here is loopback.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    @property
    def json(self) -> Any:
        try:
            return jsonlib.loads(self.body)
        except ValueError:
            return None

    @property
    def error_code(self) -> str | None:
        j = self.json
        if isinstance(j, dict) and isinstance(j.get("error"), dict):
            return j["error"].get("code")
        return None


def http(method: str, url: str, *, headers: dict[str, str] | None = None,
         data: bytes | None = None, timeout: float = 30) -> Response:
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with _OPENER.open(req, timeout=timeout) as r:
            return Response(r.status, {k.lower(): v for k, v in r.headers.items()}, r.read())
    except urllib.error.HTTPError as e:
        return Response(e.code, {k.lower(): v for k, v in e.headers.items()}, e.read())


def generate_key() -> str:
    out = subprocess.run([str(BINARY), "keys", "generate"], capture_output=True, text=True,
                         timeout=30, check=True)
    return out.stdout.strip().split()[-1]


@dataclass
class Service:
    """One `webdata serve` process. Use as a context manager (or start/stop)."""

    env_overrides: dict[str, str] = field(default_factory=dict)
    smtp_url: str | None = None
    admin_token: str = ADMIN_TOKEN
    owner_email: str = OWNER_EMAIL
    owner_password: str = OWNER_PASSWORD

    def __post_init__(self) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="webdata-dash-")
        self.dir = Path(self.tmp.name)
        self.database_url = f"sqlite:///{self.dir}/w.db"
        self.bootstrap_key = generate_key()
        self.log_path = self.dir / "service.log"
        self.proc: subprocess.Popen | None = None
        self.base_url = ""

    # -- lifecycle ---------------------------------------------------------

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("WEBDATA_") and k.lower() not in ("http_proxy", "https_proxy",
                                                                       "all_proxy", "no_proxy")}
        env.update({
            "WEBDATA_DATABASE_URL": self.database_url,
            "WEBDATA_LISTEN": "127.0.0.1:0",
            "WEBDATA_ADMIN_TOKEN": self.admin_token,
            "WEBDATA_BOOTSTRAP_KEY": self.bootstrap_key,
            "WEBDATA_BOOTSTRAP_CREDITS": "1000",
            "WEBDATA_ALLOW_PRIVATE_NETWORKS": "127.0.0.2",
            "WEBDATA_WEBHOOK_DELAY_SCALE": "0.001",
            "WEBDATA_BOOTSTRAP_OWNER": self.owner_email,
            "WEBDATA_BOOTSTRAP_OWNER_PASSWORD": self.owner_password,
            "RUST_LOG": "info,sqlx=warn",
            "NO_COLOR": "1",
        })
        if self.smtp_url:
            env["WEBDATA_SMTP_URL"] = self.smtp_url
        env.update(self.env_overrides)
        return {k: v for k, v in env.items() if v is not None}

    def start(self, timeout: float = 60) -> "Service":
        log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([str(BINARY), "serve"], cwd=self.dir, env=self.env(),
                                     stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            m = READY.search(self.log())
            if m:
                self.base_url = m.group(1)
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"webdata exited with {self.proc.returncode}:\n{self.log()}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"webdata not ready within {timeout}s:\n{self.log()}")
            time.sleep(0.05)

    def stop(self) -> None:
        p, self.proc = self.proc, None
        if p is not None and p.poll() is None:
            # Its own process group (start_new_session): it and anything it started.
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(5)

    def cleanup(self) -> None:
        self.stop()
        self.tmp.cleanup()

    def __enter__(self) -> "Service":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.cleanup()

    def log(self) -> str:
        try:
            return ANSI.sub("", self.log_path.read_text(errors="replace"))
        except FileNotFoundError:
            return ""

    # -- HTTP --------------------------------------------------------------

    @property
    def host(self) -> str:
        return self.base_url.split("://", 1)[1]

    def url(self, path: str) -> str:
        return self.base_url + path

    def api(self, method: str, path: str, key: str | None = None, json: Any = None,
            headers: dict[str, str] | None = None, timeout: float = 60) -> Response:
        """A JSON request to the service; `key` goes in `Authorization: Bearer`."""
        h = {"Accept": "application/json"}
        data = None
        if json is not None:
            data = jsonlib.dumps(json).encode()
            h["Content-Type"] = "application/json"
        if key is not None:
            h["Authorization"] = f"Bearer {key}"
        h.update(headers or {})
        return http(method, self.url(path), headers=h, data=data, timeout=timeout)

    def admin(self, method: str, path: str, json: Any = None) -> Response:
        return self.api(method, "/admin/v1" + path, key=self.admin_token, json=json)

    def get(self, path: str, **kw: Any) -> Response:
        return http("GET", self.url(path), **kw)

    # -- conveniences ------------------------------------------------------

    def org_by_name(self, name: str) -> dict:
        r = self.admin("GET", "/organizations")
        assert r.status == 200, r.text
        matches = [o for o in r.json["data"] if o["name"] == name]
        assert len(matches) == 1, (name, r.json["data"])
        return matches[0]

    def org(self, org_id: str) -> dict:
        r = self.admin("GET", f"/organizations/{org_id}")
        assert r.status == 200, r.text
        return r.json["data"]

    def keys(self, org_id: str, include_playground: bool = False) -> list[dict]:
        q = "?includePlayground=true" if include_playground else ""
        r = self.admin("GET", f"/organizations/{org_id}/keys{q}")
        assert r.status == 200, r.text
        return r.json["data"]

    def audit(self, org_id: str) -> list[dict]:
        r = self.admin("GET", f"/organizations/{org_id}/audit")
        assert r.status == 200, r.text
        return r.json["data"]

    def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WEBDATA_")}
        env.update(NO_COLOR="1", RUST_LOG="warn")
        return subprocess.run([str(BINARY), *args], cwd=self.dir, env=env, capture_output=True,
                              text=True, timeout=timeout)


# --------------------------------------------------------------------------
# failure reporting: dump the log of every service a failed test used

_LIVE: list[Service] = []


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "rep_" + rep.when, rep)


@pytest.fixture(autouse=True)
def _dump_logs_on_failure(request):
    marks = {id(s): len(s.log()) for s in _LIVE}
    yield
    rep = getattr(request.node, "rep_call", None)
    failed = rep is not None and rep.failed and not hasattr(rep, "wasxfail")
    if failed or (getattr(request.node, "rep_setup", None) and request.node.rep_setup.failed):
        for s in list(_LIVE):
            text = s.log()[marks.get(id(s), 0):]
            tail = text[-20000:]
            sys.stderr.write(f"\n===== webdata log ({s.base_url}, since the test began) =====\n"
                             f"{tail}\n===== end of log =====\n")


def _start(env: dict[str, str] | None, smtp_url: str | None) -> Service:
    s = Service(env_overrides=dict(env or {}), smtp_url=smtp_url)
    try:
        s.start()
    except BaseException:
        sys.stderr.write(s.log())
        s.cleanup()
        raise
    _LIVE.append(s)
    return s


def _finish(s: Service) -> None:
    try:
        s.cleanup()
    finally:
        if s in _LIVE:
            _LIVE.remove(s)


# --------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def smtp() -> Iterator[harness.SmtpSink]:
    with harness.SmtpSink() as sink:
        yield sink


@pytest.fixture(scope="module")
def service(smtp) -> Iterator[Service]:
    """The service shared by the independent journeys of a module."""
    s = _start(None, smtp.url)
    try:
        yield s
    finally:
        _finish(s)


@pytest.fixture
def service_factory(smtp):
    """`service_factory(**env)` starts a service of the test's own; all are
    stopped at the end of the test."""
    started: list[Service] = []

    def make(env: dict[str, str] | None = None, with_smtp: bool = True) -> Service:
        s = _start(env, smtp.url if with_smtp else None)
        started.append(s)
        return s

    yield make
    for s in started:
        _finish(s)


@pytest.fixture(scope="module")
def browser():
    with harness.browser() as b:
        yield b


@pytest.fixture
def receiver() -> Iterator[harness.WebhookReceiver]:
    with harness.WebhookReceiver() as rx:
        yield rx


@pytest.fixture
def receiver2() -> Iterator[harness.WebhookReceiver]:
    with harness.WebhookReceiver() as rx:
        yield rx


@pytest.fixture
def site() -> Iterator[harness.TestSite]:
    """A fresh site per test (a new port, so no answer is cached across tests)."""
    with harness.TestSite() as s:
        yield s
