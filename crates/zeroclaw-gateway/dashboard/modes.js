// The session's permission mode (docs/protocol.md, "Permission modes"): a picker in the
// session's head that calls `session/set_mode`, and follows `mode_changed` from every
// client (this window's own choice included, an accepted plan, another window, zerocode).
// A mode the daemon refuses (`auto` without a sandbox) is said under the picker, and the
// picker goes back to the session's mode.
//
// State: the open session's id and its mode as the daemon last said it.

import { rpc } from "./connection.js";
import { $, showError } from "./dom.js";
import { on } from "./store.js";

let open = null; // {sessionId, mode}

function show(mode) {
  if (!open) return;
  open.mode = mode;
  $("mode").value = mode;
  $("mode").dataset.mode = mode;
}

on("opened", ({ sessionId }) => {
  open = { sessionId, mode: "default" };
  showError("mode-error", null);
});

on("loaded", ({ sessionId, mode }) => {
  if (open && open.sessionId === sessionId) show(mode || "default");
});

on("closed", () => {
  open = null;
});

on("update", (p) => {
  // A subagent's (tagged `parentToolCallId`) is its own session's, not this one's.
  if (p.type === "mode_changed" && open && open.sessionId === p.sessionId && !p.parentToolCallId) show(p.mode);
});

$("mode").addEventListener("change", async () => {
  if (!open) return;
  const asked = $("mode").value;
  const was = open.mode;
  showError("mode-error", null);
  try {
    await rpc.call("session/set_mode", { sessionId: open.sessionId, mode: asked });
  } catch (e) {
    showError("mode-error", e);
    show(was);
  }
});
