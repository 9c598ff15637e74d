"""schemathesis hooks for webdata's contract run (loaded through
SCHEMATHESIS_HOOKS by contract.py):

- `refusals_charge_nothing`: an answer outside 2xx charged nothing. The
  organization's credit ledger (admin API) is read before each call; after
  a refusal, every ledger row the call created must be settled at 0 (a
  released reservation). Rows of crawls started earlier are not new rows,
  so their pages, charged in the background, do not disturb the check.
- `no_server_error`: schemathesis' `not_a_server_error`, except for the
  spec's 501 `not_configured` (a feature this deployment does not offer,
  such as premium fetching), which is the documented answer, not a fault.
- a body hook that points a share of the generated URLs of the synchronous
  operations (scrape, map, extract) at the loopback test site, so that
  successful answers, their schema and their charges are exercised too
  (every other URL is refused by the run's closed egress).

Runs with one worker (contract.py passes -w 1) so the two ledger reads
bracket exactly one request.
"""

from __future__ import annotations

import json
import os
import urllib.request
import zlib

import schemathesis

_BASE = os.environ["WEBDATA_CONTRACT_BASE"]
_ADMIN = os.environ["WEBDATA_CONTRACT_ADMIN"]
_ORG = os.environ["WEBDATA_CONTRACT_ORG"]
_SITE = os.environ.get("WEBDATA_CONTRACT_SITE", "")
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))
_before: dict[int, set[str]] = {}
# Only synchronous operations: a crawl of the site would run on after its
# answer, and the check could not tell its rows from a later call's.
_SYNC_BODIES = {("POST", "/v1/scrape"), ("POST", "/v1/map"), ("POST", "/v1/extract")}


def _ledger() -> list[dict]:
    req = urllib.request.Request(f"{_BASE}/admin/v1/organizations/{_ORG}/ledger?limit=50",
                                 headers={"Authorization": f"Bearer {_ADMIN}"})
    with _OPENER.open(req, timeout=30) as r:
        return json.load(r)["data"]


@schemathesis.hook
def before_call(context, case, kwargs):
    _before[id(case)] = {row["id"] for row in _ledger()}


@schemathesis.check
def refusals_charge_nothing(ctx, response, case):
    seen = _before.pop(id(case), None)
    if seen is None or 200 <= response.status_code < 300:
        return None
    new = [row for row in _ledger() if row["id"] not in seen]
    charged = [row for row in new if (row["settled"] or 0) != 0 or row["state"] == "reserved"]
    if charged:
        raise AssertionError(
            f"{case.method} {case.path} answered {response.status_code} and its ledger rows are {charged}"
        )
    return None


@schemathesis.check
def no_server_error(ctx, response, case):
    if response.status_code < 500:
        return None
    if response.status_code == 501:
        try:
            if response.json()["error"]["code"] == "not_configured":
                return None
        except Exception:  # noqa: BLE001 - not our Error shape: a failure below
            pass
    raise AssertionError(f"{case.method} {case.path} answered {response.status_code}: {response.text[:500]}")


def _site_url(seed: str) -> str | None:
    """The site for about a third of the generated URL strings (the schema
    types them as strings: any string is as valid there as a URL), chosen
    by the string's own hash so that a case replays the same way."""
    if not _SITE:
        return None
    h = zlib.crc32(seed.encode("utf-8", "surrogatepass"))
    return f"{_SITE}/docs/{h % 5 + 1}" if h % 3 == 0 else None


@schemathesis.hook
def map_body(context, body):
    op = getattr(context, "operation", None)
    if op is None or (op.method.upper(), op.path) not in _SYNC_BODIES or not isinstance(body, dict):
        return body
    if isinstance(body.get("url"), str) and (u := _site_url(body["url"])):
        body["url"] = u
    urls = body.get("urls")
    if isinstance(urls, list) and urls and all(isinstance(x, str) for x in urls):
        mapped = [_site_url(x) for x in urls]
        if all(mapped):
            body["urls"] = mapped
    return body
