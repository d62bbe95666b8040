//! Issue 31: `/rewind` lists the earlier prompts with the files each turn changed, `/undo`
//! puts the last turn's file change and its conversation back, `/rewind back` undoes that,
//! and `/fork` continues in a new session with the history up to a turn.

use crate::harness::*;
use zeroclaw_testkit::openai;

#[test]
fn undo_rewind_and_fork_from_the_prompt() {
    let env = Env::with("[approvals]\nwrite_file = \"allow\"");
    let mut term = env.ready(&[]);
    let f = env.work.join("notes.txt");
    for (n, content) in [(1, "first"), (2, "second")] {
        env.fake.push(
            openai::Builder::new()
                .tool_call(
                    0,
                    &format!("call_{n}"),
                    "write_file",
                    &format!(r#"{{"path":"notes.txt","content":"{content}"}}"#),
                    0,
                )
                .build(),
        );
        env.fake.push(openai::text(&[&format!("Wrote {content}.")]));
        term.send(&format!("write {content}\r"));
        term.expect(&format!("Wrote {content}."));
        term.expect("> ");
    }
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "second");

    term.send("/rewind\r");
    let listed = term.expect("/rewind back undoes it");
    assert!(listed.contains("1  write first"), "{listed}");
    assert!(listed.contains("2  write second"), "{listed}");
    assert!(listed.contains("added    notes.txt"), "{listed}");
    assert!(listed.contains("modified notes.txt"), "{listed}");
    term.expect("> ");

    term.send("/undo\r");
    term.expect("rewound to before turn 2");
    term.expect("> ");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "first");
    term.send("/rewind back\r");
    term.expect("rewind undone");
    term.expect("> ");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "second");

    term.send("/fork 2\r");
    let forked = term.expect("the original is unchanged");
    assert!(forked.contains("fork of write first"), "{forked}");
    term.expect("> ");
    // The fork's model is sent turn one only.
    env.fake.push(openai::text(&["In the fork."]));
    term.send("and now\r");
    term.expect("In the fork.");
    let body = env.fake.wait_for_requests(5)[4].body.to_string();
    assert!(
        body.contains("write first") && !body.contains("write second"),
        "{body}"
    );
    term.expect("> ");
    term.quit();
}
