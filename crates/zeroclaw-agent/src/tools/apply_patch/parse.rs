//! A patch's text read into [`Change`]s: a unified diff (`--- a/x`, `+++ b/x`, `@@ -a,b +c,d
//! @@` hunks, as `diff -u` and `git diff` write it) or the `*** Begin Patch` format (file
//! operations `*** Add File:`, `*** Update File:` with an optional `*** Move to:`,
//! `*** Delete File:`, and hunks of ` `/`-`/`+` lines separated by `@@` lines that may name a
//! line to find first). Both become the same changes; nothing is read from disk here.

/// One file's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Change {
    /// A new file with these lines (each without its line ending).
    Add {
        path: String,
        lines: Vec<String>,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        /// Renamed to this path as well.
        move_to: Option<String>,
        hunks: Vec<Hunk>,
    },
}

impl Change {
    pub(super) fn path(&self) -> &str {
        match self {
            Change::Add { path, .. } | Change::Delete { path } | Change::Update { path, .. } => {
                path
            }
        }
    }
}

/// One hunk: the lines it expects (`old`, context and removed) and what replaces them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Hunk {
    pub old: Vec<String>,
    pub new: Vec<String>,
    /// Where `old` starts in the file, 1-based, when the diff says (`@@ -a,b`).
    pub start: Option<usize>,
    /// A line to find before `old` (`@@ fn main() {` in the `*** Begin Patch` format).
    pub anchor: Option<String>,
    /// The hunk ends at the end of the file (`*** End of File`).
    pub at_end: bool,
    /// `\ No newline at end of file` after the old side's last line.
    pub old_no_eol: bool,
    /// `\ No newline at end of file` after the new side's last line.
    pub new_no_eol: bool,
}

/// The changes `patch` describes, or what is wrong with it (with its line number).
pub(super) fn parse(patch: &str) -> Result<Vec<Change>, String> {
    let lines: Vec<&str> = patch
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    let changes = match lines.iter().find(|l| !l.trim().is_empty()) {
        Some(first) if first.trim() == "*** Begin Patch" => begin_patch(&lines)?,
        Some(_) => unified(&lines)?,
        None => return Err("the patch is empty".into()),
    };
    if changes.is_empty() {
        return Err(
            "the patch changes no file: expected `--- a/PATH` and `+++ b/PATH` headers with \
             `@@` hunks, or `*** Begin Patch` ... `*** End Patch`"
                .into(),
        );
    }
    Ok(changes)
}

/// The `*** Begin Patch` format.
fn begin_patch(lines: &[&str]) -> Result<Vec<Change>, String> {
    let start = lines
        .iter()
        .position(|l| l.trim() == "*** Begin Patch")
        .unwrap_or(0);
    let Some(end) = lines.iter().rposition(|l| l.trim() == "*** End Patch") else {
        return Err("the patch has `*** Begin Patch` but no `*** End Patch` line".into());
    };
    let mut changes = Vec::new();
    let mut at = start + 1;
    let line_no = |i: usize| i + 1;
    while at < end {
        let line = lines[at];
        if line.trim().is_empty() {
            at += 1;
            continue;
        }
        if let Some(path) = header(line, "*** Add File:") {
            at += 1;
            let mut added = Vec::new();
            while at < end && !lines[at].starts_with("*** ") {
                match lines[at].strip_prefix('+') {
                    Some(text) => added.push(text.to_owned()),
                    None => {
                        return Err(format!(
                            "line {}: every line of an added file starts with `+`, got {:?}",
                            line_no(at),
                            lines[at]
                        ));
                    }
                }
                at += 1;
            }
            changes.push(Change::Add { path, lines: added });
        } else if let Some(path) = header(line, "*** Delete File:") {
            at += 1;
            changes.push(Change::Delete { path });
        } else if let Some(path) = header(line, "*** Update File:") {
            at += 1;
            let mut move_to = None;
            if at < end
                && let Some(to) = header(lines[at], "*** Move to:")
            {
                move_to = Some(to);
                at += 1;
            }
            let mut hunks: Vec<Hunk> = Vec::new();
            let mut current: Option<Hunk> = None;
            while at < end {
                let line = lines[at];
                if line.trim() == "*** End of File" {
                    let hunk = current.get_or_insert_with(Hunk::default);
                    hunk.at_end = true;
                    at += 1;
                    continue;
                }
                if line.starts_with("*** ") {
                    break;
                }
                if let Some(rest) = line.strip_prefix("@@") {
                    hunks.extend(current.take().filter(|h| !is_empty(h)));
                    let anchor = rest.trim();
                    current = Some(Hunk {
                        anchor: (!anchor.is_empty()).then(|| anchor.to_owned()),
                        ..Hunk::default()
                    });
                    at += 1;
                    continue;
                }
                let hunk = current.get_or_insert_with(Hunk::default);
                if line.is_empty() {
                    // An empty context line whose leading space was trimmed away.
                    hunk.old.push(String::new());
                    hunk.new.push(String::new());
                } else if let Some(text) = line.strip_prefix(' ') {
                    hunk.old.push(text.to_owned());
                    hunk.new.push(text.to_owned());
                } else if let Some(text) = line.strip_prefix('-') {
                    hunk.old.push(text.to_owned());
                } else if let Some(text) = line.strip_prefix('+') {
                    hunk.new.push(text.to_owned());
                } else {
                    return Err(format!(
                        "line {}: a line of a hunk starts with ` `, `-` or `+`, got {line:?}",
                        line_no(at)
                    ));
                }
                at += 1;
            }
            hunks.extend(current.take().filter(|h| !is_empty(h)));
            if hunks.is_empty() && move_to.is_none() {
                return Err(format!("`*** Update File: {path}` has no hunk"));
            }
            changes.push(Change::Update {
                path,
                move_to,
                hunks,
            });
        } else {
            return Err(format!(
                "line {}: expected `*** Add File:`, `*** Update File:` or `*** Delete File:`, \
                 got {line:?}",
                line_no(at)
            ));
        }
    }
    Ok(changes)
}

fn is_empty(hunk: &Hunk) -> bool {
    hunk.old.is_empty() && hunk.new.is_empty()
}

/// `line`'s path after `prefix`, if it starts with it (and names one).
fn header(line: &str, prefix: &str) -> Option<String> {
    let path = line.strip_prefix(prefix)?.trim();
    (!path.is_empty()).then(|| path.to_owned())
}

/// A unified diff, one or more files.
fn unified(lines: &[&str]) -> Result<Vec<Change>, String> {
    let mut changes = Vec::new();
    let mut at = 0;
    while at < lines.len() {
        let Some(old) = lines[at].strip_prefix("--- ") else {
            // `diff --git`, `index`, mode lines, prose: not part of any file's change.
            at += 1;
            continue;
        };
        let Some(new) = lines.get(at + 1).and_then(|l| l.strip_prefix("+++ ")) else {
            return Err(format!(
                "line {}: a `---` header is followed by a `+++` header",
                at + 1
            ));
        };
        let (old, new) = (diff_path(old, "a/"), diff_path(new, "b/"));
        at += 2;
        let mut hunks = Vec::new();
        while at < lines.len() && lines[at].starts_with("@@") {
            let (hunk, next) = unified_hunk(lines, at)?;
            hunks.push(hunk);
            at = next;
        }
        if hunks.is_empty() {
            return Err(format!(
                "line {}: the change to {} has no `@@` hunk",
                at,
                new.as_deref().or(old.as_deref()).unwrap_or("?")
            ));
        }
        changes.push(match (old, new) {
            (None, Some(path)) => Change::Add {
                path,
                lines: hunks.into_iter().flat_map(|h| h.new).collect(),
            },
            (Some(path), None) => Change::Delete { path },
            (Some(path), Some(to)) => Change::Update {
                move_to: (to != path).then_some(to),
                path,
                hunks,
            },
            (None, None) => return Err("a change from /dev/null to /dev/null".into()),
        });
    }
    Ok(changes)
}

/// A `---`/`+++` header's path: `None` for `/dev/null`; git's `a/`/`b/` prefix and a
/// trailing timestamp (after a tab) dropped.
fn diff_path(header: &str, prefix: &str) -> Option<String> {
    let path = header.split('\t').next().unwrap_or(header).trim();
    if path == "/dev/null" {
        return None;
    }
    Some(path.strip_prefix(prefix).unwrap_or(path).to_owned())
}

/// The hunk whose `@@` header is `lines[at]`, and the index after it.
fn unified_hunk(lines: &[&str], at: usize) -> Result<(Hunk, usize), String> {
    let bad = || {
        format!(
            "line {}: expected a hunk header `@@ -START,COUNT +START,COUNT @@`, got {:?}",
            at + 1,
            lines[at]
        )
    };
    let mut parts = lines[at].split_whitespace().skip(1);
    let range = |part: Option<&str>, sign: char| -> Option<(usize, usize)> {
        let part = part?.strip_prefix(sign)?;
        let mut nums = part.splitn(2, ',');
        let start = nums.next()?.parse().ok()?;
        let count = match nums.next() {
            Some(n) => n.parse().ok()?,
            None => 1,
        };
        Some((start, count))
    };
    let (old_start, mut old_left) = range(parts.next(), '-').ok_or_else(bad)?;
    let (_, mut new_left) = range(parts.next(), '+').ok_or_else(bad)?;
    let mut hunk = Hunk {
        // `-0,0`: an insertion before the first line.
        start: Some(if old_left == 0 {
            old_start + 1
        } else {
            old_start
        }),
        ..Hunk::default()
    };
    let mut i = at + 1;
    // Which side the last line belonged to, for `\ No newline at end of file`.
    let mut last = ' ';
    while i < lines.len() && (old_left > 0 || new_left > 0) {
        let line = lines[i];
        let (tag, text) = match line.chars().next() {
            None => (' ', ""),
            Some(c @ (' ' | '-' | '+')) => (c, &line[1..]),
            Some('\\') => {
                mark_no_eol(&mut hunk, last);
                i += 1;
                continue;
            }
            Some(_) => {
                return Err(format!(
                    "line {}: the hunk at line {} ends early: {old_left} old and {new_left} new \
                     lines were still expected, got {line:?}",
                    i + 1,
                    at + 1
                ));
            }
        };
        match tag {
            ' ' if old_left > 0 && new_left > 0 => {
                hunk.old.push(text.to_owned());
                hunk.new.push(text.to_owned());
                old_left -= 1;
                new_left -= 1;
            }
            '-' if old_left > 0 => {
                hunk.old.push(text.to_owned());
                old_left -= 1;
            }
            '+' if new_left > 0 => {
                hunk.new.push(text.to_owned());
                new_left -= 1;
            }
            _ => {
                return Err(format!(
                    "line {}: the hunk at line {} has more lines than its header counts",
                    i + 1,
                    at + 1
                ));
            }
        }
        last = tag;
        i += 1;
    }
    if old_left > 0 || new_left > 0 {
        return Err(format!(
            "the hunk at line {} ends early: {old_left} old and {new_left} new lines were \
             still expected",
            at + 1
        ));
    }
    if lines.get(i).is_some_and(|l| l.starts_with('\\')) {
        mark_no_eol(&mut hunk, last);
        i += 1;
    }
    Ok((hunk, i))
}

fn mark_no_eol(hunk: &mut Hunk, last: char) {
    match last {
        '-' => hunk.old_no_eol = true,
        '+' => hunk.new_no_eol = true,
        _ => {
            hunk.old_no_eol = true;
            hunk.new_no_eol = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn a_git_diff_of_two_files_with_a_new_and_a_deleted_one() {
        let patch = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n\
            @@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n@@ -10 +10,2 @@\n ten\n+eleven\n\
            --- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world\n\
            --- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\\ No newline at end of file\n";
        let changes = parse(patch).unwrap();
        assert_eq!(changes.len(), 3);
        let Change::Update {
            path,
            hunks,
            move_to,
        } = &changes[0]
        else {
            panic!()
        };
        assert_eq!((path.as_str(), move_to), ("src/a.rs", &None));
        assert_eq!(hunks[0].old, s(&["one", "two", "three"]));
        assert_eq!(hunks[0].new, s(&["one", "TWO", "three"]));
        assert_eq!(hunks[1].start, Some(10));
        assert_eq!(hunks[1].new, s(&["ten", "eleven"]));
        assert_eq!(
            changes[1],
            Change::Add {
                path: "new.txt".into(),
                lines: s(&["hello", "world"])
            }
        );
        assert_eq!(
            changes[2],
            Change::Delete {
                path: "gone.txt".into()
            }
        );
    }

    #[test]
    fn the_begin_patch_format_with_anchors_a_move_and_the_end_of_file() {
        let patch = "*** Begin Patch\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n \
            x = 1\n-y = 2\n+y = 3\n@@\n last\n+appended\n*** End of File\n*** Add File: c.txt\n+c\n\
            *** Delete File: d.txt\n*** End Patch\n";
        let changes = parse(patch).unwrap();
        let Change::Update {
            path,
            move_to,
            hunks,
        } = &changes[0]
        else {
            panic!()
        };
        assert_eq!((path.as_str(), move_to.as_deref()), ("a.py", Some("b.py")));
        assert_eq!(hunks.len(), 2);
        assert_eq!(hunks[0].anchor.as_deref(), Some("def f():"));
        assert_eq!(hunks[0].old, s(&["x = 1", "y = 2"]));
        assert!(hunks[1].at_end);
        assert_eq!(
            changes[1],
            Change::Add {
                path: "c.txt".into(),
                lines: s(&["c"])
            }
        );
        assert_eq!(
            changes[2],
            Change::Delete {
                path: "d.txt".into()
            }
        );
    }

    #[test]
    fn malformed_patches_say_where() {
        assert!(parse("").unwrap_err().contains("empty"));
        assert!(parse("hello\n").unwrap_err().contains("changes no file"));
        let short = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n";
        assert!(
            parse(short).unwrap_err().contains("ends early"),
            "{:?}",
            parse(short)
        );
        let no_end = "*** Begin Patch\n*** Add File: x\n+a\n";
        assert!(parse(no_end).unwrap_err().contains("*** End Patch"));
        let bad = "*** Begin Patch\n*** Frob File: x\n*** End Patch\n";
        assert!(parse(bad).unwrap_err().starts_with("line 2: expected"));
    }
}
