//! Tables: columns aligned as the source asks, narrowed (cells cut with `…`) to fit the
//! width, the header row bold above a rule.

use super::MIN_TEXT;
use super::style::{Pieces, Style, paint, paint_pieces, truncate_pieces, visible};
use pulldown_cmark::Alignment;
use std::fmt::Write as _;

/// A table as its events arrive: the column alignments, the rows so far (the header's
/// first), and the row being gathered.
pub(super) struct Table {
    pub(super) aligns: Vec<Alignment>,
    pub(super) rows: Vec<Vec<Pieces>>,
    pub(super) row: Vec<Pieces>,
    pub(super) head_rows: usize,
}

impl Table {
    /// The table's lines behind `quote` and `indent`: columns aligned, narrowed (cells cut
    /// with `…`) so that a line fits in `line_width`.
    pub(super) fn lines(
        &self,
        quote: &str,
        indent: &str,
        line_width: usize,
        styled: bool,
    ) -> String {
        let mut out = String::new();
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        if columns == 0 {
            return out;
        }
        let mut widths = vec![1usize; columns];
        for row in &self.rows {
            for (i, cell) in row.iter().enumerate() {
                widths[i] = widths[i].max(visible(cell));
            }
        }
        let avail = line_width
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
        let bar = paint(&Style::DIM, " │ ", styled);
        let empty = Pieces::new();
        for (r, row) in self.rows.iter().enumerate() {
            let mut cells = Vec::new();
            for (i, width) in widths.iter().enumerate() {
                let mut cell = truncate_pieces(row.get(i).unwrap_or(&empty), *width);
                if r < self.head_rows {
                    for (_, style) in &mut cell {
                        style.bold = true;
                    }
                }
                let pad = width - visible(&cell);
                let (left, right) = match self.aligns.get(i) {
                    Some(Alignment::Right) => (pad, 0),
                    Some(Alignment::Center) => (pad / 2, pad - pad / 2),
                    _ => (0, pad),
                };
                cells.push(format!(
                    "{}{}{}",
                    " ".repeat(left),
                    paint_pieces(&cell, styled),
                    " ".repeat(right)
                ));
            }
            let line = format!("{quote}{indent}{}", cells.join(&bar));
            out.push_str(line.trim_end_matches(' '));
            out.push('\n');
            if r + 1 == self.head_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let rule = paint(&Style::DIM, &rule.join("─┼─"), styled);
                let _ = writeln!(out, "{quote}{indent}{rule}");
            }
        }
        out
    }
}
