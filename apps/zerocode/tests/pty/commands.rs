//! The project's custom commands in zerocode (docs/project.md): `/NAME ARGS` sends the
//! command's expanded prompt; zerocode's own commands win on a clash, and `/help` says so;
//! Tab completes the custom commands, a file added while zerocode runs included.

use crate::harness::*;
use zeroclaw_testkit::openai;

#[test]
fn a_custom_command_sends_its_prompt_and_a_built_in_wins_a_clash() {
    let env = Env::new();
    let commands = env.work.join(".zeroclaw").join("commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("fix-issue.md"),
        "---\ndescription: Fix an issue\nargument-hint: \"[number]\"\n---\nFix issue #$1 now.\n",
    )
    .unwrap();
    std::fs::write(commands.join("status.md"), "never sent\n").unwrap();
    let mut term = env.ready(&[]);

    term.send("/help\r");
    term.expect("This project's custom commands");
    term.expect("/fix-issue [number]");
    term.expect("Fix an issue");
    term.expect("hidden: zerocode's own /status wins");
    term.expect("> ");

    env.fake.push(openai::text(&["On it."]));
    term.send("/fix-issue 42\r");
    term.expect("/fix-issue: sending the command's prompt");
    term.expect("On it.");
    term.expect("> ");
    let body = &env.fake.wait_for_requests(1)[0].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(user["content"], "Fix issue #42 now.\n");

    term.send("/context\r");
    term.expect("  project   ");
    term.expect("  command   /fix-issue Fix an issue");
    term.expect("> ");

    // A command added now completes at the next prompt (the list is asked before each).
    std::fs::write(
        commands.join("deploy-now.md"),
        "---\ndescription: Deploy it\n---\nDeploy to $1.\n",
    )
    .unwrap();
    term.send("/nope\r");
    term.expect("unknown command /nope; /help lists the commands");
    term.expect("> ");
    env.fake.push(openai::text(&["Deploying."]));
    term.send("/deploy\t");
    term.send(" staging\r");
    term.expect("/deploy-now: sending the command's prompt");
    term.expect("Deploying.");
    term.expect("> ");
    let body = &env.fake.wait_for_requests(2)[1].body;
    let user = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(user["content"], "Deploy to staging.\n");
    // /status is zerocode's: its table, and no turn.
    term.send("/status\r");
    term.expect("endpoint");
    term.expect("> ");
    assert_eq!(env.fake.request_count(), 2);
    term.quit();
}
