//! `glob`: find files by name pattern under the working directory.
//!
//! The tree is walked as `grep` walks it (`ignore`: `.gitignore` and `.ignore` obeyed even
//! outside a git repository, hidden files skipped, symbolic links not followed, what the
//! sandbox hides passed over), and the pattern is matched the way `grep`'s `glob` is (a
//! `.gitignore`-style glob: without a `/` it matches a file's name at any depth, with one
//! it matches the path below `path`), so the two tools agree on what a pattern means.
//!
//! The newest files come first (modification time, then path): what the agent looks for is
//! most often what was just worked on. Memory is bounded by the result cap: only the newest
//! `2 × max_results` matches are held at any time, the rest only counted.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{Tool, ToolContext, ToolOutput, blocking, io_error, resolve};
use crate::config::Policy;
use crate::sandbox::Checker;

const DEFAULT_RESULTS: u64 = 100;
const MAX_RESULTS: u64 = 1000;
const CANCELLED: &str = "glob: cancelled before the search finished";

pub(super) struct Glob;

/// Its name, as its messages begin.
const TOOL: &str = Glob::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// A glob, e.g. `*.rs` (any depth), `src/**/*.ts` or `docs/*.{md,txt}`; without `/` it
    /// matches file names at any depth, with `/` the path below `path`.
    pattern: String,
    /// The directory to search, relative to the working directory (default: all of it). It
    /// must be inside the working directory.
    path: Option<String>,
    /// The most paths returned (default 100, at most 1000).
    #[schemars(range(min = 1))]
    max_results: Option<u64>,
}

impl Tool for Glob {
    const NAME: &'static str = "glob";
    const DESCRIPTION: &'static str = "Find files under the working directory whose path matches a glob pattern. \
        Returns their paths relative to the working directory, one per line, the most \
        recently modified first. Files ignored by .gitignore or .ignore and hidden files are \
        skipped, and symbolic links are not followed; use bash to list those. Use grep to \
        search file contents.";
    const READ_ONLY: bool = true;
    const APPROVAL: Policy = Policy::Allow;
    type Args = Args;

    fn check(&self, args: &Args) -> Result<(), String> {
        if args.pattern.trim().is_empty() {
            return Err("`pattern` must not be empty".into());
        }
        Ok(())
    }

    fn path<'a>(&self, args: &'a Args) -> Option<&'a str> {
        Some(args.path.as_deref().unwrap_or("."))
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let request = Request {
            pattern: args.pattern,
            cwd: ctx.cwd.clone(),
            path: args.path.as_deref().map(|p| resolve(&ctx.cwd, p)),
            max_results: usize::try_from(
                args.max_results.unwrap_or(DEFAULT_RESULTS).min(MAX_RESULTS),
            )
            .unwrap_or(100),
            checker: ctx.sandbox.checker.clone(),
        };
        let cancel = ctx.cancel.clone();
        tokio::select! {
            out = blocking(TOOL, move || find(&request, &cancel)) => out,
            () = ctx.cancel.cancelled() => ToolOutput::error(CANCELLED),
        }
    }
}

struct Request {
    pattern: String,
    cwd: PathBuf,
    path: Option<PathBuf>,
    max_results: usize,
    checker: Checker,
}

/// One match: newest first, then by path.
type Found = (std::cmp::Reverse<SystemTime>, PathBuf);

fn find(request: &Request, cancel: &CancellationToken) -> ToolOutput {
    let cwd = match request.cwd.canonicalize() {
        Ok(cwd) => cwd,
        Err(e) => {
            return io_error(
                TOOL,
                &request.cwd,
                "cannot search the working directory",
                &e,
            );
        }
    };
    let root = match &request.path {
        None => cwd.clone(),
        Some(path) => match path.canonicalize() {
            Ok(root) if root.starts_with(&cwd) => root,
            Ok(_) => {
                return ToolOutput::error(format!(
                    "glob: {} is outside the working directory {}; glob only searches inside \
                     it (use bash to search elsewhere)",
                    path.display(),
                    cwd.display()
                ));
            }
            Err(e) => return io_error(TOOL, path, "cannot search", &e),
        },
    };
    if !root.is_dir() {
        return ToolOutput::error(format!(
            "glob: {} is not a directory",
            request.path.as_deref().unwrap_or(&root).display()
        ));
    }
    if let Err(refusal) = request.checker.check_read(&root) {
        return ToolOutput::error(format!("glob: {refusal}"));
    }
    let mut builder = OverrideBuilder::new(&root);
    let built = match builder.add(&request.pattern) {
        Ok(_) => builder.build(),
        Err(e) => Err(e),
    };
    let matcher = match built {
        Ok(matcher) => matcher,
        Err(e) => {
            return ToolOutput::error(format!(
                "invalid arguments for glob: `pattern` is not a valid glob: {e}"
            ));
        }
    };
    let checker = request.checker.clone();
    let walk = WalkBuilder::new(&root)
        .require_git(false)
        .filter_entry(move |entry| checker.check_read(entry.path()).is_ok())
        .build();
    let keep = request.max_results;
    let mut found: Vec<Found> = Vec::new();
    let mut total = 0usize;
    for entry in walk {
        if cancel.is_cancelled() {
            return ToolOutput::error(CANCELLED);
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if !matcher.matched(entry.path(), false).is_whitelist() {
            continue;
        }
        total += 1;
        let modified = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let shown = entry.path().strip_prefix(&cwd).unwrap_or(entry.path());
        found.push((std::cmp::Reverse(modified), shown.to_path_buf()));
        if found.len() >= 2 * keep {
            found.sort();
            found.truncate(keep);
        }
    }
    found.sort();
    found.truncate(keep);
    if found.is_empty() {
        return ToolOutput::ok(format!(
            "[no files match {:?} under {}]",
            request.pattern,
            shown_root(&root, &cwd)
        ));
    }
    let mut text: Vec<String> = found
        .iter()
        .map(|(_, path)| path.display().to_string())
        .collect();
    if total > keep {
        text.push(format!(
            "[... {} more files not shown ({total} matched; the limit is {keep}): narrow the \
             pattern or the path ...]",
            total - keep
        ));
    }
    ToolOutput::ok(text.join("\n"))
}

fn shown_root(root: &Path, cwd: &Path) -> String {
    match root.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => root.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, run};
    use super::*;
    use serde_json::json;
    use std::fs;
    use std::time::Duration;

    fn touch(path: &Path, age_secs: u64) {
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(path, "x").unwrap();
        let when = SystemTime::now() - Duration::from_secs(age_secs);
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }

    #[tokio::test]
    async fn glob_honours_gitignore_and_lists_the_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join(".gitignore"), "target/\n*.log\n").unwrap();
        touch(&d.join("src/old.rs"), 300);
        touch(&d.join("src/new.rs"), 10);
        touch(&d.join("src/deep/mid.rs"), 100);
        touch(&d.join("target/built.rs"), 1);
        touch(&d.join("notes.log"), 1);
        touch(&d.join(".hidden/h.rs"), 1);
        touch(&d.join("README.md"), 1);
        let c = ctx(d);
        let out = run("glob", &json!({"pattern": "*.rs"}), &c).await;
        assert!(!out.is_error, "{}", out.text);
        let sep = std::path::MAIN_SEPARATOR;
        assert_eq!(
            out.text,
            format!("src{sep}new.rs\nsrc{sep}deep{sep}mid.rs\nsrc{sep}old.rs")
        );
        let out = run("glob", &json!({"pattern": "*.rs", "path": "src/deep"}), &c).await;
        assert_eq!(out.text, format!("src{sep}deep{sep}mid.rs"));
        let out = run("glob", &json!({"pattern": "src/*.rs"}), &c).await;
        assert_eq!(out.text, format!("src{sep}new.rs\nsrc{sep}old.rs"));
        let out = run("glob", &json!({"pattern": "*.log"}), &c).await;
        assert!(out.text.starts_with("[no files match"), "{}", out.text);
    }

    #[tokio::test]
    async fn glob_stops_at_the_cap_and_says_how_many_were_left_out() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..30u64 {
            touch(&dir.path().join(format!("f{i:02}.txt")), 1000 - i);
        }
        let c = ctx(dir.path());
        let out = run("glob", &json!({"pattern": "*.txt", "max_results": 5}), &c).await;
        assert!(!out.is_error, "{}", out.text);
        let lines: Vec<&str> = out.text.lines().collect();
        assert_eq!(
            &lines[..5],
            ["f29.txt", "f28.txt", "f27.txt", "f26.txt", "f25.txt"]
        );
        assert_eq!(
            lines[5],
            "[... 25 more files not shown (30 matched; the limit is 5): narrow the pattern or \
             the path ...]"
        );
    }

    #[tokio::test]
    async fn glob_refuses_a_path_outside_the_working_directory_and_a_bad_pattern() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("inner");
        fs::create_dir(&inner).unwrap();
        let c = ctx(&inner);
        let out = run("glob", &json!({"pattern": "*", "path": ".."}), &c).await;
        assert!(out.is_error);
        assert!(
            out.text.contains("outside the working directory"),
            "{}",
            out.text
        );
        let out = run("glob", &json!({"pattern": "a{b"}), &c).await;
        assert!(out.is_error);
        assert!(out.text.contains("not a valid glob"), "{}", out.text);
    }
}
