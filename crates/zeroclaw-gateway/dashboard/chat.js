// The chat view: one session, its history replayed by `session/load` and then its events
// live, the prompt box (Enter sends, Shift-Enter makes a new line; while a turn runs, Enter
// steers it with `session/steer` and Alt-Enter or Queue keeps the text as the next prompt,
// sent when the turn ends; images the prompt box holds, images.js, go with a new prompt as
// its `content`), Stop, and the head
// (title, directory, model, Rename, and Delete behind a confirmation: a running turn is
// cancelled first, as `session/delete` does). The text blocks live in transcript.js, the
// tool cards, approvals and questions in approvals.js, a subagent's events (tagged
// `parentToolCallId`) inside its `task` call's card in subagents.js; a prompt's images under
// its text (images.js); a provider's retries and fallbacks (`provider_retry`,
// `provider_fallback`: live only) as status lines while the turn runs; a subagent's own
// session says so in the head, with a link to its parent; the address's fragment
// (`#session=<id>`) names the open session, so a reload or a bookmark reopens it.
//
// State: the open session (its entry, as listed or as loaded), whether its history is
// still replaying, the prompts queued for after its running turn, and its turns' end lines by turnId (the prompting window adds the
// turn's tokens to its own). Announces "opened", "loaded" and "closed" on the store.

import { INVALID_PARAMS, LOST, NO_TURN_RUNNING, SESSION_BUSY, rpc } from "./connection.js";
import { $, dialog, el, showError } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import * as approvals from "./approvals.js";
import * as images from "./images.js";
import * as project from "./project.js";
import * as sessions from "./sessions.js";
import { emit, on } from "./store.js";
import * as subagents from "./subagents.js";
import * as transcript from "./transcript.js";

let view = null; // {sessionId, loading, footers: Map turnId → the turn's end line, queued: [{text, images}]}
let current = null; // the open session's entry

/** A session's sandbox in a few words (docs/sandbox.md); nothing from an older daemon. */
export function sandboxLabel(sandbox) {
  if (!sandbox || typeof sandbox.mode !== "string") return "";
  if (sandbox.mode === "full") return "no sandbox";
  return `sandbox ${sandbox.mode}${sandbox.network ? " +network" : ""}`;
}

function renderHead() {
  const s = current;
  if (!s) return;
  $("session-title").textContent = sessions.titleOf(s);
  const sandbox = sandboxLabel(s.sandbox);
  $("session-meta").textContent = `${s.cwd} · ${s.model}${sandbox ? ` · ${sandbox}` : ""}`;
  // A subagent's session (its `task` call's child): the way back to the session that made it.
  const parent = typeof s.parentSessionId === "string" ? s.parentSessionId : null;
  $("parent-link").hidden = !parent;
  if (parent) {
    $("parent-link").setAttribute("href", `#session=${parent}`);
    $("parent-link").dataset.session = parent;
  }
  const running = sessions.isRunning(s.sessionId);
  $("stop").hidden = !running;
  // While a turn runs, Send steers it and Queue keeps the text for after it.
  $("send").textContent = running ? "Steer" : "Send";
  $("queue").hidden = !running;
  document.title = `${sessions.titleOf(s)} · zeroclaw`;
}

/**
 * Opens (or re-opens, after a reconnect) a session: the transcript is cleared and rebuilt
 * from `session/load` with replay. The load attaches this connection, so the events that
 * follow arrive live, each exactly once (the daemon's join rule, protocol §9).
 */
async function open(sessionId) {
  const opening = { sessionId, loading: true, footers: new Map(), queued: [] };
  view = opening;
  history.replaceState(null, "", `#session=${sessionId}`);
  current = sessions.entry(sessionId) || { sessionId, title: null, cwd: "", model: "" };
  transcript.clear();
  approvals.reset();
  $("session").dataset.session = sessionId;
  $("session").dataset.loaded = "false";
  $("empty").hidden = true;
  $("session").hidden = false;
  document.body.classList.add("in-session");
  renderHead();
  emit("opened", { sessionId });
  let answer;
  try {
    answer = await rpc.call("session/load", { sessionId, replay: true });
  } catch (e) {
    if (view !== opening) return;
    transcript.note(e.code === LOST ? "The connection was lost; the history loads again once it is back." : `Could not open the session: ${e.message}`, "error");
    return;
  }
  // Another session was opened meanwhile: this answer is no longer shown.
  if (view !== opening) return;
  opening.loading = false;
  $("session").dataset.loaded = "true";
  current = answer;
  emit("loaded", { sessionId, turnId: answer.turnId || null, mode: answer.mode });
  renderHead();
  transcript.scrollDown(true);
}

/** Back to the list: no session open. */
function close() {
  current = null;
  view = null;
  history.replaceState(null, "", location.pathname);
  $("session").hidden = true;
  $("empty").hidden = false;
  document.body.classList.remove("in-session");
  emit("closed");
}

/**
 * On a (re)connection: the open session is rebuilt from its history (replay), so nothing
 * that happened while the connection was down is missed and nothing is shown twice. After
 * a reload the address's fragment names the session that was open.
 */
export async function resume() {
  const linked = /^#session=([\w-]+)$/.exec(location.hash);
  if (current) await open(current.sessionId);
  else if (linked) await open(linked[1]);
}

function turnEnd(p) {
  const reason = { end_turn: "done", cancelled: "stopped", max_turns: "stopped at the step limit", budget: "stopped at its budget", error: "failed" }[p.stopReason] || p.stopReason;
  const footer = el("div", { class: `turn-end ${p.stopReason}`, "data-turn": p.turnId }, el("span", { class: "reason" }, reason), p.error ? el("span", { class: "error" }, p.error) : null);
  view.footers.set(p.turnId, footer);
  transcript.append(footer);
  transcript.endBlock();
  approvals.turnEnded();
}

function render(p) {
  // A subagent's event belongs in its `task` call's card, never in the conversation's flow.
  if (typeof p.parentToolCallId === "string") {
    subagents.render(p, { live: !view.loading });
    return;
  }
  switch (p.type) {
    case "user_message_chunk":
      transcript.addText("user", p.turnId, p.text);
      if (Array.isArray(p.images) && p.images.length) transcript.attach(p.turnId, images.stored(p.sessionId, p.images));
      break;
    case "agent_message_chunk":
      transcript.addText("assistant", p.turnId, p.text);
      break;
    case "agent_thought_chunk":
      transcript.addText("thought", p.turnId, p.text);
      break;
    case "tool_call":
      approvals.cardOf(p);
      subagents.call(p);
      break;
    case "approval_request":
      approvals.ask(p, { focus: !view.loading });
      break;
    case "approval_resolved":
      approvals.resolved(p);
      break;
    case "user_message":
      // A `session/steer` message (from this window or another), as the turn took it.
      transcript.endBlock();
      transcript.addText("user", p.turnId, p.text);
      transcript.endBlock();
      break;
    case "tool_result":
      approvals.result(p);
      subagents.ended(p);
      break;
    case "turn_complete":
      turnEnd(p);
      break;
    case "provider_retry":
      // Before the retry's wait: why the answer is late, and how long until the next try.
      transcript.append(el("div", { class: "note provider retry", title: p.provider || "" }, `retrying in ${(p.delayMs / 1000).toFixed(1)} s: ${p.reason}, attempt ${p.attempt}`));
      transcript.endBlock();
      break;
    case "provider_fallback":
      transcript.append(el("div", { class: "note provider fallback" }, `${p.from} failed (${p.reason}); using ${p.to}`));
      transcript.endBlock();
      break;
    case "context_compacted":
      transcript.append(el("details", { class: "note compacted" }, el("summary", {}, `Earlier messages summarised (${p.messagesFolded})`), el("div", { class: "body" }, renderMarkdown(p.summary || ""))));
      transcript.endBlock();
      break;
    case "hook_result": {
      // One line per hook run (docs/project.md): event, command, outcome, exit, time.
      const exit = p.timedOut ? "timed out" : p.exitCode === undefined ? "no exit code" : `exit ${p.exitCode}`;
      const said = p.message || p.context || "";
      transcript.append(el("div", { class: `note hook ${p.outcome}` }, `⚙ ${p.event} hook ${p.command}: ${p.outcome} (${exit}, ${p.durationMs} ms)${said ? `: ${said}` : ""}`));
      transcript.endBlock();
      break;
    }
    default:
      break;
  }
}

on("update", (p) => {
  if (!view || view.sessionId !== p.sessionId) return;
  render(p);
  renderHead();
});

on("open", ({ sessionId }) => open(sessionId));

on("running", ({ sessionId, running }) => {
  if (current && current.sessionId === sessionId) renderHead();
  // The turn ended: the first queued prompt goes now.
  if (!running && view && view.sessionId === sessionId && !view.loading && view.queued.length) {
    const next = view.queued.shift();
    sendPrompt(view, next);
  }
});

// The list has the session's newest title and message count.
on("listed", () => {
  const fresh = current && sessions.entry(current.sessionId);
  if (fresh) {
    current = fresh;
    renderHead();
  }
});

$("back").addEventListener("click", close);

// The head's link to a subagent's parent session: a plain click opens it here.
$("parent-link").addEventListener("click", (event) => {
  const parent = $("parent-link").dataset.session;
  if (!parent || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  emit("open", { sessionId: parent });
});

// The prompt box: Enter sends, Shift-Enter makes a new line.
$("prompt").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && event.altKey && !event.isComposing && view && sessions.isRunning(view.sessionId)) {
    event.preventDefault();
    queue();
    return;
  }
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("prompt-form").requestSubmit();
  }
});

/** Keeps the prompt box's text and images as the prompt to send when the running turn ends. */
function queue() {
  const text = $("prompt").value;
  if (!view || (!text.trim() && !images.count())) return;
  const taken = images.take();
  view.queued.push({ text, images: taken });
  $("prompt").value = "";
  const also = taken.length ? ` (and ${taken.length} image${taken.length === 1 ? "" : "s"})` : "";
  transcript.note(`Queued; sent when the turn ends: ${text}${also}`);
}

$("queue").addEventListener("click", queue);

/**
 * Steers the running turn with `text` (`session/steer`); the daemon shows it to every
 * window as a `user_message` when the turn takes it. `false` when no turn runs after all
 * (it ended meanwhile): the caller sends a prompt instead.
 */
async function steer(steering, text) {
  try {
    await rpc.call("session/steer", { sessionId: steering.sessionId, text });
  } catch (e) {
    if (e.code === NO_TURN_RUNNING) return false;
    if (view === steering && e.code !== LOST) transcript.note(e.message, "error");
    return true;
  }
  if (view === steering && $("prompt").value === text) $("prompt").value = "";
  return true;
}

$("prompt-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const prompting = view;
  const text = $("prompt").value;
  if (!prompting || (!text.trim() && !images.count())) return;
  if (!rpc.up) {
    // Keep what was typed; it can be sent once the connection is back.
    transcript.note("Not connected to the daemon; the prompt was not sent.", "error");
    return;
  }
  if (sessions.isRunning(prompting.sessionId)) {
    // Steering carries text only: images wait in the box for a new prompt.
    if (images.count()) {
      transcript.note("Images go with a new prompt, not into a running turn: Queue them (Alt-Enter), or send once the turn ends.", "error");
      return;
    }
    if (await steer(prompting, text)) return;
  }
  if (view !== prompting) return;
  await sendPrompt(prompting, { text, images: images.take() });
});

/**
 * Sends `text` with `images` (taken from the prompt box) as a new prompt in `prompting`'s
 * session and follows its answer.
 */
async function sendPrompt(prompting, { text, images: attached }) {
  // `/NAME ARGS` naming a custom command: its prompt is what is sent (and shown).
  // Until it is sent, a failure gives the images back to the prompt box.
  let prompt;
  let content;
  try {
    prompt = await project.expand(prompting.sessionId, text);
    content = await images.blocks(attached);
  } catch (e) {
    images.giveBack(attached);
    if (view === prompting) transcript.note(e.message, "error");
    return;
  }
  if (view !== prompting) {
    images.giveBack(attached);
    return;
  }
  if ($("prompt").value === text) $("prompt").value = "";
  // The daemon does not echo a prompt live (only a replay has it), so it is shown here.
  transcript.addText("user", "local", prompt);
  if (attached.length) transcript.attach("local", images.echo(attached));
  sessions.setRunning(prompting.sessionId, true);
  let result;
  try {
    const params = { sessionId: prompting.sessionId, prompt };
    if (content.length) params.content = content;
    result = await rpc.call("session/prompt", params);
  } catch (e) {
    if (e.code === LOST) return; // the reconnect reloads the session
    // Refused before it ran (nothing was stored): its echo goes, and the prompt box gets
    // its images and text back, to fix or to queue.
    if (e.code === INVALID_PARAMS || e.code === SESSION_BUSY) {
      images.giveBack(attached);
      if (view === prompting) {
        transcript.removeLocal();
        if (!$("prompt").value) $("prompt").value = text;
      }
    }
    if (view === prompting) transcript.note(e.message, "error");
    // Busy: a turn runs after all (another window's), so it still shows as running.
    if (e.code !== SESSION_BUSY) sessions.setRunning(prompting.sessionId, false);
    renderHead();
    return;
  }
  // Only the prompting connection is told the turn's tokens.
  const footer = prompting.footers.get(result.turnId);
  if (footer && result.usage) {
    footer.append(el("span", { class: "tokens" }, `${result.usage.inputTokens} in · ${result.usage.outputTokens} out tokens`));
  }
  // A turn stopped at a budget: which limit, and what the turn used against it.
  if (footer && result.budget) {
    footer.append(el("span", { class: "budget" }, `${result.budget.limit}: ${result.budget.used}`));
  }
}

$("stop").addEventListener("click", async () => {
  if (!view) return;
  try {
    await rpc.call("session/cancel", { sessionId: view.sessionId });
  } catch (e) {
    transcript.note(e.message, "error");
  }
});

const renameDialog = dialog("rename-dialog");
const deleteDialog = dialog("delete-dialog");

$("rename").addEventListener("click", () => {
  if (!current) return;
  $("rename-title").value = current.title || "";
  showError("rename-error", null);
  renameDialog.showModal();
  $("rename-title").select();
});

$("rename-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!current) return;
  try {
    await rpc.call("session/rename", { sessionId: current.sessionId, title: $("rename-title").value });
  } catch (e) {
    showError("rename-error", e);
    return;
  }
  renameDialog.close();
  // The head shows the new title once the list has it.
  await sessions.refresh();
});

$("delete").addEventListener("click", () => {
  if (!current) return;
  $("delete-name").textContent = sessions.titleOf(current);
  showError("delete-error", null);
  deleteDialog.showModal();
});

$("delete-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!current) return;
  try {
    await rpc.call("session/delete", { sessionId: current.sessionId });
  } catch (e) {
    showError("delete-error", e);
    return;
  }
  deleteDialog.close();
  close();
  await sessions.refresh();
});
