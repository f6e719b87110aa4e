// Shared by every page: the REST calls, DOM building and the code view.
// Data from the index is only ever placed with textContent (never innerHTML):
// a file that contains markup shows as text, and the CSP allows no inline script.
"use strict";

const API = "/api/v1";

class SignedOut extends Error {}

async function api(route, body) {
  const init = { method: body === undefined ? "GET" : "POST", credentials: "same-origin",
                 headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(API + route, init);
  if (resp.status === 401) {
    showBanner("Not signed in (or the daemon restarted).", "Run indexctl ui for a new sign-in link.");
    throw new SignedOut("401");
  }
  const data = await resp.json();
  if (!resp.ok) {
    const err = (data && data.error) || {};
    throw new Error(err.message || ("HTTP " + resp.status));
  }
  return data;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function showBanner(text, hint) {
  const b = document.getElementById("banner");
  if (!b) return;
  b.replaceChildren(text + " ", hint ? el("code", { text: hint }) : "");
  b.classList.remove("hidden");
}

function failed(err) {
  if (!(err instanceof SignedOut)) showBanner(String(err.message || err));
}

function nav(here) {
  const links = [["search", "/ui/", "Search"], ["status", "/ui/status", "Status"]];
  const bar = el("header", { class: "nav" }, el("a", { class: "brand", href: "/ui/" }, "indexd"),
    ...links.map(([key, href, label]) => el("a", { href, class: key === here ? "here" : null }, label)),
    el("span", { class: "live", id: "live" }));
  document.body.prepend(bar);
}

function params() { return new URLSearchParams(window.location.search); }

// repo + path (+ ::symbol): the target string impact/refs/symbols accept.
function targetOf(item) {
  const file = item.repo ? item.repo.replace(/\/$/, "") + "/" + item.path : item.path;
  return item.symbol ? file + "::" + item.symbol : file;
}

function fileHref(item) {
  const q = new URLSearchParams({ repo: item.repo || "", path: item.path });
  if (item.symbol) q.set("symbol", item.symbol);
  return "/ui/file?" + q.toString();
}

function impactHref(item) {
  return "/ui/impact?" + new URLSearchParams({ target: targetOf(item) }).toString();
}

function place(item) {
  const line = item.start_line ? ":" + item.start_line : (item.line ? ":" + item.line : "");
  return item.path + line;
}

// Lines of text starting at line `first`, the lines hiFrom..hiTo highlighted.
function codeView(text, first, hiFrom, hiTo) {
  const pre = el("pre", { class: "code" });
  text.split("\n").forEach((line, i) => {
    const no = first + i;
    const hl = no >= hiFrom && no <= hiTo;
    pre.append(el("span", { class: hl ? "ln hl" : "ln", "data-line": no },
      el("span", { class: "no" }, String(no)), line));
  });
  return pre;
}
