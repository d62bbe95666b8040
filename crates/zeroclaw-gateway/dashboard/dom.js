// Helpers every view builds the page with: element lookup, element building (text always
// as text nodes, never parsed as HTML), the dialogs' plumbing, and the human forms of
// durations and dates. No state.

export const $ = (id) => document.getElementById(id);

/** `el("div", {class: "x", onclick: f}, child, "text")`: text children become text nodes. */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === false || value === null || value === undefined) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** The native <dialog> `id`, its Cancel buttons (`data-close`) closing it (Escape does too). */
export function dialog(id) {
  const node = $(id);
  for (const button of node.querySelectorAll("[data-close]")) button.addEventListener("click", () => node.close());
  return node;
}

/** Shows `e`'s message in a dialog's error line `id`, or hides the line (`e` null). */
export function showError(id, e) {
  const p = $(id);
  p.textContent = e ? e.message : "";
  p.hidden = !e;
}

/** `3d 4h`, `2h 5m`, `1m 30s`, `12s`: the two largest units. */
export function duration(ms) {
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

/** How long ago an ISO time was: "just now", "5 min ago", "3 h ago", else the date. */
export function ago(iso) {
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((Date.now() - t) / 1000));
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString();
}
