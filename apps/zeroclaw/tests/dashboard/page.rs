//! A daemon with its gateway for the browser, and the dashboard signed in to it.

use crate::browser::element;
use crate::common::*;
use fantoccini::Client;
use serde_json::json;

/// A daemon (with the fake provider) whose gateway serves on a free loopback port.
pub struct Dash {
    pub env: Env,
    pub url: String,
}

impl Dash {
    pub fn new() -> Self {
        Self::with("[gateway]\nlisten = \"127.0.0.1:0\"")
    }

    /// With these tables in the config (they must include `[gateway]`).
    pub fn with(tables: &str) -> Self {
        Self::configured("", tables)
    }

    /// With these `[provider]` keys (and sub-tables, such as `[provider.pricing]`) and
    /// these other tables (they must include `[gateway]`).
    pub fn configured(provider: &str, tables: &str) -> Self {
        let env = Env::new(provider, tables);
        let url = gateway_url(&env.daemon);
        Self { env, url }
    }

    /// A new one-time login link (`zeroclaw dashboard`'s `dashboard/link`).
    pub fn link(&self) -> String {
        let link = self.env.daemon.client().call("dashboard/link", json!({}));
        link["url"].as_str().unwrap().to_owned()
    }

    /// Opens a new login link in the current window and waits until the page is connected.
    pub async fn sign_in(&self, c: &Client) {
        c.goto(&self.link()).await.unwrap();
        connected(c).await;
    }

    /// A session made over the socket, in the test's work dir, titled `title`.
    pub fn session(&self, title: &str) -> String {
        let mut client = self.env.daemon.client();
        let made = client.call(
            "session/new",
            json!({"cwd": self.env.work.to_string_lossy(), "title": title}),
        );
        made["sessionId"].as_str().unwrap().to_owned()
    }
}

pub fn gateway_url(daemon: &Daemon) -> String {
    let status = daemon.client().call("status", json!({}));
    status["gateway"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("no gateway in {status}"))
        .to_owned()
}

/// Waits until the page's connection indicator says it is connected and the status
/// panel is filled.
pub async fn connected(c: &Client) {
    element(c, "#conn[data-state='up']").await;
    element(c, "#status-list dd").await;
}

/// Opens the session `id` from the list and waits for its history to load.
pub async fn open(c: &Client, id: &str) {
    let item = format!(".session-item[data-id='{id}']");
    crate::browser::click(c, &item).await;
    loaded(c, id).await;
}

/// Waits until the session view shows `id` with its history loaded.
pub async fn loaded(c: &Client, id: &str) {
    element(
        c,
        &format!("#session[data-session='{id}'][data-loaded='true']"),
    )
    .await;
}

/// Sends `text` from the prompt box with the Enter key.
pub async fn prompt(c: &Client, text: &str) {
    crate::browser::type_into(c, "#prompt", &format!("{text}\u{E007}")).await;
}
