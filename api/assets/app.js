// webdata dashboard: progressive enhancement only; every page works without it.
// Copy buttons, confirmations, and live crawl progress from the event stream.
"use strict";
document.addEventListener("click", function (e) {
  var b = e.target.closest("[data-copy]");
  if (!b) return;
  var el = document.getElementById(b.getAttribute("data-copy"));
  if (!el) return;
  var text = el.textContent;
  var done = function () { b.textContent = "Copied"; setTimeout(function () { b.textContent = "Copy"; }, 2000); };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(text).then(done, function () { select(el); });
  } else { select(el); }
});
function select(el) {
  var r = document.createRange(); r.selectNodeContents(el);
  var s = window.getSelection(); s.removeAllRanges(); s.addRange(r);
}
document.addEventListener("submit", function (e) {
  var f = e.target.closest("form[data-confirm]");
  if (f && !window.confirm(f.getAttribute("data-confirm"))) e.preventDefault();
});
function live(el) {
  var url = el.getAttribute("data-events");
  if (!url || !window.EventSource) return;
  var append = el.getAttribute("data-append");
  var tbody = append ? document.getElementById(append) : null;
  var rows = tbody ? tbody.rows.length : 0;
  var src = new EventSource(url);
  var set = function (name, value) {
    el.querySelectorAll('[data-field="' + name + '"]').forEach(function (n) {
      if (n.tagName === "PROGRESS") return;
      n.textContent = String(value);
      if (name === "status") n.className = "status " + value;
    });
  };
  var status = function (ev) {
    var s; try { s = JSON.parse(ev.data); } catch (_) { return; }
    ["status", "completed", "total", "failed", "credits_used"].forEach(function (k) { if (s[k] !== undefined) set(k, s[k]); });
    el.querySelectorAll('progress[data-field="progress"]').forEach(function (p) {
      p.max = Math.max(1, s.total || 0); p.value = (s.completed || 0) + (s.failed || 0);
    });
  };
  src.addEventListener("status", status);
  src.addEventListener("done", function (ev) {
    status(ev); src.close(); el.setAttribute("data-done", "true");
    el.querySelectorAll("[data-hide-when-done]").forEach(function (n) { n.hidden = true; });
  });
  src.addEventListener("page", function (ev) {
    if (!tbody) return;
    var d; try { d = JSON.parse(ev.data); } catch (_) { return; }
    var m = d.metadata || {};
    var tr = document.createElement("tr");
    [String(++rows), m.title || "", d.url || m.sourceURL || "", m.statusCode ? String(m.statusCode) : ""].forEach(function (v, i) {
      var td = document.createElement("td"); td.textContent = v; if (i === 1) td.className = "page-title"; tr.appendChild(td);
    });
    tbody.appendChild(tr);
  });
}
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-events]").forEach(live);
});
