// The extension's client (out/client.js, vscode-jsonrpc bundled in) and view model
// (out/model.js) against the real daemon, with node's own test runner:
//
//   node --test test/client.test.js
//
// tests/editors/test_vscode_client.py starts the daemon on a repo it builds and runs
// this file with INDEXD_HOME (where the socket is), IX_TEST_REPO (the repo: pkg/retry.py
// defines compute_backoff at lines 4-6; app.py and tests/test_retry.py call it at line 5)
// and IX_TEST_OUT (a folder: what was seen goes to client.test.json, which pytest reads
// too). Without IX_TEST_REPO the daemon tests skip and say so.
"use strict";
const { test, after } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const os = require("node:os");
const client = require("../out/client.js");
const model = require("../out/model.js");

const REPO = process.env.IX_TEST_REPO;
const needsDaemon = REPO ? {} : { skip: "needs the daemon: run tests/editors/test_vscode_client.py" };
const seen = {};

after(() => {
  if (process.env.IX_TEST_OUT) {
    fs.writeFileSync(path.join(process.env.IX_TEST_OUT, "client.test.json"), JSON.stringify(seen));
  }
});

// Polls `probe` (async) until it returns something truthy; fails after `ms`.
async function waitFor(what, probe, ms = 60000) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = await probe();
    if (last) {
      return last;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what} (last: ${JSON.stringify(last)})`);
}

async function withClient(fn, options = {}) {
  const c = await client.IndexdClient.connect(options);
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

test("the socket path is the one the CLI computes", () => {
  // Cases and the answers of indexd.config.default_paths, from the pytest wrapper.
  const cases = JSON.parse(process.env.IX_TEST_SOCKETS || "[]");
  cases.push({ env: { INDEXD_HOME: "/x/./y//" }, cwd: "/w", expected: "/x/y/indexd.sock" },
             { env: {}, cwd: "/w", expected: `/tmp/indexd-${process.getuid()}/indexd.sock` });
  for (const c of cases) {
    assert.equal(client.socketPath(c.env, process.getuid(), c.cwd), c.expected, JSON.stringify(c));
  }
  seen.socket_cases = cases.length;
});

test("search finds the function at its line; the quick pick opens it there", needsDaemon, async () => {
  const answer = await withClient((c) => c.request("search",
    { query: "compute backoff", limit: 5, sync: true, timeout: 30 }, 40000));
  const first = answer.results[0];
  assert.deepEqual([first.path, first.symbol, first.kind, first.start_line],
                   ["pkg/retry.py", "compute_backoff", "function", 4]);
  const pick = model.searchPicks(answer.results)[0];
  assert.deepEqual(pick.place, { file: path.join(REPO, "pkg/retry.py"), line: 4 });
  assert.equal(pick.label, "compute_backoff");
  seen.search = { path: first.path, symbol: first.symbol, start_line: first.start_line, pick };
});

test("impact of the symbol at the cursor: importer and test, each with its evidence", needsDaemon, async () => {
  await withClient(async (c) => {
    const symbols = await c.request("symbols", { path: path.join(REPO, "pkg/retry.py") });
    const target = model.targetAt(symbols, 6).target;           // inside compute_backoff
    assert.equal(target, `${REPO}/pkg/retry.py::compute_backoff`);
    assert.equal(model.targetAt(symbols, 1).target, `${REPO}/pkg/retry.py`);  // no symbol: the file
    const answer = await c.request("impact", { target });
    const tree = model.impactTree(answer);
    const group = (name) => tree.find((g) => g.label === name);
    const main = group("Affected").children.find((n) => n.label === "app.py::main");
    const testFn = group("Tests").children.find((n) => n.label === "tests/test_retry.py::test_backoff");
    for (const node of [main, testFn]) {
      assert.ok(node, JSON.stringify(tree));
      assert.equal(node.place.line, 5);                        // the call's line
      const edge = node.children[0];
      assert.match(edge.label, /^calls .*::\w+ → .*retry\.py::compute_backoff$/);
      assert.equal(edge.description, "resolved:5");
      // the pair's evidence sentence: a test file "tests" what it calls (graph/describe.py)
      assert.match(edge.tooltip, node === main ? /calls compute_backoff/ : /tests compute_backoff/);
    }
    assert.deepEqual(main.children[0].place, { file: path.join(REPO, "app.py"), line: 5 });
    seen.impact = { target, groups: tree.map((g) => g.label), main, test: testFn };
  });
});

test("a status notification arrives after an edit, and the edit is searchable", needsDaemon, async () => {
  const notes = [];
  await withClient(async (c) => {
    const before = (await c.request("status", { sync: true, timeout: 30 }, 40000)).generation;
    await c.subscribe((st) => notes.push(st));
    fs.appendFileSync(path.join(REPO, "pkg/retry.py"), "\n\ndef jitter_delay(base):\n    return base / 2\n");
    const note = await waitFor("a notification after the edit",
      () => notes.find((st) => st.generation > before && st.pending === 0), 90000);
    assert.equal(note.state, "fresh");
    assert.equal(model.statusText(note).startsWith("indexd ✓ "), true);
    const hits = await c.request("search", { query: "jitter delay", limit: 3, sync: true, timeout: 30 }, 40000);
    assert.equal(hits.results[0].symbol, "jitter_delay");
    seen.subscribe = { before, after: note.generation, text: model.statusText(note),
                       notes: notes.length, top: hits.results[0].symbol };
  });
});

test("the status watcher shows the daemon's figures", needsDaemon, async () => {
  const views = [];
  const watcher = new client.StatusWatcher({ reconnectMs: 200 }, (v) => views.push(v));
  watcher.start();
  try {
    const view = await waitFor("figures", () => views.find((v) => v.status), 30000);
    assert.match(model.statusText(view.status, view.down), /^indexd (✓|⟳) /);
    seen.watcher = model.statusText(view.status);
  } finally {
    watcher.stop();
  }
});

test("a daemon that stops answering times out, and its late answer is not taken for the next", needsDaemon, async () => {
  await withClient(async (c) => {
    const { pid } = await c.request("initialize");
    process.kill(pid, "SIGSTOP");
    let err;
    try {
      err = await c.request("search", { query: "compute backoff" }, 500).then(() => null, (e) => e);
    } finally {
      process.kill(pid, "SIGCONT");
    }
    assert.ok(err instanceof client.RequestTimeout, String(err));
    assert.equal(err.message, "indexd did not answer search within 0.5 s");
    // Thawed, the daemon answers the abandoned search too; status gets its own answer.
    const st = await c.request("status", {}, 30000);
    assert.ok("realms" in st && !("results" in st), JSON.stringify(Object.keys(st)));
    seen.timeout = { message: err.message, after: st.state };
  });
});

test("no daemon: a clear error naming the socket", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ixv"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const missing = path.join(dir, "none.sock");
  const sockets = [missing];
  if (process.env.IX_TEST_STALE_SOCKET) {
    sockets.push(process.env.IX_TEST_STALE_SOCKET);   // a socket nothing listens on
  }
  seen.down = [];
  for (const socket of sockets) {
    const err = await client.IndexdClient.connect({ socket }).then(() => null, (e) => e);
    assert.ok(err instanceof client.DaemonNotRunning, String(err));
    assert.equal(err.message, `${client.NOT_RUNNING} (no daemon at ${socket})`);
    seen.down.push(err.message);
  }
  const views = [];
  const watcher = new client.StatusWatcher({ socket: missing, reconnectMs: 100 }, (v) => views.push(v));
  watcher.start();
  try {
    await waitFor("the watcher to say down", () => views.find((v) => v.down), 10000);
    assert.equal(model.statusText(views[0].status, views[0].down), "indexd ✗ down");
  } finally {
    watcher.stop();
  }
});
