//! Styled text: a piece's inline style as SGR parameters, and runs of styled pieces —
//! measured, painted, cut to a width and split — that wrapping and tables are built from.

/// The inline styles of a piece of text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Style {
    pub(super) bold: bool,
    pub(super) italic: bool,
    pub(super) strike: bool,
    pub(super) code: bool,
    pub(super) link: bool,
    pub(super) dim: bool,
    /// Heading level, 1 to 6.
    pub(super) heading: u8,
}

impl Style {
    pub(super) const DIM: Style = Style {
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

pub(super) fn paint(style: &Style, text: &str, styled: bool) -> String {
    let sgr = style.sgr();
    if !styled || sgr.is_empty() || text.is_empty() {
        text.to_owned()
    } else {
        format!("\x1b[{sgr}m{text}\x1b[0m")
    }
}

pub(super) type Pieces = Vec<(String, Style)>;

pub(super) fn visible(pieces: &[(String, Style)]) -> usize {
    pieces.iter().map(|(t, _)| t.chars().count()).sum()
}

pub(super) fn push_piece(pieces: &mut Pieces, text: &str, style: Style) {
    if text.is_empty() {
        return;
    }
    match pieces.last_mut() {
        Some((last, s)) if *s == style => last.push_str(text),
        _ => pieces.push((text.to_owned(), style)),
    }
}

pub(super) fn paint_pieces(pieces: &[(String, Style)], styled: bool) -> String {
    pieces.iter().map(|(t, s)| paint(s, t, styled)).collect()
}

/// `pieces` cut to `max` visible characters, `…` marking a cut.
pub(super) fn truncate_pieces(pieces: &[(String, Style)], max: usize) -> Pieces {
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

/// `pieces` split after `n` visible characters.
pub(super) fn split_pieces(pieces: &[(String, Style)], n: usize) -> (Pieces, Pieces) {
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
