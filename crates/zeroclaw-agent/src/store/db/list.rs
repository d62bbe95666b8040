//! Listing and searching sessions: `session/list`'s pages, in the order of the
//! `sessions_by_update` index, and its search through the trigram index (`search.rs`).

use super::*;

/// Which sessions a `session/list` page holds (`Db::sessions_page`).
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    /// The last row of the page before: its `updated_at` and `id`.
    pub after: Option<(i64, String)>,
    /// Only those whose title or cwd contains this.
    pub search: Option<String>,
    /// Only those whose working directory is exactly this.
    pub cwd: Option<String>,
    /// Also subagents' sessions.
    pub children: bool,
}

impl Db {
    /// Up to `limit` sessions, most recently updated first, then by id; with `after` (a
    /// row's `updated_at` and `id`), the ones that come after that row in this order; with
    /// `search`, only those whose title or cwd contains it (ASCII letters in any case).
    /// Without a search, read in the order of the `sessions_by_update` index, so a page
    /// costs the rows it passes, never a sort of them all; a search reads what its plan
    /// says (`search.rs`). With `cwd`, only the sessions whose working directory is exactly
    /// it, read in the order of the `sessions_by_cwd` index. Subagents' sessions only with
    /// `children`.
    pub fn sessions_page(&self, query: &ListQuery, limit: usize) -> Result<Vec<SessionRow>> {
        let after = query.after.as_ref().map(|(at, id)| (*at, id.as_str()));
        let search = query.search.as_deref();
        let cwd = query.cwd.as_deref();
        let children = query.children;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let plan = match search {
            Some(text) => Some(
                Plan::of(text, |query| self.index_matches(query))
                    .map_err(StoreError::ctx("search sessions"))?,
            ),
            None => None,
        };
        let after_sql = match after {
            None => "?2 IS NULL AND ?3 IS NULL",
            Some(_) => "(s.updated_at < ?2 OR (s.updated_at = ?2 AND s.id > ?3))",
        };
        // LIKE, not `instr(lower(…))`: it folds ASCII case as it compares, where `lower()`
        // made a copy of each title and cwd it passed (twice as slow on 10,000 sessions).
        let search_sql = match search {
            None => "?4 IS NULL",
            Some(_) => r"(s.title LIKE ?4 ESCAPE '\' OR s.cwd LIKE ?4 ESCAPE '\')",
        };
        let cwd_sql = match cwd {
            None => "?6 IS NULL",
            Some(_) => "s.cwd = ?6",
        };
        let children_sql = if children {
            ""
        } else {
            " AND s.parent_session_id IS NULL"
        };
        // The candidates first (CROSS JOIN keeps that order of the loops): each is found by
        // its rowid, and only they are sorted.
        let from_sql = match plan {
            Some(Plan::Candidates(_)) => {
                "sessions_search CROSS JOIN sessions s ON s.rowid = sessions_search.rowid \
                 WHERE sessions_search MATCH ?5 AND"
            }
            _ => "sessions s WHERE",
        };
        let sql = format!(
            "SELECT {SESSION_COLUMNS} FROM {from_sql} {after_sql} AND {search_sql} AND {cwd_sql}{children_sql} \
             ORDER BY s.updated_at DESC, s.id LIMIT ?1"
        );
        let (at, id) = after.unzip();
        let pattern = search.map(search::contains_pattern);
        let read = || {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            match &plan {
                Some(Plan::Candidates(query)) => {
                    stmt.query_map(params![limit, at, id, pattern, query, cwd], session_row)
                }
                _ => stmt.query_map(
                    params![limit, at, id, pattern, Option::<&str>::None, cwd],
                    session_row,
                ),
            }?
            .collect::<rusqlite::Result<Vec<_>>>()
        };
        read().map_err(StoreError::ctx("list sessions"))
    }

    /// How many sessions the search index matches for the FTS5 `query`, counting no
    /// further than one past [`search::CANDIDATES`].
    fn index_matches(&self, query: &str) -> rusqlite::Result<usize> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT count(*) FROM \
             (SELECT 1 FROM sessions_search WHERE sessions_search MATCH ?1 LIMIT ?2)",
        )?;
        let most = i64::try_from(search::CANDIDATES + 1).unwrap_or(i64::MAX);
        let count: i64 = stmt.query_row(params![query, most], |r| r.get(0))?;
        Ok(usize::try_from(count).unwrap_or(usize::MAX))
    }

    /// The ids starting with `prefix`, in order, at most `limit`: read along the primary
    /// key from the prefix on, stopping at the first id past it, so it costs the matches.
    pub fn session_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>> {
        let read = || {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT id FROM sessions WHERE id >= ?1 ORDER BY id")?;
            let mut rows = stmt.query(params![prefix])?;
            let mut ids = Vec::new();
            while let Some(row) = rows.next()? {
                let id: String = row.get(0)?;
                if !id.starts_with(prefix) || ids.len() == limit {
                    break;
                }
                ids.push(id);
            }
            Ok(ids)
        };
        read().map_err(StoreError::ctx("find sessions by id prefix"))
    }

    pub fn count_sessions(&self) -> Result<i64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
            .map_err(StoreError::ctx("count sessions"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_matches_its_wildcards_literally_and_letters_in_any_case() {
        let (db, _) = Db::open_in_memory().unwrap();
        for (id, title) in [
            ("a", "100% Done"),
            ("b", "1000 done"),
            ("c", "snake_case"),
            ("d", "snakeXcase"),
            ("e", r"back\slash"),
        ] {
            db.create_session(id, Some(title), "/tmp", "m", None)
                .unwrap();
        }
        let found = |search: &str| {
            let mut ids: Vec<String> = db
                .sessions_page(
                    &ListQuery {
                        search: Some(search.to_owned()),
                        ..ListQuery::default()
                    },
                    10,
                )
                .unwrap()
                .into_iter()
                .map(|row| row.id)
                .collect();
            ids.sort();
            ids
        };
        assert_eq!(found("0% d"), ["a"]);
        assert_eq!(found("DONE"), ["a", "b"]);
        assert_eq!(found("e_c"), ["c"]);
        assert_eq!(found(r"k\s"), ["e"]);
        assert_eq!(found("%"), ["a"]);
        assert_eq!(
            found("TMP"),
            ["a", "b", "c", "d", "e"],
            "the cwd is searched too"
        );
    }

    #[test]
    fn session_pages_follow_each_other_from_the_index_without_sorting() {
        let (db, _) = Db::open_in_memory().unwrap();
        for n in 0..7 {
            db.create_session(&format!("s{n}"), None, "/tmp", "m", None)
                .unwrap();
        }
        // Same `updated_at` for some: the id orders them.
        db.execute_batch("UPDATE sessions SET updated_at = 5 WHERE id IN ('s1', 's2', 's3')")
            .unwrap();
        let mut seen = Vec::new();
        let mut after: Option<(i64, String)> = None;
        loop {
            let page = db
                .sessions_page(
                    &ListQuery {
                        after: after.clone(),
                        ..ListQuery::default()
                    },
                    3,
                )
                .unwrap();
            let Some(last) = page.last() else { break };
            after = Some((last.updated_at, last.id.clone()));
            seen.extend(page.iter().map(|row| row.id.clone()));
        }
        let distinct: std::collections::HashSet<&String> = seen.iter().collect();
        assert_eq!((seen.len(), distinct.len()), (7, 7), "{seen:?}");
        assert_eq!(&seen[4..], ["s1", "s2", "s3"], "{seen:?}");

        let plan = query_plan(
            &db,
            "SELECT id FROM sessions s \
             WHERE s.updated_at < 1 OR (s.updated_at = 1 AND s.id > 'x') \
             ORDER BY s.updated_at DESC, s.id LIMIT 3",
        );
        assert!(
            plan.contains("sessions_by_update") && !plan.contains("TEMP B-TREE"),
            "{plan}"
        );
    }

    #[test]
    fn a_cwd_filter_pages_one_directorys_sessions_from_its_index() {
        let (db, _) = Db::open_in_memory().unwrap();
        for n in 0..9 {
            let cwd = if n % 3 == 0 {
                "/w/here"
            } else {
                "/w/here/deeper"
            };
            db.create_session(&format!("s{n}"), Some("/w/here"), cwd, "m", None)
                .unwrap();
        }
        db.execute_batch("UPDATE sessions SET updated_at = 5 WHERE id IN ('s0', 's3')")
            .unwrap();
        let page = |after: Option<(i64, String)>, search: Option<&str>| {
            let query = ListQuery {
                after,
                search: search.map(str::to_owned),
                cwd: Some("/w/here".to_owned()),
                ..ListQuery::default()
            };
            db.sessions_page(&query, 2).unwrap()
        };
        // Exactly that directory (not one below it, not a title that names it), page by page.
        let first = page(None, None);
        let last = first.last().map(|row| (row.updated_at, row.id.clone()));
        let second = page(last, None);
        let ids: Vec<&str> = first.iter().chain(&second).map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["s6", "s0", "s3"]);
        // With a search too: both hold.
        let searched: Vec<String> = page(None, Some("HERE")).into_iter().map(|r| r.id).collect();
        assert_eq!(searched, ["s6", "s0"]);

        let plan = query_plan(
            &db,
            "SELECT id FROM sessions s \
             WHERE s.cwd = '/w/here' AND (s.updated_at < 1 OR (s.updated_at = 1 AND s.id > 'x')) \
             ORDER BY s.updated_at DESC, s.id LIMIT 3",
        );
        assert!(
            plan.contains("sessions_by_cwd") && !plan.contains("TEMP B-TREE"),
            "{plan}"
        );
    }

    /// SQLite's plan for `sql`, its steps joined by "; ".
    fn query_plan(db: &Db, sql: &str) -> String {
        let steps: Vec<String> = db
            .conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map([], |r| r.get(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        steps.join("; ")
    }

    /// The search's answer, read page by page (`per_page` at a time, the cursor from each
    /// page's last row), must be the whole list filtered by the rule it promises: the
    /// title or the cwd contains the text, ASCII letters in any case, the rest as is.
    fn assert_search_is_the_rule(db: &Db, search: &str, per_page: usize) -> Vec<String> {
        let mut paged = Vec::new();
        let mut after: Option<(i64, String)> = None;
        loop {
            let page = db
                .sessions_page(
                    &ListQuery {
                        after: after.clone(),
                        search: Some(search.to_owned()),
                        ..ListQuery::default()
                    },
                    per_page,
                )
                .unwrap();
            let Some(last) = page.last() else { break };
            after = Some((last.updated_at, last.id.clone()));
            paged.extend(page.into_iter().map(|row| row.id));
        }
        let needle = search.to_ascii_lowercase();
        let holds = |text: &str| text.to_ascii_lowercase().contains(&needle);
        let expected: Vec<String> = db
            .sessions_page(&ListQuery::default(), usize::MAX)
            .unwrap()
            .into_iter()
            .filter(|row| row.title.as_deref().is_some_and(holds) || holds(&row.cwd))
            .map(|row| row.id)
            .collect();
        assert_eq!(paged, expected, "search {search:?}, {per_page} a page");
        paged
    }

    #[test]
    fn a_search_through_the_index_finds_what_the_like_rule_finds_in_list_order() {
        let (db, _) = Db::open_in_memory().unwrap();
        let titles = [
            "Fix the Parser",
            "fix the parser again",
            "PARSER rewrite",
            "ÉTÉ plans",
            "été plans",
            "100% Done",
            "snake_case",
            r"back\slash",
            "say \"hi\" twice",
            "ab",
        ];
        for n in 0..60 {
            let title = titles[n % titles.len()];
            let cwd = format!("/home/dev/Project-{}", n % 7);
            db.create_session(&format!("s{n:02}"), Some(title), &cwd, "m", None)
                .unwrap();
        }
        // Some share a time: the id orders them, across pages too.
        db.conn
            .execute_batch("UPDATE sessions SET updated_at = 7 WHERE id < 's20'")
            .unwrap();
        db.rename_session("s03", Some("renamed to parser")).unwrap();
        db.rename_session("s02", None).unwrap();
        db.delete_session("s00").unwrap();
        for search in [
            "parser",
            "PARSER",
            "Parser r",
            "project-3",
            "PROJECT",
            "été",
            "ÉTÉ",
            "Été",
            "0% d",
            "e_c",
            r"k\s",
            "\"hi\"",
            "renamed",
            "no such thing",
            "ab",
            "a",
            "%",
            "_",
            "é",
        ] {
            for per_page in [1, 4, 100] {
                assert_search_is_the_rule(&db, search, per_page);
            }
        }
        // The rule itself, spelled out: ASCII letters fold, others do not; wildcards are
        // themselves; the renamed and the deleted are found as they are now.
        assert_eq!(assert_search_is_the_rule(&db, "été", 100).len(), 6);
        assert_eq!(
            assert_search_is_the_rule(&db, "ÉTÉ", 100).len(),
            5,
            "s03 was renamed"
        );
        assert_eq!(assert_search_is_the_rule(&db, "renamed", 100), ["s03"]);
        let parser = assert_search_is_the_rule(&db, "parser", 100);
        assert!(parser.contains(&"s03".to_owned()) && !parser.contains(&"s02".to_owned()));
        assert!(!parser.contains(&"s00".to_owned()));
    }

    #[test]
    fn a_search_matching_more_than_the_candidates_reads_the_list_in_order() {
        let (db, _) = Db::open_in_memory().unwrap();
        let n = search::CANDIDATES * 3 / 2 + 100;
        for i in 0..n {
            let title = if i % 3 == 0 {
                "Other work"
            } else {
                "Common task"
            };
            db.create_session(&format!("s{i:05}"), Some(title), "/tmp", "m", None)
                .unwrap();
        }
        let count = |text: &str| db.index_matches(&search::fts_query(text).unwrap()).unwrap();
        assert_eq!(count("common"), search::CANDIDATES + 1, "counts no further");
        assert!(count("other") <= search::CANDIDATES);
        for (search, per_page) in [("COMMON", 300), ("other", 100), ("task", 1000)] {
            assert_search_is_the_rule(&db, search, per_page);
        }
    }

    #[test]
    fn a_rare_search_reads_its_candidates_by_rowid_and_marking_turns_reads_only_running_ones() {
        let (db, _) = Db::open_in_memory().unwrap();
        let plan = |sql: &str| query_plan(&db, sql);
        let search = plan(
            "SELECT s.id FROM sessions_search CROSS JOIN sessions s \
             ON s.rowid = sessions_search.rowid WHERE sessions_search MATCH '\"abc\"' \
             ORDER BY s.updated_at DESC, s.id LIMIT 3",
        );
        assert!(
            search.contains("VIRTUAL TABLE INDEX") && search.contains("rowid=?"),
            "{search}"
        );
        let interrupted = plan("UPDATE turns SET status = 'interrupted' WHERE status = 'running'");
        assert!(interrupted.contains("turns_running"), "{interrupted}");
    }
}
