//! A file's hunks applied to its text, in memory: each hunk's old lines are looked for
//! after the previous hunk (at the line its header names first, then anywhere after; then
//! again ignoring trailing whitespace, then ignoring indentation too), and replaced.

use super::parse::Hunk;

/// `text` with `hunks` applied; otherwise which hunk (1-based) failed and why.
pub(super) fn apply(text: &str, hunks: &[Hunk]) -> Result<String, (usize, String)> {
    let eol = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut final_newline = text.is_empty() || text.ends_with('\n');
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect();
    let mut cursor = 0usize;
    // How far the earlier hunks moved the lines after them.
    let mut shift: isize = 0;
    for (i, hunk) in hunks.iter().enumerate() {
        let number = i + 1;
        if let Some(anchor) = &hunk.anchor {
            let found = (cursor..lines.len())
                .find(|&at| lines[at].trim() == anchor.trim())
                .ok_or_else(|| {
                    (
                        number,
                        format!("its `@@ {anchor}` line was not found (after line {cursor})"),
                    )
                })?;
            cursor = found + 1;
        }
        let at = if hunk.old.is_empty() {
            match hunk.start {
                _ if hunk.at_end => lines.len(),
                Some(start) => {
                    let at = (start as isize - 1 + shift).max(0) as usize;
                    at.clamp(cursor.min(lines.len()), lines.len())
                }
                None if hunk.anchor.is_some() => cursor,
                None => lines.len(),
            }
        } else {
            let hint = hunk
                .start
                .map(|start| (start as isize - 1 + shift).max(0) as usize);
            find(&lines, &hunk.old, cursor, hint, hunk.at_end).ok_or_else(|| {
                let first = hunk.old.iter().find(|l| !l.trim().is_empty());
                (
                    number,
                    format!(
                        "its {} old lines were not found in the file{}{}",
                        hunk.old.len(),
                        match first {
                            Some(line) => format!(" (starting with {line:?})"),
                            None => String::new(),
                        },
                        if cursor > 0 {
                            format!(" after line {cursor}")
                        } else {
                            String::new()
                        }
                    ),
                )
            })?
        };
        let reaches_end = at + hunk.old.len() == lines.len();
        lines.splice(at..at + hunk.old.len(), hunk.new.iter().cloned());
        cursor = at + hunk.new.len();
        shift += hunk.new.len() as isize - hunk.old.len() as isize;
        if reaches_end {
            if hunk.new_no_eol {
                final_newline = false;
            } else if hunk.old_no_eol || !hunk.new.is_empty() {
                final_newline = true;
            }
        }
    }
    let mut out = lines.join(eol);
    if final_newline && !lines.is_empty() {
        out.push_str(eol);
    }
    Ok(out)
}

/// Where `old` starts in `lines`, at or after `from`: at `hint` if it is there, else the
/// first place (the last one when the hunk is at the end of the file); each looser
/// comparison is tried only when the stricter one finds nothing.
fn find(
    lines: &[String],
    old: &[String],
    from: usize,
    hint: Option<usize>,
    at_end: bool,
) -> Option<usize> {
    let loose: [fn(&str) -> &str; 3] = [|l| l, str::trim_end, str::trim];
    for norm in loose {
        let matches = |at: usize| {
            at + old.len() <= lines.len()
                && old
                    .iter()
                    .zip(&lines[at..at + old.len()])
                    .all(|(want, got)| norm(want) == norm(got))
        };
        if at_end && lines.len() >= old.len() && matches(lines.len() - old.len()) {
            return Some(lines.len() - old.len());
        }
        if let Some(hint) = hint.filter(|&h| h >= from && matches(h)) {
            return Some(hint);
        }
        if lines.len() >= old.len()
            && let Some(at) = (from..=lines.len() - old.len()).find(|&at| matches(at))
        {
            return Some(at);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hunk(old: &[&str], new: &[&str], start: Option<usize>) -> Hunk {
        Hunk {
            old: old.iter().map(|l| (*l).to_owned()).collect(),
            new: new.iter().map(|l| (*l).to_owned()).collect(),
            start,
            ..Hunk::default()
        }
    }

    #[test]
    fn hunks_apply_in_order_and_follow_moved_lines() {
        let text = "a\nb\nc\nd\ne\nf\n";
        let hunks = [
            hunk(&["a", "b"], &["a", "x", "y", "b"], Some(1)),
            // Its header still says line 5: the first hunk moved it to 7.
            hunk(&["e"], &["E"], Some(5)),
        ];
        assert_eq!(apply(text, &hunks).unwrap(), "a\nx\ny\nb\nc\nd\nE\nf\n");
    }

    #[test]
    fn crlf_and_a_missing_final_newline_are_kept() {
        assert_eq!(
            apply("a\r\nb\r\n", &[hunk(&["b"], &["B"], None)]).unwrap(),
            "a\r\nB\r\n"
        );
        assert_eq!(
            apply("a\nb", &[hunk(&["a"], &["A"], None)]).unwrap(),
            "A\nb"
        );
        let mut h = hunk(&["b"], &["b", "c"], None);
        h.old_no_eol = true;
        assert_eq!(apply("a\nb", &[h]).unwrap(), "a\nb\nc\n");
    }

    #[test]
    fn a_hunk_not_in_the_file_is_named() {
        let err = apply(
            "a\nb\n",
            &[hunk(&["a"], &["A"], None), hunk(&["zzz"], &[], None)],
        )
        .unwrap_err();
        assert_eq!(err.0, 2);
        assert!(err.1.contains("\"zzz\""), "{}", err.1);
    }

    #[test]
    fn whitespace_differences_are_tolerated_only_when_nothing_matches_exactly() {
        let text = "    x = 1  \n";
        assert_eq!(
            apply(text, &[hunk(&["x = 1"], &["x = 2"], None)]).unwrap(),
            "x = 2\n"
        );
    }
}
