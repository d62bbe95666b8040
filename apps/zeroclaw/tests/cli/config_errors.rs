//! Issue 37: a config value of the wrong type is reported in the file's words: the key, the
//! line, the type it wants and how to write it, not the parser's "invalid boolean".

use crate::common::*;

fn start_error(config: &str) -> String {
    let dir = TestDir::new();
    dir.write_config(config);
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    daemon.log_text()
}

#[test]
fn an_unquoted_string_names_the_key_the_line_and_the_quoted_form() {
    let log = start_error("# my config\n[provider]\nmodel = fake\n");
    assert!(log.contains("config.toml is not valid"), "{log}");
    assert!(log.contains("`provider.model` (line 3)"), "{log}");
    assert!(log.contains("model = \"fake\""), "{log}");
    assert!(!log.contains("invalid boolean"), "{log}");
}

#[test]
fn a_value_of_another_type_names_the_type_wanted() {
    let log = start_error("[provider]\nmax_retries = \"three\"\n");
    assert!(
        log.contains("`provider.max_retries` (line 2) wants"),
        "{log}"
    );
    assert!(log.contains("max_retries = 42"), "{log}");
}
