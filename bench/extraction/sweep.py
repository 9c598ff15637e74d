#!/usr/bin/env python3
"""Main-content sweep over the HTML installed on this machine.

No ground truth: this finds failures a benchmark set would not show. It runs
`extract_eval` (the same onlyMainContent path as the service) over every
HTML page under the given roots and reports

  1. pages that failed;
  2. pages whose output keeps under half of the text of their `<main>` (or
     `role=main`, `<article>`), else of their `<body>`: lost content;
  3. lines that come back on at least a fifth of the pages of one site:
     chrome that leaks (a button label, a menu);
  4. with `--against OLD.jsonl`, every page whose output changed, longest
     losses and gains first (for checking a rule change).

Defaults: the Rust toolchain's books and a fixed sample of 1,500 of its API
pages, plus every other HTML file under /usr/share/doc and
/usr/share/gettext. PostgreSQL's and Python's documentation are left out:
`content_speed` and the documentation check in docs/benchmarks.md cover
them.

    python3 bench/extraction/sweep.py [--out run.jsonl] [--against old.jsonl]
                                      [--extractor path/to/extract_eval] [ROOT ...]

Needs the release `extract_eval` example (cargo build --release -p
webdata-worker --example extract_eval) and lxml (the venv fetch.sh makes).
"""
import argparse
import collections
import glob
import hashlib
import json
import os
import random
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUST_BOOKS = {"book", "reference", "nomicon", "rust-by-example", "cargo", "rustc",
              "edition-guide", "embedded-book", "rustdoc", "style-guide", "clippy",
              "error_codes"}
RUST_API = {"std", "core", "alloc", "proc_macro", "test"}


def group(path):
    """The site a page belongs to: a Rust book or crate, else its doc package."""
    if "/share/doc/rust/html/" in path:
        return path.split("/share/doc/rust/html/")[1].split("/")[0]
    parts = path.strip("/").split("/")
    if parts[:3] == ["usr", "share", "doc"] and len(parts) > 3:
        return parts[3]
    return parts[2] if len(parts) > 2 else path


def default_pages():
    pages = []
    rust = sorted(glob.glob(os.path.expanduser(
        "~/.rustup/toolchains/stable-*/share/doc/rust/html")))
    if rust:
        books, api = [], []
        for dirpath, _, files in os.walk(rust[0]):
            for f in files:
                if f.endswith(".html"):
                    p = os.path.join(dirpath, f)
                    g = group(p)
                    if g in RUST_BOOKS:
                        books.append(p)
                    elif g in RUST_API:
                        api.append(p)
        api.sort()
        pages += sorted(books) + random.Random(7).sample(api, min(1500, len(api)))
    for base in ["/usr/share/doc", "/usr/share/gettext"]:
        for dirpath, _, files in os.walk(base):
            if "postgresql-doc" in dirpath or "/python3" in dirpath:
                continue
            for f in files:
                if f.endswith((".html", ".htm")):
                    p = os.path.join(dirpath, f)
                    if os.path.getsize(p) > 2048:
                        pages.append(p)
    return pages


def manifest(pages, path):
    seen, out = set(), []
    for p in pages:
        try:
            with open(p, "rb") as f:
                h = hashlib.sha1(f.read()).hexdigest()
        except OSError:
            continue
        if h not in seen:
            seen.add(h)
            out.append({"id": p, "html": p, "url": "http://127.0.0.2" + p})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(out, f)
    return out


def read(path):
    with open(path, encoding="utf-8") as f:
        return {r["id"]: r for r in map(json.loads, f)}


def page_text(path):
    """(main text, body text) of a page, whitespace collapsed."""
    from lxml import html as lxml_html
    try:
        doc = lxml_html.parse(path).getroot()
    except Exception:
        return "", ""
    if doc is None:
        return "", ""
    for bad in doc.xpath("//script|//style|//noscript|//template"):
        if bad.getparent() is not None:
            bad.getparent().remove(bad)
    body = doc.find("body")
    body_text = " ".join((body if body is not None else doc).text_content().split())
    main = doc.xpath("//main|//*[@role='main']|//article")
    main_text = " ".join(main[0].text_content().split()) if main else ""
    return main_text, body_text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("roots", nargs="*", help="folders to sweep instead of the defaults")
    ap.add_argument("--out", default=os.path.join(ROOT, ".bench-data", "sweep.jsonl"))
    ap.add_argument("--against", help="an earlier --out file to compare with")
    ap.add_argument("--extractor", default=os.path.join(ROOT, "target", "release", "examples",
                                                        "extract_eval"),
                    help="the extract_eval binary (an older build, for --against runs)")
    args = ap.parse_args()

    if args.roots:
        pages = sorted(p for r in args.roots for p in glob.glob(
            os.path.join(r, "**", "*.htm*"), recursive=True))
    else:
        pages = default_pages()
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    man = manifest(pages, args.out + ".manifest.json")
    run = subprocess.run([args.extractor, args.out + ".manifest.json", args.out], capture_output=True,
                         text=True)
    print(run.stdout.strip() or run.stderr.strip())
    res = read(args.out)

    failed = [p["id"] for p in man if p["id"] not in res or "error" in res[p["id"]]]
    print(f"\n## {len(man)} distinct pages, {len(failed)} failed")
    for p in failed[:20]:
        print("  ", p)

    low = []
    for pid, r in res.items():
        main_text, body_text = page_text(pid)
        ref = len(main_text) or len(body_text)
        out = len(" ".join(r.get("text", "").split()))
        if ref > 1000 and out < 0.5 * ref:
            low.append((out / ref, out, ref, pid))
    low.sort()
    print(f"\n## Output under half of the page's main (else body) text: {len(low)} pages")
    print("   by site:", collections.Counter(group(x[3]) for x in low).most_common(12))
    for share, out, ref, pid in low[:25]:
        print(f"   {share:.2f}  {out:6} of {ref:6}  {pid}")

    lines, per_site = collections.defaultdict(collections.Counter), collections.Counter()
    for pid, r in res.items():
        g = group(pid)
        per_site[g] += 1
        for line in {x.strip() for x in r.get("text", "").split("\n") if x.strip()}:
            lines[g][line] += 1
    print("\n## Lines on at least a fifth of a site's pages (sites of 20+ pages)")
    for g, n in per_site.most_common():
        if n < 20:
            continue
        common = sorted(((c, l) for l, c in lines[g].items() if c >= max(5, n / 5)),
                        reverse=True)[:6]
        if common:
            print(f"   {g} ({n} pages): " + " | ".join(f"{c}× {l[:50]!r}" for c, l in common))

    if args.against:
        old = read(args.against)
        rows = []
        for pid, r in res.items():
            if pid in old and old[pid].get("markdown") != r.get("markdown"):
                a, b = len(old[pid].get("text", "")), len(r.get("text", ""))
                rows.append((b - a, a, b, pid))
        rows.sort()
        print(f"\n## Changed against {args.against}: {len(rows)} pages, "
              f"{sum(d > 0 for d, *_ in rows)} longer, {sum(d < 0 for d, *_ in rows)} shorter")
        for d, a, b, pid in rows[:10] + rows[-10:]:
            print(f"   {d:+7} ({a} -> {b})  {pid}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
