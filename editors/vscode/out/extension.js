// Built by `npm run build` (editors/vscode/build.js) from src/extension.ts; do not edit.
"use strict";
var __create = Object.create;
var __defProp = Object.defineProperty;
var __getOwnPropDesc = Object.getOwnPropertyDescriptor;
var __getOwnPropNames = Object.getOwnPropertyNames;
var __getProtoOf = Object.getPrototypeOf;
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
var __toESM = (mod, isNodeMode, target) => (target = mod != null ? __create(__getProtoOf(mod)) : {}, __copyProps(
  // If the importer is in node compatibility mode or this is not an ESM
  // file that has been converted to a CommonJS file using a Babel-
  // compatible transform (i.e. "__esModule" has not been set), then set
  // "default" to the CommonJS "module.exports" for node compatibility.
  isNodeMode || !mod || !mod.__esModule ? __defProp(target, "default", { value: mod, enumerable: true }) : target,
  mod
));
var __toCommonJS = (mod) => __copyProps(__defProp({}, "__esModule", { value: true }), mod);
var extension_exports = {};
__export(extension_exports, {
  activate: () => activate,
  deactivate: () => deactivate
});
module.exports = __toCommonJS(extension_exports);
var fs = __toESM(require("fs"));
var vscode = __toESM(require("vscode"));
var import_client = require("./client");
var import_model = require("./model");
function settings() {
  const c = vscode.workspace.getConfiguration("indexd");
  return {
    socket: c.get("socket") || void 0,
    timeoutMs: c.get("timeoutMs", 1e4),
    limit: c.get("limit", 20),
    realm: c.get("realm") || void 0,
    reconnectMs: c.get("reconnectMs", 2e3)
  };
}
class Connection {
  client;
  async request(method, params = {}) {
    const s = settings();
    if (!this.client) {
      const opening = import_client.IndexdClient.connect({ socket: s.socket, timeoutMs: s.timeoutMs });
      this.client = opening;
      opening.then(
        (c) => c.onClose(() => {
          if (this.client === opening) {
            this.client = void 0;
          }
        }),
        () => {
          if (this.client === opening) {
            this.client = void 0;
          }
        }
      );
    }
    return (await this.client).request(method, params);
  }
  reset() {
    const old = this.client;
    this.client = void 0;
    old?.then((c) => c.close(), () => void 0);
  }
}
async function open(place) {
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(place.file));
  const pos = new vscode.Position(Math.max(place.line - 1, 0), 0);
  await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos) });
}
function showError(err) {
  void vscode.window.showErrorMessage(err instanceof Error ? err.message : String(err));
}
function searchCommand(conn) {
  return () => {
    const pick = vscode.window.createQuickPick();
    pick.placeholder = "indexd: search the index";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    let asked = 0;
    let timer;
    const run = async (query) => {
      const mine = ++asked;
      if (!query.trim()) {
        pick.items = [];
        return;
      }
      pick.busy = true;
      try {
        const s = settings();
        const answer = await conn.request(
          "search",
          { query, limit: s.limit, realm: s.realm }
        );
        if (mine === asked) {
          pick.items = (0, import_model.searchPicks)(answer.results);
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
    pick.onDidHide(() => {
      clearTimeout(timer);
      pick.dispose();
    });
    const editor = vscode.window.activeTextEditor;
    const word = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
    pick.value = word.split("\n", 1)[0];
    pick.show();
    if (pick.value) {
      void run(pick.value);
    }
  };
}
class ImpactTree {
  roots = [];
  changed = new vscode.EventEmitter();
  onDidChangeTreeData = this.changed.event;
  title = "";
  show(answer) {
    this.roots = (0, import_model.impactTree)(answer);
    if (this.roots.length === 0) {
      this.roots = [{ label: `Nothing depends on ${answer.target}`, children: [] }];
    }
    this.title = answer.target;
    this.changed.fire();
  }
  getChildren(node) {
    return node ? node.children : this.roots;
  }
  getTreeItem(node) {
    const collapsed = node.children.length === 0 ? vscode.TreeItemCollapsibleState.None : this.roots.includes(node) ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
    const item = new vscode.TreeItem(node.label, collapsed);
    item.description = node.description;
    item.tooltip = node.tooltip;
    if (node.place) {
      item.command = { command: "indexd.open", title: "Open", arguments: [node.place] };
    }
    return item;
  }
}
async function cursorTarget(conn) {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file") {
    throw new Error("indexd: Show impact needs a file open in the editor (or a target)");
  }
  const file = await fs.promises.realpath(editor.document.uri.fsPath).catch(() => editor.document.uri.fsPath);
  const symbols = await conn.request("symbols", { path: file });
  return (0, import_model.targetAt)(symbols, editor.selection.active.line + 1).target;
}
function impactCommand(conn, tree, view) {
  return async (target) => {
    try {
      const t = typeof target === "string" && target.trim() ? target.trim() : await cursorTarget(conn);
      tree.show(await conn.request("impact", { target: t }));
      view.description = tree.title;
      await vscode.commands.executeCommand("indexd.impact.focus");
    } catch (err) {
      showError(err);
    }
  };
}
function statusCommand(conn) {
  return async () => {
    try {
      const st = await conn.request("status");
      void vscode.window.showInformationMessage(
        `${(0, import_model.statusText)(st)} \u2014 state ${String(st.state)}, pending ${String(st.pending)}`
      );
    } catch (err) {
      showError(err);
    }
  };
}
function statusBar(context) {
  const item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 0);
  item.command = "indexd.status";
  item.show();
  let watcher;
  const restart = () => {
    watcher?.stop();
    const s = settings();
    item.text = (0, import_model.statusText)(void 0);
    watcher = new import_client.StatusWatcher(
      { socket: s.socket, timeoutMs: s.timeoutMs, reconnectMs: s.reconnectMs },
      (view) => {
        item.text = (0, import_model.statusText)(view.status, view.down);
        item.tooltip = view.down ?? "indexd: index freshness (click for status)";
      }
    );
    watcher.start();
  };
  restart();
  context.subscriptions.push(item, { dispose: () => watcher?.stop() });
  return { restart };
}
function activate(context) {
  const conn = new Connection();
  const tree = new ImpactTree();
  const view = vscode.window.createTreeView("indexd.impact", { treeDataProvider: tree });
  const bar = statusBar(context);
  context.subscriptions.push(
    view,
    vscode.commands.registerCommand("indexd.search", searchCommand(conn)),
    vscode.commands.registerCommand("indexd.showImpact", impactCommand(conn, tree, view)),
    vscode.commands.registerCommand("indexd.status", statusCommand(conn)),
    vscode.commands.registerCommand("indexd.open", (place) => open(place).catch(showError)),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("indexd")) {
        conn.reset();
        bar.restart();
      }
    }),
    { dispose: () => conn.reset() }
  );
}
function deactivate() {
}
// Annotate the CommonJS export names for ESM import in node:
0 && (module.exports = {
  activate,
  deactivate
});
