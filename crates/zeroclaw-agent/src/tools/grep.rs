//! `grep`: search the contents of files under the working directory for a regular
//! expression.
//!
//! `ignore` walks the tree as git sees it (`.gitignore`, `.ignore` and hidden files
//! skipped, even outside a git repository) without following symbolic links, so the
//! search cannot leave the working directory; `regex` matches each line, as bytes, so a
//! file that is not valid UTF-8 is still searched. Reading line by line from fixed-size
//! chunks is all this needs, so `grep-searcher` (multi-line search, transcoding, mmap, and
//! their dependencies) would add weight without adding an answer.
//!
//! Memory is bounded: a file is read in 64 KiB chunks, a line longer than 1 MiB makes its
//! file skipped (and counted in a note), and the lines kept stop at `max_results` and at
//! the output limit. A file with a NUL byte is binary: skipped, including any lines it
//! matched before the NUL was seen. The whole search runs on the blocking pool and stops at
//! the next chunk when the call is cancelled.

use std::fs::File;
use std::io::{self, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::sandbox::Checker;
use ignore::WalkBuilder;
use ignore::overrides::{Override, OverrideBuilder};
use regex::bytes::RegexBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::text::{utf8_head, utf8_tail};
use super::{Tool, ToolContext, ToolOutput, blocking, io_error, resolve};
use crate::config::Policy;

const DEFAULT_RESULTS: u64 = 100;
const MAX_RESULTS: u64 = 1000;
const CHUNK: usize = 64 * 1024;
/// The longest line searched; a file with a longer one is skipped.
const LINE_LIMIT: usize = 1024 * 1024;
/// The most of a line shown; a longer one is shown around its first match.
const LINE_SHOWN: usize = 200;
/// How much of a long line is shown before its match.
const BEFORE_MATCH: usize = 60;
const CANCELLED: &str = "grep: cancelled before the search finished";

pub(super) struct Grep;

/// Its name, as its messages begin.
const TOOL: &str = Grep::NAME;

#[derive(Deserialize, JsonSchema)]
pub(super) struct Args {
    /// A regular expression (Rust regex syntax), e.g. `fn \w+_test` or `TODO|FIXME`; escape
    /// special characters (`\.`, `\(`) to match them literally.
    pattern: String,
    /// A directory or file to search, relative to the working directory (default: all of it).
    /// It must be inside the working directory.
    path: Option<String>,
    /// Only search files whose name matches this glob, e.g. `*.rs` or `*.{ts,tsx}`; a glob
    /// containing `/` matches the path below `path`, and a leading `!` excludes instead.
    glob: Option<String>,
    /// Match regardless of case (default false).
    case_insensitive: Option<bool>,
    /// The most matching lines returned (default 100, at most 1000).
    #[schemars(range(min = 1))]
    max_results: Option<u64>,
}

impl Tool for Grep {
    const NAME: &'static str = "grep";
    const DESCRIPTION: &'static str = "Search the contents of the files under the working directory for a regular \
        expression, matched against each line. Returns the matching lines as `path:line: \
        text`, paths relative to the working directory, files in name order. Files ignored \
        by .gitignore or .ignore, hidden files and binary files are skipped, and symbolic \
        links are not followed; use bash to search those. Long lines are shortened around \
        the match.";
    const READ_ONLY: bool = true;
    const APPROVAL: Policy = Policy::Allow;
    type Args = Args;

    fn check(&self, args: &Args) -> Result<(), String> {
        if args.pattern.is_empty() {
            return Err("`pattern` must not be empty".into());
        }
        Ok(())
    }

    fn path<'a>(&self, args: &'a Args) -> Option<&'a str> {
        // Without a path, grep searches the whole working directory.
        Some(args.path.as_deref().unwrap_or("."))
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        let path = args.path.as_deref().map(|p| resolve(&ctx.cwd, p));
        let request = Request {
            pattern: args.pattern,
            case_insensitive: args.case_insensitive.unwrap_or(false),
            cwd: ctx.cwd.clone(),
            path,
            glob: args.glob,
            max_results: args.max_results.unwrap_or(DEFAULT_RESULTS).min(MAX_RESULTS),
            output_limit: ctx.limits.output_limit_bytes,
            checker: ctx.sandbox.checker.clone(),
        };
        let cancel = ctx.cancel.clone();
        tokio::select! {
            out = blocking(TOOL, move || search(&request, &cancel)) => out,
            () = ctx.cancel.cancelled() => ToolOutput::error(CANCELLED),
        }
    }
}

/// One search, as the blocking pool runs it.
struct Request {
    pattern: String,
    case_insensitive: bool,
    cwd: PathBuf,
    /// Where to search (resolved against `cwd`); `None`: all of `cwd`.
    path: Option<PathBuf>,
    glob: Option<String>,
    max_results: u64,
    output_limit: usize,
    /// The session's sandbox: the place searched must be readable in it, and what it
    /// hides inside that place is passed over as if absent (`confine.rs`).
    checker: Checker,
}

fn search(request: &Request, cancel: &CancellationToken) -> ToolOutput {
    let regex = match RegexBuilder::new(&request.pattern)
        .case_insensitive(request.case_insensitive)
        .build()
    {
        Ok(regex) => regex,
        Err(e) => {
            return ToolOutput::error(format!(
                "invalid arguments for grep: `pattern` is not a valid regular expression: {e}"
            ));
        }
    };
    let (cwd, root) = match confine(&request.cwd, request.path.as_deref()) {
        Ok(paths) => paths,
        Err(out) => return out,
    };
    if let Err(refusal) = request.checker.check_read(&root) {
        return ToolOutput::error(format!("grep: {refusal}"));
    }
    let checker = request.checker.clone();
    let globs = match request.glob.as_deref().map(|g| globs(&root, g)).transpose() {
        Ok(globs) => globs,
        Err(e) => {
            return ToolOutput::error(format!(
                "invalid arguments for grep: `glob` is not a valid glob: {e}"
            ));
        }
    };
    let mut found = Found::new(request.max_results, request.output_limit);
    let mut skipped = Skipped::default();
    let walk = WalkBuilder::new(&root)
        .require_git(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(move |entry| checker.check_read(entry.path()).is_ok())
        .build();
    for entry in walk {
        if cancel.is_cancelled() {
            return ToolOutput::error(CANCELLED);
        }
        let Ok(entry) = entry else {
            skipped.unreadable += 1;
            continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        // The glob chooses among the files found; a file named as `path` is searched.
        if entry.depth() > 0
            && let Some(globs) = &globs
            && globs.matched(entry.path(), false).is_ignore()
        {
            continue;
        }
        let shown = entry.path().strip_prefix(&cwd).unwrap_or(entry.path());
        found.files += 1;
        let scanned = File::open(entry.path()).and_then(|mut file| {
            scan(&mut file, cancel, |number, line| match regex.find(line) {
                Some(m) => found.add(shown, number, line, m.range()),
                None => true,
            })
        });
        match scanned {
            Ok(Scanned::Whole) => found.keep_file(),
            Ok(Scanned::Stopped) => {
                found.keep_file();
                break;
            }
            Ok(Scanned::Binary) => found.drop_file(),
            Ok(Scanned::LongLine) => {
                found.drop_file();
                skipped.long_lines += 1;
            }
            Ok(Scanned::Cancelled) => return ToolOutput::error(CANCELLED),
            Err(_) => {
                found.drop_file();
                skipped.unreadable += 1;
            }
        }
    }
    ToolOutput::ok(found.render(&skipped))
}

/// The canonical working directory, and the canonical place to search, which must be
/// inside it: `..` and symbolic links are resolved before the check.
fn confine(cwd: &Path, path: Option<&Path>) -> Result<(PathBuf, PathBuf), ToolOutput> {
    let cwd = cwd
        .canonicalize()
        .map_err(|e| io_error(TOOL, cwd, "cannot search the working directory", &e))?;
    let Some(path) = path else {
        return Ok((cwd.clone(), cwd));
    };
    let root = path
        .canonicalize()
        .map_err(|e| io_error(TOOL, path, "cannot search", &e))?;
    if !root.starts_with(&cwd) {
        return Err(ToolOutput::error(format!(
            "grep: {} is outside the working directory {}; grep only searches inside it \
             (use bash to search elsewhere)",
            path.display(),
            cwd.display()
        )));
    }
    Ok((cwd, root))
}

fn globs(root: &Path, glob: &str) -> Result<Override, ignore::Error> {
    let mut builder = OverrideBuilder::new(root);
    builder.add(glob)?;
    builder.build()
}

/// How reading one file ended.
#[derive(Debug, PartialEq)]
enum Scanned {
    /// Every line was visited.
    Whole,
    /// The visitor asked to stop.
    Stopped,
    /// A NUL byte: a binary file.
    Binary,
    /// A line longer than [`LINE_LIMIT`].
    LongLine,
    Cancelled,
}

/// Reads `file` in chunks and calls `visit(line number, line)` for each line, without its
/// `\n` or `\r\n`, until it returns false.
fn scan(
    file: &mut impl Read,
    cancel: &CancellationToken,
    mut visit: impl FnMut(u64, &[u8]) -> bool,
) -> io::Result<Scanned> {
    let mut chunk = vec![0u8; CHUNK];
    // The start of a line that continues in the next chunk.
    let mut carry: Vec<u8> = Vec::new();
    let mut number = 0u64;
    let mut line_end =
        |number: u64, line: &[u8]| visit(number, line.strip_suffix(b"\r").unwrap_or(line));
    loop {
        if cancel.is_cancelled() {
            return Ok(Scanned::Cancelled);
        }
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let chunk = &chunk[..n];
        if memchr::memchr(0, chunk).is_some() {
            return Ok(Scanned::Binary);
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', chunk) {
            number += 1;
            let go_on = if carry.is_empty() {
                line_end(number, &chunk[start..end])
            } else {
                carry.extend_from_slice(&chunk[start..end]);
                if carry.len() > LINE_LIMIT {
                    return Ok(Scanned::LongLine);
                }
                let go_on = line_end(number, &carry);
                carry.clear();
                go_on
            };
            if !go_on {
                return Ok(Scanned::Stopped);
            }
            start = end + 1;
        }
        carry.extend_from_slice(&chunk[start..]);
        if carry.len() > LINE_LIMIT {
            return Ok(Scanned::LongLine);
        }
    }
    if !carry.is_empty() && !line_end(number + 1, &carry) {
        return Ok(Scanned::Stopped);
    }
    Ok(Scanned::Whole)
}

/// Why the results stopped short.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Cut {
    MaxResults,
    OutputLimit,
}

/// Files left out, for the notes after the results.
#[derive(Debug, Default)]
struct Skipped {
    unreadable: u64,
    long_lines: u64,
}

/// The matching lines kept, within `max_results` and the output limit. The current file's
/// lines wait apart until the file is known not to be binary.
struct Found {
    text: String,
    lines: u64,
    file_text: String,
    file_lines: u64,
    files: u64,
    max_results: u64,
    output_limit: usize,
    cut: Option<Cut>,
}

impl Found {
    fn new(max_results: u64, output_limit: usize) -> Self {
        Self {
            text: String::new(),
            lines: 0,
            file_text: String::new(),
            file_lines: 0,
            files: 0,
            max_results,
            output_limit,
            cut: None,
        }
    }

    /// Adds one matching line (`at` is its first match); false when no more fit.
    fn add(&mut self, path: &Path, number: u64, line: &[u8], at: Range<usize>) -> bool {
        if self.lines + self.file_lines >= self.max_results {
            self.cut = Some(Cut::MaxResults);
            return false;
        }
        let entry = format!("{}:{number}: {}\n", slashed(path), shorten(line, at));
        if self.text.len() + self.file_text.len() + entry.len() > self.output_limit {
            self.cut = Some(Cut::OutputLimit);
            return false;
        }
        self.file_text.push_str(&entry);
        self.file_lines += 1;
        true
    }

    fn keep_file(&mut self) {
        self.text.push_str(&self.file_text);
        self.lines += self.file_lines;
        self.drop_file();
    }

    fn drop_file(&mut self) {
        self.file_text.clear();
        self.file_lines = 0;
    }

    fn render(self, skipped: &Skipped) -> String {
        let mut text = self.text;
        if self.lines == 0 {
            text = format!(
                "no matches ({} searched)",
                count(self.files, "file", "files")
            );
        }
        let narrow = "narrow the search with `path`, `glob` or a more specific `pattern`";
        let mut notes = Vec::new();
        match self.cut {
            Some(Cut::MaxResults) if self.max_results < MAX_RESULTS => notes.push(format!(
                "[stopped after {}; there are more: {narrow}, or raise `max_results` (at most {MAX_RESULTS})]",
                count(self.lines, "matching line", "matching lines")
            )),
            Some(Cut::MaxResults) => notes.push(format!(
                "[stopped after {}; there are more: {narrow}]",
                count(self.lines, "matching line", "matching lines")
            )),
            Some(Cut::OutputLimit) => notes.push(format!(
                "[stopped after {} at the output limit of {} bytes; there are more: {narrow}]",
                count(self.lines, "matching line", "matching lines"),
                self.output_limit
            )),
            None => {}
        }
        if skipped.long_lines > 0 {
            notes.push(format!(
                "[{} not searched: a line longer than {} MiB; use bash to search them]",
                count(skipped.long_lines, "file", "files"),
                LINE_LIMIT / (1024 * 1024)
            ));
        }
        if skipped.unreadable > 0 {
            notes.push(format!(
                "[{} could not be read]",
                count(
                    skipped.unreadable,
                    "file or directory",
                    "files or directories"
                )
            ));
        }
        text.truncate(text.trim_end_matches('\n').len());
        for note in notes {
            text.push('\n');
            text.push_str(&note);
        }
        text
    }
}

/// `line` as text: whole if short, else [`LINE_SHOWN`] bytes around the match at `at`,
/// cut on character boundaries and marked `[...]` where cut.
fn shorten(line: &[u8], at: Range<usize>) -> String {
    if line.len() <= LINE_SHOWN {
        return String::from_utf8_lossy(line).into_owned();
    }
    let from = at.start.saturating_sub(BEFORE_MATCH);
    let to = (from + LINE_SHOWN).min(line.len());
    let window = utf8_head(utf8_tail(&line[from..to]));
    let mut text = String::new();
    if from > 0 {
        text.push_str("[...] ");
    }
    text.push_str(&String::from_utf8_lossy(window));
    if to < line.len() {
        text.push_str(" [...]");
    }
    text
}

/// `n` and the noun that goes with it: "1 file", "3 files".
fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A path as grep shows it: with `/` between components on every platform (Windows
/// accepts it, and a session's history reads the same wherever it ran).
fn slashed(path: &Path) -> std::borrow::Cow<'_, str> {
    let text = path.to_string_lossy();
    if std::path::MAIN_SEPARATOR == '/' {
        text
    } else {
        text.replace(std::path::MAIN_SEPARATOR, "/").into()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ctx, run};
    use super::*;
    use serde_json::Value;
    use serde_json::json;
    use std::fs;

    /// A tree with a few files to search.
    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::write(root.join("README.md"), "Hello\nnothing here\nhello again\n").unwrap();
        fs::write(root.join("src/main.rs"), "fn main() {\n    hello();\n}\n").unwrap();
        fs::write(root.join("src/deep/lib.rs"), "pub fn hello() {}\r\n").unwrap();
        dir
    }

    async fn grep(dir: &Path, args: Value) -> ToolOutput {
        run("grep", &args, &ctx(dir)).await
    }

    #[tokio::test]
    async fn finds_matching_lines_with_their_paths_and_numbers_in_name_order() {
        let dir = tree();
        let out = grep(dir.path(), json!({"pattern": "hel+o"})).await;
        assert_eq!(
            out,
            ToolOutput::ok(
                "README.md:3: hello again\nsrc/deep/lib.rs:1: pub fn hello() {}\nsrc/main.rs:2:     hello();"
            )
        );
        let out = grep(dir.path(), json!({"pattern": "^fn", "path": "src"})).await;
        assert_eq!(out, ToolOutput::ok("src/main.rs:1: fn main() {"));
        let out = grep(
            dir.path(),
            json!({"pattern": "hello", "path": "src/main.rs"}),
        )
        .await;
        assert_eq!(out, ToolOutput::ok("src/main.rs:2:     hello();"));
        let out = grep(dir.path(), json!({"pattern": "absent"})).await;
        assert_eq!(out, ToolOutput::ok("no matches (3 files searched)"));
    }

    #[tokio::test]
    async fn case_insensitive_matches_regardless_of_case() {
        let dir = tree();
        let out = grep(
            dir.path(),
            json!({"pattern": "HELLO", "case_insensitive": true, "path": "README.md"}),
        )
        .await;
        assert_eq!(
            out,
            ToolOutput::ok("README.md:1: Hello\nREADME.md:3: hello again")
        );
    }

    #[tokio::test]
    async fn the_glob_chooses_the_files() {
        let dir = tree();
        let out = grep(dir.path(), json!({"pattern": "hello", "glob": "*.rs"})).await;
        assert_eq!(
            out,
            ToolOutput::ok("src/deep/lib.rs:1: pub fn hello() {}\nsrc/main.rs:2:     hello();")
        );
        let out = grep(dir.path(), json!({"pattern": "hello", "glob": "!*.rs"})).await;
        assert_eq!(out, ToolOutput::ok("README.md:3: hello again"));
        let out = grep(dir.path(), json!({"pattern": "x", "glob": "a{"})).await;
        assert!(out.is_error);
        assert!(
            out.text
                .starts_with("invalid arguments for grep: `glob` is not a valid glob"),
            "{}",
            out.text
        );
    }

    #[tokio::test]
    async fn ignored_and_hidden_files_are_skipped() {
        let dir = tree();
        let root = dir.path();
        fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        fs::create_dir(root.join("target")).unwrap();
        fs::write(root.join("target/out.rs"), "hello\n").unwrap();
        fs::write(root.join("run.log"), "hello\n").unwrap();
        fs::write(root.join(".hidden"), "hello\n").unwrap();
        let out = grep(root, json!({"pattern": "hello"})).await;
        assert_eq!(
            out,
            ToolOutput::ok(
                "README.md:3: hello again\nsrc/deep/lib.rs:1: pub fn hello() {}\nsrc/main.rs:2:     hello();"
            )
        );
        // A glob does not bring an ignored file back.
        let out = grep(root, json!({"pattern": "hello", "glob": "*.log"})).await;
        assert_eq!(out, ToolOutput::ok("no matches (0 files searched)"));
    }

    #[tokio::test]
    async fn binary_files_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.bin"), b"hello\0world\n").unwrap();
        // The NUL comes after the match, in a later chunk: the file is still left out.
        let mut late = b"hello\n".to_vec();
        late.extend(std::iter::repeat_n(b'x', CHUNK));
        late.extend(b"\0\n");
        fs::write(dir.path().join("b.bin"), late).unwrap();
        fs::write(dir.path().join("c.txt"), "hello\n").unwrap();
        let out = grep(dir.path(), json!({"pattern": "hello"})).await;
        assert_eq!(out, ToolOutput::ok("c.txt:1: hello"));
    }

    #[tokio::test]
    async fn results_are_capped_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let lines: String = (1..=5).map(|i| format!("match {i}\n")).collect();
        fs::write(dir.path().join("a.txt"), &lines).unwrap();
        fs::write(dir.path().join("b.txt"), &lines).unwrap();
        let out = grep(dir.path(), json!({"pattern": "match", "max_results": 7})).await;
        let text = out.text;
        let (results, note) = text.rsplit_once('\n').unwrap();
        assert_eq!(results.lines().count(), 7);
        assert!(results.ends_with("b.txt:2: match 2"), "{results}");
        assert_eq!(
            note,
            "[stopped after 7 matching lines; there are more: narrow the search with `path`, \
             `glob` or a more specific `pattern`, or raise `max_results` (at most 1000)]"
        );
        // Exactly as many as allowed: no note.
        let out = grep(dir.path(), json!({"pattern": "match", "max_results": 10})).await;
        assert_eq!(out.text.lines().count(), 10);
        // The default, and the cap.
        let many: String = (0..1500).map(|i| format!("m{i}\n")).collect();
        fs::write(dir.path().join("c.txt"), many).unwrap();
        let out = grep(dir.path(), json!({"pattern": "^m\\d", "path": "c.txt"})).await;
        assert_eq!(out.text.lines().count(), 101);
        let out = grep(
            dir.path(),
            json!({"pattern": "^m\\d", "path": "c.txt", "max_results": 5000}),
        )
        .await;
        let last = out.text.lines().last().unwrap();
        assert_eq!(out.text.lines().count(), 1001);
        assert!(
            last.starts_with("[stopped after 1000 matching lines"),
            "{last}"
        );
    }

    #[tokio::test]
    async fn output_stays_within_the_limit_and_long_lines_are_shortened() {
        let dir = tempfile::tempdir().unwrap();
        let long = format!("{}needle{}\n", "a".repeat(500), "é".repeat(500));
        fs::write(dir.path().join("long.txt"), long.repeat(50)).unwrap();
        let mut c = ctx(dir.path());
        c.limits.output_limit_bytes = 2000;
        let out = run("grep", &json!({"pattern": "needle"}), &c).await;
        assert!(!out.is_error);
        let (results, note) = out.text.rsplit_once('\n').unwrap();
        assert!(results.len() <= 2000, "{}", results.len());
        let first = results.lines().next().unwrap();
        assert!(first.starts_with("long.txt:1: [...] aaa"), "{first}");
        assert!(first.contains("needleééé"), "{first}");
        assert!(first.ends_with("é [...]"), "{first}");
        assert!(
            note.starts_with("[stopped after ")
                && note.contains("at the output limit of 2000 bytes"),
            "{note}"
        );
    }

    #[tokio::test]
    async fn a_line_over_the_limit_skips_its_file_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let huge = format!("needle{}\n", "x".repeat(LINE_LIMIT + 1));
        fs::write(dir.path().join("huge.txt"), huge).unwrap();
        fs::write(dir.path().join("ok.txt"), "needle\n").unwrap();
        let out = grep(dir.path(), json!({"pattern": "needle"})).await;
        assert_eq!(
            out,
            ToolOutput::ok(
                "ok.txt:1: needle\n[1 file not searched: a line longer than 1 MiB; use bash to search them]"
            )
        );
    }

    #[tokio::test]
    async fn a_path_outside_the_working_directory_is_refused() {
        let outer = tempfile::tempdir().unwrap();
        let cwd = outer.path().join("work");
        fs::create_dir(&cwd).unwrap();
        fs::write(outer.path().join("secret.txt"), "hello\n").unwrap();
        for path in [
            "..",
            "../secret.txt",
            "sub/../..",
            outer.path().to_str().unwrap(),
        ] {
            fs::create_dir_all(cwd.join("sub")).unwrap();
            let out = grep(&cwd, json!({"pattern": "hello", "path": path})).await;
            assert!(out.is_error, "{path}: {}", out.text);
            assert!(
                out.text.contains("is outside the working directory"),
                "{path}: {}",
                out.text
            );
        }
        let out = grep(&cwd, json!({"pattern": "hello", "path": "missing"})).await;
        assert!(out.is_error);
        assert!(out.text.contains("no such file"), "{}", out.text);
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn symbolic_links_do_not_lead_outside() {
        let outer = tempfile::tempdir().unwrap();
        let cwd = outer.path().join("work");
        fs::create_dir(&cwd).unwrap();
        fs::write(outer.path().join("secret.txt"), "hello\n").unwrap();
        std::os::unix::fs::symlink(outer.path(), cwd.join("up")).unwrap();
        std::os::unix::fs::symlink(outer.path().join("secret.txt"), cwd.join("s.txt")).unwrap();
        fs::write(cwd.join("own.txt"), "hello\n").unwrap();
        // Named as the path: refused.
        let out = grep(&cwd, json!({"pattern": "hello", "path": "up"})).await;
        assert!(
            out.text.contains("is outside the working directory"),
            "{}",
            out.text
        );
        let out = grep(&cwd, json!({"pattern": "hello", "path": "s.txt"})).await;
        assert!(
            out.text.contains("is outside the working directory"),
            "{}",
            out.text
        );
        // Met while walking: not followed.
        let out = grep(&cwd, json!({"pattern": "hello"})).await;
        assert_eq!(out, ToolOutput::ok("own.txt:1: hello"));
    }

    #[tokio::test]
    async fn bad_arguments_are_clear_errors() {
        let dir = tree();
        let out = grep(dir.path(), json!({"pattern": "fn (main"})).await;
        assert!(out.is_error);
        assert!(
            out.text.starts_with(
                "invalid arguments for grep: `pattern` is not a valid regular expression: "
            ),
            "{}",
            out.text
        );
        assert!(out.text.contains("unclosed group"), "{}", out.text);
        for (args, want) in [
            (json!({}), "missing required string argument `pattern`"),
            (json!({"pattern": ""}), "`pattern` must not be empty"),
            (
                json!({"pattern": "x", "path": ""}),
                "`path` must not be empty",
            ),
            (
                json!({"pattern": "x", "max_results": 0}),
                "`max_results` must be at least 1",
            ),
            (
                json!({"pattern": "x", "case_insensitive": "yes"}),
                "`case_insensitive` must be a boolean, got a string",
            ),
        ] {
            let out = grep(dir.path(), args).await;
            assert_eq!(
                out,
                ToolOutput::error(format!("invalid arguments for grep: {want}"))
            );
        }
    }

    #[test]
    fn scanning_stops_when_cancelled() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let mut input: &[u8] = b"a\nb\n";
        let scanned = scan(&mut input, &cancel, |_, _| true).unwrap();
        assert_eq!(scanned, Scanned::Cancelled);
    }

    #[test]
    fn scanning_joins_lines_across_chunks_and_strips_line_ends() {
        let cancel = CancellationToken::new();
        let mut text = "x".repeat(CHUNK - 2);
        text.push_str("\r\nlast without newline");
        let mut seen = Vec::new();
        let scanned = scan(&mut text.as_bytes(), &cancel, |n, line| {
            seen.push((n, line.len()));
            true
        })
        .unwrap();
        assert_eq!(scanned, Scanned::Whole);
        assert_eq!(seen, [(1, CHUNK - 2), (2, "last without newline".len())]);
    }
}
