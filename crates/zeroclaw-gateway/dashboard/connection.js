// The connection to the daemon: JSON-RPC 2.0 over the gateway's /rpc WebSocket, with the
// dashboard session authenticating it (the cookie, and the session's proof, below, as a
// subprotocol), reconnecting with backoff, and the header's indicator of its state. The
// page is one more client of the protocol, exactly as zerocode is over the socket; its
// only other request is `GET /api/v1/status`, to tell "signed out" from "daemon away" when
// the WebSocket cannot open.
//
// State: the socket, the calls awaiting their answer, the backoff's attempt and timer, the
// handlers of the daemon's requests (`serve`), and whether this tab's proof is known good.
// It announces its state ("connection") and every `session/update` notification
// ("update") on the store.

import { $ } from "./dom.js";
import { emit } from "./store.js";

export const LOST = -1; // our own code for calls cut by a lost connection
export const METHOD_NOT_FOUND = -32601;
export const NOT_PENDING = -32602;
export const INVALID_PARAMS = -32602; // a prompt refused before it ran (a bad image, a model that takes none)
export const SESSION_BUSY = -32002;
export const NO_TURN_RUNNING = -32005; // session/steer with no turn running

export class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

// ---------------------------------------------------------------------------------------
// The dashboard session's proof (docs/gateway.md#authentication). The cookie alone is
// refused (every other server on this host receives it too); the proof is readable by this
// origin only (scheme, host and port). It lives in sessionStorage: this tab's, kept across
// reloads (login.js puts it there). A new tab asks the open tabs of this origin for it
// (BroadcastChannel: same origin only) and, if none answers, is signed out until a new
// login link.

const KEY = "zeroclaw.proof"; // login.js keeps it under this name
const CHANNEL = "zeroclaw.proof";
const channels = "BroadcastChannel" in window;

let vouched = false; // only a connected tab's proof is known good, so only it answers
let answering = null;

/** This tab's proof, or null. */
const proof = () => sessionStorage.getItem(KEY);

/** From now on, hands this tab's proof to a new tab that asks, while it is known good. */
function answerOtherTabs() {
  if (!channels || answering) return;
  answering = new BroadcastChannel(CHANNEL);
  answering.onmessage = (event) => {
    if (event.data?.type === "ask" && vouched && proof()) {
      answering.postMessage({ type: "proof", proof: proof() });
    }
  };
}

/** A proof another tab holds (other than `except`), or null when none answers within a second. */
function askOtherTabs(except) {
  if (!channels) return Promise.resolve(null);
  return new Promise((resolve) => {
    // A channel of this ask's own, closed once answered or timed out. (This tab's answering
    // channel hears the ask too, but this tab is not connected while it asks, so it stays
    // silent; and its own proof is `except`.)
    const asking = new BroadcastChannel(CHANNEL);
    const done = (value) => {
      clearTimeout(timer);
      asking.close();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), 1000);
    asking.onmessage = (event) => {
      if (event.data?.type === "proof" && typeof event.data.proof === "string" && event.data.proof !== except) {
        done(event.data.proof);
      }
    };
    asking.postMessage({ type: "ask" });
  });
}

/** Takes another tab's proof if there is one; true when one was found. */
async function adoptProof() {
  const found = await askOtherTabs(proof());
  if (found) sessionStorage.setItem(KEY, found);
  return found !== null;
}

// ---------------------------------------------------------------------------------------
// JSON-RPC over the WebSocket.

const served = new Map(); // method → handler of the daemon's requests

/** Has `handler(frame)` answer the daemon's `method` requests (through `respond`). */
export function serve(method, handler) {
  served.set(method, handler);
}

/** The connection's state, shown in the header and announced to the other modules. */
function setState(what, delay) {
  vouched = what === "up";
  const conn = $("conn");
  conn.dataset.state = what;
  $("retry").hidden = what !== "down";
  $("signin").hidden = what !== "signed-out";
  document.body.dataset.conn = what;
  conn.textContent = {
    up: "connected",
    connecting: "connecting…",
    down: `connection lost; retrying in ${Math.round(delay / 100) / 10} s`,
    "signed-out": "signed out",
  }[what];
  emit("connection", { state: what, delay });
}

class Rpc {
  constructor() {
    this.ws = null;
    this.next = 1;
    this.pending = new Map();
    this.attempt = 0;
    this.timer = null;
  }

  open() {
    clearTimeout(this.timer);
    setState("connecting");
    // At most one socket: an attempt still under way is dropped first (its events would
    // arrive twice otherwise).
    if (this.ws) {
      const old = this.ws;
      this.ws = null;
      old.onmessage = null;
      old.close();
    }
    const protocols = ["zeroclaw.v1"];
    if (proof()) protocols.push(`zeroclaw.proof.${proof()}`);
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/rpc`, protocols);
    this.ws = ws;
    let opened = false;
    ws.onmessage = (message) => this.receive(message.data);
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const call of this.pending.values()) call.reject(new RpcError(LOST, "the connection was lost"));
      this.pending.clear();
      if (opened) this.retry();
      else this.diagnose();
    };
    ws.onopen = async () => {
      performance.mark("zeroclaw:ws-open");
      opened = true;
      try {
        this.info = await this.call("initialize", {
          protocolVersion: 1,
          clientInfo: { name: "zeroclaw-dashboard", version: "1" },
          capabilities: { elicitation: {} },
        });
      } catch {
        ws.close();
        return;
      }
      performance.mark("zeroclaw:initialized");
      this.attempt = 0;
      setState("up");
    };
  }

  /**
   * The upgrade was refused or the daemon is away: the WebSocket API cannot tell which, so
   * a plain request asks. A 401 means "signed out" (no point retrying) unless another tab
   * holds a newer proof (it signed in again); anything else is retried.
   */
  async diagnose() {
    try {
      const headers = proof() ? { "zeroclaw-proof": proof() } : {};
      const answer = await fetch("/api/v1/status", { credentials: "same-origin", cache: "no-store", headers });
      if (answer.status === 401) {
        if (await adoptProof()) {
          this.open();
          return;
        }
        setState("signed-out");
        return;
      }
    } catch {
      // The daemon is away: retry.
    }
    this.retry();
  }

  /** Backoff: 0.5 s, 1 s, 2 s, … up to 10 s between attempts. */
  retry() {
    const delay = Math.min(10_000, 500 * 2 ** this.attempt);
    this.attempt++;
    setState("down", delay);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.open(), delay);
  }

  retryNow() {
    this.attempt = 0;
    this.open();
  }

  get up() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  call(method, params = {}) {
    return new Promise((resolve, reject) => {
      if (!this.up) {
        reject(new RpcError(LOST, "not connected to the daemon"));
        return;
      }
      const id = this.next++;
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    });
  }

  respond(id, result) {
    if (this.up) this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, result }));
  }

  respondError(id, code, message) {
    if (this.up) this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }));
  }

  receive(text) {
    let frame;
    try {
      frame = JSON.parse(text);
    } catch {
      return;
    }
    if (typeof frame.method === "string") {
      if ("id" in frame) this.request(frame);
      else if (frame.method === "session/update") emit("update", frame.params || {});
      return;
    }
    const call = this.pending.get(frame.id);
    if (!call) return;
    this.pending.delete(frame.id);
    if (frame.error) call.reject(new RpcError(frame.error.code, frame.error.message, frame.error.data));
    else call.resolve(frame.result);
  }

  request(frame) {
    const handler = served.get(frame.method);
    if (handler) handler(frame);
    else this.respondError(frame.id, METHOD_NOT_FOUND, `the dashboard does not serve ${frame.method}`);
  }
}

/** The one connection of this page. */
export const rpc = new Rpc();

/** Opens the connection; a tab without a proof (a new one) asks the other tabs first. */
export function connect() {
  answerOtherTabs();
  $("retry").addEventListener("click", () => rpc.retryNow());
  if (proof()) rpc.open();
  else adoptProof().then(() => rpc.open());
}
