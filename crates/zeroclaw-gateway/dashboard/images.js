// Images in prompts (docs/protocol.md §9: `session/prompt`'s `content`, `session/attachment`).
//
// The prompt box's pending images: added with the Image… button's file picker, dropped on
// the open session or pasted into the prompt box; shown as thumbnails, each with a remove
// button; checked here against the daemon's limits so a refusal is immediate and names the
// file (PNG, JPEG, GIF or WebP by their first bytes, whatever the file's name says; at most
// 5 MiB each, 10 a prompt, 10 MiB together); sent as `image` blocks, base64.
//
// A stored prompt's images: the history names them (`images: [{attachmentId, mimeType,
// size}]` on a `user_message_chunk`), `session/attachment` answers their bytes over the
// same connection, and they are shown through blob: URLs (the page's policy has
// `img-src 'self' blob:`, never data:).
//
// State: the pending images (file, type, object URL), and the object URLs the transcript
// shows, given back to the browser when the transcript is rebuilt.

import { rpc } from "./connection.js";
import { $, el } from "./dom.js";
import { on } from "./store.js";

const MiB = 1024 * 1024;
const MAX_IMAGE = 5 * MiB;
const MAX_TOTAL = 10 * MiB;
const MAX_COUNT = 10;

let pending = []; // [{name, mimeType, size, file, url}]
let shown = new Set(); // the object URLs on the transcript

/** The image type of `bytes` (a file's first 12) by its magic number, or null. */
function sniff(bytes) {
  const starts = (offset, ...b) => b.every((v, i) => bytes[offset + i] === v);
  if (starts(0, 0x89, 0x50, 0x4e, 0x47)) return "image/png";
  if (starts(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0, 0x47, 0x49, 0x46, 0x38)) return "image/gif";
  if (starts(0, 0x52, 0x49, 0x46, 0x46) && starts(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp";
  return null;
}

/** A file's size in words; MiB rounded up, so a file just over the limit never reads as at it. */
function size(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < MiB) return `${Math.ceil(bytes / 1024)} KiB`;
  return `${(Math.ceil((bytes / MiB) * 10) / 10).toFixed(1)} MiB`;
}

function showError(messages) {
  $("attach-error").textContent = messages.join(" ");
  $("attach-error").hidden = messages.length === 0;
}

function render() {
  $("attachments").hidden = pending.length === 0;
  $("attachments").replaceChildren(
    ...pending.map((image) =>
      el(
        "li",
        { class: "attachment" },
        el("img", { src: image.url, alt: image.name, title: `${image.name}, ${size(image.size)}` }),
        el("button", { type: "button", class: "remove", "aria-label": `Remove ${image.name}`, title: "Remove", onclick: () => remove(image) }, "×"),
      ),
    ),
  );
}

function remove(image) {
  pending = pending.filter((p) => p !== image);
  URL.revokeObjectURL(image.url);
  showError([]);
  render();
  $("prompt").focus();
}

/** Adds `files` to the pending images, each checked; the refused are said by name. */
export async function add(files) {
  const refused = [];
  for (const file of files) {
    const name = file.name || "the pasted image";
    const mimeType = sniff(new Uint8Array(await file.slice(0, 12).arrayBuffer()));
    const total = pending.reduce((sum, p) => sum + p.size, 0);
    if (!mimeType) refused.push(`${name} is not a PNG, JPEG, GIF or WebP image; only those can be sent.`);
    else if (file.size > MAX_IMAGE) refused.push(`${name} is ${size(file.size)}; an image may be at most 5 MiB.`);
    else if (pending.length >= MAX_COUNT) refused.push(`${name} was not added: a prompt takes at most ${MAX_COUNT} images.`);
    else if (total + file.size > MAX_TOTAL) refused.push(`${name} was not added: a prompt's images may be at most 10 MiB together.`);
    else pending.push({ name, mimeType, size: file.size, file, url: URL.createObjectURL(file) });
  }
  showError(refused);
  render();
}

/** The pending images. */
export const count = () => pending.length;

/**
 * Takes the pending images out of the prompt box, to be sent: their thumbnails' URLs go on
 * to the transcript's echo of the prompt (`echo`).
 */
export function take() {
  const taken = pending;
  pending = [];
  showError([]);
  render();
  return taken;
}

/** Puts `images` (from `take`) back in the prompt box: their prompt was not sent after all. */
export function giveBack(images) {
  if (!images.length) return;
  pending = [...images, ...pending];
  render();
}

function base64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    // A data URL's text after its comma is the base64 of the bytes.
    reader.onload = () => resolve(String(reader.result).slice(String(reader.result).indexOf(",") + 1));
    reader.onerror = () => reject(new Error(`Could not read ${file.name}: ${reader.error?.message || "unreadable"}`));
    reader.readAsDataURL(file);
  });
}

/** `session/prompt`'s `content` for `images` (from `take`). */
export async function blocks(images) {
  return Promise.all(images.map(async (image) => ({ type: "image", mimeType: image.mimeType, data: await base64(image.file) })));
}

function figure(img) {
  img.addEventListener("click", () => img.classList.toggle("large"));
  return img;
}

/** The images of a prompt sent from this window, shown from their files. */
export function echo(images) {
  for (const image of images) shown.add(image.url);
  return el("div", { class: "images" }, ...images.map((image) => figure(el("img", { src: image.url, alt: image.name, title: image.name }))));
}

function decode(data) {
  const text = atob(data);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** Reads attachment `a`'s bytes (`session/attachment`) into `img`, as a blob: URL. */
async function load(sessionId, a, img) {
  let answer;
  try {
    answer = await rpc.call("session/attachment", { sessionId, attachmentId: a.attachmentId });
  } catch (e) {
    img.alt = `${img.alt}: could not be read (${e.message})`;
    img.classList.add("missing");
    return;
  }
  // The transcript was rebuilt meanwhile: nothing shows it.
  if (!img.isConnected) return;
  const url = URL.createObjectURL(new Blob([decode(answer.data)], { type: answer.mimeType }));
  shown.add(url);
  img.src = url;
}

/** The images a stored prompt names (`[{attachmentId, mimeType, size}]`), read and shown. */
export function stored(sessionId, images) {
  const node = el("div", { class: "images" });
  for (const a of images) {
    const img = figure(el("img", { alt: `image (${a.mimeType}, ${size(a.size)})`, "data-attachment": a.attachmentId }));
    node.append(img);
    load(sessionId, a, img);
  }
  return node;
}

// The transcript is rebuilt (a session opened, or re-opened after a reconnect): the images
// it showed are gone with it.
on("opened", () => {
  for (const url of shown) URL.revokeObjectURL(url);
  shown = new Set();
});

$("attach").addEventListener("click", () => $("image-input").click());

$("image-input").addEventListener("change", async () => {
  const files = [...$("image-input").files];
  // The same file can be picked again after it was removed.
  $("image-input").value = "";
  await add(files);
});

/** A drag carrying files (not text or a link from the page). */
const carriesFiles = (event) => [...(event.dataTransfer?.types || [])].includes("Files");

// Dropped anywhere on the open session; elsewhere a drop is refused rather than letting the
// browser leave the page to show the file.
document.addEventListener("dragover", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  event.dataTransfer.dropEffect = $("session").hidden ? "none" : "copy";
});

document.addEventListener("drop", (event) => {
  if (!carriesFiles(event)) return;
  event.preventDefault();
  if (!$("session").hidden) add([...event.dataTransfer.files]);
});

// Pasted image files become pending images; text pasted with them still goes in the box.
$("prompt").addEventListener("paste", (event) => {
  const data = event.clipboardData;
  const files = [...(data?.files || [])].filter((f) => f.type.startsWith("image/"));
  if (!files.length) return;
  if (!data.types.includes("text/plain")) event.preventDefault();
  add(files);
});
