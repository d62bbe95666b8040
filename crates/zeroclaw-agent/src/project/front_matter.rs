//! The YAML front matter of a `SKILL.md` or a command file: the `---` lines around
//! `key: value` pairs at the top of a Markdown file.
//!
//! Only what these files use is read: top-level scalars (plain, `"double"` or `'single'`
//! quoted, or a `|` / `>` block on the indented lines below), and the block lists of plain
//! items (`- item` lines under a key with no value; [`Parsed::list`]). Other nested values
//! (`metadata:` maps) are skipped whole, so a file that has them still loads.
//! A top-level line that is not `key: value`, or an opening `---` never closed, is
//! malformed: the caller skips the file with the reason given here.

/// The front matter's top-level scalars in file order, and the body after it.
#[derive(Debug, Default, PartialEq)]
pub struct Parsed<'a> {
    pub fields: Vec<(String, String)>,
    /// The block lists: a key with no value, then `- item` lines.
    pub lists: Vec<(String, Vec<String>)>,
    pub body: &'a str,
}

impl Parsed<'_> {
    /// The value of `key`, if present and not blank.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.trim().is_empty())
    }

    /// The items of `key`'s block list, if it has one.
    pub fn list(&self, key: &str) -> Option<&[String]> {
        self.lists
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_slice())
    }
}

/// Splits `text` into its front matter and body; a text not opening with `---` is all body.
pub fn parse(text: &str) -> Result<Parsed<'_>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return Ok(Parsed {
            fields: Vec::new(),
            lists: Vec::new(),
            body: text,
        });
    };
    let mut lines: Vec<&str> = Vec::new();
    let mut offset = 0;
    let mut body = None;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" || bare == "..." {
            body = Some(&rest[offset..]);
            break;
        }
        lines.push(bare);
    }
    let Some(body) = body else {
        return Err("the front matter's opening `---` has no closing `---`".into());
    };
    Ok(Parsed {
        fields: fields(&lines)?,
        lists: lists(&lines),
        body: body.trim_start_matches(['\n', '\r']),
    })
}

/// The block lists of plain items: `key:` alone on its line, then `- item` lines
/// (indented or not); quotes around an item are dropped. Called once `fields` accepted
/// the lines.
fn lists(lines: &[&str]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut open: Option<usize> = None;
    for line in lines {
        let trimmed = line.trim();
        if let Some(item) = trimmed
            .strip_prefix("- ")
            .or((trimmed == "-").then_some(""))
        {
            if let Some(at) = open {
                let item = strip_comment(item.trim());
                let item = item
                    .strip_prefix('"')
                    .and_then(|i| i.strip_suffix('"'))
                    .or_else(|| item.strip_prefix('\'').and_then(|i| i.strip_suffix('\'')))
                    .unwrap_or(item);
                out[at].1.push(item.to_owned());
            }
            continue;
        }
        if trimmed.is_empty() || trimmed.starts_with('#') || line.starts_with([' ', '\t']) {
            continue;
        }
        open = None;
        if let Some((key, value)) = line.split_once(':')
            && strip_comment(value.trim()).is_empty()
        {
            out.push((key.trim().to_owned(), Vec::new()));
            open = Some(out.len() - 1);
        }
    }
    out
}

fn fields(lines: &[&str]) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if line.starts_with([' ', '\t']) || trimmed.starts_with("- ") {
            // A nested value of the key above, skipped with it.
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err(format!(
                "front matter line {}: expected `key: value`, found {trimmed:?}",
                i + 1
            ));
        };
        let key = key.trim();
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(format!("front matter line {}: {key:?} is not a key", i + 1));
        }
        let value = value.trim();
        let value = match value.chars().next() {
            Some(style @ ('|' | '>')) => {
                let mut block: Vec<&str> = Vec::new();
                while i < lines.len()
                    && (lines[i].starts_with([' ', '\t']) || lines[i].trim().is_empty())
                {
                    block.push(lines[i].trim());
                    i += 1;
                }
                let joiner = if style == '|' { "\n" } else { " " };
                block.join(joiner).trim().to_owned()
            }
            Some('"') => unquote(value, '"', i)?
                .replace("\\n", "\n")
                .replace("\\\"", "\""),
            Some('\'') => unquote(value, '\'', i)?.replace("''", "'"),
            _ => strip_comment(value).to_owned(),
        };
        out.push((key.to_owned(), value));
    }
    Ok(out)
}

/// A quoted scalar's text; `line` (1-based, of the whole file) for the error.
fn unquote(value: &str, quote: char, line: usize) -> Result<String, String> {
    let inner = &value[1..];
    match inner.rfind(quote) {
        Some(end) => Ok(inner[..end].to_owned()),
        None => Err(format!(
            "front matter line {}: the quote {quote} is never closed",
            line + 1
        )),
    }
}

/// A plain scalar without its ` # comment`.
fn strip_comment(value: &str) -> &str {
    match value.find(" #") {
        Some(at) => value[..at].trim_end(),
        None => value,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn scalars_quotes_blocks_and_nested_values_are_read() {
        let text = "---\nname: pdf-tools\ndescription: \"Fill PDF forms: use it for PDFs\"\n\
                    license: 'it''s MIT' # a comment\nmetadata:\n  author: me\nallowed-tools:\n  - bash\n\
                    notes: >\n  one\n  two\n---\n\n# Body\ntext\n";
        let parsed = parse(text).unwrap();
        assert_eq!(parsed.get("name"), Some("pdf-tools"));
        assert_eq!(
            parsed.get("description"),
            Some("Fill PDF forms: use it for PDFs")
        );
        assert_eq!(parsed.get("license"), Some("it's MIT"));
        assert_eq!(parsed.get("notes"), Some("one two"));
        assert_eq!(parsed.get("metadata"), None);
        assert_eq!(parsed.get("author"), None);
        assert_eq!(parsed.body, "# Body\ntext\n");
        assert_eq!(parsed.list("allowed-tools"), Some(&["bash".to_owned()][..]));
        assert_eq!(parsed.list("metadata"), Some(&[][..]));
        assert_eq!(parsed.list("name"), None);
    }

    #[test]
    fn block_lists_are_read_indented_or_not() {
        let parsed =
            parse("---\ntools:\n- read_file\n  - \"grep\"  # a comment\nmodel: x\n---\n").unwrap();
        assert_eq!(
            parsed.list("tools"),
            Some(&["read_file".to_owned(), "grep".to_owned()][..])
        );
        assert_eq!(parsed.get("model"), Some("x"));
    }

    #[test]
    fn no_front_matter_is_all_body_and_malformed_ones_say_why() {
        assert_eq!(parse("just text\n").unwrap().body, "just text\n");
        assert!(parse("---\nname: x\n").unwrap_err().contains("no closing"));
        let e = parse("---\nname: x\nthis is not yaml\n---\nbody").unwrap_err();
        assert!(e.contains("line 3") && e.contains("key: value"), "{e}");
        let e = parse("---\ndescription: \"open\n---\n").unwrap_err();
        assert!(e.contains("never closed"), "{e}");
    }
}
