// Search page: the form is a plain GET form, so every search is a link (?q=...).
"use strict";

const FILTERS = ["realm", "repo", "kind", "lang", "path"];
const WINDOW = 3;

function renderHit(hit) {
  const card = el("div", { class: "card hit", "data-path": hit.path });
  card.append(el("div", { class: "title" },
    el("a", { class: "sym", href: fileHref(hit) }, hit.symbol || hit.path),
    el("span", { class: "tag" }, hit.kind),
    el("span", { class: "meta" }, place(hit)),
    el("span", { class: "meta" }, (hit.match || []).join(" + ") + " · " + hit.score.toFixed(3))));
  if (hit.summary) card.append(el("div", { class: "summary" }, hit.summary));
  if (hit.snippet) card.append(el("div", { class: "mono snippet" }, hit.snippet));
  if (hit.context) {
    const first = Math.max(1, hit.start_line - WINDOW);
    card.append(codeView(hit.context, first, hit.start_line, hit.end_line));
  }
  const related = (hit.related || []).slice(0, 4).map(r =>
    el("a", { href: fileHref(r) }, (r.direction === "in" ? "← " : "→ ") + r.kind + " " +
      (r.symbol || r.path)));
  card.append(el("div", { class: "actions" },
    el("a", { href: fileHref(hit) }, "file & callers"),
    el("a", { href: impactHref(hit) }, "impact graph"), ...related));
  return card;
}

async function run() {
  const p = params();
  const q = (p.get("q") || "").trim();
  for (const name of ["q", "mode", ...FILTERS]) {
    const input = document.getElementById(name);
    if (input && p.get(name)) input.value = p.get(name);
  }
  if (!q) return;
  const body = { query: q, limit: 20, include_context: true, context_window: WINDOW, filters: {} };
  const mode = p.get("mode");
  if (mode) body.search_type = mode === "keyword" ? "fts" : mode;
  for (const f of FILTERS) if (p.get(f)) body.filters[f] = p.get(f);
  document.title = "indexd · " + q;
  const meta = document.getElementById("meta");
  meta.textContent = "searching…";
  try {
    const res = await api("/search", body);
    meta.textContent = `${res.total} results · ${res.mode} · ${res.took_ms} ms` +
      (res.stale ? " · index catching up (" + res.pending + " pending)" : "");
    const box = document.getElementById("results");
    box.replaceChildren(...res.results.map(renderHit));
    if (!res.results.length) box.append(el("p", { class: "meta" }, "No results."));
  } catch (err) {
    meta.textContent = "";
    failed(err);
  }
}

nav("search");
run();
