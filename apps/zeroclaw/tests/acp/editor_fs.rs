//! The editor's file system: with `fs.readTextFile` / `fs.writeTextFile` declared, the
//! file tools read and write the editor's buffers (through our `fs/*` requests to the
//! bridge), not the disk; an editor's error is the tool's error.

use crate::common::*;
use crate::editor::*;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, FileSystemCapabilities, NewSessionRequest, StopReason,
};
use serde_json::json;
use zeroclaw_testkit::openai;

fn with_fs() -> ClientCapabilities {
    ClientCapabilities::new().fs(FileSystemCapabilities::new()
        .read_text_file(true)
        .write_text_file(true))
}

#[test]
fn read_file_sees_the_editor_buffer_not_the_disk() {
    let env = Env::new("", "");
    let path = env.work.join("main.rs");
    std::fs::write(&path, "saved on disk\n").unwrap();
    env.fake.push(tool_call(
        "call_1",
        "read_file",
        json!({"path": "main.rs"}),
        2,
    ));
    env.fake.push(openai::text(&["I see the buffer."]));
    let editor = Editor::new(Permission::Hold);
    editor
        .buffers
        .lock()
        .unwrap()
        .insert(path.clone(), "unsaved edit in the editor\n".into());
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, with_fs()).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?;
        cx.send_request(text_prompt(&session.session_id.0, "read main.rs"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert_eq!(tool_content(body, "call_1"), "unsaved edit in the editor\n");
    let seen = editor.seen();
    assert_eq!(seen.reads.len(), 1);
    assert_eq!(seen.reads[0].path, path, "an absolute path");
}

#[test]
fn write_and_edit_land_in_the_editor_and_leave_the_disk_alone() {
    let env = Env::new(
        "",
        "[approvals]\nwrite_file = \"allow\"\nedit_file = \"allow\"",
    );
    let path = env.work.join("notes.md");
    std::fs::write(&path, "disk\n").unwrap();
    env.fake.push(tool_call(
        "call_1",
        "write_file",
        json!({"path": "notes.md", "content": "one\ntwo\n"}),
        2,
    ));
    env.fake.push(tool_call(
        "call_2",
        "edit_file",
        json!({"path": "notes.md", "old_text": "two", "new_text": "three"}),
        2,
    ));
    env.fake.push(openai::text(&["Edited."]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        initialize(&cx, with_fs()).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?;
        cx.send_request(text_prompt(&session.session_id.0, "write notes"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    assert_eq!(
        editor
            .buffers
            .lock()
            .unwrap()
            .get(&path)
            .map(String::as_str),
        Some("one\nthree\n")
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "disk\n");
    let requests = env.fake.wait_for_requests(3);
    assert!(tool_content(&requests[1].body, "call_1").contains("wrote 8 bytes"));
    assert!(tool_content(&requests[2].body, "call_2").contains("line 2"));
}

#[test]
fn an_editor_that_cannot_read_the_file_fails_the_tool_without_falling_back_to_disk() {
    let env = Env::new("", "");
    std::fs::write(env.work.join("only-on-disk.txt"), "disk\n").unwrap();
    env.fake.push(tool_call(
        "call_1",
        "read_file",
        json!({"path": "only-on-disk.txt"}),
        2,
    ));
    env.fake.push(openai::text(&["It failed."]));
    let exit = runtime().block_on(run(&env.dir, Editor::new(Permission::Hold), async |cx| {
        initialize(&cx, with_fs()).await?;
        let session = cx
            .send_request(NewSessionRequest::new(&env.work))
            .block_task()
            .await?;
        cx.send_request(text_prompt(&session.session_id.0, "read it"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let body = &env.fake.wait_for_requests(2)[1].body;
    let content = tool_content(body, "call_1");
    assert!(content.contains("the editor could not read"), "{content}");
    assert!(content.contains("no buffer for"), "{content}");
}

#[test]
fn without_the_capability_the_tools_use_the_disk() {
    let env = Env::new("", "");
    std::fs::write(env.work.join("a.txt"), "from disk\n").unwrap();
    env.fake.push(tool_call(
        "call_1",
        "read_file",
        json!({"path": "a.txt"}),
        2,
    ));
    env.fake.push(openai::text(&["ok"]));
    let editor = Editor::new(Permission::Hold);
    let exit = runtime().block_on(run(&env.dir, editor.clone(), async |cx| {
        let session = open(&cx, &env.work).await?;
        cx.send_request(text_prompt(&session, "read"))
            .block_task()
            .await
    }));
    assert_eq!(exit.outcome.unwrap().stop_reason, StopReason::EndTurn);
    let body = &env.fake.wait_for_requests(2)[1].body;
    assert_eq!(tool_content(body, "call_1"), "from disk\n");
    assert!(editor.seen().reads.is_empty());
}
