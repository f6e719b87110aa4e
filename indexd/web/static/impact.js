// Impact view: the answer of `impact` drawn as a graph (cytoscape.js, vendored).
// Nodes are the symbols and files on every evidence chain; edges are the chain's
// edges (kind and how), pointing from the dependent to what it depends on.
"use strict";

const GROUP_OF = { affected: "code", tests: "test", docs: "doc" };

function label(id) {
  const [file, sym] = id.split("::");
  const base = file.split("/").pop();
  return sym ? base + "::" + sym : base;
}

function graphOf(res) {
  const nodes = new Map(), edges = new Map();
  const node = (id, group, distance) => {
    const old = nodes.get(id);
    if (!old || old.group === "via") nodes.set(id, { id, label: label(id), group, distance });
  };
  for (const [list, group] of Object.entries(GROUP_OF)) {
    for (const item of res[list] || []) {
      const via = item.via || [];
      if (!via.length) continue;
      via.forEach(e => {
        node(e.from, "via", 0);
        node(e.to, "via", 0);
        const id = e.from + "|" + e.kind + "|" + e.to;
        edges.set(id, { id, source: e.from, target: e.to, label: e.kind, how: e.how });
      });
      node(via[0].from, group, item.distance);
      const root = via[via.length - 1].to;
      nodes.set(root, { id: root, label: label(root), group: "target", distance: 0 });
    }
  }
  return [...[...nodes.values()].map(data => ({ data, classes: data.group })),
          ...[...edges.values()].map(data => ({ data }))];
}

const STYLE = [
  { selector: "node", style: { label: "data(label)", "font-size": 10, "text-valign": "bottom",
    "text-margin-y": 4, width: 18, height: 18, "background-color": "#2457c5", color: "#1d2330" } },
  { selector: "node.target", style: { "background-color": "#c53030", width: 26, height: 26 } },
  { selector: "node.test", style: { "background-color": "#1f8a4c" } },
  { selector: "node.doc", style: { "background-color": "#b7791f" } },
  { selector: "node.via", style: { "background-color": "#9aa3b2" } },
  { selector: "edge", style: { width: 1.5, "line-color": "#b8c0cc", "target-arrow-color": "#b8c0cc",
    "target-arrow-shape": "triangle", "curve-style": "bezier", label: "data(label)",
    "font-size": 7, color: "#5b6475", "text-rotation": "autorotate",
    "text-background-color": "#fff", "text-background-opacity": 0.8 } },
];

function draw(elements) {
  const cy = cytoscape({ container: document.getElementById("graph"), elements, style: STYLE,
    layout: { name: "concentric", concentric: n => 10 - (n.data("distance") || 0),
              levelWidth: () => 1, minNodeSpacing: 40, animate: false },
    minZoom: 0.2, maxZoom: 1.5 });
  cy.on("tap", "node", evt => {
    const [file, sym] = evt.target.id().split("::");
    const item = itemOf.get(evt.target.id());
    if (item) window.location.href = fileHref(item);
    else if (file) document.getElementById("meta").textContent = file + (sym ? "::" + sym : "");
  });
  window.indexdGraph = cy;     // for the browser tests and the console
  return cy;
}

const itemOf = new Map();

function listRows(res) {
  const head = el("tr", {}, el("th", {}, "what"), el("th", {}, "kind"), el("th", {}, "distance"),
    el("th", {}, "score"), el("th", {}, "evidence"));
  const rows = [];
  for (const [list, group] of Object.entries(GROUP_OF)) {
    for (const item of res[list] || []) {
      if (item.via && item.via.length) itemOf.set(item.via[0].from, item);
      const chain = (item.via || []).map(e => `${e.kind} ${e.how} (line ${e.line})`).join(" → ");
      // the nearest hop in words (descriptions.py), then the chain it stands for
      const said = (item.via || []).find(e => e.describe);
      const evidence = said ? `${said.describe} (${chain})` : chain;
      rows.push(el("tr", {}, el("td", { class: "mono" },
        el("a", { href: fileHref(item) }, item.symbol ? place(item) + " " + item.symbol : place(item))),
        el("td", {}, group), el("td", {}, String(item.distance)),
        el("td", {}, item.score.toFixed(2)), el("td", { class: "meta" }, evidence)));
    }
  }
  return [head, ...rows];
}

async function load() {
  const p = params();
  const target = p.get("target");
  if (p.get("depth")) document.getElementById("depth").value = p.get("depth");
  if (!target) return;
  document.getElementById("target").value = target;
  document.title = "indexd · impact of " + label(target);
  const body = { target, limit: 100 };
  if (p.get("depth")) body.depth = parseInt(p.get("depth"), 10);
  try {
    const res = await api("/impact", body);
    const counts = ["affected", "tests", "docs"].map(k => `${res[k + "_total"] || 0} ${k}`);
    document.getElementById("meta").textContent = counts.join(" · ") +
      (res.complete ? "" : " · incomplete: " + (res.incomplete_reason || "index catching up"));
    document.getElementById("list").replaceChildren(...listRows(res));
    const elements = graphOf(res);
    if (!elements.length) elements.push({ data: { id: target, label: label(target),
                                                  group: "target", distance: 0 }, classes: "target" });
    draw(elements);
  } catch (err) {
    failed(err);
  }
}

nav("impact");
load();
