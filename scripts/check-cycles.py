#!/usr/bin/env python3
"""Fails when the modules (files) of a crate import each other in a cycle.

An edge A -> B is any path in A's code (`use` or inline) that names module B
through `crate::`, `super::` or `self::`, except a module's use of its own
descendants (a folder's mod.rs is its front door, so its children's names
are not edges either); `mod` declarations and `pub(super)` are not edges, and `#[cfg(test)]` test modules (files under a `tests/` folder or
named `tests.rs`) are left out: tests may reach anywhere. Usage:
`scripts/check-cycles.py CRATE_SRC_DIR...`; prints each cycle, exits 1 if any.
"""
import os
import re
import sys

PATH = re.compile(r"\b(?:crate|super|self)(?:::(?:[A-Za-z_][A-Za-z0-9_]*))*(?:::\{)?")


def paths(text):
    """Every `crate::`/`super::`/`self::` path, use trees expanded."""
    out = []
    for m in PATH.finditer(text):
        head = m.group(0)
        if not head.endswith("{"):
            out.append(head)
            continue
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.extend(expand(head[:-3], text[m.end():j - 1]))
    return out


def expand(prefix, body):
    items, depth, cur = [], 0, ""
    for c in body:
        if c == "," and depth == 0:
            items.append(cur)
            cur = ""
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        cur += c
    items.append(cur)
    out = []
    for it in items:
        it = it.strip()
        if not it:
            continue
        if "{" in it:
            head, rest = it.split("{", 1)
            out.extend(expand(prefix + "::" + head.strip().rstrip(":").rstrip(":"), rest.rsplit("}", 1)[0]))
        else:
            out.append(prefix + "::" + it.split(" as ")[0].strip())
    return out


def modules(src):
    """Maps module path tuples to files."""
    mods = {}
    for root, _dirs, files in os.walk(src):
        for f in files:
            if not f.endswith(".rs"):
                continue
            full = os.path.join(root, f)
            rel = os.path.relpath(full, src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main"):
                rel = rel[:-1]
            if "tests" in rel or "bin" in rel[:1]:
                continue
            mods[tuple(rel)] = full
    return mods


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def strip_test_mods(text):
    # Drop `#[cfg(test)] mod x { ... }` blocks by brace matching.
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def resolve(here, path, mods):
    parts = path.split("::")
    if parts[0] == "crate":
        base, rest = (), parts[1:]
    else:
        base = here
        rest = parts
        while rest and rest[0] in ("super", "self"):
            if rest[0] == "super":
                base = base[:-1]
            rest = rest[1:]
    best = None
    cur = base
    for p in rest:
        cur = cur + (p,)
        if cur in mods:
            best = cur
        else:
            break
    if best is None and base in mods and base != here:
        best = base
    return best


VIS = re.compile(r"\bpub\((?:super|crate|self|in [^)]*)\)")


def cycles(src):
    mods = modules(src)
    graph = {m: set() for m in mods}
    for m, f in mods.items():
        # `pub(super)` is visibility, not a use.
        text = VIS.sub("pub", strip_test_mods(strip_comments(open(f, encoding="utf-8").read())))
        for p in paths(text):
            t = resolve(m, p, mods)
            if t is not None and t != m:
                graph[m].add(t)
        # A module may use its own children (a folder's mod.rs is its front
        # door and re-exports them); that is containment, not a dependency.
        graph[m] = {t for t in graph[m] if t[: len(m)] != m}
    # Tarjan's strongly connected components.
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return [[mods[c] for c in sorted(comp)] for comp in out], graph, mods


def main():
    bad = 0
    for src in sys.argv[1:]:
        found, graph, mods = cycles(src)
        for comp in found:
            bad += 1
            print(f"cycle in {src}: " + " <-> ".join(comp))
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main()
