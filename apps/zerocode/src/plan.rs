//! The agent's plan (a `plan` event: its `todo_write` checklist) as lines: a header, then
//! one line per step, its mark saying where it stands (☐ pending, ◐ in progress, ☑
//! completed). A line-mode client cannot redraw a block above the scrollback, so every
//! change prints the whole list again: the latest checklist is the last one shown.

use zeroclaw_client::protocol::events::{PlanEntry, PlanStatus};

use crate::term::{bold, dim, sanitize};

/// The checklist's lines.
pub fn checklist(entries: &[PlanEntry]) -> Vec<String> {
    let done = entries
        .iter()
        .filter(|e| e.status == PlanStatus::Completed)
        .count();
    let mut lines = vec![dim(&format!("Plan ({done}/{} done)", entries.len()))];
    for entry in entries {
        let text = sanitize(&entry.content);
        let text = text.lines().next().unwrap_or_default();
        lines.push(match entry.status {
            PlanStatus::Pending => format!("  ☐ {text}"),
            PlanStatus::InProgress => format!("  ◐ {}", bold(text)),
            PlanStatus::Completed => format!("  ☑ {}", dim(text)),
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use zeroclaw_client::protocol::events::PlanEntry;

    #[test]
    fn each_step_is_marked_by_its_status() {
        let entry = |content: &str, status| PlanEntry {
            content: content.into(),
            status,
            priority: None,
        };
        let lines = checklist(&[
            entry("read", PlanStatus::Completed),
            entry("fix", PlanStatus::InProgress),
            entry("test", PlanStatus::Pending),
        ]);
        assert_eq!(lines.len(), 4);
        assert!(lines[0].contains("Plan (1/3 done)"));
        assert!(lines[1].starts_with("  ☑ ") && lines[1].contains("read"));
        assert!(lines[2].starts_with("  ◐ ") && lines[2].contains("fix"));
        assert_eq!(lines[3], "  ☐ test");
    }
}
