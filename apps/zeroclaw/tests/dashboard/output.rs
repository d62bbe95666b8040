//! A tool's long output is folded behind a summary line on its card and opens on a click;
//! a short one is shown whole.

use crate::browser::{Browser, Test, click, element, until, until_text};
use crate::common::{BASH_ALLOWED, bash_call};
use crate::page::{Dash, open, prompt};
use serde_json::json;
use zeroclaw_testkit::openai;

pub const TESTS: &[Test] = &[(
    "output::a_long_tool_output_is_folded_and_opens_on_a_click",
    a_long_tool_output_is_folded_and_opens_on_a_click,
)];

fn a_long_tool_output_is_folded_and_opens_on_a_click(b: &Browser) {
    let dash = Dash::with(&format!(
        "[gateway]\nlisten = \"127.0.0.1:0\"\n{BASH_ALLOWED}"
    ));
    let id = dash.session("output");
    dash.env.fake.push(bash_call("call_long", "seq 1 50", 2));
    dash.env.fake.push(bash_call("call_short", "echo short", 2));
    dash.env.fake.push(openai::text(&["Counted."]));
    let c = &b.client;
    b.block(async {
        dash.sign_in(c).await;
        open(c, &id).await;
        prompt(c, "count to fifty").await;
        until_text(c, ".msg.assistant", "Counted.").await;

        let long = ".tool[data-call='call_long'] .tool-result";
        // 50 numbers and bash's `[exit code 0]` line.
        until_text(
            c,
            &format!("{long} details.long > summary"),
            "Output: 51 lines",
        )
        .await;
        let folded = element(c, &format!("{long} details.long")).await;
        assert_eq!(folded.attr("open").await.unwrap(), None);
        assert!(
            !element(c, &format!("{long} pre"))
                .await
                .is_displayed()
                .await
                .unwrap()
        );
        click(c, &format!("{long} details.long > summary")).await;
        until(
            c,
            "document.querySelector(arguments[0]).open",
            json!(format!("{long} details.long")),
        )
        .await;
        until_text(c, &format!("{long} pre"), "49\n50").await;

        // Short output: no fold.
        let short = ".tool[data-call='call_short'] .tool-result";
        until_text(c, &format!("{short} > pre"), "short").await;
    });
}
