#!/usr/bin/env python3
"""Writes a generated documentation site of N pages (issue 24's 100,000-page
crawl): page i links to its ten children 10i+1..10i+10 (a tree, so a crawl
reaches every page by depth log10 N), its parent and two pages elsewhere;
~4 KB of prose, a header and a footer each. Deterministic.

  gen_site.py N DIR
"""
import os
import sys

WORDS = ("the crawler reads every page once and keeps its main content as markdown while "
         "links found on it join the frontier and wait for a worker to lease them in order").split()


def body(i: int) -> str:
    paras = []
    for p in range(6):
        words = [WORDS[(i * 7 + p * 13 + k * 3) % len(WORDS)] for k in range(90)]
        paras.append(f"<p>Section {p} of page {i}: " + " ".join(words) + ".</p>")
    return "\n".join(paras)


def main() -> None:
    n, out = int(sys.argv[1]), sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for i in range(n):
        d = os.path.join(out, "p", str(i // 1000))
        if i % 1000 == 0:
            os.makedirs(d, exist_ok=True)
        kids = [c for c in range(10 * i + 1, 10 * i + 11) if c < n]
        links = [(c, f"Child {c}") for c in kids]
        if i:
            links.append(((i - 1) // 10, "Parent"))
        links += [((i * 31 + 7) % n, "See also"), ((i * 17 + 3) % n, "Related")]
        nav = "".join(f'<li><a href="/p/{j // 1000}/{j}.html">{t}</a></li>' for j, t in links)
        html = (f"<!doctype html><html><head><meta charset=utf-8><title>Page {i}</title></head><body>"
                f"<header><nav><a href=\"/\">Home</a></nav></header><main><h1>Page {i}</h1>\n{body(i)}\n"
                f"<ul>{nav}</ul></main><footer>Generated site</footer></body></html>\n")
        with open(os.path.join(d, f"{i}.html"), "w") as f:
            f.write(html)
    # The root page is the tree's page 0.
    with open(os.path.join(out, "index.html"), "w") as f:
        f.write('<!doctype html><html><head><title>Generated</title></head><body><main><h1>Generated</h1>'
                '<p>A generated site.</p><a href="/p/0/0.html">Start</a></main></body></html>\n')
    with open(os.path.join(out, ".complete"), "w") as f:
        f.write(str(n))


if __name__ == "__main__":
    main()
