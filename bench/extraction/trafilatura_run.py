"""trafilatura over a manifest (run with .bench-data/venv/bin/python).

    trafilatura_run.py MANIFEST.json OUT.jsonl

Writes {"id", "text", "ms"} per page: trafilatura.extract() plain text with
its defaults (fallback extractors on, tables on) and comments off, as in
trafilatura's own evaluation.
"""
import json
import sys
import time

import trafilatura

manifest, out_path = sys.argv[1], sys.argv[2]
with open(manifest, encoding="utf-8") as f:
    pages = json.load(f)
with open(out_path, "w", encoding="utf-8") as out:
    for p in pages:
        with open(p["html"], "rb") as f:
            raw = f.read()
        started = time.perf_counter()
        error = None
        try:
            # Valid UTF-8 as text, other bytes for trafilatura's own charset
            # detection (the rule all three extractors get).
            try:
                doc = raw.decode("utf-8")
            except UnicodeDecodeError:
                doc = raw
            text = trafilatura.extract(doc, url=p["url"], output_format="txt",
                                       include_comments=False) or ""
        except Exception as e:  # noqa: BLE001 - a crash scores as empty output
            text, error = "", repr(e)
        ms = (time.perf_counter() - started) * 1000
        out.write(json.dumps({"id": p["id"], "text": text, "ms": ms, "error": error}) + "\n")
print(f"trafilatura {trafilatura.__version__}: {len(pages)} pages", file=sys.stderr)
