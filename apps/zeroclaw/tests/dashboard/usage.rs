//! Issue 34 in the dashboard: the session's head shows its context gauge and cost, filled
//! from `session/usage` on opening and live from each `usage_update`; a turn stopped at a
//! budget says which limit and what it used.

use crate::browser::{Browser, Test, element, until, until_text};
use crate::page::{Dash, loaded, open, prompt};
use serde_json::json;
use zeroclaw_testkit::{Gate, openai};

pub const TESTS: &[Test] = &[
    (
        "usage::a_priced_turn_shows_the_context_gauge_and_the_cost_live_and_after_a_reload",
        a_priced_turn_shows_the_context_gauge_and_the_cost_live_and_after_a_reload,
    ),
    (
        "usage::a_turn_stopped_at_its_budget_names_the_limit_and_what_it_used",
        a_turn_stopped_at_its_budget_names_the_limit_and_what_it_used,
    ),
];

const GATEWAY: &str = "[gateway]\nlisten = \"127.0.0.1:0\"";

fn list_dir_call(id: &str) -> openai::Builder {
    openai::Builder::new().tool_call(0, id, "list_dir", r#"{"path":"."}"#, 1)
}

/// Waits until the context gauge reads `label`, its bar at `used` of 8000.
async fn gauge(c: &fantoccini::Client, label: &str, used: u32) {
    until_text(c, "#usage:not([hidden]) #context-label", label).await;
    until(
        c,
        "document.getElementById('context-meter').value === arguments[0] && document.getElementById('context-meter').max === 8000",
        json!(used),
    )
    .await;
}

fn a_priced_turn_shows_the_context_gauge_and_the_cost_live_and_after_a_reload(b: &Browser) {
    // Prices per million tokens: input 2, output 10; a window of 8000 tokens.
    let dash = Dash::configured(
        "context_window = 8000\n[provider.pricing]\ninput = 2.0\noutput = 10.0",
        GATEWAY,
    );
    let id = dash.session("priced");
    let gate = Gate::new();
    // Two model calls: a tool call (1000 in, 100 out: cost 0.003), then, once the gate
    // opens, the answer (2000 in, 500 out: cost 0.009; the session's 0.012).
    dash.env
        .fake
        .push(list_dir_call("call_1").usage(1000, 100).build());
    dash.env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("counted")
            .usage(2000, 500)
            .build(),
    );
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        // Opened: `session/usage` has the window and nothing used, and no cost yet.
        gauge(c, "context 0 / 8,000 tokens (0%)", 0).await;
        element(c, "#session-cost[hidden]").await;

        prompt(c, "count").await;
        // Live, mid-turn: the first call's usage_update.
        gauge(c, "context 1,000 / 8,000 tokens (13%)", 1000).await;
        until_text(c, "#session-cost:not([hidden])", "cost 0.00300 USD").await;
        element(c, "#stop:not([hidden])").await;

        gate.open();
        gauge(c, "context 2,000 / 8,000 tokens (25%)", 2000).await;
        until_text(c, "#session-cost", "cost 0.0120 USD").await;
        until_text(c, ".turn-end", "done").await;

        // A reload fills the head from `session/usage`: the last call's context, the
        // session's cost.
        c.refresh().await.unwrap();
        loaded(c, &id).await;
        gauge(c, "context 2,000 / 8,000 tokens (25%)", 2000).await;
        until_text(c, "#session-cost:not([hidden])", "cost 0.0120 USD").await;
    });
}

fn a_turn_stopped_at_its_budget_names_the_limit_and_what_it_used(b: &Browser) {
    let dash = Dash::with(&format!("{GATEWAY}\n[limits]\nmax_tokens_per_turn = 250"));
    // A model that lists the directory at every call, 120 tokens each: the third call
    // passes 250 and the turn stops before a fourth.
    for i in 1..=3 {
        dash.env
            .fake
            .push(list_dir_call(&format!("call_{i}")).usage(100, 20).build());
    }
    let id = dash.session("budget");
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "loop").await;
        until_text(c, ".turn-end.budget .reason", "stopped at its budget").await;
        until_text(
            c,
            ".turn-end.budget .budget",
            "limits.max_tokens_per_turn: 360 tokens of 250",
        )
        .await;
    });
}
