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
//! was split into chunks. Meanwhile what is held shows as it arrives on the screen's live
//! line ([`Markdown::pending_tail`]), which is erased and redrawn in one write, as the
//! status line is, and gives way to the block once it is printed. [`Markdown::finish`] prints whatever is held: the screen calls it
//! when the answer ends (the turn ends, a tool is called, a thought or a question starts).
//!
//! The text is untrusted: control characters (escape sequences above all) are dropped from
//! it before anything else ([`term::sanitize`]); every escape sequence in the output is one
//! of ours.
//!
//! Parsing the stream and rendering a block are apart: this file splits the stream into
//! blocks, asking `blocks.rs` what each completed line is; `render.rs` turns one complete
//! block into terminal lines, with `wrap.rs` (re-flowing), `table.rs`, `code.rs` (labels
//! and highlighting) and `style.rs` (styled pieces and their escapes).

mod blocks;
mod code;
mod render;
mod style;
mod table;
#[cfg(test)]
mod tests;
mod wrap;

use crate::term;
use blocks::{
    closes, is_heading, is_rule, is_setext_underline, opens, starts_list_item, strip_indent,
};
use code::{CodeLines, label};
use render::render;

pub use code::preload;

/// A source line longer than this (bytes) is cut and handled as if it had ended there, so
/// a line that never ends cannot grow without bound.
pub const MAX_LINE: usize = 16 * 1024;
/// A held block is rendered once its source passes this many bytes, even if not complete.
pub const MAX_BLOCK: usize = 64 * 1024;
/// The narrowest column text is re-flowed to.
const MIN_TEXT: usize = 16;

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

    /// What was received and is not printed yet, as it arrived: the newest source line
    /// held (the line being received, else the last one of the held block), its last
    /// `width` characters. Shown live until its block closes and is printed rendered: a
    /// paragraph is one long source line, held whole.
    pub fn pending_tail(&self, width: usize) -> Option<String> {
        let line = if self.partial.is_empty() {
            self.held.last()?
        } else {
            &self.partial
        };
        let line = line.trim_end().replace('\t', " ");
        if line.is_empty() {
            return None;
        }
        let count = line.chars().count();
        Some(line.chars().skip(count.saturating_sub(width)).collect())
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
