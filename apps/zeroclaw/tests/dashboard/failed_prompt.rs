//! Issue 37: a session whose first prompt failed (the provider down) explains itself in the
//! dashboard too: its history shows the prompt and the turn's error.

use crate::browser::{Browser, Test, until_text};
use crate::common::no_questions;
use crate::page::{Dash, open};

pub const TESTS: &[Test] = &[(
    "failed_prompt::a_failed_first_prompt_shows_with_its_error_in_the_history",
    a_failed_first_prompt_shows_with_its_error_in_the_history,
)];

fn a_failed_first_prompt_shows_with_its_error_in_the_history(b: &Browser) {
    let dash = Dash::new();
    let mut client = dash.env.daemon.client();
    let id = client.new_session(&dash.env.work);
    // No scripted reply: the fake provider answers 500.
    let error = client
        .prompt(&id, "will this work?", no_questions)
        .error()
        .clone();
    assert_eq!(error["code"], -32004, "{error}");
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        until_text(c, ".msg.user", "will this work?").await;
        until_text(c, ".turn-end.error .reason", "failed").await;
        until_text(c, ".turn-end.error .error", "HTTP 500").await;
    });
}
