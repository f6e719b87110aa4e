// Status page, live: server-sent events from /api/v1/events (the daemon's status
// notifications). Each event updates the figures at once and asks for the full
// status and the skipped files again, one request at a time; nothing polls.
"use strict";

const live = { events: 0, brief: {}, status: null, skipped: null, busy: false, again: false };

function fmtLag(s) { return s === null || s === undefined ? "–" : s.toFixed(1) + " s"; }

function fmtTime(t) { return t ? new Date(t * 1000).toLocaleTimeString() : "–"; }

function stat(key, value, cls) {
  return el("div", { class: "stat", "data-stat": key },
    el("div", { class: "v " + (cls || "") }, String(value)), el("div", { class: "k" }, key));
}

function totals(status) {
  let files = 0, skipped = 0;
  for (const realm of (status && status.realms) || []) {
    for (const repo of realm.repos) {
      files += repo.files || 0;
      skipped += Object.values(repo.skipped || {}).reduce((a, b) => a + b, 0);
    }
  }
  return { files, skipped };
}

function renderStats() {
  const b = { ...(live.status || {}), ...live.brief };
  const queues = (live.status && live.status.queues) || {};
  const t = totals(live.status);
  document.getElementById("stats").replaceChildren(
    stat("state", b.state || "?", "state-" + (b.state || "")),
    stat("index lag", fmtLag(b.index_lag_s)),
    stat("parse queue", b.pending ?? queues.parse ?? 0),
    stat("embed queue", queues.embed ?? 0),
    stat("files indexed", t.files),
    stat("skipped", t.skipped),
    stat("generation", b.generation ?? "–"),
    stat("live events", live.events));
  const batch = b.last_batch;
  document.getElementById("batch").textContent = batch && typeof batch === "object"
    ? `${batch.files ?? 0} files · ${batch.parsed ?? 0} parsed · ${batch.deleted ?? 0} deleted · ` +
      `${batch.failed ?? 0} failed · ${batch.seconds ?? "?"} s` : "none yet";
}

function renderRepos() {
  const head = el("tr", {}, ...["realm", "repo", "files", "entries", "pending", "watcher",
    "skipped", "last indexed"].map(h => el("th", {}, h)));
  const rows = [];
  for (const realm of (live.status && live.status.realms) || []) {
    for (const r of realm.repos) {
      const skipped = Object.entries(r.skipped || {}).map(([k, v]) => `${k}: ${v}`).join(", ");
      rows.push(el("tr", { "data-repo": r.repo }, el("td", {}, realm.name),
        el("td", { class: "mono" }, r.repo), el("td", { class: "files" }, String(r.files)),
        el("td", {}, String(r.entries)), el("td", {}, String(r.pending)),
        el("td", {}, r.watcher), el("td", {}, skipped || "–"), el("td", {}, fmtTime(r.last_indexed))));
    }
  }
  document.getElementById("repos").replaceChildren(head, ...rows);
}

function renderSkipped() {
  const head = el("tr", {}, el("th", {}, "file"), el("th", {}, "reason"));
  const rows = [];
  for (const realm of (live.skipped && live.skipped.realms) || []) {
    for (const repo of realm.repos) {
      for (const f of repo.files || []) {
        rows.push(el("tr", {}, el("td", { class: "mono" }, f.path), el("td", {}, f.reason || "")));
      }
    }
  }
  if (!rows.length) rows.push(el("tr", {}, el("td", { class: "meta" }, "none")));
  document.getElementById("skipped").replaceChildren(head, ...rows);
}

async function refresh() {
  if (live.busy) { live.again = true; return; }
  live.busy = true;
  try {
    do {
      live.again = false;
      const [status, skipped] = await Promise.all([api("/status"), api("/rpc/skipped", { limit: 200 })]);
      live.status = status;
      live.skipped = skipped;
      live.brief = {};
      renderStats(); renderRepos(); renderSkipped();
    } while (live.again);
  } catch (err) {
    failed(err);
  } finally {
    live.busy = false;
  }
}

function connect() {
  const source = new EventSource(API + "/events");
  const dot = document.getElementById("live");
  source.addEventListener("open", () => { dot.textContent = "● live"; });
  source.addEventListener("error", () => {
    dot.textContent = "○ reconnecting";
    // EventSource retries a dropped line on its own, but gives up on an answer
    // that is not a stream (a 401 once signed out): fetch says which it was.
    if (source.readyState === EventSource.CLOSED) { dot.textContent = "○ offline"; refresh(); }
  });
  source.addEventListener("status", evt => {
    live.events += 1;
    const data = JSON.parse(evt.data);
    if (data.realms) { live.status = data; live.brief = {}; } else live.brief = data;
    renderStats();
    refresh();
  });
}

nav("status");
connect();
