// Subagents (docs/protocol.md §13a): while a `task` call runs its child session, the
// child's events reach this page tagged with `parentToolCallId` (the call) and
// `childSessionId`, in the parent's session and turn. They are shown inside the call's
// card, never in the conversation's flow:
// - a folded block, "Subagent · N steps" (N: the child's tool calls), its summary showing
//   the child's latest step while it runs and how it ended once the call has its result;
// - in it, the child's calls as nested cards (approvals.js), its text as its own answer
//   (never the parent's answer bubble), its thoughts folded, its plan as a checklist of its
//   own (the parent's plan above the prompt box is the parent's alone, plan.js);
// - a child's approval as a row outside the fold, naming the subagent (the call's
//   `description`), answered as any (`session/approve` on the parent's session, which the
//   daemon hands to its child) and gone in every window on `approval_resolved`;
// - a link that opens the child's session (`#session=<id>`: a new tab opens it too).
// A replay carries none of the child's events (the daemon stores them in the child's
// session, not the parent's): a reloaded call shows its input, its result and the link,
// whose child is then found with `session/list {includeChildren}`.
//
// State: the open session's id and its `task` calls by id, each with its card's parts,
// its `description`, its child session's id once known, and its block once the child has
// said something. The chat view hands it the events (`call`, `ended`, `render`).

import { rpc } from "./connection.js";
import * as approvals from "./approvals.js";
import { el } from "./dom.js";
import { renderMarkdown } from "./markdown.js";
import { emit, on } from "./store.js";
import * as transcript from "./transcript.js";

let sessionId = null; // the open session
let tasks = new Map(); // task call id → {box, asks, link, description, childId, block, ended}

/** The `task` call `p` (the parent's `tool_call`): its card gets the subagent's place. */
export function call(p) {
  if (p.name !== "task") return;
  taskOf(p.toolCallId, p);
}

/** The task call `id`'s entry, its place on the card made the first time. */
function taskOf(id, p = { toolCallId: id, name: "task", rawInput: {} }) {
  let task = tasks.get(id);
  if (task) return task;
  const card = approvals.cardOf(p);
  const description = typeof p.rawInput?.description === "string" && p.rawInput.description.trim() ? p.rawInput.description.trim() : "subagent";
  const link = el("a", { class: "child-link", href: "#", onclick: (event) => follow(event, task) }, "Open the subagent's session");
  const linkRow = el("p", { class: "subagent-link small", hidden: true }, link);
  const asks = el("div", { class: "subagent-asks" });
  // Shown once there is something in it: a call whose child never ran has nothing.
  const box = el("div", { class: "subagent", "data-parent-call": id, hidden: true }, asks, linkRow);
  const input = card.node.querySelector(".tool-input");
  if (input) input.after(box);
  else card.node.append(box);
  task = { box, asks, link, linkRow, description, childId: null, block: null, ended: null };
  tasks.set(id, task);
  return task;
}

/** The link was followed: a plain click opens the child here, others act as a link does. */
function follow(event, task) {
  if (!task.childId || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey || event.altKey) return;
  event.preventDefault();
  emit("open", { sessionId: task.childId });
}

function setChild(task, childId) {
  if (task.childId === childId || typeof childId !== "string") return;
  task.childId = childId;
  task.link.setAttribute("href", `#session=${childId}`);
  task.link.dataset.session = childId;
  task.linkRow.hidden = false;
  task.box.hidden = false;
}

/** The folded block of `task`'s child, made by the child's first event. */
function blockOf(task) {
  if (task.block) return task.block;
  const count = el("span", { class: "subagent-count" });
  const latest = el("span", { class: "subagent-latest muted" });
  const body = el("div", { class: "subagent-body" });
  const plan = el("ul", { class: "subagent-plan plain", "aria-label": "The subagent's plan", hidden: true });
  const details = el("details", { class: "subagent-block" }, el("summary", {}, count, latest), body, plan);
  task.box.prepend(details);
  task.box.hidden = false;
  task.block = { details, count, latest, body, plan, steps: 0, text: null, current: "" };
  summarise(task);
  return task.block;
}

/** The block's summary: how many steps, and the latest one (or how it ended). */
function summarise(task, latest) {
  const block = task.block;
  if (!block) return;
  const ended = task.ended ? ` · ${task.ended}` : "";
  block.count.textContent = `Subagent · ${block.steps} step${block.steps === 1 ? "" : "s"}${ended}`;
  if (latest !== undefined) block.latest.textContent = latest;
  block.latest.hidden = Boolean(task.ended) || !block.latest.textContent;
}

/** A call in a few words for the summary: a bash command, a path, else its input cut short. */
function stepLine(p) {
  const input = p.rawInput;
  let what = "";
  if (input && typeof input === "object") {
    what = input.command ?? input.path ?? input.pattern ?? input.description ?? JSON.stringify(input);
  } else if (typeof input === "string") what = input;
  what = String(what).replace(/\s+/g, " ").trim();
  if (what.length > 80) what = `${what.slice(0, 79)}…`;
  return what ? `${p.name}: ${what}` : p.name;
}

/** A chunk of the child's text (`kind` "answer" or "thought"), gathered as transcript.js does. */
function addText(block, kind, text) {
  let last = block.text;
  if (!last || last.kind !== kind) {
    const body = el("div", { class: "body" });
    const node = kind === "thought" ? el("details", { class: "thought" }, el("summary", {}, "Thinking"), body) : el("div", { class: "subagent-answer" }, body);
    block.body.append(node);
    last = { kind, body, text: "", frame: 0 };
    block.text = last;
  }
  last.text += text;
  if (last.frame) return;
  last.frame = requestAnimationFrame(() => {
    last.frame = 0;
    last.body.replaceChildren(renderMarkdown(last.text));
    transcript.scrollDown(false);
  });
}

/** Adds `node` to the block's body; the next text starts a new block. */
function appendTo(block, node) {
  block.text = null;
  block.body.append(node);
}

/**
 * An event tagged `parentToolCallId`: the child's, shown in its call's block. `live`: sent
 * now, not replayed (a live approval takes the focus).
 */
export function render(p, { live }) {
  const task = taskOf(p.parentToolCallId);
  setChild(task, p.childSessionId);
  const block = blockOf(task);
  switch (p.type) {
    case "agent_message_chunk":
      addText(block, "answer", p.text || "");
      summarise(task, "writing its answer");
      break;
    case "agent_thought_chunk":
      addText(block, "thought", p.text || "");
      summarise(task, "thinking");
      break;
    case "tool_call":
      block.text = null;
      approvals.cardOf(p, block.body);
      block.steps += 1;
      block.current = stepLine(p);
      summarise(task, block.current);
      break;
    case "approval_request":
      block.text = null;
      approvals.cardOf(p, block.body);
      approvals.ask(p, { focus: live, from: task.description, into: task.asks });
      summarise(task, `waiting for approval: ${stepLine(p)}`);
      break;
    case "approval_resolved":
      approvals.resolved(p);
      summarise(task, block.current);
      break;
    case "tool_result":
      block.text = null;
      approvals.cardOf(p, block.body);
      approvals.result(p);
      summarise(task, `${p.name} ${p.isError ? "failed" : "done"}`);
      break;
    case "plan": {
      // The child's own checklist, redrawn whole as plan.js does the parent's.
      const entries = Array.isArray(p.entries) ? p.entries : [];
      const marks = { pending: "☐", in_progress: "◐", completed: "☑" };
      block.plan.replaceChildren(...entries.map((e) => el("li", { class: `plan-entry ${e.status}` }, el("span", { class: "mark", "aria-hidden": "true" }, marks[e.status] || "☐"), el("span", { class: "content" }, e.content))));
      block.plan.hidden = entries.length === 0;
      break;
    }
    case "user_message":
      // A message steered into the child's turn (from a client of the child's session).
      appendTo(block, el("div", { class: "subagent-user" }, p.text || ""));
      break;
    case "hook_result":
      appendTo(block, el("div", { class: `note hook ${p.outcome}` }, `⚙ ${p.event} hook ${p.command}: ${p.outcome}${p.message ? `: ${p.message}` : ""}`));
      break;
    case "context_compacted":
      appendTo(block, el("div", { class: "note" }, `Earlier messages summarised (${p.messagesFolded})`));
      break;
    default:
      break;
  }
  transcript.scrollDown(false);
}

/** The parent's `tool_result` `p`: a `task` call ended, and its block says how. */
export function ended(p) {
  const task = tasks.get(p.toolCallId);
  if (!task) return;
  task.ended = p.isError ? "failed" : "done";
  summarise(task);
}

/**
 * After a replay: the calls whose child is not known from a live event (a replay carries
 * none) find it in the list of every session, children included.
 */
async function findChildren(shown) {
  if (![...tasks.values()].some((t) => !t.childId)) return;
  let cursor;
  try {
    do {
      const page = await rpc.call("session/list", { includeChildren: true, limit: 1000, ...(cursor ? { cursor } : {}) });
      if (sessionId !== shown) return;
      for (const s of page.sessions) {
        const task = s.parentSessionId === shown ? tasks.get(s.parentToolCallId) : null;
        if (task) setChild(task, s.sessionId);
      }
      cursor = page.nextCursor;
    } while (cursor && [...tasks.values()].some((t) => !t.childId));
  } catch {
    // Without the list the calls show no link; the next load tries again.
  }
}

on("opened", (detail) => {
  sessionId = detail.sessionId;
  tasks = new Map();
});

on("closed", () => {
  sessionId = null;
  tasks = new Map();
});

on("loaded", (detail) => {
  if (detail.sessionId === sessionId) findChildren(sessionId);
});
