// The zeroclaw dashboard: one more client of the daemon's protocol. It talks JSON-RPC over
// the gateway's /rpc WebSocket (its dashboard session authenticates it: the cookie, and the
// proof this page keeps in sessionStorage, sent as a subprotocol) exactly as zerocode does
// over the socket, and reads nothing else but /api/v1/status (to tell "signed out" from
// "daemon down" when the WebSocket cannot open). No library, no build step; every piece of
// untrusted text reaches the page through text nodes (see markdown.js).

import { codeBlock, renderMarkdown } from "./markdown.js";

const $ = (id) => document.getElementById(id);

/** `el("div", {class: "x", onclick: f}, child, "text")`: text children become text nodes. */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

// ---------------------------------------------------------------------------------------
// The dashboard session's proof. The cookie alone is refused (every other server on this
// host receives it too); the proof is readable by this origin only (scheme, host and port).
// It lives in sessionStorage: this tab's, kept across reloads. A new tab asks the open tabs
// of this origin for it (BroadcastChannel: same origin only) and, if none answers, is signed
// out until a new login link.

const PROOF_KEY = "zeroclaw.proof";
const proofChannel = "BroadcastChannel" in window ? new BroadcastChannel("zeroclaw.proof") : null;
let connected = false; // only a connected tab's proof is known good, so only it answers

const proof = () => sessionStorage.getItem(PROOF_KEY);

if (proofChannel) {
  proofChannel.onmessage = (event) => {
    if (event.data?.type === "ask" && connected && proof()) {
      proofChannel.postMessage({ type: "proof", proof: proof() });
    }
  };
}

/** A proof another tab holds (other than `except`), or null when none answers within a second. */
function askOtherTabs(except) {
  if (!proofChannel) return Promise.resolve(null);
  return new Promise((resolve) => {
    const asking = new BroadcastChannel("zeroclaw.proof");
    const done = (value) => {
      clearTimeout(timer);
      asking.close();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), 1000);
    asking.onmessage = (event) => {
      if (event.data?.type === "proof" && typeof event.data.proof === "string" && event.data.proof !== except) {
        done(event.data.proof);
      }
    };
    asking.postMessage({ type: "ask" });
  });
}

/** Takes another tab's proof if there is one; true when one was found. */
async function adoptProof() {
  const found = await askOtherTabs(proof());
  if (found) sessionStorage.setItem(PROOF_KEY, found);
  return found !== null;
}

// ---------------------------------------------------------------------------------------
// The connection: JSON-RPC 2.0 over the WebSocket, reconnecting with backoff.

const LOST = -1; // our own code for calls cut by a lost connection
const METHOD_NOT_FOUND = -32601;
const NOT_PENDING = -32602;

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

class Rpc {
  constructor(handlers) {
    this.handlers = handlers;
    this.ws = null;
    this.next = 1;
    this.pending = new Map();
    this.attempt = 0;
    this.timer = null;
  }

  open() {
    clearTimeout(this.timer);
    this.handlers.state("connecting");
    // At most one socket: an attempt still under way is dropped first (its events would
    // arrive twice otherwise).
    if (this.ws) {
      const old = this.ws;
      this.ws = null;
      old.onmessage = null;
      old.close();
    }
    const protocols = ["zeroclaw.v1"];
    if (proof()) protocols.push(`zeroclaw.proof.${proof()}`);
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/rpc`, protocols);
    this.ws = ws;
    let opened = false;
    ws.onmessage = (message) => this.receive(message.data);
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const call of this.pending.values()) call.reject(new RpcError(LOST, "the connection was lost"));
      this.pending.clear();
      if (opened) this.retry();
      else this.diagnose();
    };
    ws.onopen = async () => {
      performance.mark("zeroclaw:ws-open");
      opened = true;
      try {
        this.info = await this.call("initialize", {
          protocolVersion: 1,
          clientInfo: { name: "zeroclaw-dashboard", version: "1" },
          capabilities: { elicitation: {} },
        });
      } catch {
        ws.close();
        return;
      }
      performance.mark("zeroclaw:initialized");
      this.attempt = 0;
      this.handlers.state("up");
    };
  }

  /**
   * The upgrade was refused or the daemon is away: the WebSocket API cannot tell which, so
   * a plain request asks. A 401 means "signed out" (no point retrying) unless another tab
   * holds a newer proof (it signed in again); anything else is retried.
   */
  async diagnose() {
    try {
      const headers = proof() ? { "zeroclaw-proof": proof() } : {};
      const answer = await fetch("/api/v1/status", { credentials: "same-origin", cache: "no-store", headers });
      if (answer.status === 401) {
        if (await adoptProof()) {
          this.open();
          return;
        }
        this.handlers.state("signed-out");
        return;
      }
    } catch {
      // The daemon is away: retry.
    }
    this.retry();
  }

  /** Backoff: 0.5 s, 1 s, 2 s, … up to 10 s between attempts. */
  retry() {
    const delay = Math.min(10_000, 500 * 2 ** this.attempt);
    this.attempt++;
    this.handlers.state("down", delay);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  retryNow() {
    this.attempt = 0;
    this.open();
  }

  get up() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  call(method, params = {}) {
    return new Promise((resolve, reject) => {
      if (!this.up) {
        reject(new RpcError(LOST, "not connected to the daemon"));
        return;
      }
      const id = this.next++;
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  respond(id, result) {
    if (this.up) this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, result }));
  }

  respondError(id, code, message) {
    if (this.up) this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }));
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof frame.method === "string") {
      if ("id" in frame) this.handlers.request(frame);
      else this.handlers.notification(frame);
      return;
    }
    const call = this.pending.get(frame.id);
    if (!call) return;
    this.pending.delete(frame.id);
    if (frame.error) call.reject(new RpcError(frame.error.code, frame.error.message, frame.error.data));
    else call.resolve(frame.result);
  }
}

// ---------------------------------------------------------------------------------------
// State.

const state = {
  sessions: [],
  running: new Set(), // session ids with a turn running
  status: null,
  statusAt: 0,
  current: null, // the open session's list entry
  view: null, // the open session's transcript model (see openSession)
  questions: new Map(), // elicitation requests by id: {params, answered}
  pollTimer: null,
};

const rpc = new Rpc({
  state: connectionState,
  request: onRequest,
  notification: onNotification,
});

function connectionState(what, delay) {
  connected = what === "up";
  const conn = $("conn");
  conn.dataset.state = what;
  $("retry").hidden = what !== "down";
  $("signin").hidden = what !== "signed-out";
  document.body.dataset.conn = what;
  if (what === "up") {
    conn.textContent = "connected";
    onConnected();
  } else if (what === "connecting") {
    conn.textContent = "connecting…";
  } else if (what === "down") {
    conn.textContent = `connection lost; retrying in ${Math.round(delay / 100) / 10} s`;
    clearInterval(state.pollTimer);
    // Questions asked on the lost connection can no longer be answered.
    for (const q of state.questions.values()) q.form?.remove();
    state.questions.clear();
  } else if (what === "signed-out") {
    conn.textContent = "signed out";
  }
}

async function onConnected() {
  clearInterval(state.pollTimer);
  state.pollTimer = setInterval(poll, 5000);
  await Promise.all([refreshStatus(), refreshSessions(), refreshRuns()]);
  // Catch up: the open session is rebuilt from its history (replay), so nothing that
  // happened while the connection was down is missed, and nothing is shown twice. After
  // a reload the address's fragment names the session that was open.
  const linked = /^#session=([\w-]+)$/.exec(location.hash);
  if (state.current) await openSession(state.current.sessionId);
  else if (linked) await openSession(linked[1]);
}

function poll() {
  refreshStatus();
  refreshSessions();
  refreshRuns();
}

// ---------------------------------------------------------------------------------------
// The daemon panel.

function duration(ms) {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

function ago(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString();
}

async function refreshStatus() {
  try {
    state.status = await rpc.call("status");
    state.statusAt = Date.now();
  } catch {
    return;
  }
  renderStatus();
}

function renderStatus() {
  const s = state.status;
  if (!s) return;
  const up = s.uptimeMs + (Date.now() - state.statusAt);
  const gateway = s.gateway ? s.gateway.url || `down: ${s.gateway.error}` : "off";
  const rows = [
    ["Version", s.serverVersion],
    ["Uptime", duration(up)],
    ["Endpoint", s.endpoint],
    ["Gateway", gateway],
    ["Clients", String(s.clients)],
    ["Sessions", `${s.sessions.running} running of ${s.sessions.total}`],
  ];
  if (s.provider) rows.push(["Provider", `${s.provider.kind} · ${s.provider.model}`]);
  const list = $("status-list");
  list.replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k.toLowerCase() }, v)]));
  $("mcp-list").replaceChildren(
    ...(s.mcpServers || []).map((m) =>
      el(
        "li",
        { class: `mcp state-${m.state}`, title: m.error || "" },
        el("span", { class: "dot" }),
        `${m.name}: ${m.state}, ${m.tools} tool${m.tools === 1 ? "" : "s"}`,
        m.error ? el("div", { class: "muted small" }, m.error) : null,
      ),
    ),
  );
}

setInterval(() => {
  if (state.status && rpc.up) {
    const up = document.querySelector('[data-field="uptime"]');
    if (up) up.textContent = duration(state.status.uptimeMs + (Date.now() - state.statusAt));
  }
}, 1000);

async function refreshRuns() {
  let result;
  try {
    result = await rpc.call("runs/list", {});
  } catch (e) {
    // A daemon without unattended runs does not know the method: no panel.
    if (e.code === METHOD_NOT_FOUND) $("runs").hidden = true;
    return;
  }
  const runs = (result.runs || []).slice(0, 10);
  $("runs").hidden = runs.length === 0;
  $("runs-list").replaceChildren(
    ...runs.map((r) => {
      const label = `${r.name || r.source} · ${r.status}${r.error ? `: ${r.error}` : ""}`;
      const body = [el("span", { class: `dot run-${r.status}` }), label, el("div", { class: "muted small" }, `${r.source} · ${ago(r.createdAt)}`)];
      if (r.sessionId) return el("li", {}, el("button", { type: "button", class: "link", onclick: () => openSession(r.sessionId) }, ...body));
      return el("li", {}, ...body);
    }),
  );
}

// ---------------------------------------------------------------------------------------
// The sessions list.

async function refreshSessions() {
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
  state.sessions = all;
  if (!state.listedOnce) {
    state.listedOnce = true;
    // Measured by the browser tests (docs/benchmarks.md): navigation to first list.
    queueMicrotask(() => performance.mark("zeroclaw:first-session-list"));
  }
  for (const s of all) {
    if (s.running) state.running.add(s.sessionId);
    else if (!(state.view && state.view.sessionId === s.sessionId && state.view.liveTurn)) state.running.delete(s.sessionId);
  }
  if (state.current) {
    const fresh = all.find((s) => s.sessionId === state.current.sessionId);
    if (fresh) {
      state.current = fresh;
      renderHead();
    }
  }
  renderSessions();
}

function titleOf(s) {
  return s.title || "Untitled session";
}

function renderSessions() {
  const query = $("search").value.trim().toLowerCase();
  const shown = state.sessions.filter(
    (s) => !query || [s.title || "", s.cwd, s.model, s.sessionId].some((f) => f.toLowerCase().includes(query)),
  );
  $("no-sessions").hidden = shown.length > 0;
  $("session-list").replaceChildren(
    ...shown.map((s) => {
      const running = state.running.has(s.sessionId) || s.running;
      return el(
        "li",
        {},
        el(
          "button",
          {
            type: "button",
            class: "session-item",
            "data-id": s.sessionId,
            "aria-current": state.current && state.current.sessionId === s.sessionId ? "true" : false,
            onclick: () => openSession(s.sessionId),
          },
          el("span", { class: "session-name" }, running ? el("span", { class: "dot running", title: "running" }) : null, titleOf(s)),
          el("span", { class: "muted small" }, `${s.cwd}`),
          el("span", { class: "muted small" }, `${s.model} · ${s.messageCount} message${s.messageCount === 1 ? "" : "s"} · ${ago(s.updatedAt)}`),
        ),
      );
    }),
  );
}

$("search").addEventListener("input", renderSessions);

// ---------------------------------------------------------------------------------------
// Dialogs: new session, rename, delete.

for (const dialog of document.querySelectorAll("dialog")) {
  for (const button of dialog.querySelectorAll("[data-close]")) button.addEventListener("click", () => dialog.close());
}

function showError(id, e) {
  const p = $(id);
  p.textContent = e ? e.message : "";
  p.hidden = !e;
}

$("new-session").addEventListener("click", () => {
  $("new-form").reset();
  showError("new-error", null);
  $("new-dialog").showModal();
  $("new-cwd").focus();
});

$("new-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const params = {};
  for (const key of ["cwd", "title", "model"]) {
    const value = $(`new-${key}`).value.trim();
    if (value) params[key] = value;
  }
  try {
    const created = await rpc.call("session/new", params);
    $("new-dialog").close();
    await refreshSessions();
    await openSession(created.sessionId);
    $("prompt").focus();
  } catch (e) {
    showError("new-error", e);
  }
});

$("rename").addEventListener("click", () => {
  if (!state.current) return;
  $("rename-title").value = state.current.title || "";
  showError("rename-error", null);
  $("rename-dialog").showModal();
  $("rename-title").select();
});

$("rename-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const id = state.current.sessionId;
  try {
    await rpc.call("session/rename", { sessionId: id, title: $("rename-title").value });
    $("rename-dialog").close();
    await refreshSessions();
  } catch (e) {
    showError("rename-error", e);
  }
});

$("delete").addEventListener("click", () => {
  if (!state.current) return;
  $("delete-name").textContent = titleOf(state.current);
  showError("delete-error", null);
  $("delete-dialog").showModal();
});

$("delete-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const id = state.current.sessionId;
  try {
    await rpc.call("session/delete", { sessionId: id });
    $("delete-dialog").close();
    closeSession();
    await refreshSessions();
  } catch (e) {
    showError("delete-error", e);
  }
});

// ---------------------------------------------------------------------------------------
// The session view.

function closeSession() {
  state.current = null;
  state.view = null;
  history.replaceState(null, "", location.pathname);
  $("session").hidden = true;
  $("empty").hidden = false;
  document.body.classList.remove("in-session");
  renderSessions();
}

$("back").addEventListener("click", closeSession);

function renderHead() {
  const s = state.current;
  if (!s) return;
  $("session-title").textContent = titleOf(s);
  $("session-meta").textContent = `${s.cwd} · ${s.model}`;
  const running = state.running.has(s.sessionId);
  $("stop").hidden = !running;
  $("send").disabled = running;
  document.title = `${titleOf(s)} · zeroclaw`;
}

/**
 * Opens (or re-opens, after a reconnect) a session: the transcript is cleared and rebuilt
 * from `session/load` with replay. The load attaches this connection, so the events that
 * follow arrive live, each exactly once (the daemon's join rule, protocol §9).
 */
async function openSession(sessionId) {
  const view = {
    sessionId,
    loading: true,
    liveTurn: null,
    last: null, // the last block: {kind, turnId, node, text}
    cards: new Map(), // tool calls by toolCallId
    footers: new Map(), // turn footers by turnId
  };
  state.view = view;
  history.replaceState(null, "", `#session=${sessionId}`);
  state.current = state.sessions.find((s) => s.sessionId === sessionId) || { sessionId, title: null, cwd: "", model: "" };
  $("transcript").replaceChildren();
  $("session").dataset.session = sessionId;
  $("session").dataset.loaded = "false";
  $("empty").hidden = true;
  $("session").hidden = false;
  document.body.classList.add("in-session");
  renderHead();
  renderSessions();
  let answer;
  try {
    answer = await rpc.call("session/load", { sessionId, replay: true });
  } catch (e) {
    if (state.view !== view) return;
    note(e.code === LOST ? "The connection was lost; the history loads again once it is back." : `Could not open the session: ${e.message}`, "error");
    return;
  }
  if (state.view !== view) return;
  view.loading = false;
  $("session").dataset.loaded = "true";
  state.current = answer;
  if (answer.turnId) {
    view.liveTurn = answer.turnId;
    state.running.add(sessionId);
  } else {
    state.running.delete(sessionId);
  }
  renderHead();
  renderSessions();
  // A question asked before the view opened.
  for (const [id, q] of state.questions) if (q.params.sessionId === sessionId && !q.form) showQuestion(id, q);
  scrollDown(true);
}

const transcript = () => $("transcript");

function atBottom() {
  const t = transcript();
  return t.scrollHeight - t.scrollTop - t.clientHeight < 80;
}

function scrollDown(force) {
  const t = transcript();
  if (force || atBottom()) t.scrollTop = t.scrollHeight;
}

function append(node) {
  const stick = atBottom();
  transcript().append(node);
  if (stick) scrollDown(true);
}

function note(text, kind = "info") {
  append(el("div", { class: `note ${kind}` }, text));
}

function onNotification(frame) {
  if (frame.method !== "session/update") return;
  const p = frame.params || {};
  const view = state.view;
  const mine = view && view.sessionId === p.sessionId;
  if (p.type === "turn_complete") {
    state.running.delete(p.sessionId);
    if (mine) view.liveTurn = null;
    refreshSessions();
    refreshStatus();
  } else if (p.type !== "context_compacted" && !(mine && view.loading) && p.type !== "user_message_chunk") {
    if (!state.running.has(p.sessionId)) {
      state.running.add(p.sessionId);
      renderSessions();
      refreshStatus();
    }
    if (mine) view.liveTurn = p.turnId;
  }
  if (!mine) return;
  renderEvent(view, p);
  renderHead();
}

/** Text of consecutive chunks of one kind and turn goes in one block. */
function textBlock(view, kind, turnId) {
  const last = view.last;
  if (last && last.kind === kind && last.turnId === turnId) return last;
  let node;
  if (kind === "thought") {
    node = el("details", { class: "thought" }, el("summary", {}, "Thinking"), el("div", { class: "body" }));
  } else {
    node = el("div", { class: `msg ${kind}`, "data-turn": turnId || "" }, el("div", { class: "body" }));
  }
  append(node);
  view.last = { kind, turnId, node, text: "", frame: 0 };
  return view.last;
}

function renderText(block) {
  const body = block.node.querySelector(".body");
  if (block.kind === "user") {
    body.textContent = block.text;
  } else {
    body.replaceChildren(renderMarkdown(block.text));
  }
}

/** Streaming chunks re-render the block at most once a frame. */
function addText(view, kind, turnId, text) {
  const block = textBlock(view, kind, turnId);
  block.text += text;
  if (block.frame) return;
  block.frame = requestAnimationFrame(() => {
    block.frame = 0;
    const stick = atBottom();
    renderText(block);
    if (stick) scrollDown(true);
  });
}

function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** A long text folds behind a summary line, expandable. */
function foldable(text, label) {
  const lines = text.replace(/\n$/, "").split("\n").length;
  const pre = el("pre", { class: "output" });
  pre.textContent = text;
  if (lines <= 12 && text.length <= 1200) return pre;
  return el("details", { class: "long" }, el("summary", {}, `${label}: ${lines} lines, ${text.length} characters`), pre);
}

function toolCard(view, p) {
  let card = view.cards.get(p.toolCallId);
  if (card) return card;
  const node = el(
    "div",
    { class: "tool", "data-call": p.toolCallId, "data-state": "running" },
    el("div", { class: "tool-head" }, el("span", { class: "tool-name" }, p.name), el("span", { class: "tool-state muted small" }, "running")),
  );
  const input = p.name === "bash" && p.rawInput && typeof p.rawInput.command === "string" ? p.rawInput.command : pretty(p.rawInput);
  node.append(el("div", { class: "tool-input" }, p.name === "bash" ? codeBlock(input, "sh") : foldable(input, "Input")));
  card = { node, result: null, approval: null };
  view.cards.set(p.toolCallId, card);
  append(node);
  view.last = null;
  return card;
}

function setToolState(card, text, kind) {
  card.node.dataset.state = kind;
  card.node.querySelector(".tool-state").textContent = text;
}

/**
 * An approval's `preview` (docs/protocol.md §10): a diff with its lines coloured by kind, a
 * command with its cwd, or why there is no diff. Text nodes only: it is the file's content.
 */
function previewNode(preview) {
  if (!preview || typeof preview !== "object") return null;
  if (preview.kind === "diff" && typeof preview.diff === "string") {
    const pre = el("pre", { class: "diff" });
    for (const line of preview.diff.replace(/\n$/, "").split("\n")) {
      const kind = { "+": "add", "-": "del", "@": "hunk", "\\": "note" }[line[0]] || "same";
      pre.append(el("span", { class: `diff-${kind}` }, line), "\n");
    }
    const head = `${preview.created ? "new file" : "changes to"} ${preview.path}`;
    const more = preview.omittedLines ? el("p", { class: "muted small" }, `… ${preview.omittedLines} more diff lines not shown`) : null;
    return el("div", { class: "preview" }, el("p", { class: "small" }, head), pre, more);
  }
  if (preview.kind === "command" && typeof preview.command === "string") {
    return el("div", { class: "preview" }, codeBlock(preview.command, "sh"), el("p", { class: "muted small" }, `in ${preview.cwd}`));
  }
  if (preview.kind === "unavailable") {
    return el("div", { class: "preview" }, el("p", { class: "reason" }, `no diff for ${preview.path}: ${preview.reason}`));
  }
  return null;
}

function approvalRow(view, card, p) {
  card.approval?.remove();
  const labels = { allow_once: "Allow once", allow_always: "Always allow", reject: "Reject" };
  const row = el("div", { class: "approval", role: "group", "aria-label": `Approve ${p.name}`, "data-request": p.requestId });
  if (p.reason) row.append(el("p", { class: "reason" }, p.reason));
  if (p.target) row.append(el("p", { class: "muted small" }, `${p.target.path}${p.target.outsideCwd ? " (outside the session's directory)" : ""}`));
  const preview = previewNode(p.preview);
  if (preview) row.append(preview);
  const buttons = el("div", { class: "actions" });
  for (const option of p.options || ["allow_once", "allow_always", "reject"]) {
    buttons.append(
      el(
        "button",
        {
          type: "button",
          class: option === "reject" ? "danger" : option === "allow_once" ? "primary" : "",
          "data-decision": option,
          onclick: async () => {
            for (const b of buttons.querySelectorAll("button")) b.disabled = true;
            try {
              await rpc.call("session/approve", { sessionId: view.sessionId, requestId: p.requestId, decision: option });
              setToolState(card, option === "reject" ? "rejected" : "allowed", option === "reject" ? "error" : "running");
            } catch (e) {
              if (e.code !== NOT_PENDING) {
                for (const b of buttons.querySelectorAll("button")) b.disabled = false;
                return;
              }
            }
            row.remove();
            if (card.approval === row) card.approval = null;
          },
        },
        labels[option] || option,
      ),
    );
  }
  row.append(buttons);
  card.node.append(row);
  card.approval = row;
  setToolState(card, "waiting for approval", "asking");
  if (!view.loading) buttons.querySelector("button")?.focus({ preventScroll: true });
  scrollDown(false);
}

function renderEvent(view, p) {
  switch (p.type) {
    case "user_message_chunk":
      addText(view, "user", p.turnId, p.text);
      break;
    case "agent_message_chunk":
      addText(view, "assistant", p.turnId, p.text);
      break;
    case "agent_thought_chunk":
      addText(view, "thought", p.turnId, p.text);
      break;
    case "tool_call":
      toolCard(view, p);
      break;
    case "approval_request":
      approvalRow(view, toolCard(view, p), p);
      break;
    case "tool_result": {
      const card = toolCard(view, p);
      // The approval was answered (here, in another tab, or by a timeout): its buttons go.
      card.approval?.remove();
      card.approval = null;
      card.result?.remove();
      card.result = el("div", { class: "tool-result" }, foldable(p.rawOutput || "", "Output"));
      card.node.append(card.result);
      setToolState(card, p.isError ? "failed" : "done", p.isError ? "error" : "done");
      break;
    }
    case "turn_complete": {
      const reason = { end_turn: "done", cancelled: "stopped", max_turns: "stopped at the step limit", error: "failed" }[p.stopReason] || p.stopReason;
      const footer = el("div", { class: `turn-end ${p.stopReason}`, "data-turn": p.turnId }, el("span", { class: "reason" }, reason), p.error ? el("span", { class: "error" }, p.error) : null);
      view.footers.set(p.turnId, footer);
      append(footer);
      view.last = null;
      // Any approval still shown belongs to a finished turn.
      for (const card of view.cards.values()) {
        card.approval?.remove();
        card.approval = null;
      }
      break;
    }
    case "context_compacted":
      append(el("details", { class: "note compacted" }, el("summary", {}, `Earlier messages summarised (${p.messagesFolded})`), el("div", { class: "body" }, renderMarkdown(p.summary || ""))));
      view.last = null;
      break;
    default:
      break;
  }
}

// The prompt box: Enter sends, Shift-Enter makes a new line.
$("prompt").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("prompt-form").requestSubmit();
  }
});

$("prompt-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const view = state.view;
  const text = $("prompt").value;
  if (!view || !text.trim() || state.running.has(view.sessionId)) return;
  if (!rpc.up) {
    // Keep what was typed; it can be sent once the connection is back.
    note("Not connected to the daemon; the prompt was not sent.", "error");
    return;
  }
  $("prompt").value = "";
  // The daemon does not echo a prompt live (only a replay has it), so it is shown here.
  addText(view, "user", "local", text);
  state.running.add(view.sessionId);
  renderHead();
  renderSessions();
  let result;
  try {
    result = await rpc.call("session/prompt", { sessionId: view.sessionId, prompt: text });
  } catch (e) {
    if (e.code === LOST) return; // the reconnect reloads the session
    if (state.view === view) note(e.message, "error");
    if (e.code !== -32002) state.running.delete(view.sessionId);
    renderHead();
    return;
  }
  const footer = view.footers.get(result.turnId);
  if (footer && result.usage) {
    footer.append(el("span", { class: "tokens" }, `${result.usage.inputTokens} in · ${result.usage.outputTokens} out tokens`));
  }
});

$("stop").addEventListener("click", async () => {
  if (!state.view) return;
  try {
    await rpc.call("session/cancel", { sessionId: state.view.sessionId });
  } catch (e) {
    note(e.message, "error");
  }
});

// ---------------------------------------------------------------------------------------
// Requests from the daemon: `elicitation/create` (the agent's ask_user).

function onRequest(frame) {
  if (frame.method !== "elicitation/create") {
    rpc.respondError(frame.id, METHOD_NOT_FOUND, `the dashboard does not serve ${frame.method}`);
    return;
  }
  const q = { params: frame.params || {}, form: null };
  state.questions.set(frame.id, q);
  if (state.view && state.view.sessionId === q.params.sessionId && !state.view.loading) showQuestion(frame.id, q);
}

function showQuestion(id, q) {
  const view = state.view;
  const schema = q.params.requestedSchema?.properties?.answer || {};
  const answer = (result) => {
    rpc.respond(id, result);
    state.questions.delete(id);
    form.replaceWith(el("div", { class: "note" }, result.action === "accept" ? `Answered: ${result.content.answer}` : "Declined"));
  };
  const form = el("form", { class: "question", "aria-label": "Question from the agent" }, el("p", { class: "question-text" }, q.params.message || ""));
  let input;
  if (Array.isArray(schema.enum) && schema.enum.length) {
    const choices = el("div", { class: "actions choices" });
    for (const choice of schema.enum) {
      choices.append(el("button", { type: "button", "data-choice": String(choice), onclick: () => answer({ action: "accept", content: { answer: choice } }) }, String(choice)));
    }
    form.append(choices);
  } else {
    input = el("input", { type: "text", name: "answer", "aria-label": "Your answer", required: true });
    form.append(input, el("div", { class: "actions" }, el("button", { type: "submit", class: "primary" }, "Answer")));
  }
  form.querySelector(".actions")?.append(el("button", { type: "button", class: "decline", onclick: () => answer({ action: "decline" }) }, "Decline"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input && input.value.trim()) answer({ action: "accept", content: { answer: input.value } });
  });
  q.form = form;
  append(form);
  if (view) view.last = null;
  (input || form.querySelector("button"))?.focus({ preventScroll: true });
}

// A tab without a proof (a new one) asks the others first.
if (proof()) rpc.open();
else adoptProof().then(() => rpc.open());
$("retry").addEventListener("click", () => rpc.retryNow());
