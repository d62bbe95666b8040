//! The renderer's output pinned down: the same for every split of the stream, plain and
//! styled, each kind of block printed as soon as it is complete, and bounded.

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
