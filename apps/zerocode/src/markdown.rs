//! The agent's answer as Markdown rendered for the terminal, while it streams.
//!
//! The scheme (also in the README): only *completed* source lines are looked at, and
//! output is only ever appended, never redrawn:
//!
//! - a fenced code block is printed line by line: its language label when the opening
//!   fence line completes, then each code line highlighted (syntect works a line at a time)
//!   as soon as that line completes;
//! - any other block (a paragraph, a list item with its nested lines, a table, a block
//!   quote) is held until it is complete — at a blank line, at a line that starts another
//!   block (a heading, a rule, a fence, a new top-level list item), or when the answer
//!   ends — and then printed rendered and re-flowed to the terminal width. A heading or a
//!   rule is complete when its line is.
//!
//! So what is printed never changes, and the same text gives the same output however it
//! was split into chunks. [`Markdown::finish`] prints whatever is held: the screen calls it
//! when the answer ends (the turn ends, a tool is called, a thought or a question starts).
//!
//! The text is untrusted: control characters (escape sequences above all) are dropped from
//! it before anything else ([`term::sanitize`]); every escape sequence in the output is one
//! of ours.

use crate::term;
use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::fmt::Write as _;
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

/// A source line longer than this (bytes) is cut and handled as if it had ended there, so
/// a line that never ends cannot grow without bound.
pub const MAX_LINE: usize = 16 * 1024;
/// A held block is rendered once its source passes this many bytes, even if not complete.
pub const MAX_BLOCK: usize = 64 * 1024;
/// The narrowest column text is re-flowed to.
const MIN_TEXT: usize = 16;
/// The syntect theme code is highlighted with (its background is not painted).
const THEME: &str = "base16-ocean.dark";

/// A streaming Markdown renderer: [`Markdown::push`] takes chunks of the answer and returns
/// what can be printed now; [`Markdown::finish`] the rest.
pub struct Markdown {
    width: usize,
    styled: bool,
    /// The source line being received (no newline yet).
    partial: String,
    /// Completed source lines of the block being held.
    held: Vec<String>,
    held_bytes: usize,
    /// The fenced code block being printed line by line.
    fence: Option<Fence>,
    /// Something was printed, and a blank source line came after it: the next block
    /// starts after an empty line.
    printed: bool,
    gap: bool,
}

struct Fence {
    marker: char,
    len: usize,
    indent: usize,
    code: CodeLines,
}

impl Markdown {
    /// A renderer for a terminal `width` columns wide, with ANSI styles when `styled`.
    pub fn new(width: usize, styled: bool) -> Self {
        Self {
            width: width.max(MIN_TEXT + 4),
            styled,
            partial: String::new(),
            held: Vec::new(),
            held_bytes: 0,
            fence: None,
            printed: false,
            gap: false,
        }
    }

    /// Whether anything was received and not printed yet.
    #[cfg(test)]
    pub fn holding(&self) -> bool {
        !self.partial.is_empty() || !self.held.is_empty()
    }

    /// Takes a chunk of the answer; returns the output ready to print (whole lines).
    pub fn push(&mut self, chunk: &str) -> String {
        self.partial.push_str(&term::sanitize(chunk));
        let mut out = String::new();
        loop {
            let window = floor_boundary(&self.partial, MAX_LINE);
            if let Some(i) = self.partial[..window].find('\n') {
                let line: String = self.partial.drain(..=i).collect();
                self.line(line.trim_end_matches('\n'), &mut out);
            } else if self.partial.len() >= MAX_LINE {
                let line: String = self.partial.drain(..window).collect();
                self.line(&line, &mut out);
            } else {
                break;
            }
        }
        out
    }

    /// The end of the answer: everything held, rendered. The renderer starts afresh.
    pub fn finish(&mut self) -> String {
        let mut out = String::new();
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line, &mut out);
        }
        self.flush(&mut out);
        self.fence = None;
        self.printed = false;
        self.gap = false;
        out
    }

    /// One completed source line.
    fn line(&mut self, line: &str, out: &mut String) {
        if let Some(fence) = &mut self.fence {
            if closes(line, fence.marker, fence.len) {
                self.fence = None;
            } else {
                let text = strip_indent(line, fence.indent);
                out.push_str("  ");
                out.push_str(&fence.code.line(text));
                out.push('\n');
            }
            return;
        }
        if let Some((marker, len, indent, lang)) = opens(line) {
            self.flush(out);
            self.separate(out);
            out.push_str(&label(&lang, self.styled));
            out.push('\n');
            self.fence = Some(Fence {
                marker,
                len,
                indent,
                code: CodeLines::new(&lang, self.styled),
            });
            return;
        }
        if line.trim().is_empty() {
            self.flush(out);
            if self.printed {
                self.gap = true;
            }
            return;
        }
        let underline = !self.held.is_empty() && is_setext_underline(line);
        if underline {
            self.hold(line);
            self.flush(out);
            return;
        }
        if is_heading(line) || is_rule(line) {
            self.flush(out);
            self.hold(line);
            self.flush(out);
            return;
        }
        if starts_list_item(line) {
            self.flush(out);
        }
        self.hold(line);
        if self.held_bytes >= MAX_BLOCK {
            self.flush(out);
        }
    }

    fn hold(&mut self, line: &str) {
        self.held_bytes += line.len() + 1;
        self.held.push(line.to_owned());
    }

    /// An empty line before the next block when the source had one.
    fn separate(&mut self, out: &mut String) {
        if self.gap {
            out.push('\n');
        }
        self.gap = false;
        self.printed = true;
    }

    /// Renders the held block, if any.
    fn flush(&mut self, out: &mut String) {
        if self.held.is_empty() {
            return;
        }
        let source = self.held.join("\n");
        self.held.clear();
        self.held_bytes = 0;
        let rendered = render(&source, self.width, self.styled);
        if rendered.is_empty() {
            return;
        }
        self.separate(out);
        out.push_str(&rendered);
    }
}

/// The largest char boundary of `s` at or below `max`.
fn floor_boundary(s: &str, max: usize) -> usize {
    if s.len() <= max {
        return s.len();
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn leading_spaces(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

/// An opening code fence: ``` or ~~~ (3 or more), at most 3 spaces in; its marker, length,
/// indent and language (the info string's first word).
fn opens(line: &str) -> Option<(char, usize, usize, String)> {
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
fn closes(line: &str, marker: char, len: usize) -> bool {
    let indent = leading_spaces(line);
    if indent > 3 {
        return false;
    }
    let rest = line[indent..].trim_end();
    rest.len() >= len && rest.chars().all(|c| c == marker)
}

/// `line` without up to `n` leading spaces.
fn strip_indent(line: &str, n: usize) -> &str {
    let strip = leading_spaces(line).min(n);
    &line[strip..]
}

fn is_heading(line: &str) -> bool {
    let indent = leading_spaces(line);
    if indent > 3 {
        return false;
    }
    let rest = &line[indent..];
    let hashes = rest.chars().take_while(|c| *c == '#').count();
    (1..=6).contains(&hashes) && rest[hashes..].chars().next().is_none_or(|c| c == ' ')
}

fn is_rule(line: &str) -> bool {
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

fn is_setext_underline(line: &str) -> bool {
    let indent = leading_spaces(line);
    let rest = line[indent..].trim_end();
    indent <= 3
        && !rest.is_empty()
        && (rest.chars().all(|c| c == '=') || rest.chars().all(|c| c == '-'))
}

/// A list item at the left margin: `- `, `* `, `+ `, or up to 9 digits and `.` or `)`.
fn starts_list_item(line: &str) -> bool {
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

/// The line above a code block: its language (or just the rule).
fn label(lang: &str, styled: bool) -> String {
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

/// The inline styles of a piece of text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Style {
    bold: bool,
    italic: bool,
    strike: bool,
    code: bool,
    link: bool,
    dim: bool,
    /// Heading level, 1 to 6.
    heading: u8,
}

impl Style {
    const DIM: Style = Style {
        bold: false,
        italic: false,
        strike: false,
        code: false,
        link: false,
        dim: true,
        heading: 0,
    };

    /// The SGR parameters for this style, or "" for none.
    fn sgr(&self) -> String {
        let mut codes: Vec<&str> = Vec::new();
        match self.heading {
            0 => {}
            1 => codes.extend(["1", "4", "35"]),
            2 => codes.extend(["1", "35"]),
            _ => codes.extend(["1", "3"]),
        }
        if self.bold && self.heading == 0 {
            codes.push("1");
        }
        if self.dim {
            codes.push("2");
        }
        if self.italic {
            codes.push("3");
        }
        if self.link {
            codes.extend(["4", "34"]);
        }
        if self.strike {
            codes.push("9");
        }
        if self.code {
            codes.push("36");
        }
        codes.join(";")
    }
}

fn paint(style: &Style, text: &str, styled: bool) -> String {
    let sgr = style.sgr();
    if !styled || sgr.is_empty() || text.is_empty() {
        text.to_owned()
    } else {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    }
}

type Pieces = Vec<(String, Style)>;

fn visible(pieces: &[(String, Style)]) -> usize {
    pieces.iter().map(|(t, _)| t.chars().count()).sum()
}

fn push_piece(pieces: &mut Pieces, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    match pieces.last_mut() {
        Some((last, s)) if *s == style => last.push_str(text),
        _ => pieces.push((text.to_owned(), style)),
    }
}

fn paint_pieces(pieces: &[(String, Style)], styled: bool) -> String {
    pieces.iter().map(|(t, s)| paint(s, t, styled)).collect()
}

/// `pieces` cut to `max` visible characters, `…` marking a cut.
fn truncate_pieces(pieces: &[(String, Style)], max: usize) -> Pieces {
    if visible(pieces) <= max {
        return pieces.to_vec();
    }
    let mut out = Pieces::new();
    let mut left = max.saturating_sub(1);
    for (text, style) in pieces {
        if left == 0 {
            break;
        }
        let part: String = text.chars().take(left).collect();
        left -= part.chars().count();
        push_piece(&mut out, &part, *style);
    }
    push_piece(&mut out, "…", Style::default());
    out
}

/// A word of inline text, possibly in several styles (`**bold**,`).
type Word = Pieces;

enum Token {
    Word(Word),
    Space,
    Break,
}

/// Inline pieces as words, spaces and hard breaks (`\n` in a piece).
fn tokens(pieces: &[(String, Style)]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut word = Word::new();
    for (text, style) in pieces {
        let mut run = String::new();
        for c in text.chars() {
            if c == ' ' || c == '\n' {
                push_piece(&mut word, &run, *style);
                run.clear();
                if !word.is_empty() {
                    out.push(Token::Word(std::mem::take(&mut word)));
                }
                out.push(if c == ' ' { Token::Space } else { Token::Break });
            } else {
                run.push(c);
            }
        }
        push_piece(&mut word, &run, *style);
    }
    if !word.is_empty() {
        out.push(Token::Word(word));
    }
    out
}

/// Re-flows inline pieces into lines: the first after `first`, the rest after `rest`
/// (plain prefixes: quote bars, list markers and indents).
fn wrap(pieces: &[(String, Style)], first: &str, rest: &str, width: usize, styled: bool) -> String {
    let avail = width
        .saturating_sub(first.chars().count().max(rest.chars().count()))
        .max(MIN_TEXT);
    let mut lines: Vec<Pieces> = Vec::new();
    let mut line = Pieces::new();
    let mut line_width = 0usize;
    let mut space = false;
    for token in tokens(pieces) {
        match token {
            Token::Space => space = line_width > 0,
            Token::Break => {
                lines.push(std::mem::take(&mut line));
                line_width = 0;
                space = false;
            }
            Token::Word(word) => {
                let mut word_width = visible(&word);
                if line_width > 0 && line_width + usize::from(space) + word_width > avail {
                    lines.push(std::mem::take(&mut line));
                    line_width = 0;
                    space = false;
                }
                if space {
                    // A space inside a styled run keeps the run's style (`**two words**`).
                    let before = line.last().map(|(_, s)| *s);
                    let after = word.first().map(|(_, s)| *s);
                    let style = before.filter(|b| Some(*b) == after).unwrap_or_default();
                    push_piece(&mut line, " ", style);
                    line_width += 1;
                    space = false;
                }
                // A word wider than the column is cut into column-wide parts.
                let mut word = word;
                while word_width > avail - line_width {
                    let take = avail - line_width;
                    let (head, tail) = split_pieces(&word, take);
                    for (t, s) in head {
                        push_piece(&mut line, &t, s);
                    }
                    lines.push(std::mem::take(&mut line));
                    line_width = 0;
                    word = tail;
                    word_width = visible(&word);
                }
                line_width += word_width;
                for (t, s) in word {
                    push_piece(&mut line, &t, s);
                }
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        let prefix = if i == 0 { first } else { rest };
        let body = paint_pieces(line, styled);
        let text = format!("{prefix}{body}");
        out.push_str(text.trim_end_matches(' '));
        out.push('\n');
    }
    out
}

/// `pieces` split after `n` visible characters.
fn split_pieces(pieces: &[(String, Style)], n: usize) -> (Pieces, Pieces) {
    let mut head = Pieces::new();
    let mut tail = Pieces::new();
    let mut left = n;
    for (text, style) in pieces {
        let count = text.chars().count();
        if left >= count {
            push_piece(&mut head, text, *style);
            left -= count;
        } else {
            let cut: usize = text.chars().take(left).map(char::len_utf8).sum();
            push_piece(&mut head, &text[..cut], *style);
            push_piece(&mut tail, &text[cut..], *style);
            left = 0;
        }
    }
    (head, tail)
}

struct Table {
    aligns: Vec<Alignment>,
    rows: Vec<Vec<Pieces>>,
    row: Vec<Pieces>,
    head_rows: usize,
}

/// One block's events turned into terminal lines.
struct Renderer {
    width: usize,
    styled: bool,
    out: String,
    inline: Pieces,
    bold: usize,
    italic: usize,
    strike: usize,
    heading: u8,
    /// Open links: their destination and where their text starts in `inline`.
    links: Vec<(String, usize)>,
    quote: usize,
    /// Open lists: the next number of an ordered one.
    lists: Vec<Option<u64>>,
    /// Marker widths of the open items.
    items: Vec<usize>,
    /// The marker of the item whose first line is not printed yet.
    marker: Option<String>,
    /// Inside a paragraph that ended: the next text starts after an empty line.
    paragraph_gap: bool,
    table: Option<Table>,
    code: Option<(String, String)>,
}

/// A held block of Markdown rendered to terminal lines (each ending in `\n`).
fn render(source: &str, width: usize, styled: bool) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut r = Renderer {
        width,
        styled,
        out: String::new(),
        inline: Pieces::new(),
        bold: 0,
        italic: 0,
        strike: 0,
        heading: 0,
        links: Vec::new(),
        quote: 0,
        lists: Vec::new(),
        items: Vec::new(),
        marker: None,
        paragraph_gap: false,
        table: None,
        code: None,
    };
    for event in Parser::new_ext(source, options) {
        r.event(event);
    }
    r.flush_inline();
    r.out
}

impl Renderer {
    fn style(&self) -> Style {
        Style {
            bold: self.bold > 0,
            italic: self.italic > 0,
            strike: self.strike > 0,
            heading: self.heading,
            link: !self.links.is_empty(),
            ..Style::default()
        }
    }

    fn text(&mut self, text: &str, style: Style) {
        if let Some((code, _)) = &mut self.code {
            code.push_str(text);
            return;
        }
        push_piece(&mut self.inline, text, style);
    }

    fn quote_prefix(&self) -> String {
        "│ ".repeat(self.quote)
    }

    /// Prints the inline text gathered so far, re-flowed under the current prefixes.
    fn flush_inline(&mut self) {
        if self.inline.is_empty() && self.marker.is_none() {
            return;
        }
        let pieces = std::mem::take(&mut self.inline);
        let quote = self.quote_prefix();
        if self.paragraph_gap {
            self.out
                .push_str(&paint(&Style::DIM, quote.trim_end(), self.styled));
            self.out.push('\n');
            self.paragraph_gap = false;
        }
        let indent: usize = self.items.iter().sum();
        let rest = format!("{quote}{}", " ".repeat(indent));
        let first = match self.marker.take() {
            Some(marker) => {
                let before = indent.saturating_sub(marker.chars().count());
                format!("{quote}{}{marker}", " ".repeat(before))
            }
            None => rest.clone(),
        };
        let text = wrap(&pieces, &first, &rest, self.width, self.styled);
        self.out.push_str(&text);
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => {
                let style = self.style();
                self.text(&text, style);
            }
            Event::Code(text) => {
                let style = Style {
                    code: true,
                    ..self.style()
                };
                self.text(&text, style);
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => {
                let style = self.style();
                self.text(&text, style);
            }
            Event::Html(text) | Event::InlineHtml(text) => {
                let style = self.style();
                self.text(text.trim_end_matches('\n'), style);
            }
            Event::FootnoteReference(name) => {
                let style = self.style();
                self.text(&format!("[^{name}]"), style);
            }
            Event::SoftBreak => {
                let style = self.style();
                self.text(" ", style);
            }
            Event::HardBreak => {
                let style = self.style();
                self.text("\n", style);
            }
            Event::Rule => {
                self.flush_inline();
                let quote = self.quote_prefix();
                let len = self.width.saturating_sub(quote.chars().count()).min(80);
                let rule = paint(&Style::DIM, &"─".repeat(len), self.styled);
                let _ = writeln!(self.out, "{quote}{rule}");
            }
            Event::TaskListMarker(done) => {
                let style = self.style();
                self.text(if done { "[x] " } else { "[ ] " }, style);
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => {}
            Tag::Heading { level, .. } => {
                self.flush_inline();
                self.heading = match level {
                    HeadingLevel::H1 => 1,
                    HeadingLevel::H2 => 2,
                    HeadingLevel::H3 => 3,
                    HeadingLevel::H4 => 4,
                    HeadingLevel::H5 => 5,
                    HeadingLevel::H6 => 6,
                };
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.quote += 1;
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info
                        .split_whitespace()
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush_inline();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush_inline();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ if !self.styled => "- ".to_owned(),
                    _ => match depth {
                        0 => "• ".to_owned(),
                        1 => "◦ ".to_owned(),
                        _ => "▪ ".to_owned(),
                    },
                };
                self.items.push(marker.chars().count());
                self.marker = Some(marker);
            }
            Tag::Table(aligns) => {
                self.flush_inline();
                self.table = Some(Table {
                    aligns,
                    rows: Vec::new(),
                    row: Vec::new(),
                    head_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.row.clear();
                }
            }
            Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.italic += 1,
            Tag::Strong => self.bold += 1,
            Tag::Strikethrough => self.strike += 1,
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                self.links.push((dest_url.to_string(), self.inline.len()));
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                // Paragraphs of a list item follow each other; elsewhere an empty line.
                self.paragraph_gap = self.items.is_empty();
            }
            TagEnd::Heading(_) => {
                self.paragraph_gap = false;
                self.flush_inline();
                self.heading = 0;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.quote = self.quote.saturating_sub(1);
                self.paragraph_gap = false;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    let quote = self.quote_prefix();
                    let indent = " ".repeat(self.items.iter().sum::<usize>());
                    let _ = writeln!(self.out, "{quote}{indent}{}", label(&lang, self.styled));
                    let mut lines = CodeLines::new(&lang, self.styled);
                    for line in code.trim_end_matches('\n').split('\n') {
                        let _ = writeln!(self.out, "{quote}{indent}  {}", lines.line(line));
                    }
                }
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                self.paragraph_gap = false;
            }
            TagEnd::Item => {
                self.flush_inline();
                self.items.pop();
                self.paragraph_gap = false;
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(table) = &mut self.table {
                    table.row.push(cell);
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                    table.head_rows = table.rows.len();
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table(table);
                }
            }
            TagEnd::Emphasis => self.italic = self.italic.saturating_sub(1),
            TagEnd::Strong => self.bold = self.bold.saturating_sub(1),
            TagEnd::Strikethrough => self.strike = self.strike.saturating_sub(1),
            TagEnd::Link | TagEnd::Image => {
                if let Some((url, start)) = self.links.pop() {
                    let text: String = self
                        .inline
                        .get(start..)
                        .unwrap_or_default()
                        .iter()
                        .map(|(t, _)| t.as_str())
                        .collect();
                    let bare = url.strip_prefix("mailto:").unwrap_or(&url);
                    if !url.is_empty() && !url.starts_with('#') && text != url && text != bare {
                        let style = Style {
                            link: false,
                            dim: true,
                            ..Style::default()
                        };
                        push_piece(&mut self.inline, &format!(" ({url})"), style);
                    }
                }
            }
            _ => {}
        }
    }

    /// A table with aligned columns, narrowed (cells cut with `…`) to fit the width.
    fn table(&mut self, table: Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return;
        }
        let mut widths = vec![1usize; columns];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(visible(cell));
            }
        }
        let quote = self.quote_prefix();
        let indent = " ".repeat(self.items.iter().sum::<usize>());
        let avail = self
            .width
            .saturating_sub(quote.chars().count() + indent.len())
            .max(MIN_TEXT);
        let separators = 3 * (columns - 1);
        while widths.iter().sum::<usize>() + separators > avail {
            let Some((widest, width)) = widths.iter().copied().enumerate().max_by_key(|(_, w)| *w)
            else {
                break;
            };
            if width <= 3 {
                break;
            }
            widths[widest] -= 1;
        }
        let bar = paint(&Style::DIM, " │ ", self.styled);
        let empty = Pieces::new();
        for (r, row) in table.rows.iter().enumerate() {
            let mut cells = Vec::new();
            for (i, width) in widths.iter().enumerate() {
                let mut cell = truncate_pieces(row.get(i).unwrap_or(&empty), *width);
                if r < table.head_rows {
                    for (_, style) in &mut cell {
                        style.bold = true;
                    }
                }
                let pad = width - visible(&cell);
                let (left, right) = match table.aligns.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                cells.push(format!(
                    "{}{}{}",
                    " ".repeat(left),
                    paint_pieces(&cell, self.styled),
                    " ".repeat(right)
                ));
            }
            let line = format!("{quote}{indent}{}", cells.join(&bar));
            self.out.push_str(line.trim_end_matches(' '));
            self.out.push('\n');
            if r + 1 == table.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let rule = paint(&Style::DIM, &rule.join("─┼─"), self.styled);
                let _ = writeln!(self.out, "{quote}{indent}{rule}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "# Título\n\nSome **bold** and *italic* text with `code` and a \
[link](https://example.com/x). It goes on long enough to be re-flowed at the width.\n\
\n- one\n- two\n  - nested\n1. first\n2. second\n\n```rust\nfn main() {\n\tprintln!(\"hi\");\n}\n```\n\
\n> quoted\n> text\n\n| name | n |\n|:-----|--:|\n| a | 1 |\n| bb | 22 |\n\n---\n\nDone \u{1b}[31mred\u{7} end";

    fn whole(text: &str, styled: bool) -> String {
        let mut md = Markdown::new(40, styled);
        let mut out = md.push(text);
        out.push_str(&md.finish());
        out
    }

    #[test]
    fn every_split_of_the_answer_renders_the_same() {
        for styled in [false, true] {
            let expected = whole(SAMPLE, styled);
            for cut in 0..=SAMPLE.len() {
                if !SAMPLE.is_char_boundary(cut) {
                    continue;
                }
                let mut md = Markdown::new(40, styled);
                let mut out = md.push(&SAMPLE[..cut]);
                out.push_str(&md.push(&SAMPLE[cut..]));
                out.push_str(&md.finish());
                assert_eq!(out, expected, "split at byte {cut}");
            }
            // And byte-sized pieces (each char on its own).
            let mut md = Markdown::new(40, styled);
            let mut out: String = SAMPLE.chars().map(|c| md.push(&c.to_string())).collect();
            out.push_str(&md.finish());
            assert_eq!(out, expected);
        }
    }

    #[test]
    fn plain_output_has_the_markup_removed() {
        let out = whole(SAMPLE, false);
        assert!(!out.contains('\u{1b}'), "{out}");
        assert!(!out.contains('\u{7}'), "{out}");
        let expected = "\
Título

Some bold and italic text with code and
a link (https://example.com/x). It goes
on long enough to be re-flowed at the
width.

- one
- two
  - nested
1. first
2. second

── rust
  fn main() {
      println!(\"hi\");
  }

│ quoted text

name │  n
─────┼───
a    │  1
bb   │ 22

────────────────────────────────────────

Done [31mred end
";
        assert_eq!(out, expected);
    }

    #[test]
    fn styled_output_has_our_escapes_only() {
        let out = whole(SAMPLE, true);
        assert!(out.contains("\x1b[1;4;35mTítulo\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[1mbold\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[3mitalic\x1b[0m"), "{out:?}");
        assert!(out.contains("\x1b[36mcode\x1b[0m"), "{out:?}");
        assert!(out.contains("• one"), "{out:?}");
        assert!(out.contains("◦ nested"), "{out:?}");
        assert!(out.contains("\x1b[38;2;"), "code is highlighted: {out:?}");
        // The agent's own escape lost its ESC byte.
        assert!(out.contains("Done [31mred end"), "{out:?}");
    }

    #[test]
    fn a_fence_prints_each_line_as_it_completes() {
        let mut md = Markdown::new(80, false);
        assert_eq!(md.push("Intro text\n"), "");
        assert_eq!(md.push("```py\n"), "Intro text\n── py\n");
        assert_eq!(md.push("x = 1"), "");
        assert_eq!(md.push("\ny"), "  x = 1\n");
        assert_eq!(md.push(" = 2\n```\nafter"), "  y = 2\n");
        assert!(md.holding());
        assert_eq!(md.finish(), "after\n");
        assert!(!md.holding());
    }

    #[test]
    fn headings_and_list_items_print_when_their_line_completes() {
        let mut md = Markdown::new(80, false);
        assert_eq!(md.push("## Plan\n- a"), "Plan\n");
        assert_eq!(md.push("\n- b\n"), "- a\n");
        assert_eq!(md.finish(), "- b\n");
    }

    #[test]
    fn an_endless_line_is_cut_not_kept() {
        let mut md = Markdown::new(80, false);
        let out = md.push(&"x".repeat(MAX_LINE * 5));
        assert!(!out.is_empty());
        assert!(md.partial.len() < MAX_LINE && md.held_bytes < MAX_BLOCK);
    }

    #[test]
    fn wide_tables_are_narrowed_to_fit() {
        let source = format!(
            "| a | b |\n|---|---|\n| {} | {} |\n",
            "x".repeat(50),
            "y".repeat(50)
        );
        let out = whole(&source, false);
        for line in out.lines() {
            assert!(line.chars().count() <= 40, "{line:?}");
        }
        assert!(out.contains('…'), "{out}");
    }
}
