/**
 * indexd for VS Code: the editor's side. Talking to the daemon is client.ts, what is
 * shown is made in model.ts; this file only wires them to VS Code's API:
 *
 *   indexd.search      a quick pick searching as you type; Enter opens the file at the line
 *   indexd.showImpact  impact of the symbol under the cursor (or a target given as the
 *                      argument) into the "indexd impact" tree: affected / tests / docs,
 *                      each item's evidence chain under it
 *   indexd.status      the daemon's figures, as a message
 *   status bar         "indexd ✓ 0.2s", fed by `subscribe` (client.StatusWatcher)
 *
 * Every failure is an error message (the daemon being down is an ordinary state).
 */
import * as fs from "fs";
import * as vscode from "vscode";
import { IndexdClient, StatusWatcher } from "./client";
import { Hit, ImpactAnswer, impactTree, Place, searchPicks, statusText, targetAt,
         TreeNode } from "./model";

interface Settings {
  socket?: string;
  timeoutMs: number;
  limit: number;
  realm?: string;
  reconnectMs: number;
}

function settings(): Settings {
  const c = vscode.workspace.getConfiguration("indexd");
  return {
    socket: c.get<string>("socket") || undefined,
    timeoutMs: c.get<number>("timeoutMs", 10000),
    limit: c.get<number>("limit", 20),
    realm: c.get<string>("realm") || undefined,
    reconnectMs: c.get<number>("reconnectMs", 2000),
  };
}

/** The request connection: opened on first use, opened again after it was lost. */
class Connection {
  private client: Promise<IndexdClient> | undefined;

  async request<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const s = settings();
    if (!this.client) {
      const opening = IndexdClient.connect({ socket: s.socket, timeoutMs: s.timeoutMs });
      this.client = opening;
      opening.then((c) => c.onClose(() => { if (this.client === opening) { this.client = undefined; } }),
                   () => { if (this.client === opening) { this.client = undefined; } });
    }
    return (await this.client).request<T>(method, params);
  }

  reset(): void {
    const old = this.client;
    this.client = undefined;
    old?.then((c) => c.close(), () => undefined);
  }
}

async function open(place: Place): Promise<void> {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(place.file));
  const pos = new vscode.Position(Math.max(place.line - 1, 0), 0);
  await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos) });
}

function showError(err: unknown): void {
  void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
}

type PickItem = vscode.QuickPickItem & { place: Place };

function searchCommand(conn: Connection): () => void {
  return () => {
    const pick = vscode.window.createQuickPick<PickItem>();
    pick.placeholder = "indexd: search the index";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    let asked = 0;
    let timer: NodeJS.Timeout | undefined;
    const run = async (query: string) => {
      const mine = ++asked;       // only the newest query's answer is shown
      if (!query.trim()) {
        pick.items = [];
        return;
      }
      pick.busy = true;
      try {
        const s = settings();
        const answer = await conn.request<{ results: Hit[] }>(
          "search", { query, limit: s.limit, realm: s.realm });
        if (mine === asked) {
          pick.items = searchPicks(answer.results);
        }
      } catch (err) {
        if (mine === asked) {
          pick.hide();
          showError(err);
        }
      } finally {
        if (mine === asked) {
          pick.busy = false;
        }
      }
    };
    pick.onDidChangeValue((value) => {
      clearTimeout(timer);
      timer = setTimeout(() => void run(value), 150);
    });
    pick.onDidAccept(() => {
      const chosen = pick.selectedItems[0];
      pick.hide();
      if (chosen) {
        open(chosen.place).catch(showError);
      }
    });
    pick.onDidHide(() => { clearTimeout(timer); pick.dispose(); });
    const editor = vscode.window.activeTextEditor;
    const word = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
    pick.value = word.split("\n", 1)[0];
    pick.show();
    if (pick.value) {
      void run(pick.value);
    }
  };
}

class ImpactTree implements vscode.TreeDataProvider<TreeNode> {
  private roots: TreeNode[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  title = "";

  show(answer: ImpactAnswer): void {
    this.roots = impactTree(answer);
    if (this.roots.length === 0) {
      this.roots = [{ label: `Nothing depends on ${answer.target}`, children: [] }];
    }
    this.title = answer.target;
    this.changed.fire();
  }

  getChildren(node?: TreeNode): TreeNode[] {
    return node ? node.children : this.roots;
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const collapsed = node.children.length === 0 ? vscode.TreeItemCollapsibleState.None
      : this.roots.includes(node) ? vscode.TreeItemCollapsibleState.Expanded
        : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(node.label, collapsed);
    item.description = node.description;
    item.tooltip = node.tooltip;
    if (node.place) {
      item.command = { command: "indexd.open", title: "Open", arguments: [node.place] };
    }
    return item;
  }
}

// The daemon knows files by their real path (a link into a repo is the repo's file).
async function cursorTarget(conn: Connection): Promise<string> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file") {
    throw new Error("indexd: Show impact needs a file open in the editor (or a target)");
  }
  const file = await fs.promises.realpath(editor.document.uri.fsPath).catch(() => editor.document.uri.fsPath);
  const symbols = await conn.request<{ repo: string; path: string; results: [] }>("symbols", { path: file });
  return targetAt(symbols, editor.selection.active.line + 1).target;
}

function impactCommand(conn: Connection, tree: ImpactTree, view: vscode.TreeView<TreeNode>) {
  return async (target?: string) => {
    try {
      const t = typeof target === "string" && target.trim() ? target.trim() : await cursorTarget(conn);
      tree.show(await conn.request<ImpactAnswer>("impact", { target: t }));
      view.description = tree.title;
      await vscode.commands.executeCommand("indexd.impact.focus");
    } catch (err) {
      showError(err);
    }
  };
}

function statusCommand(conn: Connection) {
  return async () => {
    try {
      const st = await conn.request<Record<string, unknown>>("status");
      void vscode.window.showInformationMessage(
        `${statusText(st)} — state ${String(st.state)}, pending ${String(st.pending)}`);
    } catch (err) {
      showError(err);
    }
  };
}

/** The status bar item and its feed; `restart()` after the settings changed. */
function statusBar(context: vscode.ExtensionContext): { restart: () => void } {
  const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  item.command = "indexd.status";
  item.show();
  let watcher: StatusWatcher | undefined;
  const restart = () => {
    watcher?.stop();
    const s = settings();
    item.text = statusText(undefined);
    watcher = new StatusWatcher({ socket: s.socket, timeoutMs: s.timeoutMs, reconnectMs: s.reconnectMs },
      (view) => {
        item.text = statusText(view.status, view.down);
        item.tooltip = view.down ?? "indexd: index freshness (click for status)";
      });
    watcher.start();
  };
  restart();
  context.subscriptions.push(item, { dispose: () => watcher?.stop() });
  return { restart };
}

export function activate(context: vscode.ExtensionContext): void {
  const conn = new Connection();
  const tree = new ImpactTree();
  const view = vscode.window.createTreeView("indexd.impact", { treeDataProvider: tree });
  const bar = statusBar(context);
  context.subscriptions.push(
    view,
    vscode.commands.registerCommand("indexd.search", searchCommand(conn)),
    vscode.commands.registerCommand("indexd.showImpact", impactCommand(conn, tree, view)),
    vscode.commands.registerCommand("indexd.status", statusCommand(conn)),
    vscode.commands.registerCommand("indexd.open", (place: Place) => open(place).catch(showError)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("indexd")) {      // the socket may have changed
        conn.reset();
        bar.restart();
      }
    }),
    { dispose: () => conn.reset() },
  );
}

export function deactivate(): void {}
