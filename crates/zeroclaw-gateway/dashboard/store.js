// The store: the event bus the dashboard's modules talk through. Each module owns its own
// state and announces what changed here; the others listen for what concerns them and
// re-render from their own state. That keeps the imports one-way (no view imports a view
// that imports it back) and makes the order of the listeners irrelevant. It holds no state
// of its own but the listeners.
//
// The events (emitted by: detail):
//   connection  connection.js  {state: "connecting" | "up" | "down" | "signed-out", delay}
//   update      connection.js  the params of a `session/update` notification
//   open        any view       {sessionId}: please open this session
//   opened      chat.js        {sessionId}: the chat view shows it and is replaying its history
//   loaded      chat.js        {sessionId, turnId}: the replay is done (turnId: a turn runs)
//   closed      chat.js        {}: no session is open
//   running     sessions.js    {sessionId, running}: a session's turn started or ended
//   listed      sessions.js    {}: the session list was read again

const listeners = new Map();

/** Calls `listener(detail)` on every `type` event from now on. */
export function on(type, listener) {
  if (!listeners.has(type)) listeners.set(type, []);
  listeners.get(type).push(listener);
}

/**
 * Hands `detail` to every listener of `type`, at once. One failing listener is reported
 * (as an uncaught error would be) and does not keep the event from the others.
 */
export function emit(type, detail = {}) {
  for (const listener of listeners.get(type) || []) {
    try {
      listener(detail);
    } catch (error) {
      reportError(error);
    }
  }
}
