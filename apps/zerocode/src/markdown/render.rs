//! The renderer: one complete block of Markdown, parsed by pulldown-cmark, turned into
//! terminal lines — headings, emphasis, lists with their markers and indents, block quotes,
//! links, code blocks, tables (`table.rs`) — re-flowed to the width (`wrap.rs`).

use super::code::{CodeLines, label};
use super::style::{Pieces, Style, paint, push_piece};
use super::table::Table;
use super::wrap::wrap;
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::fmt::Write as _;

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
pub(super) fn render(source: &str, width: usize, styled: bool) -> String {
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
                    let quote = self.quote_prefix();
                    let indent = " ".repeat(self.items.iter().sum::<usize>());
                    let lines = table.lines(&quote, &indent, self.width, self.styled);
                    self.out.push_str(&lines);
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
}
