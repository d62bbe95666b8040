// The daemon panel: the daemon's status (version, uptime, ticking each second, endpoint,
// gateway, connected clients, sessions running and stored, the provider and its model,
// the MCP servers and their state), and its recent unattended runs, each opening its
// session. Read again on every 5 s poll (app.js) and when a turn starts or ends.
//
// State: the last `status` answer and when it came (the uptime ticks on from it).

import { METHOD_NOT_FOUND, rpc } from "./connection.js";
import { $, ago, duration, el } from "./dom.js";
import { emit, on } from "./store.js";

let status = null;
let statusAt = 0;

export async function refresh() {
  try {
    status = await rpc.call("status");
    statusAt = Date.now();
  } catch {
    return;
  }
  render();
}

const uptime = () => duration(status.uptimeMs + (Date.now() - statusAt));

function render() {
  const s = status;
  const gateway = s.gateway ? s.gateway.url || `down: ${s.gateway.error}` : "off";
  const rows = [
    ["Version", s.serverVersion],
    ["Uptime", uptime()],
    ["Endpoint", s.endpoint],
    ["Gateway", gateway],
    ["Clients", String(s.clients)],
    ["Sessions", `${s.sessions.running} running of ${s.sessions.total}`],
  ];
  if (s.provider) rows.push(["Provider", `${s.provider.kind} · ${s.provider.model}`]);
  $("status-list").replaceChildren(...rows.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k.toLowerCase() }, v)]));
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

// The uptime ticks between reads (not while the daemon is out of reach: it may be gone).
setInterval(() => {
  if (status && rpc.up) {
    const up = document.querySelector('[data-field="uptime"]');
    if (up) up.textContent = uptime();
  }
}, 1000);

/** The ten most recent unattended runs (`runs/list`). */
export async function refreshRuns() {
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
      if (!r.sessionId) return el("li", {}, ...body);
      return el("li", {}, el("button", { type: "button", class: "link", onclick: () => emit("open", { sessionId: r.sessionId }) }, ...body));
    }),
  );
}

// A turn's start and end change the running count.
on("running", ({ running }) => {
  if (running) refresh();
});

on("update", (p) => {
  if (p.type === "turn_complete") refresh();
});
