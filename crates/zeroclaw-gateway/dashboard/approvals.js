// What the agent asks of the user, in the open session's transcript.
//
// Tool calls: each call's card (its input, its state, its result) and, while the call
// waits, its approval buttons: Allow once (focused, so Enter allows), Always allow,
// Reject, with the daemon's preview (a diff, or a command and its directory). Every window
// on the session shows them; they go in every window at once when the request is settled
// (`approval_resolved`: answered in any window or client, timed out, or its turn
// cancelled), and at the latest when the call's result arrives or its turn ends.
//
// Questions (the agent's `ask_user` tool): the daemon's `elicitation/create` requests,
// each a small form at the end of its session's transcript (a text field, or one button
// per choice, and Decline). A question goes to the window that sent the prompt (the
// protocol's rule); one asked while its session is not on screen waits until it is.
// Questions asked on a lost connection are dropped with it (the daemon tells the model the
// client disconnected).
//
// A subagent's calls (events tagged `parentToolCallId`, subagents.js) get cards too, nested
// in their `task` call's card: subagents.js says where (`cardOf`'s `into`), and where their
// approval row goes (`ask`'s `into`, outside the folded block, saying it is the subagent's).
//
// State: the open session's cards by call (toolCallId; a subagent's calls by the `task`
// call's id and their own, which may repeat the parent's), each with its approval row while one is
// shown (the chat view starts them over, `reset`, when it opens a session); the questions
// not yet answered, by request id, each with its form once shown; and the session the chat
// view shows with its history loaded (from the store).

import { NOT_PENDING, rpc, serve } from "./connection.js";
import { el } from "./dom.js";
import { codeBlock } from "./markdown.js";
import { on } from "./store.js";
import * as transcript from "./transcript.js";

let cards = new Map(); // keyOf(p) → {node, result, approval}

/** A call's key: its id, under its `task` call's for a subagent's (their ids are the child's own). */
const keyOf = (p) => (p.parentToolCallId ? `${p.parentToolCallId}\u0000${p.toolCallId}` : p.toolCallId);

export function reset() {
  cards = new Map();
}

function pretty(value) {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** A long text (over 12 lines or 1,200 characters) folds behind a summary line. */
function foldable(text, label) {
  const lines = text.replace(/\n$/, "").split("\n").length;
  const pre = el("pre", { class: "output" });
  pre.textContent = text;
  if (lines <= 12 && text.length <= 1200) return pre;
  return el("details", { class: "long" }, el("summary", {}, `${label}: ${lines} lines, ${text.length} characters`), pre);
}

/**
 * The card of the call `p` names; made by its first event, at the transcript's end or, for
 * a subagent's call, at the end of `into` (its block).
 */
export function cardOf(p, into = null) {
  let card = cards.get(keyOf(p));
  if (card) return card;
  const node = el(
    "div",
    { class: "tool", "data-call": p.toolCallId, "data-state": "running" },
    el("div", { class: "tool-head" }, el("span", { class: "tool-name" }, p.name), el("span", { class: "tool-state muted small" }, "running")),
  );
  const input = p.name === "bash" && p.rawInput && typeof p.rawInput.command === "string" ? p.rawInput.command : pretty(p.rawInput);
  node.append(el("div", { class: "tool-input" }, p.name === "bash" ? codeBlock(input, "sh") : foldable(input, "Input")));
  card = { node, result: null, approval: null };
  cards.set(keyOf(p), card);
  if (into) {
    into.append(node);
    return card;
  }
  transcript.append(node);
  transcript.endBlock();
  return card;
}

function setState(card, text, kind) {
  card.node.dataset.state = kind;
  card.node.querySelector(".tool-state").textContent = text;
}

function dismiss(card) {
  card.approval?.remove();
  card.approval = null;
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

/**
 * The `approval_request` `p`: its buttons on the call's card. `focus`: the first button
 * takes the focus (a live request, not one replayed from the history). A subagent's
 * request (`from`: what its `task` call was given as `description`) puts its row in
 * `into`, where it shows while the subagent's block is folded, saying whose call it is.
 */
export function ask(p, { focus, from = null, into = null }) {
  const card = cardOf(p);
  dismiss(card);
  const labels = { allow_once: "Allow once", allow_always: "Always allow", reject: "Reject" };
  const escape = p.escape && typeof p.escape.justification === "string" ? p.escape : null;
  const subagent = from !== null;
  const row = el("div", {
    class: `approval${escape ? " escape" : ""}${subagent ? " subagent-approval" : ""}`,
    role: "group",
    "aria-label": `${escape ? `Run ${p.name} outside the sandbox?` : `Approve ${p.name}`}${subagent ? " (subagent)" : ""}`,
    "data-request": p.requestId,
  });
  // Its call is folded away in the subagent's block: the row says whose call it is and what.
  if (subagent) {
    row.append(el("p", { class: "from" }, `The subagent “${from}” asks to run `, el("span", { class: "tool-name" }, p.name)));
    if (!p.preview) row.append(el("div", { class: "tool-input" }, foldable(pretty(p.rawInput), "Input")));
  }
  // Leaving the sandbox is not an ordinary approval: say what is asked, and why, first.
  if (escape) {
    row.append(
      el("p", { class: "escape-what" }, "This command asks to run outside the sandbox: with your full rights, writing anywhere you can and reaching the network."),
      el("p", { class: "escape-why" }, el("strong", {}, "Why (the model's words): "), escape.justification),
    );
    labels.allow_once = "Run outside the sandbox, once";
  }
  if (p.reason) row.append(el("p", { class: "reason" }, p.reason));
  if (p.target) row.append(el("p", { class: "muted small" }, `${p.target.path}${p.target.outsideCwd ? " (outside the session's directory)" : ""}`));
  const preview = previewNode(p.preview);
  if (preview) row.append(preview);
  const buttons = el("div", { class: "actions" });
  const decide = async (option) => {
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    try {
      await rpc.call("session/approve", { sessionId: p.sessionId, requestId: p.requestId, decision: option });
      setState(card, option === "reject" ? "rejected" : "allowed", option === "reject" ? "error" : "running");
    } catch (e) {
      // "Not pending": answered elsewhere or timed out, so the buttons go; else try again.
      if (e.code !== NOT_PENDING) {
        for (const b of buttons.querySelectorAll("button")) b.disabled = false;
        return;
      }
    }
    row.remove();
    if (card.approval === row) card.approval = null;
  };
  for (const option of p.options || ["allow_once", "allow_always", "reject"]) {
    const kind = option === "reject" ? "danger" : option === "allow_once" ? "primary" : "";
    buttons.append(el("button", { type: "button", class: kind, "data-decision": option, onclick: () => decide(option) }, labels[option] || option));
  }
  row.append(buttons);
  (into || card.node).append(row);
  card.approval = row;
  setState(card, "waiting for approval", "asking");
  if (focus) buttons.querySelector("button")?.focus({ preventScroll: true });
  transcript.scrollDown(false);
}

/**
 * The `approval_resolved` `p`: the request was settled (in this window or another, by a
 * timeout, or by the turn's cancellation): its buttons go at once, and the card says how.
 */
export function resolved(p) {
  for (const card of cards.values()) {
    if (!card.approval || card.approval.dataset.request !== p.requestId) continue;
    dismiss(card);
    const rejected = p.decision === "reject";
    const how = p.by === "timeout" ? "not answered in time" : p.by === "cancelled" ? "cancelled" : rejected ? "rejected" : "allowed";
    setState(card, how, rejected ? "error" : "running");
  }
}

/** The `tool_result` `p`: the call's output and final state; its approval was answered. */
export function result(p) {
  const card = cardOf(p);
  // Answered here, in another window, or by a timeout: its buttons go.
  dismiss(card);
  card.result?.remove();
  card.result = el("div", { class: "tool-result" }, foldable(p.rawOutput || "", "Output"));
  card.node.append(card.result);
  setState(card, p.isError ? "failed" : "done", p.isError ? "error" : "done");
}

/** The turn ended: any approval still shown belongs to a finished turn. */
export function turnEnded() {
  for (const card of cards.values()) dismiss(card);
}

// ---------------------------------------------------------------------------------------
// Questions.

const questions = new Map(); // request id → {params, form}
let shownSession = null; // the session on screen, its history loaded

serve("elicitation/create", (frame) => {
  const q = { params: frame.params || {}, form: null };
  questions.set(frame.id, q);
  if (shownSession !== null && q.params.sessionId === shownSession) showQuestion(frame.id, q);
});

function showQuestion(id, q) {
  const schema = q.params.requestedSchema?.properties?.answer || {};
  const answer = (result) => {
    rpc.respond(id, result);
    questions.delete(id);
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
  transcript.append(form);
  transcript.endBlock();
  (input || form.querySelector("button"))?.focus({ preventScroll: true });
}

on("opened", () => {
  shownSession = null;
});

on("closed", () => {
  shownSession = null;
});

// A question asked before its session's view opened is shown once its history is there.
on("loaded", ({ sessionId }) => {
  shownSession = sessionId;
  for (const [id, q] of questions) if (q.params.sessionId === sessionId && !q.form) showQuestion(id, q);
});

on("connection", ({ state }) => {
  if (state !== "down") return;
  // Questions asked on the lost connection can no longer be answered.
  for (const q of questions.values()) q.form?.remove();
  questions.clear();
});
