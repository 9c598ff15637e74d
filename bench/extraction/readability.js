// Readability.js over a manifest: `node readability.js MANIFEST.json OUT.jsonl`
// (run with NODE_PATH pointing at .bench-data/node/node_modules). Writes
// {"id", "html", "text", "ms"} per page: the article's cleaned HTML and textContent.
const fs = require("fs");
const { JSDOM, VirtualConsole } = require("jsdom");
const { Readability } = require("@mozilla/readability");

const [manifestPath, outPath] = process.argv.slice(2);
const pages = JSON.parse(fs.readFileSync(manifestPath, "utf8"));
const out = fs.openSync(outPath, "w");
const quiet = new VirtualConsole(); // swallow CSS/script parse noise
const utf8 = new TextDecoder("utf-8", { fatal: true });
for (const p of pages) {
  let html = "", text = "", error;
  const started = process.hrtime.bigint();
  try {
    // Valid UTF-8 is read as UTF-8 (as our extractor and trafilatura do, and
    // as Readability's own test harness reads these pages); anything else goes
    // to jsdom as bytes for its own BOM / <meta charset> sniffing. (Given
    // bytes, jsdom only looks for <meta charset> in the first 1024 bytes and
    // otherwise falls back to windows-1252, which garbles UTF-8 pages whose
    // meta comes later.)
    const raw = fs.readFileSync(p.html);
    let input = raw;
    try { input = utf8.decode(raw); } catch (_) { /* not UTF-8 */ }
    const dom = new JSDOM(input, { url: p.url, virtualConsole: quiet });
    const article = new Readability(dom.window.document).parse();
    if (article) { html = article.content || ""; text = article.textContent || ""; }
    dom.window.close();
  } catch (e) { error = String(e); }
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  fs.writeSync(out, JSON.stringify({ id: p.id, html, text, ms, error }) + "\n");
}
fs.closeSync(out);
