//! Reading sessions: `session/list` (a page of summaries, searched) and
//! `session/messages` (a page of a session's history); each page fits in one frame.

use super::{cut, ensure_exists, summary};
use crate::methods::errors::storage;
use crate::methods::{Ctx, Handle, Reply};
use crate::state::DaemonState;
use zeroclaw_agent::history;
use zeroclaw_agent::store::{ListQuery, SessionRow};
use zeroclaw_protocol::methods::{self as m, *};
use zeroclaw_rpc::RpcError;

const DEFAULT_PAGE: usize = 100;
const MAX_PAGE: usize = 1000;
const DEFAULT_LIST_PAGE: usize = 200;
/// The longest `session/list` `search`: matching reads every row it passes, so the
/// needle stays short.
const MAX_SEARCH_BYTES: usize = 1024;
/// The longest `session/list` `cwd`: a path, compared whole through an index.
const MAX_CWD_BYTES: usize = 4096;

/// What one page of `session/list` or `session/messages` may take, serialised: half the
/// frame cap, so the page and its envelope always fit in one frame.
fn page_budget(daemon: &DaemonState) -> usize {
    daemon.config.daemon.max_frame_bytes / 2
}

/// The serialised size of `value`, counted without building the text.
fn json_size<T: serde::Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Our types serialise without error; a failure only undercounts.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

impl Handle for m::SessionList {
    fn handle(ctx: Ctx, p: ListParams) -> Reply<SessionListResult> {
        Reply::later(async move {
            let daemon = &ctx.0.daemon;
            let limit = p.limit.unwrap_or(DEFAULT_LIST_PAGE).clamp(1, MAX_PAGE);
            let after = p.cursor.as_deref().map(ListCursor::parse).transpose()?;
            let search = p.search.filter(|s| !s.is_empty());
            if search.as_ref().is_some_and(|s| s.len() > MAX_SEARCH_BYTES) {
                return Err(RpcError::invalid_params(format!(
                    "`search` is longer than {MAX_SEARCH_BYTES} bytes"
                )));
            }
            if p.cwd.as_ref().is_some_and(|cwd| cwd.len() > MAX_CWD_BYTES) {
                return Err(RpcError::invalid_params(format!(
                    "`cwd` is longer than {MAX_CWD_BYTES} bytes"
                )));
            }
            let query = ListQuery {
                after: after.map(|c| (c.updated_at, c.id)),
                search,
                cwd: p.cwd,
                children: p.include_children,
            };
            // One row more than the page, to know whether another page follows. The cursor
            // is the last row sent, so the next page starts right after it wherever the
            // rows have moved meanwhile.
            let rows = daemon
                .agent
                .sessions
                .store
                .sessions_page(query, limit + 1)
                .await
                .map_err(storage)?;
            let budget = page_budget(daemon);
            let mut used = 0;
            let mut sessions = Vec::new();
            for row in rows.iter().take(limit) {
                let summary = summary(daemon, row);
                used += json_size(&summary) + 1;
                if used > budget && !sessions.is_empty() {
                    break;
                }
                sessions.push(summary);
            }
            let next_cursor =
                (sessions.len() < rows.len()).then(|| ListCursor::of(&rows[sessions.len() - 1]));
            Ok(SessionListResult {
                sessions,
                next_cursor,
            })
        })
    }
}

/// Where a `session/list` page ended: the last row's `(updated_at, id)`, as
/// `<updated_at>:<id>`. Clients treat it as opaque.
struct ListCursor {
    updated_at: i64,
    id: String,
}

impl ListCursor {
    fn of(row: &SessionRow) -> String {
        format!("{}:{}", row.updated_at, row.id)
    }

    fn parse(text: &str) -> Result<Self, RpcError> {
        text.split_once(':')
            .and_then(|(at, id)| {
                Some(Self {
                    updated_at: at.parse().ok()?,
                    id: id.to_owned(),
                })
            })
            .ok_or_else(|| {
                RpcError::invalid_params(
                    "`cursor` is not one `session/list` gave; pass a page's `nextCursor` back unchanged",
                )
            })
    }
}

impl Handle for m::SessionMessages {
    fn handle(ctx: Ctx, p: MessagesParams) -> Reply<MessagePage> {
        Reply::later(messages(ctx, p))
    }
}

async fn messages(ctx: Ctx, p: MessagesParams) -> Result<MessagePage, RpcError> {
    let daemon = &ctx.0.daemon;
    ensure_exists(daemon, &p.session_id).await?;
    let limit = p.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    let (rows, total) = daemon
        .agent
        .sessions
        .store
        .messages(&p.session_id, limit, p.before, p.include_hidden)
        .await
        .map_err(storage)?;
    // Newest first, so a page cut by bytes keeps the messages next to `before` and the
    // client pages on from its first message.
    let budget = page_budget(daemon);
    let mut used = 0;
    let mut messages = Vec::new();
    for row in rows.iter().rev() {
        let mut message = history::message(row);
        let mut size = json_size(&message) + 1;
        if size > budget / 2 {
            shrink(&mut message, budget / 4);
            size = json_size(&message) + 1;
        }
        used += size;
        if used > budget && !messages.is_empty() {
            break;
        }
        messages.push(message);
    }
    let byte_limited = messages.len() < rows.len();
    messages.reverse();
    Ok(MessagePage {
        messages,
        total: u64::try_from(total).unwrap_or(0),
        byte_limited,
    })
}

/// Makes one message too large for a page fit in `max` bytes or so: its text cut, a large
/// `rawInput`/`rawOutput` replaced by a note of its size. The whole of it stays stored.
fn shrink(message: &mut zeroclaw_protocol::Message, max: usize) {
    if let Some(text) = message.text.as_deref().and_then(|t| cut(t, max)) {
        message.text = Some(text);
        message.truncated = true;
    }
    for raw in [&mut message.raw_input, &mut message.raw_output] {
        let Some(value) = raw.as_ref() else { continue };
        let size = json_size(value);
        if size > max {
            *raw = Some(serde_json::Value::String(format!(
                "[{size} bytes, too large for a page of session/messages; not shown]"
            )));
            message.truncated = true;
        }
    }
}
