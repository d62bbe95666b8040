//! `web_fetch`: a web page as Markdown text.
//!
//! The daemon fetches the URL itself (reqwest), so the session's sandbox decides in-process
//! whether it may: with the network off (any mode but `full` without `network = true`),
//! the call is refused with the reason and nothing is sent. Everything is bounded: http and
//! https only, at most [`MAX_REDIRECTS`] redirects (each to http or https), [`TIMEOUT`] for
//! the whole exchange, at most [`MAX_DOWNLOAD`] bytes read (the rest is not downloaded),
//! at most [`MAX_RETURNED`] characters returned.
//!
//! HTML becomes Markdown with `htmd`: a maintained converter built on html5ever (the
//! browser-grade parser of the Servo project), so real-world malformed pages parse as a
//! browser would, and it keeps what the model needs (headings, links, lists, code blocks,
//! tables) while dropping `<script>`, `<style>` and the like, which `html2text`'s plain text
//! would not keep as Markdown. Other text (plain, JSON, XML, Markdown) is returned as it is;
//! anything else is refused by its content type.
//!
//! `prompt` says what the model is looking for. No second model reads the page here: the
//! page is returned whole (bounded) under that line, for the model itself to answer it.

use std::time::Duration;

use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Tool, ToolContext, ToolOutput};
use crate::config::Policy;
use crate::sandbox::Mode;

/// The most bytes of a response body read.
const MAX_DOWNLOAD: usize = 5 * 1024 * 1024;
/// The most characters of text returned.
const MAX_RETURNED: usize = 50_000;
/// The whole exchange: connecting, redirects, the body.
const TIMEOUT: Duration = Duration::from_secs(30);
/// Redirects followed before giving up.
const MAX_REDIRECTS: usize = 5;

pub(super) struct WebFetch;

/// Its name, as its messages begin.
const TOOL: &str = WebFetch::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// The page's URL, `http://` or `https://`.
    url: String,
    /// What you are looking for in the page (optional); returned with it.
    prompt: Option<String>,
}

impl Tool for WebFetch {
    const NAME: &'static str = "web_fetch";
    const DESCRIPTION: &'static str = "Fetch a web page (http or https) and return it as Markdown text (HTML converted; \
        plain text, JSON and XML as they are). Long pages are cut. Redirects are followed \
        (at most 5). It needs the session's sandbox to allow the network, and the user may \
        be asked first.";
    // It changes nothing on this machine; what it sends is the URL, which the approval shows.
    const READ_ONLY: bool = true;
    const APPROVAL: Policy = Policy::Ask;
    type Args = Args;

    fn check(&self, args: &Args) -> Result<(), String> {
        url(&args.url).map(|_| ())
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let policy = &ctx.sandbox.policy;
        if policy.mode != Mode::Full && !policy.network {
            return ToolOutput::error(format!(
                "{TOOL}: blocked by the sandbox: the network is off for this session (sandbox \
                 mode `{}` without network); nothing was fetched. Ask the user to allow the \
                 network ([sandbox] network = true, or the session's sandbox)",
                policy.mode
            ));
        }
        let url = match url(&args.url) {
            Ok(url) => url,
            Err(why) => return ToolOutput::error(format!("invalid arguments for {TOOL}: {why}")),
        };
        tokio::select! {
            out = fetch(url, args.prompt) => out,
            () = ctx.cancel.cancelled() => ToolOutput::error(format!("{TOOL}: cancelled before the page arrived")),
        }
    }
}

/// `text` as a URL this tool fetches, or why not.
fn url(text: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(text.trim()).map_err(|e| format!("`url` is not a URL: {e}"))?;
    match url.scheme() {
        "http" | "https" => {}
        other => return Err(format!("`url` must be http or https, not {other}")),
    }
    if url.host_str().is_none() {
        return Err("`url` has no host".into());
    }
    Ok(url)
}

async fn fetch(url: reqwest::Url, prompt: Option<String>) -> ToolOutput {
    let redirects = reqwest::redirect::Policy::custom(|attempt| {
        if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else if !matches!(attempt.url().scheme(), "http" | "https") {
            let to = attempt.url().to_string();
            attempt.error(format!("a redirect to {to}, not http or https"))
        } else {
            attempt.follow()
        }
    });
    let client = match reqwest::Client::builder()
        .redirect(redirects)
        .timeout(TIMEOUT)
        .user_agent(concat!(
            "zeroclaw/",
            env!("CARGO_PKG_VERSION"),
            " (web_fetch)"
        ))
        .build()
    {
        Ok(client) => client,
        Err(e) => return ToolOutput::error(format!("{TOOL}: internal error: {e}")),
    };
    let shown = url.to_string();
    let response = match client.get(url).send().await {
        Ok(response) => response,
        Err(e) => {
            return ToolOutput::error(format!("{TOOL}: could not fetch {shown}: {}", why(&e)));
        }
    };
    let status = response.status();
    let last = response.url().to_string();
    let kind = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let is_html = kind.contains("html");
    let is_text = kind.is_empty()
        || kind.starts_with("text/")
        || kind.contains("json")
        || kind.contains("xml")
        || kind.contains("javascript");
    if !is_html && !is_text {
        return ToolOutput::error(format!(
            "{TOOL}: {last} is not text (Content-Type: {kind}); nothing is shown"
        ));
    }
    let mut body = Vec::new();
    let mut cut = false;
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                return ToolOutput::error(format!("{TOOL}: reading {last} failed: {}", why(&e)));
            }
        };
        let room = MAX_DOWNLOAD - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            cut = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8_lossy(&body);
    let mut page = if is_html {
        match htmd::HtmlToMarkdown::builder()
            .skip_tags(vec![
                "script", "style", "noscript", "template", "svg", "head",
            ])
            .build()
            .convert(&text)
        {
            Ok(markdown) => markdown,
            Err(e) => return ToolOutput::error(format!("{TOOL}: {last}: unreadable HTML: {e}")),
        }
    } else {
        text.into_owned()
    };
    let total = page.chars().count();
    if total > MAX_RETURNED {
        let end = page
            .char_indices()
            .nth(MAX_RETURNED)
            .map_or(page.len(), |(at, _)| at);
        page.truncate(end);
        page.push_str(&format!(
            "\n\n[... cut: {} more characters not shown ({total} in all) ...]",
            total - MAX_RETURNED
        ));
    } else if cut {
        page.push_str(&format!(
            "\n\n[... cut: the page is larger than {MAX_DOWNLOAD} bytes, the rest was not \
             downloaded ...]"
        ));
    }
    let mut out = format!("{last} ({status})\n");
    if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
        out.push_str(&format!("Looking for: {}\n", prompt.trim()));
    }
    out.push('\n');
    out.push_str(&page);
    if status.is_success() {
        ToolOutput::ok(out)
    } else {
        ToolOutput::error(format!("{TOOL}: the server answered {status}: {out}"))
    }
}

/// A fetch's failure in words (the innermost cause says most: "connection refused").
fn why(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        return format!("timed out after {} s", TIMEOUT.as_secs());
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(inner) = source {
        text = format!("{text}: {inner}");
        source = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, run};
    use serde_json::json;

    #[tokio::test]
    async fn only_http_and_https_urls_are_fetched() {
        let dir = tempfile::tempdir().unwrap();
        let c = ctx(dir.path());
        let out = run("web_fetch", &json!({"url": "file:///etc/passwd"}), &c).await;
        assert!(out.is_error);
        assert!(
            out.text.contains("must be http or https, not file"),
            "{}",
            out.text
        );
        let out = run("web_fetch", &json!({"url": "not a url"}), &c).await;
        assert!(out.text.contains("`url` is not a URL"), "{}", out.text);
    }
}
