/**
 * What the extension shows, made from the daemon's answers: pure functions with no
 * I/O and no import of 'vscode' (node tests them against real answers), so
 * extension.ts only hands their output to the editor.
 */

export interface Hit {
  repo: string;
  path: string;
  symbol?: string | null;
  kind: string;
  start_line?: number | null;
  end_line?: number | null;
  snippet?: string | null;
  summary?: string | null;
}

export interface Edge {
  kind: string;
  from: string;
  to: string;
  line?: number | null;
  how?: string | null;
  describe?: string | null;
}

export interface ImpactItem {
  repo: string;
  path: string;
  symbol?: string | null;
  kind: string;
  distance?: number;
  confidence?: number;
  how?: string | null;
  via?: Edge[];
}

/** A place to open: an absolute file and a 1-based line. */
export interface Place {
  file: string;
  line: number;
}

export interface SearchPick {
  label: string;
  description: string;
  detail: string;
  place: Place;
}

function firstLine(text: string | null | undefined): string {
  return (text ?? "").split("\n", 1)[0];
}

export function fileOf(item: { repo: string; path: string }): string {
  return `${item.repo}/${item.path}`;
}

export function labelOf(item: { path: string; symbol?: string | null }): string {
  return item.symbol ? `${item.path}::${item.symbol}` : item.path;
}

/** A search answer's results as quick-pick items, each opening its file at its first line. */
export function searchPicks(results: Hit[]): SearchPick[] {
  return results.map((hit) => ({
    label: `${hit.symbol ?? hit.path}`,
    description: `${hit.kind}  ${hit.path}:${hit.start_line ?? 1}`,
    detail: firstLine(hit.summary || hit.snippet),
    place: { file: fileOf(hit), line: hit.start_line ?? 1 },
  }));
}

// An edge's `from` is "REPO_NAME/path::Symbol"; in the item's own repo (the usual
// case) that is a file we can open at the edge's line.
function edgePlace(item: ImpactItem, edge: Edge): Place | undefined {
  const repoName = item.repo.split("/").pop() ?? "";
  const from = edge.from.split("::", 1)[0];
  if (!from.startsWith(repoName + "/")) {
    return undefined;
  }
  return { file: `${item.repo}/${from.slice(repoName.length + 1)}`, line: edge.line ?? 1 };
}

export interface TreeNode {
  label: string;
  description?: string;
  tooltip?: string;
  place?: Place;
  children: TreeNode[];
}

const GROUPS: Array<[keyof ImpactAnswer, string]> = [
  ["affected", "Affected"], ["tests", "Tests"], ["docs", "Docs"],
];

export interface ImpactAnswer {
  target: string;
  affected?: ImpactItem[];
  tests?: ImpactItem[];
  docs?: ImpactItem[];
  complete?: boolean;
  incomplete_reason?: string | null;
  [more: string]: unknown;
}

function evidenceNode(item: ImpactItem, edge: Edge): TreeNode {
  const line = edge.line ? `:${edge.line}` : "";
  return {
    label: `${edge.kind} ${edge.from} → ${edge.to}`,
    description: `${edge.how ?? ""}${line}`,
    tooltip: edge.describe ?? undefined,
    place: edgePlace(item, edge),
    children: [],
  };
}

function itemNode(item: ImpactItem): TreeNode {
  const via = item.via ?? [];
  const how = via[0]?.how ?? item.how ?? "";
  return {
    label: labelOf(item),
    description: `d=${item.distance ?? 0} ${item.kind} (${how})`,
    tooltip: via[0]?.describe ?? undefined,
    // An item has no line of its own; its first edge starts in it (the import, call
    // or link), so opening the item goes there.
    place: { file: fileOf(item), line: via[0]?.line ?? 1 },
    children: via.map((edge) => evidenceNode(item, edge)),
  };
}

/**
 * The impact answer as a tree: Affected / Tests / Docs, each item under its group
 * and each edge of its evidence chain under the item. Empty groups are left out.
 */
export function impactTree(answer: ImpactAnswer): TreeNode[] {
  const groups: TreeNode[] = [];
  for (const [key, title] of GROUPS) {
    const items = (answer[key] as ImpactItem[] | undefined) ?? [];
    const total = (answer[`${key}_total`] as number | undefined) ?? items.length;
    if (items.length === 0) {
      continue;
    }
    groups.push({
      label: title,
      description: total > items.length ? `${items.length} of ${total}` : `${items.length}`,
      children: items.map(itemNode),
    });
  }
  if (answer.complete === false) {
    groups.push({ label: "Incomplete", description: answer.incomplete_reason ?? "", children: [] });
  }
  return groups;
}

export interface OutlineEntry {
  symbol?: string | null;
  start_line: number;
  end_line: number;
}

/** The innermost symbol whose lines hold `line` (a method inside its class). */
export function innermost(entries: OutlineEntry[], line: number): OutlineEntry | undefined {
  let best: OutlineEntry | undefined;
  for (const e of entries) {
    if (!e.symbol || e.start_line > line || line > e.end_line) {
      continue;
    }
    const span = e.end_line - e.start_line;
    const bestSpan = best ? best.end_line - best.start_line : Infinity;
    if (span < bestSpan || (span === bestSpan && best && e.start_line > best.start_line)) {
      best = e;
    }
  }
  return best;
}

/**
 * The target impact and refs take for a line of a file, from the daemon's `symbols`
 * answer for it: "/repo/path.py::Qualified.name" for the innermost symbol around the
 * line, else the file itself.
 */
export function targetAt(symbols: { repo: string; path: string; results?: OutlineEntry[] },
                         line: number): { target: string; symbol?: string } {
  const file = fileOf(symbols);
  const entry = innermost(symbols.results ?? [], line);
  return entry?.symbol ? { target: `${file}::${entry.symbol}`, symbol: entry.symbol }
    : { target: file };
}

/**
 * The status bar's words: those of `indexctl status --oneline` and the Neovim
 * statusline (indexd ✓ 0.2s, indexd ⟳ 3 pending 1.2s, indexd ⏸ 3 pending, ...).
 */
export function statusText(status: Record<string, unknown> | undefined, down?: string): string {
  if (down !== undefined) {
    return "indexd ✗ down";
  }
  if (!status) {
    return "indexd …";
  }
  const pending = Number(status.pending ?? 0);
  const lag = Number(status.index_lag_s ?? 0);
  if (status.state === "error") {
    return `indexd ! ${String(status.error ?? "error")}`;
  }
  if (status.state === "paused") {
    return `indexd ⏸ ${pending} pending`;
  }
  if (pending > 0) {
    return `indexd ⟳ ${pending} pending ${lag.toFixed(1)}s`;
  }
  return `indexd ✓ ${lag.toFixed(1)}s`;
}
