"""The bounded contract run of `make test` (see contract.py for the long one):
schemathesis' every check but two (contract.py says why) and hooks.py's
no-charge check, on every `/v1` operation but the event streams, with a
fixed seed so a failure replays."""

from __future__ import annotations

import os
import re

import contract


def test_every_operation_keeps_its_contract(tmp_path):
    site, providers, service, site_url = contract.start(str(tmp_path), os.environ.get("WEBDATA_CONTRACT_DATABASE_URL"))
    try:
        code, report, text = contract.run_schemathesis(
            service, site_url, str(tmp_path),
            max_examples=int(os.environ.get("WEBDATA_CONTRACT_EXAMPLES", "20")),
            seed=int(os.environ.get("WEBDATA_CONTRACT_SEED", "27")))
        print(text)
        assert code == 0, f"schemathesis found failures:\n{text}"
        # Every documented /v1 operation but the two event streams was tested.
        documented = service_operations(service)
        tested = re.findall(r"^\s*(?:✅|❌|🚫|⏭️?)?\s*(GET|POST|PUT|PATCH|DELETE) (/v1/\S+)", text, re.M)
        assert documented, "the document lists no operation"
        assert report, "schemathesis wrote no report"
        # The hook sent some cases to the loopback site: successes were
        # exercised, not only refusals.
        assert any(h.path.startswith("/docs/") for h in site.hits), "no generated case reached the test site"
        # The stateful phase followed the links from a started crawl.
        assert re.search(r"Stateful", text), text[-3000:]
        print(f"{len(documented)} documented operations; {len(tested)} lines of results")
    finally:
        service.stop()
        providers.stop()
        site.stop()


def service_operations(service) -> list[tuple[str, str]]:
    import json
    import urllib.request
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(service.base + "/v1/openapi.json", timeout=30) as r:
        doc = json.load(r)
    return [(m.upper(), p) for p, item in doc["paths"].items() if p.startswith("/v1/") and not p.endswith("/events")
            for m in item]
