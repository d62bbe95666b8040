// The zeroclaw dashboard, the page's entry: one more client of the daemon's protocol
// (docs/dashboard.md). Plain ES modules, no library, no build step; every piece of
// untrusted text reaches the page through text nodes (markdown.js, dom.js). The views
// each own their state and talk through the store (store.js):
//
//   connection.js  the WebSocket JSON-RPC connection and its reconnecting, the dashboard
//                  session's proof, the header's connection state
//   status.js      the daemon panel and the recent runs
//   sessions.js    the session list, its search, New session, which sessions run a turn
//   chat.js        the open session: replay, live events, prompt, Stop, Rename, Delete
//   transcript.js  the open session's transcript: text blocks, scrolling
//   approvals.js   tool call cards, their approval buttons, and the agent's questions
//   subagents.js   a `task` call's subagent inside its card: its events folded, its
//                  approvals, the link to its session
//   checkpoints.js "Rewind to here" and "Fork from here" on each prompt, with confirmations
//   plan.js        the agent's plan (`plan` events) as a live checklist above the prompt
//   usage.js       the open session's context gauge and cost in its head (`session/usage`,
//                  then each `usage_update`)
//   images.js      the prompt box's images (picker, drop, paste; checked, sent as `content`)
//                  and a stored prompt's images, read with `session/attachment`
//   project.js     the session's Context dialog, and `/` completion and expansion of the
//                  project's custom commands in the prompt box
//
// This module holds what happens on each connection: the page reads the daemon's state
// again every 5 s while connected, and on connecting reads it all, then rebuilds the open
// session from its history. State: the poll's timer.

import * as chat from "./chat.js";
import "./checkpoints.js";
import "./plan.js";
import "./usage.js";
import "./modes.js";
import { connect } from "./connection.js";
import * as sessions from "./sessions.js";
import * as status from "./status.js";
import { on } from "./store.js";

let poll = null;

function readAll() {
  return Promise.all([status.refresh(), sessions.refresh(), status.refreshRuns()]);
}

on("connection", async ({ state }) => {
  if (state === "down") clearInterval(poll);
  if (state !== "up") return;
  clearInterval(poll);
  poll = setInterval(readAll, 5000);
  // The list first: the session's head shows its listed entry while its history loads.
  await readAll();
  await chat.resume();
});

connect();
