//! Re-flowing inline text to the terminal's width: styled pieces broken into words,
//! laid out under a first-line and a following-lines prefix.

use super::MIN_TEXT;
use super::style::{Pieces, Style, paint_pieces, push_piece, split_pieces, visible};

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
pub(super) fn wrap(
    pieces: &[(String, Style)],
    first: &str,
    rest: &str,
    width: usize,
    styled: bool,
) -> String {
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
