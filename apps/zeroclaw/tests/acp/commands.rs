//! Custom commands in an editor (docs/project.md): announced as `available_commands_update`
//! when a session opens, and a prompt `/NAME ARGS` sent as the command's expanded prompt; a
//! `/word` that names no command goes as typed.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::StopReason;
use zeroclaw_testkit::openai;

#[test]
fn commands_are_announced_and_a_slash_prompt_is_expanded() {
    let env = Env::new("", "");
    let commands = env.work.join(".zeroclaw").join("commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a PR\nargument-hint: \"[pr]\"\n---\nReview PR #$ARGUMENTS.\n",
    )
    .unwrap();
    env.fake.push(openai::text(&["Reviewed."]));
    env.fake.push(openai::text(&["As typed."]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        editor
            .wait("available_commands_update", |seen| {
                seen.kinds()
                    .iter()
                    .any(|k| k == "available_commands_update")
            })
            .await;
        let announced = editor.seen().json()[0].clone();
        assert_eq!(announced["availableCommands"][0]["name"], "review");
        assert_eq!(
            announced["availableCommands"][0]["description"],
            "Review a PR"
        );
        assert_eq!(announced["availableCommands"][0]["input"]["hint"], "[pr]");
        cx.send_request(text_prompt(&session, "/review 42"))
            .block_task()
            .await?;
        let answer = cx
            .send_request(text_prompt(&session, "/unknown stays"))
            .block_task()
            .await?;
        Ok(answer.stop_reason)
    }));
    assert_eq!(exit.outcome.unwrap(), StopReason::EndTurn);
    let requests = env.fake.wait_for_requests(2);
    let last_user = |i: usize| {
        let messages = requests[i].body["messages"].as_array().unwrap().clone();
        messages.last().unwrap()["content"].clone()
    };
    assert_eq!(last_user(0), "Review PR #42.\n");
    assert_eq!(last_user(1), "/unknown stays");
}
