//! Code blocks: the label line above them, and syntect highlighting one line at a time (a
//! fenced block streams line by line, so its state is kept from line to line).

use super::style::{Style, paint};
use std::fmt::Write as _;
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// The syntect theme code is highlighted with (its background is not painted).
const THEME: &str = "base16-ocean.dark";

/// The line above a code block: its language (or just the rule).
pub(super) fn label(lang: &str, styled: bool) -> String {
    let text = if lang.is_empty() {
        "──".to_owned()
    } else {
        format!("── {lang}")
    };
    paint(&Style::DIM, &text, styled)
}

/// syntect's bundled syntaxes and theme, loaded once (they take a moment).
struct Assets {
    syntaxes: SyntaxSet,
    theme: Option<Theme>,
}

fn assets() -> &'static Assets {
    static ASSETS: OnceLock<Assets> = OnceLock::new();
    ASSETS.get_or_init(|| {
        let mut themes = ThemeSet::load_defaults();
        Assets {
            syntaxes: SyntaxSet::load_defaults_newlines(),
            theme: themes.themes.remove(THEME),
        }
    })
}

/// Loads syntect's syntaxes and theme now (call it on a spare thread at start), so the
/// first code block of an answer does not wait for them.
pub fn preload() {
    assets();
}

/// Highlights a code block one line at a time (24-bit colour), keeping syntect's state
/// from line to line.
pub struct CodeLines {
    highlighter: Option<HighlightLines<'static>>,
}

impl CodeLines {
    pub fn new(lang: &str, styled: bool) -> Self {
        let highlighter = styled
            .then(|| {
                let assets = assets();
                let syntax = assets
                    .syntaxes
                    .find_syntax_by_token(lang)
                    .unwrap_or_else(|| assets.syntaxes.find_syntax_plain_text());
                assets
                    .theme
                    .as_ref()
                    .map(|theme| HighlightLines::new(syntax, theme))
            })
            .flatten();
        Self { highlighter }
    }

    /// One line of code (sanitized, without its newline), highlighted when styled.
    pub fn line(&mut self, line: &str) -> String {
        let text = line.replace('\t', "    ");
        let Some(highlighter) = &mut self.highlighter else {
            return text;
        };
        let with_newline = format!("{text}\n");
        match highlighter.highlight_line(&with_newline, &assets().syntaxes) {
            Ok(ranges) => {
                let mut out = String::new();
                let mut last = None;
                for (style, piece) in ranges {
                    let piece = piece.trim_end_matches('\n');
                    if piece.is_empty() {
                        continue;
                    }
                    let c = style.foreground;
                    if last != Some(c) {
                        let _ = write!(out, "\x1b[38;2;{};{};{}m", c.r, c.g, c.b);
                        last = Some(c);
                    }
                    out.push_str(piece);
                }
                if !out.is_empty() {
                    out.push_str("\x1b[0m");
                }
                out
            }
            // A syntax definition that fails on this line: the line as it is.
            Err(_) => text,
        }
    }
}
