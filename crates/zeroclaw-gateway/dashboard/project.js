// The open session's project (docs/project.md): "Context" in the session's head shows what
// its turns load (`session/context`: the project root, the AGENTS.md/CLAUDE.md files, the
// skills, the custom commands, and what was skipped and why), and the prompt box completes
// the project's custom commands: typing `/` at its start lists them (ArrowUp/ArrowDown to
// move, Tab or Enter to take one, Escape to close), and a prompt `/NAME ARGS` naming one is
// expanded by the daemon (`commands/expand`) before it is sent. The dashboard has no slash
// commands of its own, so any other `/…` is sent as typed.
//
// State: the open session, its custom commands as last listed (on open, and again when the
// prompt box gets the focus: a command file added meanwhile completes), and the completion
// list's matches and selected row.

import { rpc } from "./connection.js";
import { $, dialog, el } from "./dom.js";
import { on } from "./store.js";

let sessionId = null;
let commands = []; // [{name, description, argumentHint, path}]
let matches = []; // the commands the list shows
let selected = 0;

const contextDialog = dialog("context-dialog");

/** Lists the session's custom commands again (nothing from an older daemon). */
async function refresh() {
  const reading = sessionId;
  if (!reading) return;
  let answer;
  try {
    answer = await rpc.call("commands/list", { sessionId: reading });
  } catch {
    return;
  }
  if (reading === sessionId) commands = answer.commands || [];
}

on("loaded", ({ sessionId: id }) => {
  sessionId = id;
  commands = [];
  close();
  refresh();
});

on("closed", () => {
  sessionId = null;
  commands = [];
  close();
});

// ---------------------------------------------------------------------------------------
// Completion in the prompt box.

/** The command name being typed: the box holds `/` and a name so far, nothing else. */
function typedName() {
  const m = /^\/([\w.-]*)$/.exec($("prompt").value);
  return m ? m[1] : null;
}

function close() {
  matches = [];
  const list = $("command-list");
  list.hidden = true;
  list.replaceChildren();
  $("prompt").removeAttribute("aria-activedescendant");
  $("prompt").setAttribute("aria-expanded", "false");
}

function render() {
  const list = $("command-list");
  list.replaceChildren(
    ...matches.map((c, i) =>
      el(
        "li",
        { id: `command-${i}`, role: "option", class: "command", "aria-selected": i === selected ? "true" : "false", onmousedown: (event) => { event.preventDefault(); take(i); } },
        el("span", { class: "name" }, `/${c.name}`),
        c.argumentHint ? el("span", { class: "hint" }, ` ${c.argumentHint}`) : null,
        c.description ? el("span", { class: "about" }, c.description) : null,
      ),
    ),
  );
  list.hidden = matches.length === 0;
  $("prompt").setAttribute("aria-expanded", matches.length ? "true" : "false");
  if (matches.length) $("prompt").setAttribute("aria-activedescendant", `command-${selected}`);
}

function update() {
  const name = typedName();
  if (name === null) return close();
  matches = commands.filter((c) => c.name.startsWith(name));
  selected = Math.min(selected, Math.max(0, matches.length - 1));
  render();
}

/** Puts `/NAME ` in the box, ready for the arguments. */
function take(i) {
  const c = matches[i];
  if (!c) return;
  $("prompt").value = `/${c.name} `;
  close();
  $("prompt").focus();
}

$("prompt").addEventListener("input", () => {
  selected = 0;
  update();
});
$("prompt").addEventListener("focus", async () => {
  await refresh();
  update();
});
$("prompt").addEventListener("blur", close);

// On the form, in the capture phase: it runs before the box's own Enter-sends handler
// (chat.js), so Enter takes the selected command instead of sending `/na`.
$("prompt-form").addEventListener(
  "keydown",
  (event) => {
    if (event.target !== $("prompt") || matches.length === 0 || event.isComposing) return;
    const keys = {
      ArrowDown: () => { selected = (selected + 1) % matches.length; render(); },
      ArrowUp: () => { selected = (selected + matches.length - 1) % matches.length; render(); },
      Tab: () => take(selected),
      Enter: () => take(selected),
      Escape: close,
    };
    const act = event.shiftKey ? null : keys[event.key];
    if (!act) return;
    event.preventDefault();
    event.stopPropagation();
    act();
  },
  true,
);

/**
 * What to send for the prompt `text`: a custom command's prompt when it is `/NAME ARGS`
 * naming one (expanded by the daemon), else `text` itself. Throws the daemon's error when
 * the expansion fails (the prompt is then not sent).
 */
export async function expand(id, text) {
  const m = /^\/([\w.-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!m || !commands.some((c) => c.name === m[1])) return text;
  const answer = await rpc.call("commands/expand", { sessionId: id, name: m[1], arguments: m[2] || "" });
  return answer.prompt;
}

// ---------------------------------------------------------------------------------------
// The context dialog.

function section(title, items) {
  return [el("h3", {}, title), items.length ? el("ul", {}, ...items) : el("p", { class: "muted" }, "none")];
}

$("context").addEventListener("click", async () => {
  if (!sessionId) return;
  const body = $("context-body");
  body.replaceChildren(el("p", { class: "muted" }, "Reading…"));
  contextDialog.showModal();
  let c;
  try {
    c = await rpc.call("session/context", { sessionId });
  } catch (e) {
    body.replaceChildren(el("p", { class: "error" }, `Could not read the context: ${e.message}`));
    return;
  }
  body.replaceChildren(
    el("p", {}, "Project root ", el("code", {}, c.projectRoot)),
    ...section(
      "Instructions",
      (c.instructions || []).map((f) => el("li", { class: "instruction" }, el("code", {}, f.path), ` ${f.bytes} bytes${f.truncated ? ", cut" : ""}`)),
    ),
    ...section(
      "Skills",
      (c.skills || []).map((s) => el("li", { class: "skill" }, el("strong", {}, s.name), ` ${s.description}`)),
    ),
    ...section(
      "Commands",
      (c.commands || []).map((m) => el("li", { class: "command" }, el("code", {}, `/${m.name}${m.argumentHint ? ` ${m.argumentHint}` : ""}`), m.description ? ` ${m.description}` : "")),
    ),
    ...((c.warnings || []).length ? section("Skipped", c.warnings.map((w) => el("li", { class: "warning" }, w))) : []),
  );
});
