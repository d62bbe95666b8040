//! The WebSocket connector: the same client over a daemon's gateway (`GET /rpc`), for a
//! daemon on another machine or behind a browser-only network. Calls, event streams, turns
//! and elicitation work exactly as over the socket.

use crate::{Client, ClientError, ClientOptions};
use std::sync::Arc;
use tokio_rustls::rustls;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, header};
use zeroclaw_rpc::websocket::{WsOptions, WsTransport};

/// Where a remote daemon's gateway is, and the token to show it.
#[derive(Clone)]
pub struct Remote {
    /// `wss://host:port` (or `ws://`, `https://`, `http://`); `/rpc` is added when the URL
    /// has no path.
    pub url: String,
    /// The bearer token (`zeroclaw token create` on the daemon's machine).
    pub token: String,
    /// Extra trusted roots (PEM), for a gateway with a self-signed certificate.
    pub ca_pem: Option<Vec<u8>>,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        f.debug_struct("Remote").field("url", &self.url).finish()
    }
}

impl Remote {
    /// The WebSocket URL of the gateway's `/rpc`.
    pub fn rpc_url(&self) -> String {
        let url = self.url.trim_end_matches('/');
        let url = if let Some(rest) = url.strip_prefix("https://") {
            format!("wss://{rest}")
        } else if let Some(rest) = url.strip_prefix("http://") {
            format!("ws://{rest}")
        } else {
            url.to_owned()
        };
        let after_scheme = url.split_once("://").map_or(url.as_str(), |(_, r)| r);
        if after_scheme.contains('/') {
            url
        } else {
            format!("{url}/rpc")
        }
    }

    fn tls(&self) -> Result<Arc<rustls::ClientConfig>, String> {
        let mut roots = rustls::RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        if let Some(pem) = &self.ca_pem {
            use rustls::pki_types::CertificateDer;
            use rustls::pki_types::pem::PemObject;
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| format!("the CA file is not PEM: {e}"))?;
                roots
                    .add(cert)
                    .map_err(|e| format!("the CA certificate is not usable: {e}"))?;
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(Arc::new(config))
    }
}

impl Client {
    /// Connects to a daemon's gateway over WebSocket and completes `initialize`.
    pub async fn connect_remote(
        remote: &Remote,
        options: ClientOptions,
    ) -> Result<Self, ClientError> {
        let url = remote.rpc_url();
        let failed = |message: String| ClientError::Remote {
            url: url.clone(),
            message,
        };
        let mut request = url
            .as_str()
            .into_client_request()
            .map_err(|e| failed(e.to_string()))?;
        let bearer = HeaderValue::from_str(&format!("Bearer {}", remote.token))
            .map_err(|_| failed("the token is not a valid header value".into()))?;
        request.headers_mut().insert(header::AUTHORIZATION, bearer);
        let ws_options = WsOptions {
            max_frame_bytes: options.max_frame_bytes,
            ping_every: None,
            idle_timeout: None,
        };
        let connector = tokio_tungstenite::Connector::Rustls(remote.tls().map_err(failed)?);
        let (ws, _) = tokio_tungstenite::connect_async_tls_with_config(
            request,
            Some(ws_options.config()),
            true,
            Some(connector),
        )
        .await
        .map_err(|e| failed(describe(e)))?;
        let transport = WsTransport::new(ws, url.clone(), ws_options);
        Self::over(transport, options).await
    }
}

fn describe(e: tokio_tungstenite::tungstenite::Error) -> String {
    use tokio_tungstenite::tungstenite::Error;
    match e {
        Error::Http(response) => {
            let status = response.status();
            let body = response
                .body()
                .as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default()
                .into_owned();
            let message = serde_json::from_str::<serde_json::Value>(&body)
                .ok()
                .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
                .unwrap_or(body);
            format!("HTTP {status}: {message}")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_url_gets_rpc_and_a_websocket_scheme() {
        let remote = |url: &str| Remote {
            url: url.into(),
            token: String::new(),
            ca_pem: None,
        };
        assert_eq!(remote("wss://h:1").rpc_url(), "wss://h:1/rpc");
        assert_eq!(remote("https://h:1/").rpc_url(), "wss://h:1/rpc");
        assert_eq!(remote("http://h:1/rpc").rpc_url(), "ws://h:1/rpc");
    }
}
