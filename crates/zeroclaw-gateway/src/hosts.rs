//! The `Host` check, before routing: the defence against DNS rebinding. A web page on
//! `evil.example` whose name is made to resolve to 127.0.0.1 is, to the browser, the same
//! origin as `evil.example`, so its scripts may read what the gateway answers; but its
//! requests still say `Host: evil.example`. Answering only the names the gateway is known
//! by leaves such a page nothing to reach, not even the routes that need no credentials.
//!
//! Accepted: `127.0.0.1`, `localhost`, `[::1]` and the bound address itself, each with the
//! gateway's own port (or none, when that port is the scheme's default), and every name in
//! `gateway.allowed_hosts`, with any port (behind a proxy the port is the proxy's). Any
//! other name: 421. No `Host` (HTTP/1.1 requires one; HTTP/1.0 may omit it, but no browser
//! does and there is nothing to check), two of them, or a malformed one: 400. The check
//! covers every request, the WebSocket upgrade included. On a non-loopback bind it is on
//! only when `allowed_hosts` is set (the server logs its absence at start).

use crate::errors::ApiError;
use crate::names;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use zeroclaw_protocol::codes;

#[derive(Debug)]
pub struct Hosts {
    /// Off on a non-loopback bind without `allowed_hosts`.
    on: bool,
    port: u16,
    /// The port a `Host` without one means.
    default_port: u16,
    /// Answered with our port only.
    own: Vec<String>,
    /// `allowed_hosts`: answered with any port.
    allowed: Vec<String>,
}

impl Hosts {
    /// `allowed`: `gateway.allowed_hosts`, each already in its one spelling.
    pub fn new(addr: SocketAddr, tls: bool, allowed: Vec<String>) -> Self {
        let mut own = vec!["127.0.0.1".to_owned(), "localhost".into(), "[::1]".into()];
        let bound = match addr.ip() {
            IpAddr::V4(ip) => ip.to_string(),
            IpAddr::V6(ip) => format!("[{ip}]"),
        };
        if !addr.ip().is_unspecified() && !own.contains(&bound) {
            own.push(bound);
        }
        Self {
            on: addr.ip().is_loopback() || !allowed.is_empty(),
            port: addr.port(),
            default_port: if tls { 443 } else { 80 },
            own,
            allowed,
        }
    }

    /// Whether the check is off (a non-loopback bind without `allowed_hosts`).
    pub fn is_off(&self) -> bool {
        !self.on
    }

    /// `Ok` for a request the gateway answers; the refusal otherwise.
    fn check(&self, request: &Request) -> Result<(), ApiError> {
        if !self.on {
            return Ok(());
        }
        let mut values = request.headers().get_all(header::HOST).iter();
        let (Some(value), None) = (values.next(), values.next()) else {
            return Err(bad_request(
                "a request needs exactly one Host header naming the gateway, e.g. `Host: 127.0.0.1:42617`",
            ));
        };
        let value = value
            .to_str()
            .map_err(|_| bad_request("the Host header is not readable text"))?;
        self.one(value)?;
        // An absolute request target (`GET http://name/...`) names the host as well, and
        // RFC 9112 has it win over `Host`: both must be ours.
        if let Some(authority) = request.uri().authority() {
            self.one(authority.as_str())?;
        }
        Ok(())
    }

    fn one(&self, text: &str) -> Result<(), ApiError> {
        let Some((host, port)) = names::authority(text) else {
            return Err(bad_request(
                "the Host header is not a host name with an optional port",
            ));
        };
        if self.allowed.contains(&host)
            || (self.own.contains(&host) && port.unwrap_or(self.default_port) == self.port)
        {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            codes::NOT_ALLOWED,
            format!(
                "this gateway does not answer to the Host {text:?}: only to 127.0.0.1, localhost and [::1] with port {} and to the names in gateway.allowed_hosts (a page on another name that resolves to this machine is refused: DNS rebinding). Add the name to gateway.allowed_hosts if clients really use it",
                self.port
            ),
        ))
    }
}

fn bad_request(message: &str) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, codes::INVALID_REQUEST, message)
}

/// The middleware: refuses before the router sees the request, and closes the connection
/// after the refusal (nothing more is to be served on it).
pub async fn check(State(hosts): State<Arc<Hosts>>, request: Request, next: Next) -> Response {
    match hosts.check(&request) {
        Ok(()) => next.run(request).await,
        Err(refusal) => {
            let mut response = refusal.into_response();
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            response
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn request(host: Option<&str>, target: &str) -> Request {
        let mut builder = Request::builder().uri(target);
        if let Some(host) = host {
            builder = builder.header(header::HOST, host);
        }
        builder.body(axum::body::Body::empty()).unwrap()
    }

    fn status(hosts: &Hosts, host: Option<&str>) -> u16 {
        match hosts.check(&request(host, "/")) {
            Ok(()) => 200,
            Err(e) => e.status.as_u16(),
        }
    }

    #[test]
    fn on_loopback_only_the_loopback_names_with_our_port_and_the_allowed_names_pass() {
        let hosts = Hosts::new(
            "127.0.0.1:4000".parse().unwrap(),
            false,
            vec!["box.lan".into()],
        );
        for ok in [
            "127.0.0.1:4000",
            "LOCALHOST:4000",
            "[::1]:4000",
            "box.lan",
            "box.lan:1",
        ] {
            assert_eq!(status(&hosts, Some(ok)), 200, "{ok}");
        }
        for misdirected in [
            "localhost",
            "localhost:4001",
            "evil.example:4000",
            "127.0.0.2:4000",
        ] {
            assert_eq!(status(&hosts, Some(misdirected)), 421, "{misdirected}");
        }
        for bad in [
            None,
            Some("a b"),
            Some("u@localhost:4000"),
            Some("localhost:99999"),
        ] {
            assert_eq!(status(&hosts, bad), 400, "{bad:?}");
        }
        let absolute = request(Some("127.0.0.1:4000"), "http://evil.example:4000/");
        assert_eq!(hosts.check(&absolute).unwrap_err().status.as_u16(), 421);
    }

    #[test]
    fn the_default_port_may_be_left_out_and_the_bound_address_is_a_name_too() {
        let hosts = Hosts::new("127.0.0.1:443".parse().unwrap(), true, Vec::new());
        assert_eq!(status(&hosts, Some("localhost")), 200);
        let hosts = Hosts::new("127.0.0.9:80".parse().unwrap(), false, Vec::new());
        assert_eq!(status(&hosts, Some("127.0.0.9")), 200);
    }

    #[test]
    fn a_remote_bind_checks_only_with_allowed_hosts() {
        let open = Hosts::new("0.0.0.0:4000".parse().unwrap(), false, Vec::new());
        assert!(open.is_off());
        assert_eq!(status(&open, Some("evil.example")), 200);
        let checked = Hosts::new(
            "192.168.1.5:4000".parse().unwrap(),
            true,
            vec!["box.lan".into()],
        );
        assert_eq!(status(&checked, Some("evil.example")), 421);
        assert_eq!(status(&checked, Some("192.168.1.5:4000")), 200);
        assert_eq!(status(&checked, Some("box.lan:443")), 200);
    }
}
