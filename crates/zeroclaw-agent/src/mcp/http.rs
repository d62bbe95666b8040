//! A streamable HTTP server's transport: rmcp's reqwest client with the configured headers.

use std::collections::HashMap;

use http::{HeaderName, HeaderValue};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

/// rustls needs one process-wide crypto provider; ring is the one the rest of the daemon's
/// HTTP uses.
fn crypto() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

pub fn transport(
    url: &str,
    headers: Vec<(String, String)>,
) -> Result<StreamableHttpClientTransport<reqwest013::Client>, String> {
    crypto();
    let mut map = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::try_from(name.as_str())
            .map_err(|_| format!("header name {name:?} is not valid"))?;
        // The value may hold a secret: it is not in the message.
        let value = HeaderValue::try_from(value)
            .map_err(|_| format!("the value of header {name:?} is not a valid header value"))?;
        map.insert(header, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).custom_headers(map);
    Ok(StreamableHttpClientTransport::from_config(config))
}
