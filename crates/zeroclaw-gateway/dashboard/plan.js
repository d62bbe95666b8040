// The agent's plan: the checklist its `todo_write` tool keeps, shown above the prompt box
// of the open session. Each `plan` event carries the whole list, so the panel is redrawn
// from it (☐ pending, ◐ in progress, ☑ completed); the replay of a session's history
// carries its plan events in order, so a reload or another window ends on the same list.
// Folded away with its summary line; hidden while the session has no plan. A subagent's
// plan events (tagged `parentToolCallId`) are its own, shown in its block (subagents.js).
//
// State: the open session's id and its latest entries. Listens to "opened", "closed" and
// "update" on the store.

import { $, el } from "./dom.js";
import { on } from "./store.js";

let sessionId = null;

const MARKS = { pending: "☐", in_progress: "◐", completed: "☑" };

function show(entries) {
  const panel = $("plan");
  const list = $("plan-list");
  list.replaceChildren(
    ...entries.map((entry) =>
      el("li", { class: `plan-entry ${entry.status}`, "data-status": entry.status }, el("span", { class: "mark", "aria-hidden": "true" }, MARKS[entry.status] || "☐"), el("span", { class: "content" }, entry.content)),
    ),
  );
  const done = entries.filter((e) => e.status === "completed").length;
  $("plan-summary").textContent = `Plan · ${done}/${entries.length} done`;
  panel.hidden = entries.length === 0;
}

function clear() {
  $("plan-list").replaceChildren();
  $("plan").hidden = true;
}

on("opened", (detail) => {
  sessionId = detail.sessionId;
  clear();
});

on("closed", () => {
  sessionId = null;
  clear();
});

on("update", (p) => {
  // A subagent's plan (tagged `parentToolCallId`) is shown in its block (subagents.js).
  if (p.type !== "plan" || p.sessionId !== sessionId || p.parentToolCallId) return;
  show(Array.isArray(p.entries) ? p.entries : []);
});
