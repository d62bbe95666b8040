//! Issue 34 in the dashboard: a provider's retries and fallbacks, live-only events, show in
//! the transcript as small status lines while the turn runs.

use crate::browser::{Browser, Test, element, until_text};
use crate::page::{Dash, open, prompt};
use zeroclaw_testkit::{FakeProvider, Gate, Reply, openai};

pub const TESTS: &[Test] = &[
    (
        "retries::a_429_with_retry_after_shows_a_retry_line_while_the_turn_runs",
        a_429_with_retry_after_shows_a_retry_line_while_the_turn_runs,
    ),
    (
        "retries::a_failing_provider_shows_which_fallback_took_over",
        a_failing_provider_shows_which_fallback_took_over,
    ),
];

const GATEWAY: &str = "[gateway]\nlisten = \"127.0.0.1:0\"";

fn a_429_with_retry_after_shows_a_retry_line_while_the_turn_runs(b: &Browser) {
    let dash = Dash::configured("max_retries = 1", GATEWAY);
    let id = dash.session("retried");
    let gate = Gate::new();
    // 429 "retry after 1 s", then the answer, held until the line has been seen.
    dash.env.fake.push(Reply::rate_limited(Some(1)));
    dash.env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("third time lucky")
            .build(),
    );
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "hi").await;
        until_text(
            c,
            "#transcript .note.provider.retry",
            "retrying in 1.0 s: HTTP 429 Too Many Requests, attempt 1",
        )
        .await;
        element(c, "#stop:not([hidden])").await;
        // The line names the provider retried on hover.
        let line = element(c, "#transcript .note.provider.retry").await;
        let title = line.attr("title").await.unwrap().unwrap_or_default();
        assert_eq!(title, format!("fake at {}", dash.env.fake.base_url()));

        gate.open();
        until_text(c, ".msg.assistant", "third time lucky").await;
        until_text(c, ".turn-end", "done").await;
    });
}

fn a_failing_provider_shows_which_fallback_took_over(b: &Browser) {
    let backup = FakeProvider::start_blocking().unwrap();
    backup.push(openai::text(&["from the backup"]));
    // The primary (the env's fake) has no reply scripted: it answers 500.
    let dash = Dash::with(&format!(
        "[[fallback]]\nbase_url = {:?}\nmodel = \"backup0\"\nmax_retries = 0\n\n{GATEWAY}",
        backup.base_url()
    ));
    let id = dash.session("fell back");
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "hi").await;
        let line = format!(
            "fake at {} failed (HTTP 500 Internal Server Error); using backup0 at {}",
            dash.env.fake.base_url(),
            backup.base_url()
        );
        until_text(c, "#transcript .note.provider.fallback", &line).await;
        until_text(c, ".msg.assistant", "from the backup").await;
        until_text(c, ".turn-end", "done").await;
    });
}
