//! Issue 34 in zerocode: the status line's context gauge and cost (from `usage_update`, and
//! from `session/usage` when a session is entered), a provider's retries and fallbacks said
//! as lines, a budget stop naming its limit, and images sent with a prompt (`@shot.png`, or
//! an image's path pasted on a line of its own).

use crate::harness::*;
use serde_json::Value;
use zeroclaw_testkit::{FakeProvider, Gate, Reply, openai};

/// Prices per million tokens (input 2, output 10) and a window of 32000 tokens.
const PRICED: &str = "context_window = 32000\n[provider.pricing]\ninput = 2.0\noutput = 10.0";

fn list_dir_call(id: &str) -> openai::Builder {
    openai::Builder::new().tool_call(0, id, "list_dir", r#"{"path":"."}"#, 1)
}

#[test]
fn a_priced_turn_shows_the_context_gauge_and_the_cost_and_a_resumed_session_starts_with_them() {
    let env = Env::with(PRICED);
    let mut term = env.zerocode(&[]);
    let banner = term.expect("/help for commands");
    let short = short_id(&banner, "session ");
    term.expect("> ");

    // Two model calls; the second is held until the test has read the status line.
    let gate = Gate::new();
    env.fake
        .push(list_dir_call("call_1").usage(3100, 20).build());
    env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("Done.")
            .usage(3300, 10)
            .build(),
    );
    term.send("look around\r");
    // After the first call (3100 in at 2 a million, 20 out at 10): 10% of the window, and
    // the session has cost $0.0064.
    term.expect("ctx 10% (3.1k/32k) · $0.0064");
    gate.open();
    term.expect("Done.");
    // The turn's last line has its cost: $0.0064 + $0.0067.
    term.expect("[end_turn]  6400 in · 30 out tokens · $0.0131 · ");
    term.expect("> ");
    // `/status` has the session's usage too.
    term.send("/status\r");
    term.expect("  usage     6400 in · 30 out tokens over 1 turn · ctx 10% (3.3k/32k) · $0.0131");
    term.expect("> ");
    term.quit();
    let screen = term.screen();
    assert!(
        !screen.contains("ctx 10% (3.1k/32k) · $0.0064"),
        "the live status line stayed:\n{screen}"
    );

    // Resumed: before its turn's first model call ends, the status line already has the
    // session's usage so far (`session/usage`).
    let mut term = env.ready(&["--session", &short]);
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .wait_for(&gate)
            .text("Again.")
            .usage(3500, 5)
            .build(),
    );
    term.send("once more\r");
    term.expect("thinking · ");
    term.expect("ctx 10% (3.3k/32k) · $0.0131");
    gate.open();
    term.expect("Again.");
    term.expect("[end_turn]");
    term.expect("> ");
    term.quit();
}

#[test]
fn a_rate_limited_call_shows_its_retry_while_the_turn_waits() {
    let env = Env::with_retries(1, "");
    let mut term = env.ready(&[]);
    env.fake.push(Reply::rate_limited(Some(1)));
    env.fake.push(openai::text(&["Recovered."]));
    term.send("hi\r");
    term.expect("retrying in 1.0 s (HTTP 429 Too Many Requests), attempt 1");
    term.expect("Recovered.");
    term.expect("[end_turn]");
    term.expect("> ");
    let screen = term.screen();
    assert!(
        screen.contains("\nretrying in 1.0 s (HTTP 429 Too Many Requests), attempt 1\nRecovered."),
        "{screen}"
    );
    assert_eq!(env.fake.request_count(), 2);
    term.quit();
}

#[test]
fn a_failing_provider_shows_the_fallback_it_moves_on_to() {
    let backup = FakeProvider::start_blocking().unwrap();
    let env = Env::with(&format!(
        "[[fallback]]\nbase_url = {:?}\nmodel = \"backup\"\nmax_retries = 0\n",
        backup.base_url()
    ));
    let mut term = env.ready(&[]);
    env.fake.push(Reply::server_error());
    backup.push(openai::text(&["From the backup."]));
    term.send("hi\r");
    term.expect(&format!(
        "provider fake at {} failed (HTTP 500 Internal Server Error); using backup at {}",
        env.fake.base_url(),
        backup.base_url()
    ));
    term.expect("From the backup.");
    term.expect("[end_turn]");
    term.expect("> ");
    term.quit();
}

#[test]
fn a_turn_stopped_at_its_budget_names_the_limit_and_what_it_used() {
    let env = Env::with("[limits]\nmax_tokens_per_turn = 100");
    let mut term = env.ready(&[]);
    // 120 tokens in the first call: the turn stops once its tool has run.
    env.fake
        .push(list_dir_call("call_1").usage(100, 20).build());
    term.send("loop\r");
    term.expect("[budget]  100 in · 20 out tokens · ");
    term.expect(
        "(budget limits.max_tokens_per_turn reached: 120 tokens of 100; send another prompt to go on)",
    );
    term.expect("> ");
    assert_eq!(env.fake.request_count(), 1);
    term.quit();
}

/// The parts of the last user message of a recorded chat request.
fn user_parts(body: &Value) -> Vec<Value> {
    match &last_user_message(body)["content"] {
        Value::Array(parts) => parts.clone(),
        other => vec![serde_json::json!({"type": "text", "text": other})],
    }
}

#[test]
fn an_image_mention_or_a_pasted_image_path_sends_the_image_and_a_bad_one_sends_nothing() {
    let env = Env::new();
    let shot = env.work.join("shot.png");
    std::fs::write(&shot, zeroclaw_testkit::PNG).unwrap();
    let zeroclaw_client::protocol::methods::ContentBlock::Image { data, .. } =
        zeroclaw_client::image_block(&shot).unwrap()
    else {
        unreachable!()
    };
    let data_url = format!("data:image/png;base64,{data}");
    let mut term = env.zerocode(&[]);
    let banner = term.expect("/help for commands");
    let short = short_id(&banner, "session ");
    term.expect("> ");

    // `@shot.png`: echoed as an image under the prompt, sent as an `image_url` part.
    env.fake.push(openai::text(&["A single pixel."]));
    term.send("@shot.png what is this\r");
    term.expect("[image: shot.png, 70 bytes]");
    term.expect("A single pixel.");
    term.expect("[end_turn]");
    term.expect("> ");
    let parts = user_parts(&env.fake.wait_for_requests(1)[0].body);
    assert_eq!(parts[0]["text"], "@shot.png what is this", "{parts:?}");
    assert_eq!(parts[1]["type"], "image_url", "{parts:?}");
    assert_eq!(parts[1]["image_url"]["url"], data_url.as_str());

    // Too big: a red line says why, and nothing is sent.
    std::fs::File::create(env.work.join("big.png"))
        .unwrap()
        .set_len(5 * 1024 * 1024 + 1)
        .unwrap();
    term.send("@big.png and this?\r");
    term.expect("cannot attach big.png: 5242881 bytes, over the limit");
    term.expect("the prompt was not sent");
    term.expect("> ");

    // A dropped file's path, pasted on a line of its own, with a question under it.
    env.fake.push(openai::text(&["The same pixel."]));
    term.send(&format!(
        "\x1b[200~{}\ndescribe it\x1b[201~\r",
        shot.display()
    ));
    term.expect("[image: shot.png, 70 bytes]");
    term.expect("The same pixel.");
    term.expect("> ");
    // The rejected prompt never reached the model: this is the second request.
    let requests = env.fake.wait_for_requests(2);
    assert_eq!(requests.len(), 2);
    let parts = user_parts(&requests[1].body);
    assert_eq!(parts[1]["image_url"]["url"], data_url.as_str(), "{parts:?}");

    // Alone on the line, an image's absolute path is a prompt, not a command.
    env.fake.push(openai::text(&["Pixel again."]));
    term.send(&format!("{}\r", shot.display()));
    term.expect("[image: shot.png, 70 bytes]");
    term.expect("Pixel again.");
    term.expect("> ");
    term.quit();

    // A replay names the prompts' images.
    let mut term = env.ready(&["--session", &short]);
    let screen = term.screen();
    assert!(
        screen.contains("> @shot.png what is this\n> [image: image/png, 70 bytes]"),
        "{screen}"
    );
    term.quit();
}
