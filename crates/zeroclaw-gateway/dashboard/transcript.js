// The open session's transcript (`#transcript`): what goes at its end, and its scrolling,
// which follows new content while the reader is at the bottom and stays put when they
// have scrolled up to read. Streamed text is gathered here: consecutive chunks of one kind
// and turn make one block, re-rendered at most once a frame.
//
// State: the last text block (the one the next chunk of its kind and turn extends), until
// anything else is appended after it (`endBlock`) or the transcript is cleared.

import { $, el } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

let last = null; // {kind, turnId, node, text, frame}

const transcript = () => $("transcript");

function atBottom() {
  const t = transcript();
  return t.scrollHeight - t.scrollTop - t.clientHeight < 80;
}

/** Scrolls to the end: always when `force`, else only if the reader is there already. */
export function scrollDown(force) {
  const t = transcript();
  if (force || atBottom()) t.scrollTop = t.scrollHeight;
}

/** Empties the transcript (a session is opened, or re-opened after a reconnect). */
export function clear() {
  transcript().replaceChildren();
  last = null;
}

/** Appends `node`, keeping the view at the bottom if it was there. */
export function append(node) {
  const stick = atBottom();
  transcript().append(node);
  if (stick) scrollDown(true);
}

/** The next chunk of text starts a new block (a card, a form or a turn's end came between). */
export function endBlock() {
  last = null;
}

/** A line about the page itself (an error, mostly); it does not end the text block. */
export function note(text, kind = "info") {
  append(el("div", { class: `note ${kind}` }, text));
}

function textBlock(kind, turnId) {
  if (last && last.kind === kind && last.turnId === turnId) return last;
  let node;
  if (kind === "thought") {
    node = el("details", { class: "thought" }, el("summary", {}, "Thinking"), el("div", { class: "body" }));
  } else {
    node = el("div", { class: `msg ${kind}`, "data-turn": turnId || "" }, el("div", { class: "body" }));
  }
  append(node);
  last = { kind, turnId, node, text: "", frame: 0 };
  return last;
}

function renderText(block) {
  const body = block.node.querySelector(".body");
  // The prompt is shown as typed; the model's text as Markdown.
  if (block.kind === "user") body.textContent = block.text;
  else body.replaceChildren(renderMarkdown(block.text));
}

/** Puts `node` (a prompt's images) under the text of turn `turnId`'s prompt. */
export function attach(turnId, node) {
  const block = textBlock("user", turnId);
  const stick = atBottom();
  block.node.append(node);
  if (stick) scrollDown(true);
}

/** Removes the newest prompt shown from this window before its turn was known (`local`). */
export function removeLocal() {
  const local = [...transcript().querySelectorAll('.msg.user[data-turn="local"]')].pop();
  if (!local) return;
  if (last && last.node === local) last = null;
  local.remove();
}

/** Adds a chunk of `kind` ("user", "assistant", "thought") text of turn `turnId`. */
export function addText(kind, turnId, text) {
  const block = textBlock(kind, turnId);
  block.text += text;
  // Streaming chunks re-render the block at most once a frame.
  if (block.frame) return;
  block.frame = requestAnimationFrame(() => {
    block.frame = 0;
    const stick = atBottom();
    renderText(block);
    if (stick) scrollDown(true);
  });
}
