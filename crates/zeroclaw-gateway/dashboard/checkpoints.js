// Checkpoints in the open session (docs/checkpoints.md): on each prompt of the transcript,
// "Rewind to here" (the files and the conversation back to before that prompt) and "Fork
// from here" (a new session with the conversation before it), each behind a confirmation;
// the rewind's lists the files the turns since changed. A rewind refused over files changed
// outside the agent shows them and offers to overwrite. The daemon's `session_rewound`
// event (this window's rewind or another client's) reloads the session.
//
// State: the open session's checkpoints by turnId, and the action the dialog confirms.

import { rpc } from "./connection.js";
import { $, dialog, el, showError } from "./dom.js";
import { emit, on } from "./store.js";
import * as sessions from "./sessions.js";

const REWIND_CONFLICT = -32030;

let sessionId = null;
let byTurn = new Map(); // turnId → checkpoint
let ordered = []; // the checkpoints, oldest first
let pending = null; // {kind: "rewind"|"fork", checkpoint, force}

const confirmDialog = dialog("checkpoint-dialog");

/** Reads the session's checkpoints and puts the buttons on its prompts. */
async function refresh() {
  const reading = sessionId;
  if (!reading) return;
  let answer;
  try {
    answer = await rpc.call("session/checkpoints", { sessionId: reading });
  } catch {
    return; // an older daemon, or the connection went: no buttons
  }
  if (reading !== sessionId) return;
  ordered = answer.checkpoints || [];
  byTurn = new Map(ordered.map((c) => [c.turnId, c]));
  decorate();
}

function decorate() {
  for (const node of document.querySelectorAll("#transcript .msg.user")) {
    const checkpoint = byTurn.get(node.dataset.turn);
    // Beside the prompt, not in it: the prompt's text stays what was typed.
    const next = node.nextElementSibling;
    if (!checkpoint || (next && next.classList.contains("checkpoint-actions"))) continue;
    node.after(
      el(
        "div",
        { class: "checkpoint-actions" },
        el("button", { type: "button", class: "rewind-here", onclick: () => confirm("rewind", checkpoint) }, "Rewind to here"),
        el("button", { type: "button", class: "fork-here", onclick: () => confirm("fork", checkpoint) }, "Fork from here"),
      ),
    );
  }
}

/** The paths the turns from `checkpoint` on changed: what a rewind to it puts back. */
function filesSince(checkpoint) {
  const files = new Map();
  for (const c of ordered.slice(ordered.indexOf(checkpoint))) {
    for (const f of c.changedFiles || []) if (!files.has(f.path)) files.set(f.path, f.change);
  }
  return [...files.keys()].sort();
}

function confirm(kind, checkpoint) {
  pending = { kind, checkpoint, force: false };
  showError("checkpoint-error", null);
  const list = $("checkpoint-files");
  list.replaceChildren();
  if (kind === "rewind") {
    $("checkpoint-h").textContent = "Rewind to here?";
    const files = filesSince(checkpoint);
    $("checkpoint-text").textContent = `The conversation goes back to before “${checkpoint.prompt}” (the later turns stay stored, hidden from the model), and ${files.length ? "these files are put back as they were:" : "no file was changed since."}`;
    for (const path of files) list.append(el("li", {}, path));
    $("checkpoint-confirm").textContent = "Rewind";
  } else {
    $("checkpoint-h").textContent = "Fork from here?";
    $("checkpoint-text").textContent = `A new session, in the same directory, whose history is this conversation before “${checkpoint.prompt}”. This session is not changed.`;
    $("checkpoint-confirm").textContent = "Fork";
  }
  confirmDialog.showModal();
}

$("checkpoint-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!pending || !sessionId) return;
  const { kind, checkpoint, force } = pending;
  try {
    if (kind === "rewind") {
      // The `session_rewound` event that follows reloads the session.
      await rpc.call("session/rewind", { sessionId, checkpointId: checkpoint.checkpointId, force });
    } else {
      const fork = await rpc.call("session/fork", { sessionId, checkpointId: checkpoint.checkpointId });
      await sessions.refresh();
      emit("open", { sessionId: fork.sessionId });
    }
  } catch (e) {
    if (e.code === REWIND_CONFLICT) {
      const conflicts = (e.data && e.data.conflicts) || [];
      $("checkpoint-text").textContent = "Nothing was changed: these files were changed outside the agent since then. Overwrite them?";
      $("checkpoint-files").replaceChildren(...conflicts.map((c) => el("li", {}, `${c.path} (${c.reason})`)));
      $("checkpoint-confirm").textContent = "Overwrite";
      pending.force = true;
      return;
    }
    showError("checkpoint-error", e);
    return;
  }
  pending = null;
  confirmDialog.close();
});

on("opened", ({ sessionId: id }) => {
  sessionId = id;
  byTurn = new Map();
  ordered = [];
});
on("loaded", () => refresh());
on("closed", () => {
  sessionId = null;
});
on("update", (p) => {
  if (p.sessionId !== sessionId) return;
  if (p.type === "turn_complete") {
    // A prompt typed here shows under a local id until its turn is known.
    const local = [...document.querySelectorAll('#transcript .msg.user[data-turn="local"]')].pop();
    if (local && p.turnId) local.dataset.turn = p.turnId;
    refresh();
  } else if (p.type === "session_rewound") {
    emit("open", { sessionId });
  }
});
