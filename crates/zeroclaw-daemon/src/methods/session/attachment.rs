//! `session/attachment`: a stored prompt image's bytes, by the `attachmentId` a replay or
//! `session/messages` gave. Any connection that may read the history may ask.

use super::not_found;
use crate::methods::errors::storage;
use crate::methods::{Ctx, Handle, Reply};
use zeroclaw_protocol::methods::{self as m, AttachmentParams, AttachmentResult};
use zeroclaw_rpc::RpcError;

impl Handle for m::SessionAttachment {
    fn handle(ctx: Ctx, p: AttachmentParams) -> Reply<AttachmentResult> {
        Reply::later(async move {
            let store = &ctx.0.daemon.agent.sessions.store;
            if store
                .session(&p.session_id)
                .await
                .map_err(storage)?
                .is_none()
            {
                return Err(not_found(&p.session_id));
            }
            match store
                .attachment(&p.session_id, &p.attachment_id)
                .await
                .map_err(storage)?
            {
                Some(image) => Ok(AttachmentResult {
                    data: image.base64(),
                    mime_type: image.mime_type,
                }),
                None => Err(RpcError::invalid_params(format!(
                    "session {} has no attachment {:?}; attachment ids come from a replay's or session/messages' `images`",
                    p.session_id, p.attachment_id
                ))),
            }
        })
    }
}
