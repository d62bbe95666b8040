// The session list: every stored session, newest first (the order of `session/list`,
// whose pages it follows to the end), the search box filtering it, the New session dialog
// (working directory, title, model; an empty field is the daemon's default), and which
// sessions have a turn running (the pulsing dot; the chat view's Stop button asks here
// too).
//
// State: the sessions as last listed; the running set and the sessions whose running turn
// this page saw live (a list read while such a turn runs may not know of it yet, so it
// does not end it: its `turn_complete` does); the session the chat view shows, and whether
// it is still replaying its history (replayed events are history, not a turn starting).
// Announces "running" when a session's turn starts or ends, and "listed" after each read.

import { rpc } from "./connection.js";
import { $, ago, dialog, el, showError } from "./dom.js";
import { emit, on } from "./store.js";

let sessions = [];
let listedOnce = false;
const running = new Set();
const live = new Set();
let openId = null;
let replaying = null;

export const titleOf = (s) => s.title || "Untitled session";

/** The listed entry of session `id`, if the last list had it. */
export const entry = (id) => sessions.find((s) => s.sessionId === id);

export const isRunning = (id) => running.has(id);

// Running sessions whose turn waits for an approval: from the list (`waiting`), then
// from the events this page sees (an `approval_request` until its `approval_resolved`).
const waiting = new Set();
export const isWaiting = (id) => waiting.has(id);

/** Marks `id` running or not; true when that changed (the caller renders). */
function mark(id, yes) {
  if (running.has(id) === yes) return false;
  if (yes) running.add(id);
  else running.delete(id);
  return true;
}

/** Marks `id` running or not, and shows it if that changed. */
export function setRunning(id, yes) {
  if (!mark(id, yes)) return;
  render();
  emit("running", { sessionId: id, running: yes });
}

/** Reads the whole list again (every page) and shows it. */
export async function refresh() {
  const all = [];
  let cursor;
  try {
    do {
      const page = await rpc.call("session/list", cursor ? { cursor } : {});
      all.push(...page.sessions);
      cursor = page.nextCursor;
    } while (cursor);
  } catch {
    return;
  }
  sessions = all;
  if (!listedOnce) {
    listedOnce = true;
    // Measured by the browser tests (docs/benchmarks.md): navigation to first list.
    queueMicrotask(() => performance.mark("zeroclaw:first-session-list"));
  }
  for (const s of all) {
    if (s.waiting) waiting.add(s.sessionId);
    else if (!live.has(s.sessionId)) waiting.delete(s.sessionId);
  }
  const changed = [];
  for (const s of all) {
    if (mark(s.sessionId, s.running || live.has(s.sessionId))) changed.push(s);
  }
  render();
  for (const s of changed) emit("running", { sessionId: s.sessionId, running: running.has(s.sessionId) });
  emit("listed");
}

/** A running session's dot: "waiting" while its turn waits for an approval. */
function runningDot(s) {
  if (!running.has(s.sessionId) && !s.running) return null;
  if (isWaiting(s.sessionId)) {
    return el("span", { class: "waiting-label small", title: "waiting for approval" }, el("span", { class: "dot running waiting" }), "waiting · ");
  }
  return el("span", { class: "dot running", title: "running" });
}

function render() {
  const query = $("search").value.trim().toLowerCase();
  const shown = sessions.filter(
    (s) => !query || [s.title || "", s.cwd, s.model, s.sessionId].some((f) => f.toLowerCase().includes(query)),
  );
  $("no-sessions").hidden = shown.length > 0;
  $("session-list").replaceChildren(
    ...shown.map((s) =>
      el(
        "li",
        {},
        el(
          "button",
          {
            type: "button",
            class: "session-item",
            "data-id": s.sessionId,
            "aria-current": openId === s.sessionId ? "true" : false,
            onclick: () => emit("open", { sessionId: s.sessionId }),
          },
          el("span", { class: "session-name" }, runningDot(s), titleOf(s)),
          el("span", { class: "muted small" }, `${s.cwd}`),
          el("span", { class: "muted small" }, `${s.model} · ${s.messageCount} message${s.messageCount === 1 ? "" : "s"} · ${ago(s.updatedAt)}`),
        ),
      ),
    ),
  );
}

$("search").addEventListener("input", render);

const newDialog = dialog("new-dialog");

$("new-session").addEventListener("click", () => {
  $("new-form").reset();
  showError("new-error", null);
  newDialog.showModal();
  $("new-cwd").focus();
});

$("new-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const params = {};
  for (const key of ["cwd", "title", "model"]) {
    const value = $(`new-${key}`).value.trim();
    if (value) params[key] = value;
  }
  let created;
  try {
    created = await rpc.call("session/new", params);
  } catch (e) {
    showError("new-error", e);
    return;
  }
  newDialog.close();
  await refresh();
  emit("open", { sessionId: created.sessionId });
  $("prompt").focus();
});

// A session's events tell when its turn starts and ends. The prompt, a history's replay,
// a compaction and a hook run outside a turn (SessionStart, no turnId) are not a turn starting.
// A turn waiting for approval is still running, and shown as "waiting".
on("update", (p) => {
  if (p.sessionId === replaying) return;
  const was = waiting.has(p.sessionId);
  if (p.type === "approval_request") waiting.add(p.sessionId);
  else if (p.type === "approval_resolved" || p.type === "turn_complete") waiting.delete(p.sessionId);
  if (was !== waiting.has(p.sessionId)) render();
});

on("update", (p) => {
  if (p.type === "turn_complete") {
    live.delete(p.sessionId);
    setRunning(p.sessionId, false);
    refresh();
  } else if (p.type !== "context_compacted" && p.type !== "user_message_chunk" && p.type !== "approval_resolved" && !(p.type === "hook_result" && !p.turnId) && p.sessionId !== replaying) {
    live.add(p.sessionId);
    setRunning(p.sessionId, true);
  }
});

on("opened", ({ sessionId }) => {
  openId = sessionId;
  replaying = sessionId;
  // Its history's end says whether a turn runs now.
  live.delete(sessionId);
  render();
});

on("loaded", ({ sessionId, turnId }) => {
  replaying = null;
  if (turnId) live.add(sessionId);
  else live.delete(sessionId);
  setRunning(sessionId, Boolean(turnId));
});

on("closed", () => {
  openId = null;
  replaying = null;
  render();
});

// A new connection is attached to no session until the chat view loads one: a turn seen
// on the old one may end unseen, so only the list (and the next load) says what runs.
on("connection", ({ state }) => {
  if (state !== "up") live.clear();
});
