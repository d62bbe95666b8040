//! A daemon with its gateway on a free loopback port, tokens, and HTTP/WebSocket clients.

use crate::common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::sync::OnceLock;
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The `[gateway]` table every test starts from: a free port on loopback.
pub const GATEWAY: &str = "[gateway]\nlisten = \"127.0.0.1:0\"";

pub fn rt() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
    })
}

pub fn block<F: Future>(f: F) -> F::Output {
    rt().block_on(async { tokio::time::timeout(HANG_GUARD, f).await })
        .expect("hang guard")
}

/// A daemon (with a fake provider) whose gateway serves on 127.0.0.1:0.
pub struct Gw {
    pub env: Env,
    pub url: String,
}

impl Gw {
    pub fn new() -> Self {
        Self::with("", "")
    }

    /// With these `[gateway]` keys and other tables.
    pub fn with(gateway_keys: &str, rest: &str) -> Self {
        let env = Env::new("", &format!("{GATEWAY}\n{gateway_keys}\n{rest}"));
        let status = env.daemon.client().call("status", json!({}));
        let url = status["gateway"]["url"]
            .as_str()
            .unwrap_or_else(|| panic!("no gateway in {status}"))
            .to_owned();
        Self { env, url }
    }

    /// `host:port` of the gateway, for raw TCP.
    pub fn addr(&self) -> String {
        self.url
            .trim_start_matches("http://")
            .trim_start_matches("https://")
            .to_owned()
    }

    pub fn ws_url(&self) -> String {
        format!("{}/rpc", self.url.replacen("http", "ws", 1))
    }

    pub fn api(&self, path: &str) -> String {
        format!("{}/api/v1{path}", self.url)
    }

    /// A new token of `scope`, minted over the socket.
    pub fn token(&self, name: &str, scope: &str) -> String {
        let created = self
            .env
            .daemon
            .client()
            .call("token/create", json!({"name": name, "scope": scope}));
        created["token"].as_str().unwrap().to_owned()
    }

    pub fn revoke(&self, name: &str) {
        let revoked = self
            .env
            .daemon
            .client()
            .call("token/revoke", json!({"name": name}));
        assert_eq!(revoked["revoked"], true);
    }

    pub fn work(&self) -> String {
        self.env.work.to_string_lossy().into_owned()
    }

    /// A new one-time login code (`dashboard/link`).
    pub fn code(&self) -> String {
        let link = self.env.daemon.client().call("dashboard/link", json!({}));
        let url = link["url"].as_str().unwrap();
        let (base, code) = url.split_once("/login#code=").unwrap();
        assert_eq!(base, self.url);
        code.to_owned()
    }

    /// `POST /auth/exchange` as the login page sends it, with these extra headers.
    pub async fn exchange(&self, code: &str, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut request = http()
            .post(format!("{}/auth/exchange", self.url))
            .header("origin", &self.url)
            .json(&json!({ "code": code }));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// Signs in with a new code as the dashboard page does.
    pub async fn login(&self) -> DashSession {
        let response = self.exchange(&self.code(), &[]).await;
        assert_eq!(response.status(), 204);
        DashSession::of(&response)
    }
}

/// A dashboard session as a browser holds it: the cookie and the page's proof.
pub struct DashSession {
    /// `Set-Cookie` as answered.
    pub set_cookie: String,
    /// `name=value`, for a `Cookie` header.
    pub cookie: String,
    pub proof: String,
}

impl DashSession {
    pub fn of(response: &reqwest::Response) -> Self {
        let set_cookie = response.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .to_owned();
        let cookie = set_cookie.split(';').next().unwrap().to_owned();
        let proof = response.headers()["zeroclaw-proof"]
            .to_str()
            .unwrap()
            .to_owned();
        Self {
            set_cookie,
            cookie,
            proof,
        }
    }

    /// The cookie's value alone.
    pub fn secret(&self) -> &str {
        self.cookie.split_once('=').unwrap().1
    }
}

/// Sends `request` as written on a new TCP connection to `addr` and reads the answer
/// until the server closes it (so the request should say `Connection: close`).
pub async fn raw(addr: &str, request: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}

/// The status code of a raw answer (0 for none).
pub fn status_of(answer: &str) -> u16 {
    answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A session made over REST (`POST /sessions`) with `token`, in the test's work dir.
pub fn new_session(gw: &Gw, token: &str) -> String {
    block(async {
        let (_, created) = json_of(
            http()
                .post(gw.api("/sessions"))
                .bearer_auth(token)
                .json(&json!({"cwd": gw.work()}))
                .send()
                .await
                .unwrap(),
        )
        .await;
        created["sessionId"].as_str().unwrap().to_owned()
    })
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder().build().unwrap()
}

/// A response's status and JSON body.
pub async fn json_of(response: reqwest::Response) -> (u16, Value) {
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// A WebSocket to `/rpc` with a bearer header (not yet initialized).
pub async fn ws(url: &str, token: &str) -> Ws {
    ws_with(url, &[("authorization", &format!("Bearer {token}"))])
        .await
        .unwrap()
}

/// A WebSocket to `/rpc` with these request headers, or the HTTP status it was refused with.
pub async fn ws_with(url: &str, headers: &[(&str, &str)]) -> Result<Ws, (u16, Value)> {
    let mut request = url.into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            value.parse().unwrap(),
        );
    }
    match tokio_tungstenite::connect_async(request).await {
        Ok((ws, _)) => Ok(ws),
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            let status = response.status().as_u16();
            let body = response.body().clone().unwrap_or_default();
            Err((status, serde_json::from_slice(&body).unwrap_or(Value::Null)))
        }
        Err(e) => panic!("{e}"),
    }
}

pub async fn send(ws: &mut Ws, frame: Value) {
    ws.send(Message::text(frame.to_string())).await.unwrap();
}

/// The next text message as JSON; `None` once the connection closed.
pub async fn recv(ws: &mut Ws) -> Option<Value> {
    loop {
        match ws.next().await? {
            Ok(Message::Text(text)) => return Some(serde_json::from_str(&text).unwrap()),
            Ok(Message::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

/// Sends a request and returns its response (notifications before it are skipped).
pub async fn call(ws: &mut Ws, id: u64, method: &str, params: Value) -> Value {
    send(
        ws,
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
    .await;
    loop {
        let frame = recv(ws).await.expect("closed before the answer");
        if frame["id"] == json!(id) && frame.get("method").is_none() {
            return frame;
        }
    }
}

pub async fn initialize(ws: &mut Ws, capabilities: Value) -> Value {
    let answer = call(
        ws,
        1,
        "initialize",
        json!({"protocolVersion": 1, "capabilities": capabilities}),
    )
    .await;
    assert!(answer.get("result").is_some(), "{answer}");
    answer["result"].clone()
}
