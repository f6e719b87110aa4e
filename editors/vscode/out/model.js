// Built by `npm run build` (editors/vscode/build.js) from src/model.ts; do not edit.
"use strict";
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __hasOwnProp = Object.prototype.hasOwnProperty;
var __export = (target, all) => {
  for (var name in all)
    __defProp(target, name, { get: all[name], enumerable: true });
};
var __copyProps = (to, from, except, desc) => {
  if (from && typeof from === "object" || typeof from === "function") {
    for (let key of __getOwnPropNames(from))
      if (!__hasOwnProp.call(to, key) && key !== except)
        __defProp(to, key, { get: () => from[key], enumerable: !(desc = __getOwnPropDesc(from, key)) || desc.enumerable });
  }
  return to;
};
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);
var model_exports = {};
__export(model_exports, {
  fileOf: () => fileOf,
  impactTree: () => impactTree,
  innermost: () => innermost,
  labelOf: () => labelOf,
  searchPicks: () => searchPicks,
  statusText: () => statusText,
  targetAt: () => targetAt
});
module.exports = __toCommonJS(model_exports);
function firstLine(text) {
  return (text ?? "").split("\n", 1)[0];
}
function fileOf(item) {
  return `${item.repo}/${item.path}`;
}
function labelOf(item) {
  return item.symbol ? `${item.path}::${item.symbol}` : item.path;
}
function searchPicks(results) {
  return results.map((hit) => ({
    label: `${hit.symbol ?? hit.path}`,
    description: `${hit.kind}  ${hit.path}:${hit.start_line ?? 1}`,
    detail: firstLine(hit.summary || hit.snippet),
    place: { file: fileOf(hit), line: hit.start_line ?? 1 }
  }));
}
function edgePlace(item, edge) {
  const repoName = item.repo.split("/").pop() ?? "";
  const from = edge.from.split("::", 1)[0];
  if (!from.startsWith(repoName + "/")) {
    return void 0;
  }
  return { file: `${item.repo}/${from.slice(repoName.length + 1)}`, line: edge.line ?? 1 };
}
const GROUPS = [
  ["affected", "Affected"],
  ["tests", "Tests"],
  ["docs", "Docs"]
];
function evidenceNode(item, edge) {
  const line = edge.line ? `:${edge.line}` : "";
  return {
    label: `${edge.kind} ${edge.from} \u2192 ${edge.to}`,
    description: `${edge.how ?? ""}${line}`,
    tooltip: edge.describe ?? void 0,
    place: edgePlace(item, edge),
    children: []
  };
}
function itemNode(item) {
  const via = item.via ?? [];
  const how = via[0]?.how ?? item.how ?? "";
  return {
    label: labelOf(item),
    description: `d=${item.distance ?? 0} ${item.kind} (${how})`,
    tooltip: via[0]?.describe ?? void 0,
    // An item has no line of its own; its first edge starts in it (the import, call
    // or link), so opening the item goes there.
    place: { file: fileOf(item), line: via[0]?.line ?? 1 },
    children: via.map((edge) => evidenceNode(item, edge))
  };
}
function impactTree(answer) {
  const groups = [];
  for (const [key, title] of GROUPS) {
    const items = answer[key] ?? [];
    const total = answer[`${key}_total`] ?? items.length;
    if (items.length === 0) {
      continue;
    }
    groups.push({
      label: title,
      description: total > items.length ? `${items.length} of ${total}` : `${items.length}`,
      children: items.map(itemNode)
    });
  }
  if (answer.complete === false) {
    groups.push({ label: "Incomplete", description: answer.incomplete_reason ?? "", children: [] });
  }
  return groups;
}
function innermost(entries, line) {
  let best;
  for (const e of entries) {
    if (!e.symbol || e.start_line > line || line > e.end_line) {
      continue;
    }
    const span = e.end_line - e.start_line;
    const bestSpan = best ? best.end_line - best.start_line : Infinity;
    if (span < bestSpan || span === bestSpan && best && e.start_line > best.start_line) {
      best = e;
    }
  }
  return best;
}
function targetAt(symbols, line) {
  const file = fileOf(symbols);
  const entry = innermost(symbols.results ?? [], line);
  return entry?.symbol ? { target: `${file}::${entry.symbol}`, symbol: entry.symbol } : { target: file };
}
function statusText(status, down) {
  if (down !== void 0) {
    return "indexd \u2717 down";
  }
  if (!status) {
    return "indexd \u2026";
  }
  const pending = Number(status.pending ?? 0);
  const lag = Number(status.index_lag_s ?? 0);
  if (status.state === "error") {
    return `indexd ! ${String(status.error ?? "error")}`;
  }
  if (status.state === "paused") {
    return `indexd \u23F8 ${pending} pending`;
  }
  if (pending > 0) {
    return `indexd \u27F3 ${pending} pending ${lag.toFixed(1)}s`;
  }
  return `indexd \u2713 ${lag.toFixed(1)}s`;
}
// Annotate the CommonJS export names for ESM import in node:
0 && (module.exports = {
  fileOf,
  impactTree,
  innermost,
  labelOf,
  searchPicks,
  statusText,
  targetAt
});
