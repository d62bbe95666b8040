// The open session's usage, in its head: the context gauge (how much of the model's window
// the conversation took at its last model call: used / size, the percent, a small bar) and
// the session's cost when the daemon prices its calls (`[provider.pricing]`; a number and
// the prices' ISO 4217 `currency`, `cost 0.0120 USD`). Filled from `session/usage` when a session opens, then from each
// `usage_update` of its turns (docs/protocol.md §9, §10). A subagent's `usage_update`
// (tagged `parentToolCallId`) counts in the child's session, so it is not shown here.
//
// State: the open session's id, and whether a `usage_update` came after `session/usage`
// was asked (then the answer, counted before it, is older and is dropped).

import { METHOD_NOT_FOUND, rpc } from "./connection.js";
import { $ } from "./dom.js";
import { on } from "./store.js";

let shown = null; // {sessionId, live: a usage_update came since session/usage was asked}

/** `1234567` → `1,234,567`, whatever the browser's locale (so the tests read it too). */
export function count(n) {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** A cost to three significant digits (`0.00420`, `0.210`), at least two decimals. */
export function money(cost) {
  if (cost <= 0) return "0.00";
  const decimals = cost >= 1 ? 2 : Math.min(8, 2 - Math.floor(Math.log10(cost)));
  return cost.toFixed(decimals);
}

/** The percent of the window used: whole, and "<1%" rather than a misleading 0. */
function percent(used, size) {
  if (!size) return "";
  const p = (used / size) * 100;
  if (used > 0 && p < 1) return " (<1%)";
  return ` (${Math.round(p)}%)`;
}

/** Shows `u`: `{contextUsed, contextSize, inputTokens, outputTokens, cost?, currency?, estimated?}`. */
function show(u) {
  const used = Number(u.contextUsed) || 0;
  const size = Number(u.contextSize) || 0;
  if (!size) {
    $("usage").hidden = true;
    return;
  }
  const meter = $("context-meter");
  meter.max = size;
  meter.low = size * 0.7;
  meter.high = size * 0.9;
  meter.optimum = 0;
  meter.value = Math.min(used, size);
  $("context-label").textContent = `context ${count(used)} / ${count(size)} tokens${percent(used, size)}`;
  const estimated = u.estimated ? " (estimated)" : "";
  $("usage").title = `this session: ${count(u.inputTokens || 0)} in · ${count(u.outputTokens || 0)} out tokens${estimated}`;
  const cost = $("session-cost");
  cost.hidden = typeof u.cost !== "number";
  const currency = typeof u.currency === "string" ? ` ${u.currency}` : "";
  cost.textContent = cost.hidden ? "" : `· cost ${money(u.cost)}${currency}${estimated}`;
  $("usage").hidden = false;
}

async function read(sessionId) {
  const reading = { sessionId, live: false };
  shown = reading;
  let answer;
  try {
    answer = await rpc.call("session/usage", { sessionId });
  } catch (e) {
    // An older daemon has no usage to show; any other failure keeps what is shown.
    if (e.code === METHOD_NOT_FOUND && shown === reading) $("usage").hidden = true;
    return;
  }
  if (shown === reading && !reading.live) show(answer);
}

on("opened", ({ sessionId }) => {
  // Another session: nothing of the last one's stays. The same one again (a reconnect):
  // its gauge stays until the new answer.
  if (!shown || shown.sessionId !== sessionId) $("usage").hidden = true;
  read(sessionId);
});

on("closed", () => {
  shown = null;
});

on("update", (p) => {
  if (p.type !== "usage_update" || !shown || shown.sessionId !== p.sessionId) return;
  if (typeof p.parentToolCallId === "string") return;
  shown.live = true;
  show({ contextUsed: p.contextUsed, contextSize: p.contextSize, currency: p.currency, ...(p.session || {}) });
});
