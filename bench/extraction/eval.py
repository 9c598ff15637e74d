#!/usr/bin/env python3
"""Main-content extraction benchmark (issue 3): webdata vs trafilatura vs Readability.js.

    bench/extraction/fetch.sh            # data + comparison tools, once
    python3 bench/extraction/eval.py     # or: make bench-extraction

Standard library only; the comparison extractors run in their own processes
(.bench-data/venv for trafilatura, .bench-data/node for Readability.js), ours
is `target/release/examples/extract_eval` (built by the make target).

Dataset A - Mozilla Readability's test pages (readabilityrs 0.1.4 on crates.io,
tests/test-pages/*): ground truth is expected.html, i.e. Readability.js's own
output, which favours Readability.js. Pages whose source.html is under 15,000
bytes are unit-test fixtures (synthetic snippets for one cleaning rule each) and
are reported separately as "A-small"; "A-real" is every other page.
Score: 4-word-shingle F1 (see `shingles`), per page, then averaged over pages.

Dataset B - trafilatura's evaluation annotations (trafilatura 0.6.0 on
crates.io, comparison-data/entries.json) joined with the HTML shipped in the
trafilatura 1.1.0 sdist (tests/cache/): 100 pages, 573 snippets. Scored as
trafilatura scores it: a "with" snippet found in the extracted plain text is a
TP, missing an FN; a "without" snippet found is an FP, absent a TN. Whitespace is
collapsed on both sides before the substring test. P/R/F1/accuracy are over all
snippets of the set (micro).

Dataset C - newspaper4k's test articles (newspaper4k 0.9.6 sdist on PyPI,
tests/data/html + tests/data/txt): the 18 pages its tests check the article
text of (`known_websites`, `language_article_fixture`, `cnn_article` in
tests/conftest.py), in 8 languages (en 8, zh 3, ja 2, ar, es, lv, my, th).
Ground truth is newspaper4k's own text (snapshots its tests compare against,
one of them with a known missing lead paragraph),
so the set measures agreement with newspaper4k: a third opinion that is
neither Readability's nor trafilatura's. Scored like A (4-word-shingle F1 per
page, averaged); Thai, Lao, Myanmar and Khmer, written without spaces between
words, are one token per character like Chinese and Japanese.

Dataset D - ScrapingHub's article-extraction-benchmark (github.com/scrapinghub/
article-extraction-benchmark, MIT): the benchmark the issue's figures come
from (trafilatura 0.958, Readability.js 0.947), 181 news pages with an
annotated articleBody each. Its HTML is on GitHub only (gzip files), which
this machine cannot reach; the pages that a code-search index here holds as
text (a decompressed copy in Murrough-Foley/rs-trafilatura, 84 of the 181)
were copied from it, those up to 200,000 characters, and are committed in
bench/extraction/data/scrapinghub-subset.tar.xz with their ground truth. In
that copy the bodies of <script> and <style>, HTML comments, the drawing
inside <svg> and attribute values over 300 characters were left out; none
of the three extractors takes article text from any of them. With a
checkout of the full benchmark, WEBDATA_SCRAPINGHUB_DIR=path runs all 181
pages instead.
Scored twice: with ScrapingHub's own evaluate.py metric (which the issue's
figures use: precision and recall averaged over pages, F1 of the averages,
`\\w+` tokens with case kept) and with the 4-word-shingle F1 of A and C.
"""
import collections
import gzip
import html.parser
import json
import os
import re
import statistics
import subprocess
import sys
import unicodedata

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, ".bench-data", "extraction")
WORK = os.path.join(DATA, "run")
SMALL_BYTES = 15_000
FAKE_URL = "http://fakehost/test/page.html"  # what Readability's own tests use

# --------------------------------------------------------------------------
# Text normalisation and scoring


class _Text(html.parser.HTMLParser):
    """HTML to text: script/style/template content dropped, a line break at
    every block boundary, entities decoded."""

    SKIP = {"script", "style", "noscript", "template", "head", "svg", "math"}
    BLOCK = {"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt",
             "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5", "h6",
             "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "table",
             "td", "th", "tr", "ul", "caption", "details", "summary"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.out, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self.skip += 1
        elif tag in self.BLOCK:
            self.out.append("\n")

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self.skip = max(0, self.skip - 1)
        elif tag in self.BLOCK:
            self.out.append("\n")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(data)


def html_text(markup):
    p = _Text()
    p.feed(markup)
    p.close()
    return "".join(p.out)


def markdown_words_source(md):
    """Markdown to the text a reader sees: images dropped (`![alt](src)` and
    `![alt](src "caption")` -> nothing: a rendered image shows no alt text
    and no title, and neither the ground truth
    (the text of expected.html) nor trafilatura's or Readability.js's text
    contains alt attributes; until 2026-11-24 alt text was counted, which
    charged our markdown for words no other output is scored on), link
    targets dropped (`[t](u)` -> `t`, `<http://..>` -> nothing), `<br>` in
    table cells dropped (until 2026-11-24 it counted as the word "br"), a
    code fence's language dropped (```` ```python ```` shows no word "python";
    until 2026-11-25 it counted); the remaining syntax is punctuation, which
    tokenisation removes."""
    md = re.sub(r"^([ \t>]*(?:`{3,}|~{3,}))[^\n`]*$", r"\1", md, flags=re.M)
    md = re.sub(r'!\[(?:[^\]\\]|\\.)*\]\((?:[^()\s"]|\([^)]*\))*(?:\s+"(?:[^"\\]|\\.)*")?\)',
                " ", md)
    md = re.sub(r"\]\((?:[^()]|\([^)]*\))*\)", "]", md)
    md = re.sub(r"<(?:https?|mailto):[^>]*>", " ", md)
    # A line break inside a table cell is written `<br>` (GFM cells hold no
    # newline); rendered, it shows no text.
    md = re.sub(r"<br\s*/?>", " ", md)
    return md


_CJK = ("\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
        "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff")  # + Thai, Lao, Myanmar, Khmer
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")


def words(text):
    """NFKC, lowercase, tokens = runs of letters/digits (Unicode \\w without
    `_`), so punctuation and markup symbols vanish; Chinese/Japanese
    characters (no spaces between words) are one token each, and so are Thai,
    Lao, Myanmar and Khmer ones."""
    return _TOKEN.findall(unicodedata.normalize("NFKC", text).lower())


def shingles(ws, k=4):
    """Multiset of the k-word windows (k = 4); a text of fewer than k words is
    one shingle of all its words, an empty text no shingle."""
    if not ws:
        return collections.Counter()
    if len(ws) < k:
        return collections.Counter([tuple(ws)])
    return collections.Counter(tuple(ws[i:i + k]) for i in range(len(ws) - k + 1))


def shingle_prf(pred_text, truth_text):
    p, t = shingles(words(pred_text)), shingles(words(truth_text))
    overlap = sum((p & t).values())
    prec = overlap / sum(p.values()) if p else 0.0
    rec = overlap / sum(t.values()) if t else 0.0
    f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
    return prec, rec, f1


def ws_norm(s):
    return " ".join(s.split())


# --------------------------------------------------------------------------
# Languages

_EN = {"the", "and", "of", "to", "is", "in", "that", "for", "it", "with", "was", "on"}


def lang_of(declared, raw_html, text):
    """Primary language subtag: the declared one (metadata, then <html lang>),
    else 'en' when English function words make up over 5% of the words of
    `text`, else 'und' (counted as non-English)."""
    if not declared:
        m = re.search(rb"<html[^>]*\slang\s*=\s*[\"']?([A-Za-z]{2,3})", raw_html[:5000], re.I)
        declared = m.group(1).decode() if m else None
    if declared:
        return declared.split("-")[0].split("_")[0].lower()
    ws = words(text)
    if ws and sum(w in _EN for w in ws) / len(ws) > 0.05:
        return "en"
    return "und"


# --------------------------------------------------------------------------
# Datasets


def dataset_a():
    base = os.path.join(DATA, "readabilityrs-0.1.4", "tests", "test-pages")
    pages = []
    for name in sorted(os.listdir(base)):
        d = os.path.join(base, name)
        src = os.path.join(d, "source.html")
        with open(os.path.join(d, "expected.html"), encoding="utf-8") as f:
            truth = html_text(f.read())
        with open(os.path.join(d, "expected-metadata.json"), encoding="utf-8") as f:
            meta = json.load(f)
        with open(src, "rb") as f:
            raw = f.read()
        pages.append({"id": "A/" + name, "html": src, "url": FAKE_URL, "truth": truth,
                      "lang": lang_of(meta.get("lang"), raw, truth),
                      "subset": "A-small" if len(raw) < SMALL_BYTES else "A-real"})
    return pages


def dataset_b():
    entries_path = os.path.join(DATA, "trafilatura-0.6.0", "comparison-data", "entries.json")
    cache = os.path.join(DATA, "trafilatura-1.1.0", "tests", "cache")
    with open(entries_path, encoding="utf-8") as f:
        entries = json.load(f)
    pages = []
    for e in entries:
        path = os.path.join(cache, e["file"])
        if not os.path.isfile(path):
            continue
        with open(path, "rb") as f:
            raw = f.read()
        with_ = [s for s in (e.get("with") or []) if s.strip()]
        without = [s for s in (e.get("without") or []) if s.strip()]
        pages.append({"id": "B/" + e["file"], "html": path, "url": e["url"],
                      "with": with_, "without": without, "subset": "B",
                      "lang": lang_of(None, raw, " ".join(with_))})
    return pages


NEWSPAPER_PAGES = [
    # (file, url, language): tests/conftest.py of newspaper4k 0.9.6. The
    # `known_websites` pages are tested with the URL www.test.com; their real
    # URL is in tests/data/metadata/<file>.json.
    ("cnn_001", None, None), ("cnn_002", None, None), ("time_001", None, None),
    ("wired_001", None, None), ("article_with_br", None, None),
    ("article_with_divs", None, None), ("yna_co_kr", None, None),
    ("cnn_article",
     "http://www.cnn.com/2013/11/27/travel/weather-thanksgiving/index.html?iref=allsearch", "en"),
    ("thai_article", "https://prachatai.com/journal/2019/01/80642", "th"),
    ("arabic_article", "http://arabic.cnn.com/2013/middle_east/8/2/syria.clashes/index.html", "ar"),
    ("spanish_article", "http://ultimahora.es/mallorca/noticia/noticias/local/fiscal"
     "ia-anticorrupcion-estudia-recurre-imputacion-infanta.html", "es"),
    ("chinese_article", "http://news.sohu.com/20050601/n225789219.shtml", "zh"),
    ("japanese_article",
     "https://www.nikkei.com/article/DGXMZO31897660Y8A610C1000000/?n_cid=DSTPCS001", "ja"),
    ("japanese_article2", "http://www.afpbb.com/articles/-/3178894", "ja"),
    ("chinese_article_001",
     "https://china.chinadaily.com.cn/a/202311/17/WS65571297a310d5acd876f404.html", "zh"),
    ("chinese_article_002", "http://www.news.cn/fortune/2023-11/17/c_1129981476.htm", "zh"),
    ("latvian_article", "https://www.lsm.lv/raksts/zinas/arzemes/norvegija-pec-zemes-nogruvuma-"
     "pieci-bojagajusie.a387519/", "lv"),
    ("burmese_article", "https://www.bbc.com/burmese/burma-45989453", "my"),
]


def dataset_c():
    base = os.path.join(DATA, "newspaper4k-0.9.6", "tests", "data")
    pages = []
    for name, url, lang in NEWSPAPER_PAGES:
        src = os.path.join(base, "html", name + ".html")
        with open(os.path.join(base, "txt", name + ".txt"), encoding="utf-8") as f:
            truth = f.read()
        meta_path = os.path.join(base, "metadata", name + ".json")
        meta = {}
        if os.path.isfile(meta_path):
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        with open(src, "rb") as f:
            raw = f.read()
        pages.append({"id": "C/" + name, "html": src, "url": url or meta.get("url") or FAKE_URL,
                      "truth": truth, "subset": "C",
                      "lang": lang or lang_of(meta.get("meta_lang") or None, raw, truth)})
    return pages


def scrapinghub_dir():
    """Set D's data: a checkout of scrapinghub/article-extraction-benchmark
    (all 181 pages, html/*.html.gz) when WEBDATA_SCRAPINGHUB_DIR names one,
    else the subset committed in bench/extraction/data/ (unpacked by fetch.sh).
    Both have ground-truth.json and html/<id>.html or html/<id>.html.gz."""
    return os.environ.get("WEBDATA_SCRAPINGHUB_DIR") or os.path.join(DATA, "scrapinghub-subset")


def dataset_d():
    base = scrapinghub_dir()
    gt_path = os.path.join(base, "ground-truth.json")
    if not os.path.isfile(gt_path):
        return []
    with open(gt_path, encoding="utf-8") as f:
        truth = json.load(f)
    unpacked = os.path.join(WORK, "scrapinghub-html")
    os.makedirs(unpacked, exist_ok=True)
    pages = []
    for key in sorted(truth):
        src = os.path.join(base, "html", key + ".html")
        if not os.path.isfile(src):
            gz = src + ".gz"
            if not os.path.isfile(gz):
                continue
            src = os.path.join(unpacked, key + ".html")
            with gzip.open(gz, "rb") as fin, open(src, "wb") as fout:
                fout.write(fin.read())
        with open(src, "rb") as f:
            raw = f.read()
        body = truth[key].get("articleBody") or ""
        pages.append({"id": "D/" + key[:12], "html": src, "url": truth[key].get("url") or FAKE_URL,
                      "truth": body, "subset": "D", "lang": lang_of(None, raw, body)})
    return pages


# --------------------------------------------------------------------------
# Running the extractors


def run(cmd, env=None):
    print("+", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, env=env)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return {r["id"]: r for r in map(json.loads, f)}


def extract_all(pages, rerun):
    os.makedirs(WORK, exist_ok=True)
    manifest = os.path.join(WORK, "manifest.json")
    with open(manifest, "w", encoding="utf-8") as f:
        json.dump([{"id": p["id"], "html": p["html"], "url": p["url"]} for p in pages], f)
    ours_bin = os.path.join(ROOT, "target", "release", "examples", "extract_eval")
    out = {n: os.path.join(WORK, n + ".jsonl") for n in ("webdata", "trafilatura", "readability")}
    if "webdata" in rerun:
        run([ours_bin, manifest, out["webdata"]])
    if "trafilatura" in rerun:
        run([os.path.join(ROOT, ".bench-data", "venv", "bin", "python"),
             os.path.join(ROOT, "bench", "extraction", "trafilatura_run.py"), manifest,
             out["trafilatura"]])
    if "readability" in rerun:
        env = dict(os.environ,
                   NODE_PATH=os.path.join(ROOT, ".bench-data", "node", "node_modules"))
        run(["node", os.path.join(ROOT, "bench", "extraction", "readability.js"), manifest,
             out["readability"]], env=env)
    res = {n: read_jsonl(p) for n, p in out.items()}
    # What each extractor's output is scored as, per page.
    texts = {}
    for p in pages:
        i = p["id"]
        texts[i] = {
            "webdata": markdown_words_source(res["webdata"][i].get("markdown", "")),
            "webdata-text": res["webdata"][i].get("text", ""),
            "trafilatura": res["trafilatura"][i].get("text", ""),
            "readability": html_text(res["readability"][i].get("html", "")),
        }
    ms = {n: sum(r.get("ms", 0) for r in res[n].values()) for n in res}
    return texts, ms


SYSTEMS = ["webdata", "trafilatura", "readability"]
LABEL = {"webdata": "webdata (onlyMainContent markdown)", "trafilatura": "trafilatura",
         "readability": "Readability.js", "webdata-text": "webdata (plain text)"}


def score_shingles(pages, texts):
    rows = {}
    for p in pages:
        rows[p["id"]] = {s: shingle_prf(texts[p["id"]][s], p["truth"])
                         for s in SYSTEMS + ["webdata-text"]}
    return rows


def score_b(pages, texts, system):
    """Snippet confusion counts, on the plain text (our `text`)."""
    key = {"webdata": "webdata-text"}.get(system, system)
    c = collections.Counter()
    for p in pages:
        t = ws_norm(texts[p["id"]][key])
        for s in p["with"]:
            c["tp" if ws_norm(s) in t else "fn"] += 1
        for s in p["without"]:
            c["fp" if ws_norm(s) in t else "tn"] += 1
    return c


_SH_TOKEN = re.compile(r"\w+", re.UNICODE)


def scrapinghub_counts(pred, true, n=4):
    """ScrapingHub's evaluate.py `string_shingle_matching`: tokens are `\\w+`
    runs (case kept), shingles are 4-token windows, and a page's TP/FP/FN are
    normalised to sum to 1 so that every page weighs the same."""
    def grams(text):
        toks = _SH_TOKEN.findall(text or "")
        return collections.Counter(tuple(toks[i:i + n])
                                   for i in range(0, max(1, len(toks) - n + 1)) if toks[i:i + n])
    t, p = grams(true), grams(pred)
    tp = sum((t & p).values())
    fp = sum((p - t).values())
    fn = sum((t - p).values())
    s = tp + fp + fn
    return (tp / s, fp / s, fn / s) if s else (0.0, 0.0, 0.0)


def scrapinghub_prf(pages, texts, system):
    """ScrapingHub's metric: precision averaged over pages with a prediction,
    recall over pages with a truth, F1 of the two averages."""
    counts = [scrapinghub_counts(texts[p["id"]][system], p["truth"]) for p in pages]

    def score(tp, fp, fn, other):
        if fp == fn == 0:
            return 1.0
        if tp == other == 0:
            return 0.0
        return tp / (tp + other)
    ps = [score(tp, fp, fn, fp) for tp, fp, fn in counts if tp + fp > 0]
    rs = [score(tp, fp, fn, fn) for tp, fp, fn in counts if tp + fn > 0]
    pr = statistics.mean(ps) if ps else 0.0
    rc = statistics.mean(rs) if rs else 0.0
    return pr, rc, (2 * pr * rc / (pr + rc) if pr + rc else 0.0)


def prf(c):
    p = c["tp"] / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] else 0.0
    r = c["tp"] / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    a = (c["tp"] + c["tn"]) / max(1, sum(c.values()))
    return p, r, f, a


def is_en(p):
    return p["lang"] == "en"


def shingle_table(out, groups, rows):
    """Mean P / R / F1 per system over each (name, pages) group."""
    systems = SYSTEMS + ["webdata-text"]
    out("| Subset | Pages | " + " | ".join(LABEL[s] + " P / R / **F1**" for s in systems) + " |")
    out("|---" * (2 + len(systems)) + "|")
    for name, ps in groups:
        cells = []
        for s in systems:
            if not ps:
                cells.append("-")
                continue
            pr, rc, f1 = (statistics.mean(rows[p["id"]][s][k] for p in ps) for k in range(3))
            cells.append(f"{pr:.3f} / {rc:.3f} / **{f1:.3f}**")
        out(f"| {name} | {len(ps)} | " + " | ".join(cells) + " |")


def per_page_table(out, title, pages, rows):
    """Per-page shingle F1 of the three systems, lowest webdata first."""
    out(f"## {title} per page (4-word-shingle F1), lowest webdata first\n")
    out("| Page | Lang | webdata | trafilatura | Readability.js |")
    out("|---|---|---|---|---|")
    for p in sorted(pages, key=lambda p: rows[p["id"]]["webdata"][2]):
        r = rows[p["id"]]
        out(f"| {p['id'][2:]} | {p['lang']} | {r['webdata'][2]:.3f} | "
            f"{r['trafilatura'][2]:.3f} | {r['readability'][2]:.3f} |")
    out("")


def main():
    # `eval.py --only webdata` re-runs just our extractor and reuses the other
    # two outputs of the previous run (for iterating on our extractor).
    rerun = set(SYSTEMS)
    if "--only" in sys.argv:
        rerun = set(sys.argv[sys.argv.index("--only") + 1].split(","))
    a, b, c, d = dataset_a(), dataset_b(), dataset_c(), dataset_d()
    texts, ms = extract_all(a + b + c + d, rerun)
    a_rows = score_shingles(a, texts)
    c_rows = score_shingles(c, texts)
    d_rows = score_shingles(d, texts)
    lines = []
    out = lines.append

    out("# Main-content extraction benchmark (generated by bench/extraction/eval.py)\n")
    out("Scoring, datasets and caveats: see the docstring of `bench/extraction/eval.py` "
        "and `docs/benchmarks.md`.\n")

    # ---- Dataset A
    out("## A: Mozilla Readability test pages, 4-word-shingle F1 vs expected.html\n")
    out("Ground truth is Readability.js's own output: biased toward Readability.js.\n")
    real = [p for p in a if p["subset"] == "A-real"]
    shingle_table(out, [
        ("A-real, all", real),
        ("A-real, English", [p for p in real if is_en(p)]),
        ("A-real, non-English", [p for p in real if not is_en(p)]),
        ("A-small (fixtures < 15 KB)", [p for p in a if p["subset"] == "A-small"]),
    ], a_rows)
    langs = collections.Counter(p["lang"] for p in real)
    out("\nA-real languages: " + ", ".join(f"{k} {v}" for k, v in langs.most_common()) + ".\n")
    for s in SYSTEMS:
        med = statistics.median(a_rows[p["id"]][s][2] for p in real)
        low = sum(a_rows[p["id"]][s][2] < 0.9 for p in real)
        out(f"- {LABEL[s]}: median F1 {med:.3f}, pages with F1 < 0.9: {low}")
    wins = sum(a_rows[p["id"]]["webdata"][2] >= max(a_rows[p["id"]]["trafilatura"][2],
                                                    a_rows[p["id"]]["readability"][2]) - 1e-9
               for p in real)
    out(f"- webdata best or tied on {wins} of {len(real)} A-real pages\n")

    # ---- Dataset B
    out("## B: trafilatura evaluation snippets (100 pages of its test cache)\n")
    out("Matched on plain text: ours is the `text` format of the same onlyMainContent "
        "selection. This is trafilatura's own evaluation set (biased toward trafilatura).\n")
    b_label = dict(LABEL, webdata="webdata (plain text)")
    out("| Subset | Pages | Snippets | " + " | ".join(b_label[s] + " P / R / **F1** / acc"
                                                     for s in SYSTEMS) + " |")
    out("|---" * (3 + len(SYSTEMS)) + "|")
    for name, ps in [("all", b), ("English", [p for p in b if is_en(p)]),
                     ("non-English", [p for p in b if not is_en(p)])]:
        n_snip = sum(len(p["with"]) + len(p["without"]) for p in ps)
        cells = []
        for s in SYSTEMS:
            pr, rc, f1, acc = prf(score_b(ps, texts, s))
            cells.append(f"{pr:.3f} / {rc:.3f} / **{f1:.3f}** / {acc:.3f}")
        out(f"| {name} | {len(ps)} | {n_snip} | " + " | ".join(cells) + " |")
    langs = collections.Counter(p["lang"] for p in b)
    out("\nB languages: " + ", ".join(f"{k} {v}" for k, v in langs.most_common()) +
        " (declared `<html lang>`, else an English function-word test; 'und' = undeclared "
        "and not English).\n")

    # ---- Dataset C
    out("## C: newspaper4k's test articles, 4-word-shingle F1 vs its text snapshots\n")
    out("Ground truth is newspaper4k's own output: a third tool, neither Readability "
        "nor trafilatura.\n")
    shingle_table(out, [("C, all", c), ("C, English", [p for p in c if is_en(p)]),
                        ("C, non-English", [p for p in c if not is_en(p)])], c_rows)
    langs = collections.Counter(p["lang"] for p in c)
    out("\nC languages: " + ", ".join(f"{k} {v}" for k, v in langs.most_common()) + ".\n")

    # ---- Dataset D
    out("## D: ScrapingHub's article-extraction-benchmark\n")
    if not d:
        out(f"Not run: no `ground-truth.json` in {scrapinghub_dir()} (see fetch.sh).\n")
    else:
        out(f"{len(d)} pages from `{os.path.relpath(scrapinghub_dir(), ROOT)}`. The benchmark "
            "the issue's figures (trafilatura 0.958, Readability.js 0.947) come from; ground "
            "truth is its annotated articleBody.\n")
        out("ScrapingHub's own metric (its evaluate.py: `\\w+` tokens, 4-token shingles, "
            "per-page normalised counts, mean precision and mean recall, F1 of the means):\n")
        out("| System | Pages | P | R | **F1** |")
        out("|---|---|---|---|---|")
        for s in SYSTEMS + ["webdata-text"]:
            pr, rc, f1 = scrapinghub_prf(d, texts, s)
            out(f"| {LABEL[s]} | {len(d)} | {pr:.3f} | {rc:.3f} | **{f1:.3f}** |")
        out("\nThe 4-word-shingle F1 of sets A and C (per page, averaged):\n")
        shingle_table(out, [("D, all", d), ("D, English", [p for p in d if is_en(p)]),
                            ("D, non-English", [p for p in d if not is_en(p)])], d_rows)
        langs = collections.Counter(p["lang"] for p in d)
        out("\nD languages: " + ", ".join(f"{k} {v}" for k, v in langs.most_common()) + ".\n")

    out("## Time (sum over all %d pages, one process each, wall clock inside the "
        "extractor loop)\n" % len(a + b + c + d))
    for s in SYSTEMS:
        out(f"- {LABEL[s]}: {ms[s]:.0f} ms")
    out("")

    # ---- Per-page detail, worst for us first
    per_page_table(out, "A-real", real, a_rows)
    per_page_table(out, "C", c, c_rows)
    if d:
        per_page_table(out, "D", d, d_rows)
    out("## B per page: snippets missed (FN) and leaked (FP), webdata\n")
    out("| Page | Lang | FN | FP | trafilatura FN/FP | Readability.js FN/FP |")
    out("|---|---|---|---|---|---|")
    bad = []
    for p in b:
        cs = {s: score_b([p], texts, s) for s in SYSTEMS}
        if cs["webdata"]["fn"] or cs["webdata"]["fp"]:
            bad.append((cs["webdata"]["fn"] + cs["webdata"]["fp"], p, cs))
    for _, p, cs in sorted(bad, key=lambda x: -x[0]):
        out(f"| {p['id'][2:]} | {p['lang']} | {cs['webdata']['fn']} | {cs['webdata']['fp']} | "
            f"{cs['trafilatura']['fn']}/{cs['trafilatura']['fp']} | "
            f"{cs['readability']['fn']}/{cs['readability']['fp']} |")

    text = "\n".join(lines) + "\n"
    with open(os.path.join(ROOT, "bench", "extraction", "results.md"), "w",
              encoding="utf-8") as f:
        f.write(text)
    # Console: the summary tables only.
    print(text.split("## A-real per page")[0])


if __name__ == "__main__":
    main()
