//! The block parser's side of the streaming scheme: what one completed source line is —
//! a code fence opening or closing, a heading, a rule, a setext underline, a new top-level
//! list item. These decide when a held block is complete; pulldown-cmark parses the block
//! itself once it is (`render.rs`).

fn leading_spaces(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// An opening code fence: ``` or ~~~ (3 or more), at most 3 spaces in; its marker, length,
/// indent and language (the info string's first word).
pub(super) fn opens(line: &str) -> Option<(char, usize, usize, String)> {
    let indent = leading_spaces(line);
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = rest.chars().take_while(|c| *c == marker).count();
    if len < 3 {
        return None;
    }
    let info = rest[len..].trim();
    if marker == '`' && info.contains('`') {
        return None;
    }
    let lang = info
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_owned();
    Some((marker, len, indent, lang))
}

/// Whether `line` closes a fence opened with `len` of `marker`.
pub(super) fn closes(line: &str, marker: char, len: usize) -> bool {
    let indent = leading_spaces(line);
    if indent > 3 {
        return false;
    }
    let rest = line[indent..].trim_end();
    rest.len() >= len && rest.chars().all(|c| c == marker)
}

/// `line` without up to `n` leading spaces.
pub(super) fn strip_indent(line: &str, n: usize) -> &str {
    let strip = leading_spaces(line).min(n);
    &line[strip..]
}

pub(super) fn is_heading(line: &str) -> bool {
    let indent = leading_spaces(line);
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let hashes = rest.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes) && rest[hashes..].chars().next().is_none_or(|c| c == ' ')
}

pub(super) fn is_rule(line: &str) -> bool {
    let indent = leading_spaces(line);
    if indent > 3 {
        return false;
    }
    let marks: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(first) = marks.chars().next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_') && marks.len() >= 3 && marks.chars().all(|c| c == first)
}

pub(super) fn is_setext_underline(line: &str) -> bool {
    let indent = leading_spaces(line);
    let rest = line[indent..].trim_end();
    indent <= 3
        && !rest.is_empty()
        && (rest.chars().all(|c| c == '=') || rest.chars().all(|c| c == '-'))
}

/// A list item at the left margin: `- `, `* `, `+ `, or up to 9 digits and `.` or `)`.
pub(super) fn starts_list_item(line: &str) -> bool {
    let mut chars = line.chars();
    match chars.next() {
        Some('-' | '*' | '+') => chars.next().is_none_or(|c| c == ' '),
        Some(c) if c.is_ascii_digit() => {
            let digits = line.chars().take_while(char::is_ascii_digit).count();
            let rest = &line[digits..];
            digits <= 9
                && (rest.starts_with(". ") || rest.starts_with(") ") || rest == "." || rest == ")")
        }
        _ => false,
    }
}
