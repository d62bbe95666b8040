//! A prompt's images, stored beside its message (`attachments`, schema version 14): the
//! message's `data` lists them (`{"images": [{mimeType, size}]}`), so a replay or a page of
//! messages shows what was sent without reading the bytes; a turn reads the bytes of the
//! prompts it sends the model (`Db::context` calls [`attach_images`]), and
//! `session/attachment` reads one.
//!
//! An image's id is `<message id>.<position>`: stable, unique within the store, and known
//! from the message row alone.

use super::{MessageRow, Result, Store, StoreError};
use crate::prompt::Image;
use crate::prompt::sent_images::newest_within_bound;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use zeroclaw_protocol::ImageRef;

/// The `data` of a prompt's message that carried `images`.
pub(super) fn message_data(images: &[Image]) -> Option<Value> {
    (!images.is_empty()).then(|| {
        json!({"images": images
            .iter()
            .map(|i| json!({"mimeType": i.mime_type, "size": i.data.len()}))
            .collect::<Vec<_>>()})
    })
}

/// Stores `images` as those of the message `message_id`, in order.
pub(super) fn insert(
    tx: &rusqlite::Transaction<'_>,
    session_id: &str,
    message_id: i64,
    images: &[Image],
) -> rusqlite::Result<()> {
    for (position, image) in images.iter().enumerate() {
        tx.execute(
            "INSERT INTO attachments (session_id, message_id, position, mime_type, data) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                session_id,
                message_id,
                position as i64,
                image.mime_type,
                &*image.data
            ],
        )?;
    }
    Ok(())
}

/// Copies the images of message `from` to message `to` of session `session_id` (a fork).
pub(super) fn copy(
    tx: &rusqlite::Transaction<'_>,
    session_id: &str,
    from: i64,
    to: i64,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO attachments (session_id, message_id, position, mime_type, data) \
         SELECT ?1, ?2, position, mime_type, data FROM attachments WHERE message_id = ?3",
        params![session_id, to, from],
    )
    .map(drop)
}

/// The images a message's row lists, as a history shows them.
pub fn refs(row: &MessageRow) -> Vec<ImageRef> {
    let Some(images) = row
        .data
        .as_ref()
        .and_then(|d| d.get("images"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    images
        .iter()
        .enumerate()
        .map(|(position, image)| ImageRef {
            attachment_id: format!("{}.{position}", row.id),
            mime_type: image
                .get("mimeType")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            size: image.get("size").and_then(Value::as_u64).unwrap_or(0),
        })
        .collect()
}

/// `<message id>.<position>`, read; `None` if it is not one.
fn parse_id(id: &str) -> Option<(i64, i64)> {
    let (message, position) = id.split_once('.')?;
    Some((message.parse().ok()?, position.parse().ok()?))
}

/// Fills in the images of the prompts among `rows` (one read for all of them): the newest,
/// up to what one request carries (`prompt/sent_images.rs`), so a session of many large
/// images is not read whole into memory on every turn. A prompt whose older images are
/// left unread has only its newest ones in `images`; the conversation notes the others.
pub(super) fn attach_images(
    conn: &Connection,
    session_id: &str,
    rows: &mut [MessageRow],
) -> Result<()> {
    // (message id, position, size) of each image the rows list, newest first.
    let listed: Vec<(i64, i64, usize)> = rows
        .iter()
        .rev()
        .flat_map(|row| {
            let id = row.id;
            refs(row)
                .into_iter()
                .enumerate()
                .rev()
                .map(move |(position, image)| {
                    let size = usize::try_from(image.size).unwrap_or(usize::MAX);
                    (id, position as i64, size)
                })
        })
        .collect();
    let carried = newest_within_bound(listed.iter().map(|(_, _, size)| *size));
    let Some(&(first, from, _)) = carried.checked_sub(1).and_then(|at| listed.get(at)) else {
        return Ok(());
    };
    // Only the rows' prompts: a message a rewind hid may lie among them, its bytes unread.
    let wanted: HashSet<i64> = listed[..carried].iter().map(|(id, _, _)| *id).collect();
    let mut images: HashMap<i64, Vec<Image>> = HashMap::new();
    let mut stmt = conn
        .prepare_cached(
            "SELECT message_id, mime_type, data FROM attachments \
             WHERE session_id = ?1 AND (message_id > ?2 OR (message_id = ?2 AND position >= ?3)) \
             ORDER BY message_id, position",
        )
        .map_err(StoreError::ctx("read a prompt's images"))?;
    let found = stmt
        .query_map(params![session_id, first, from], |r| {
            let message_id: i64 = r.get(0)?;
            if !wanted.contains(&message_id) {
                return Ok(None);
            }
            let data: Vec<u8> = r.get(2)?;
            let image = Image {
                mime_type: r.get(1)?,
                data: data.into(),
            };
            Ok(Some((message_id, image)))
        })
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
        .map_err(StoreError::ctx("read a prompt's images"))?;
    for (message_id, image) in found.into_iter().flatten() {
        images.entry(message_id).or_default().push(image);
    }
    for row in rows {
        if let Some(found) = images.remove(&row.id) {
            row.images = found;
        }
    }
    Ok(())
}

fn read(conn: &Connection, session_id: &str, id: &str) -> Result<Option<Image>> {
    let Some((message_id, position)) = parse_id(id) else {
        return Ok(None);
    };
    conn.query_row(
        "SELECT mime_type, data FROM attachments \
             WHERE session_id = ?1 AND message_id = ?2 AND position = ?3",
        params![session_id, message_id, position],
        |r| {
            let data: Vec<u8> = r.get(1)?;
            Ok(Image {
                mime_type: r.get(0)?,
                data: data.into(),
            })
        },
    )
    .optional()
    .map_err(StoreError::ctx("read an attachment"))
}

impl Store {
    /// The image `id` (`<message id>.<position>`) of session `session_id`; `None` if it has
    /// none such.
    pub async fn attachment(&self, session_id: &str, id: &str) -> Result<Option<Image>> {
        let (session_id, id) = (session_id.to_owned(), id.to_owned());
        self.reader
            .run(move |db| read(db.conn(), &session_id, &id))
            .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::prompt::Prompt;

    #[tokio::test]
    async fn a_context_reads_only_the_newest_images_a_request_carries() {
        let store = Store::open_in_memory().unwrap().store;
        store.create_session("s", None, "/", "m").await.unwrap();
        let mut bytes = b"\x89PNG".to_vec();
        bytes.resize(8 * 1024 * 1024, 0);
        let image = Image {
            mime_type: "image/png".into(),
            data: bytes.into(),
        };
        for turn in ["t1", "t2"] {
            let prompt = Prompt {
                text: turn.into(),
                images: vec![image.clone(), image.clone()],
            };
            store.begin_turn("s", turn, &prompt, None).await.unwrap();
            store
                .finish_turn(turn, "end_turn", None, None)
                .await
                .unwrap();
        }
        // 32 MiB stored: the newest two are read (16 MiB); a third would pass 20 MiB.
        let rows = store.context("s").await.unwrap();
        let read: Vec<(usize, usize)> = rows
            .iter()
            .map(|r| (refs(r).len(), r.images.len()))
            .collect();
        assert_eq!(read, [(2, 0), (2, 2)]);
    }

    #[test]
    fn an_id_is_the_message_and_the_position() {
        assert_eq!(parse_id("12.0"), Some((12, 0)));
        assert_eq!(parse_id("12"), None);
        assert_eq!(parse_id("a.b"), None);
    }

    #[tokio::test]
    async fn a_prompts_images_are_stored_beside_it_and_read_with_its_context() {
        let store = Store::open_in_memory().unwrap().store;
        store.create_session("s", None, "/", "m").await.unwrap();
        let images = vec![
            Image {
                mime_type: "image/png".into(),
                data: b"\x89PNG one".as_slice().into(),
            },
            Image {
                mime_type: "image/gif".into(),
                data: b"GIF89a two".as_slice().into(),
            },
        ];
        let prompt = Prompt {
            text: "see".into(),
            images: images.clone(),
        };
        store.begin_turn("s", "t", &prompt, None).await.unwrap();
        let rows = store.context("s").await.unwrap();
        assert_eq!(rows[0].images, images);
        let listed = refs(&rows[0]);
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[1].mime_type, "image/gif");
        assert_eq!(listed[1].size, 10);
        let second = store.attachment("s", &listed[1].attachment_id).await;
        assert_eq!(second.unwrap(), Some(images[1].clone()));
        let elsewhere = store.attachment("other", &listed[1].attachment_id).await;
        assert_eq!(elsewhere.unwrap(), None);
        // A page of history does not read the bytes.
        let (page, _) = store.messages("s", 10, None, false).await.unwrap();
        assert!(page[0].images.is_empty());
        assert_eq!(refs(&page[0]).len(), 2);
    }
}
