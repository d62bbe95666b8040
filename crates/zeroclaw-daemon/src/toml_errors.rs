//! A `config.toml` error in the words of the file: the key, the line, the type the key wants
//! and how to write it. toml's own message is about the parser ("invalid boolean" for
//! `model = fake`, whose `f` might have begun `false`); its span says where, and the line
//! there says which key and what was written.

/// `e`, an error of parsing `text`, as a message naming the key, its line and a fix.
pub fn describe(text: &str, e: &toml::de::Error) -> String {
    let Some(span) = e.span() else {
        return e.to_string();
    };
    let start = span.start.min(text.len());
    let line_no = text[..start].matches('\n').count() + 1;
    let line = text.lines().nth(line_no - 1).unwrap_or("");
    let Some((key, value)) = line.split_once('=') else {
        return format!("line {line_no}: {}", e.message());
    };
    let key = key.trim();
    let value = value.split(" #").next().unwrap_or("").trim();
    let full_key = match table_above(text, line_no) {
        Some(table) => format!("{table}.{key}"),
        None => key.to_owned(),
    };
    let message = e.message();
    if let Some(found_wanted) = message.strip_prefix("invalid type: ") {
        let (found, wanted) = found_wanted
            .split_once(", expected ")
            .unwrap_or((found_wanted, "another type"));
        let example = example(key, wanted);
        return format!(
            "`{full_key}` (line {line_no}) wants {wanted}, not {found}; write it like {example}"
        );
    }
    if is_bare_word(value) {
        return format!(
            "`{full_key}` (line {line_no}): `{value}` is not a TOML value; a string is written in quotes: {key} = \"{value}\""
        );
    }
    format!("`{full_key}` (line {line_no}): {}", message.trim_end())
}

/// The `[table]` (or `[[array]]`) heading the key on `line_no` is under, if any.
fn table_above(text: &str, line_no: usize) -> Option<String> {
    text.lines()
        .take(line_no - 1)
        .filter_map(|l| {
            let l = l.trim();
            l.strip_prefix("[[")
                .and_then(|l| l.split("]]").next())
                .or_else(|| l.strip_prefix('[').and_then(|l| l.split(']').next()))
        })
        .last()
        .map(|t| t.trim().to_owned())
}

/// An unquoted word: what a string looks like without its quotes.
fn is_bare_word(value: &str) -> bool {
    value
        .chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '/' || c == '~')
        && !matches!(value, "true" | "false" | "inf" | "nan")
}

/// `key = …` in the type serde wanted.
fn example(key: &str, wanted: &str) -> String {
    let value = if wanted.contains("string") || wanted.contains("path") {
        "\"text\""
    } else if wanted.contains("bool") {
        "true"
    } else if wanted.contains("integer") || wanted.starts_with('u') || wanted.starts_with('i') {
        "42"
    } else if wanted.contains("float") || wanted.starts_with('f') {
        "1.5"
    } else if wanted.contains("sequence") || wanted.contains("array") {
        "[\"a\", \"b\"]"
    } else {
        return format!("the example in docs/protocol.md#configuration ({key} = …)");
    };
    format!("{key} = {value}")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct File {
        provider: Option<Provider>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Provider {
        model: Option<String>,
        max_retries: Option<u32>,
    }

    fn error(text: &str) -> String {
        describe(text, &toml::from_str::<File>(text).unwrap_err())
    }

    #[test]
    fn an_unquoted_string_says_how_to_quote_it() {
        let message = error("[provider]\nmodel = fake\n");
        assert_eq!(
            message,
            "`provider.model` (line 2): `fake` is not a TOML value; a string is written in quotes: model = \"fake\""
        );
    }

    #[test]
    fn a_value_of_the_wrong_type_names_the_type_wanted() {
        let message = error("\n[provider]\nmax_retries = \"3\"\n");
        assert!(
            message.starts_with("`provider.max_retries` (line 3) wants"),
            "{message}"
        );
        assert!(message.contains("max_retries = 42"), "{message}");
        let message = error("[provider]\nmodel = 3\n");
        assert!(message.contains("model = \"text\""), "{message}");
    }
}
