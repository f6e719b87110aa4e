// The status watcher across a daemon restart, driven by
// tests/editors/test_vscode_client.py: IX_TEST_RECONNECT is a folder where this test
// leaves marks ("up": figures heard, "down": the loss seen) that pytest waits on
// before stopping, then starting again, the real daemon. Skipped without it.
"use strict";
const { test } = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const client = require("../out/client.js");
const model = require("../out/model.js");

const MARKS = process.env.IX_TEST_RECONNECT;

function changes(views) {
  return (what, pred, ms) => new Promise((resolve, reject) => {
    const started = views.length;
    // Both timers end either way: a live one would keep node running after the test.
    const poll = setInterval(() => {
      const found = views.slice(started).find(pred);
      if (found) {
        clearInterval(poll);
        clearTimeout(limit);
        resolve(found);
      }
    }, 20);
    const limit = setTimeout(() => {
      clearInterval(poll);
      reject(new Error(`timed out waiting for ${what}`));
    }, ms);
  });
}

test("the status watcher shows the daemon down, then follows it back", {
  skip: MARKS ? false : "needs a daemon that pytest restarts: run tests/editors/test_vscode_client.py",
  timeout: 240000,
}, async () => {
  const views = [];
  const watcher = new client.StatusWatcher({ reconnectMs: 200 }, (v) => views.push(v));
  const next = changes(views);
  const up = next("figures", (v) => v.status, 60000);
  watcher.start();
  try {
    await up;
    const down = next("down", (v) => v.down, 90000);
    fs.writeFileSync(path.join(MARKS, "up"), "");
    const lost = await down;
    assert.equal(model.statusText(lost.status, lost.down), "indexd ✗ down");
    const back = next("back", (v) => v.status, 120000);
    fs.writeFileSync(path.join(MARKS, "down"), lost.down);
    const again = await back;
    assert.match(model.statusText(again.status), /^indexd (✓|⟳) /);
    fs.writeFileSync(path.join(MARKS, "back"), model.statusText(again.status));
  } finally {
    watcher.stop();
  }
});
