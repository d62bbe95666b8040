//! What a turn looks like: Markdown rendered (or clean text with NO_COLOR), the live status
//! line that never stays in the scrollback, and bash's exit code.

use crate::harness::*;
use zeroclaw_testkit::{Gate, openai};

/// An answer with a heading, bold, a list and a code block, cut mid-word and mid-markup.
fn markdown_answer() -> zeroclaw_testkit::Reply {
    openai::text(&[
        "# Plan",
        " ahead\n\nSome **bo",
        "ld** words.\n\n- first\n- sec",
        "ond\n\n```rust\nfn main() {}\n",
        "```\n",
    ])
}

#[test]
fn answers_are_rendered_markdown_with_highlighted_code() {
    let env = Env::new();
    let mut term = env.ready(&[]);

    env.fake.push(markdown_answer());
    term.send("show me\r");
    let raw = term.expect_raw("[end_turn]");
    let text = String::from_utf8_lossy(&raw);
    // The heading: bold, underlined, magenta; the bold word bold.
    assert!(text.contains("\x1b[1;4;35mPlan ahead\x1b[0m"), "{text:?}");
    assert!(text.contains("Some \x1b[1mbold\x1b[0m words."), "{text:?}");
    assert!(
        text.contains("• first\n") || text.contains("• first\r\n"),
        "{text:?}"
    );
    assert!(text.contains("• second"), "{text:?}");
    // The code block: its language, then the line in 24-bit colours.
    assert!(text.contains("── rust"), "{text:?}");
    assert!(text.contains("\x1b[38;2;"), "{text:?}");
    // The markup itself is gone from what stays on the screen (it shows, raw, on the live
    // line while its block is being received).
    let screen = screen(&raw);
    for markup in ["**", "```", "# Plan", "- first"] {
        assert!(!screen.contains(markup), "{markup:?} in {screen}");
    }
    assert!(screen.contains("  fn main() {}"), "{screen}");
    term.expect("> ");
    term.quit();
}

#[test]
fn with_no_color_the_answer_is_clean_text() {
    let env = Env::new();
    let mut term = env.ready_no_color(&[]);

    env.fake.push(markdown_answer());
    term.send("show me\r");
    let raw = term.expect_raw("[end_turn]");
    assert_eq!(sgr_sequences(&raw), Vec::<String>::new());
    let screen = screen(&raw);
    assert!(
        screen.contains(
            "Plan ahead\n\nSome bold words.\n\n- first\n- second\n\n── rust\n  fn main() {}\n"
        ),
        "{screen}"
    );
    term.expect("> ");
    term.quit();
}

#[test]
fn the_status_line_shows_while_a_turn_runs_and_never_stays_in_the_scrollback() {
    let env = Env::new();
    let mut term = env.ready(&[]);

    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .text("Working on it.\n\n")
            .wait_for(&gate)
            .text("Done.")
            .usage(5, 2)
            .build(),
    );
    term.send("go\r");
    // Before any answer: thinking. Held by the fake model: answering, with a token estimate.
    term.expect("thinking · ");
    term.expect("Working on it.");
    term.expect("answering · ");
    term.expect("~4 tokens");
    gate.open();
    term.expect("Done.");
    let end = term.expect("> ");
    let last = end
        .lines()
        .find(|l| l.contains("[end_turn]"))
        .unwrap_or_else(|| panic!("no turn line in {end:?}"));
    // The final line: the real usage and the time the turn took.
    assert!(
        last.starts_with("[end_turn]  5 in · 2 out tokens · ") && last.ends_with('s'),
        "{last:?}"
    );

    let screen = term.screen();
    for status in ["thinking ·", "answering ·", "tokens · Ctrl-C", "⠋", "⠙"] {
        assert!(!screen.contains(status), "{status:?} left in:\n{screen}");
    }
    assert!(
        screen.contains("> go\nWorking on it.\n\nDone.\n[end_turn]"),
        "{screen}"
    );
    term.quit();
}

#[test]
fn a_failing_bash_command_shows_its_exit_code_in_red() {
    let env = Env::with("[approvals]\nbash = \"allow\"\n");
    let mut term = env.ready(&[]);

    env.fake.push(
        openai::Builder::new()
            .tool_call(0, "call_1", "bash", r#"{"command":"echo oops; exit 3"}"#, 1)
            .build(),
    );
    env.fake.push(openai::text(&["It failed."]));
    term.send("run it\r");
    let raw = term.expect_raw("exit code 3");
    let text = String::from_utf8_lossy(&raw);
    // The output in red as an error, and the exit code apart, red.
    assert!(text.contains("\x1b[31m✗  oops\x1b[0m"), "{text:?}");
    assert!(text.contains("\x1b[31mexit code 3"), "{text:?}");
    assert!(!text.contains("[exit code 3]"), "{text:?}");
    term.expect("It failed.");
    term.expect("[end_turn]");
    term.expect("> ");
    term.quit();
}

/// Issue 37: a paragraph shows as it streams (the line being received, raw), not only once
/// it is complete; when its block closes it is printed rendered in its place, and the live
/// line leaves nothing behind.
#[test]
fn a_paragraph_shows_as_it_arrives_and_settles_when_it_closes() {
    let env = Env::new();
    let mut term = env.ready(&[]);
    let gate = Gate::new();
    env.fake.push(
        openai::Builder::new()
            .text("The first half of a long paragraph, **still open**")
            .wait_for(&gate)
            .text(" and its end.\n\nNext one.")
            .build(),
    );
    term.send("go\r");
    // Held by the fake model mid-line: what arrived is on the screen already.
    term.expect("The first half of a long paragraph, **still open**");
    gate.open();
    term.expect("Next one.");
    term.expect("> ");
    let screen = term.screen();
    assert!(
        screen.contains(
            "> go\nThe first half of a long paragraph, still open and its end.\n\nNext one.\n"
        ),
        "{screen}"
    );
    assert!(!screen.contains("**"), "the raw preview stayed:\n{screen}");
    term.quit();
}
