// File and symbol page: outline, summary, who calls/imports/tests it, co-change.
"use strict";

// refs kinds with a section of their own; co_change has its own from `impact`.
const GROUPS = ["calls", "imports", "tests", "documents", "co_change"];

function unique(refs) {
  const seen = new Set();
  return refs.filter(r => {
    const key = [r.path, r.symbol, r.kind, r.line].join("|");
    return seen.has(key) ? false : seen.add(key);
  });
}

function refItem(r) {
  return el("div", { class: "card ref" },
    el("a", { href: fileHref(r) }, r.symbol || r.path),
    " ", el("span", { class: "meta" }, place(r) + " · " + r.kind + " · " + r.how));
}

function fill(id, items) {
  const box = document.getElementById(id);
  box.replaceChildren(...(items.length ? items.map(refItem)
    : [el("div", { class: "meta" }, "none found")]));
}

function outlineRows(entries, symbol) {
  const head = el("tr", {}, el("th", {}, "symbol"), el("th", {}, "kind"), el("th", {}, "lines"),
    el("th", {}, "summary"));
  const rows = entries.filter(e => e.kind !== "file").map(e =>
    el("tr", { class: e.symbol === symbol ? "here" : null },
      el("td", { class: "mono" }, el("a", { href: fileHref(e) }, e.symbol)),
      el("td", {}, e.kind), el("td", {}, `${e.start_line}–${e.end_line}`),
      el("td", {}, e.summary || "")));
  return [head, ...rows];
}

async function load() {
  const p = params();
  const item = { repo: p.get("repo") || "", path: p.get("path") || "", symbol: p.get("symbol") };
  if (!item.path) { showBanner("No file given."); return; }
  const target = targetOf(item);
  document.title = "indexd · " + (item.symbol || item.path);
  document.getElementById("title").textContent = item.symbol ? item.symbol + " · " + item.path
    : item.path;
  document.getElementById("links").replaceChildren(
    el("a", { href: impactHref(item) }, "impact graph"),
    item.symbol ? el("a", { href: fileHref({ ...item, symbol: null }) }, "whole file") : "");
  try {
    const [outline, refs, cochange] = await Promise.all([
      api("/rpc/symbols", { path: targetOf({ ...item, symbol: null }) }),
      api("/rpc/refs", { target, limit: 100 }),
      api("/impact", { target: targetOf({ ...item, symbol: null }), kinds: ["co_change"], depth: 1,
                       limit: 20 }),
    ]);
    const entries = outline.results || [];
    const self = entries.find(e => item.symbol ? e.symbol === item.symbol : e.kind === "file");
    const summary = outline.file_summary || outline.summary || (self && self.summary) || "";
    document.getElementById("summary").textContent = summary;
    document.getElementById("outline").replaceChildren(...outlineRows(entries, item.symbol));
    const all = unique(refs.refs || []);
    for (const kind of ["calls", "imports", "tests", "documents"]) {
      fill(kind, all.filter(r => r.kind === kind));
    }
    fill("other", all.filter(r => !GROUPS.includes(r.kind)));
    fill("cochange", (cochange.affected || []).map(a => ({ ...a, how: "git", kind: "co_change" })));
  } catch (err) {
    failed(err);
  }
}

nav("file");
load();
