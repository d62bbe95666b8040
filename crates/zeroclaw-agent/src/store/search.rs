//! `session/list`'s search: which sessions' title or cwd contains the text, ASCII letters
//! in any case, `%`, `_` and `\` as themselves.
//!
//! A `LIKE` test decides every match, as it always has (its case rules and escapes are the
//! contract). The `sessions_search` index (schema migration 15: FTS5, trigram tokenizer,
//! kept in step with `sessions` by triggers) only narrows the rows that test runs on: a
//! trigram phrase holds every substring of three characters or more, folded to one case
//! per character, so it names every session the `LIKE` test can accept (and maybe more:
//! it folds letters beyond ASCII too, which the test then refuses).
//!
//! Which rows are read depends on the search (see [`Plan::of`]): the index's candidates,
//! sorted into the list's order, when they are few; the list's own order with the test on
//! each row when the text is too short for trigrams or matches so many sessions that a
//! page of them is met sooner that way.

/// At most this many sessions matching by the index: the search reads them and sorts them.
/// More, and it reads the list in its order instead: a page is then found among about
/// `limit × sessions / matches` rows, fewer than `limit × sessions / CANDIDATES`.
pub const CANDIDATES: usize = 1_000;

/// How a page of a search is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// The index's candidates (this FTS5 query), each tested, sorted into the list's order.
    Candidates(String),
    /// The list in its order, each row tested.
    Scan,
}

impl Plan {
    /// The plan for `search`, given how many sessions the index matches (`count` is asked
    /// only when the index can answer, and need not count past `CANDIDATES + 1`).
    pub fn of<E>(search: &str, count: impl FnOnce(&str) -> Result<usize, E>) -> Result<Self, E> {
        let Some(query) = fts_query(search) else {
            return Ok(Self::Scan);
        };
        Ok(if count(&query)? > CANDIDATES {
            Self::Scan
        } else {
            Self::Candidates(query)
        })
    }
}

/// The FTS5 query that names every session whose title or cwd holds `search` (one phrase,
/// its quotes doubled), or `None` when the trigram index cannot: fewer than three
/// characters (no trigram to look up), or a NUL (SQLite's `LIKE` stops at it; the index
/// would not).
pub fn fts_query(search: &str) -> Option<String> {
    if search.chars().nth(2).is_none() || search.contains('\0') {
        return None;
    }
    Some(format!("\"{}\"", search.replace('"', "\"\"")))
}

/// The LIKE pattern that matches text containing `search` as it is: its own `%`, `_` and
/// `\` escaped (with `\`, the query's `ESCAPE`).
pub fn contains_pattern(search: &str) -> String {
    let mut pattern = String::with_capacity(search.len() + 2);
    pattern.push('%');
    for c in search.chars() {
        if matches!(c, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern.push('%');
    pattern
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_and_nuls_are_not_looked_up_and_quotes_are_doubled() {
        assert_eq!(fts_query("ab"), None);
        assert_eq!(fts_query("éé"), None, "two characters, four bytes");
        assert_eq!(fts_query("a\0bc"), None);
        assert_eq!(fts_query("abc").as_deref(), Some("\"abc\""));
        assert_eq!(fts_query("a\"b").as_deref(), Some("\"a\"\"b\""));
        assert_eq!(contains_pattern(r"5%_\"), r"%5\%\_\\%");
    }

    #[test]
    fn many_matches_read_the_list_in_order_and_few_read_the_candidates() {
        let plan = |n| Plan::of::<()>("flaky", |_| Ok(n)).unwrap();
        assert_eq!(plan(CANDIDATES), Plan::Candidates("\"flaky\"".into()));
        assert_eq!(plan(CANDIDATES + 1), Plan::Scan);
        let asked = Plan::of::<()>("fl", |_| panic!("not asked")).unwrap();
        assert_eq!(asked, Plan::Scan);
    }
}
