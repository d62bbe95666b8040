//! How the file tools reach the client's file system: `fs/read_text_file` and
//! `fs/write_text_file` requests to the client that sent the prompt, for the operations it
//! declared in `initialize` (`capabilities.fs`).

use crate::link::{CallError, Link};
use crate::tools::ClientFiles;
use futures_util::future::BoxFuture;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use zeroclaw_protocol::{FsCapabilities, Method, methods as m};

/// How long a file operation may take in the client before the tool fails: an editor
/// answers from memory, so this only bounds a client that stopped answering.
const FS_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub(super) struct ClientFs {
    pub peer: Arc<dyn Link>,
    pub session_id: String,
    pub capabilities: FsCapabilities,
}

impl ClientFs {
    async fn call<M: Method>(&self, params: &M::Params) -> Result<M::Result, String> {
        let params = serde_json::to_value(params).map_err(|e| e.to_string())?;
        let value = self
            .peer
            .request(M::NAME, params, FS_TIMEOUT)
            .await
            .map_err(|e| match e {
                CallError::Rpc(e) => e.message,
                CallError::Timeout(d) => format!("no answer within {} s", d.as_secs()),
                CallError::Closed => "the client disconnected".to_owned(),
            })?;
        serde_json::from_value(value).map_err(|e| format!("unexpected {} result: {e}", M::NAME))
    }
}

impl ClientFiles for ClientFs {
    fn reads(&self) -> bool {
        self.capabilities.read_text_file
    }

    fn writes(&self) -> bool {
        self.capabilities.write_text_file
    }

    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let params = m::FsReadTextFileParams {
                session_id: self.session_id.clone(),
                path: path.display().to_string(),
                line: None,
                limit: None,
            };
            Ok(self.call::<m::FsReadTextFile>(&params).await?.content)
        })
    }

    fn write<'a>(&'a self, path: &'a Path, content: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let params = m::FsWriteTextFileParams {
                session_id: self.session_id.clone(),
                path: path.display().to_string(),
                content: content.to_owned(),
            };
            self.call::<m::FsWriteTextFile>(&params).await.map(drop)
        })
    }
}
