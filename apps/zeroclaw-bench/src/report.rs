//! The results table, for the terminal and as Markdown, and the machine it ran on.

use std::path::Path;
use std::time::Duration;

/// What a figure's goal says, and how it is checked.
#[derive(Debug, Clone, Copy)]
pub enum Goal {
    None,
    /// daemon / floor at most this.
    RatioAtMost(f64),
    /// daemon / floor at least this.
    RatioAtLeast(f64),
    /// The value (in the row's unit) below this.
    Below(f64, &'static str),
    /// The value (in the row's unit) at most this.
    AtMost(f64, &'static str),
    /// The value (in the row's unit) at least this.
    AtLeast(f64, &'static str),
}

impl Goal {
    pub fn text(self) -> String {
        match self {
            Goal::None => "—".into(),
            Goal::RatioAtMost(r) => format!("≤ {r}× floor"),
            Goal::RatioAtLeast(r) => format!("≥ {r}× floor"),
            Goal::Below(v, unit) => format!("< {} {unit}", trim(v)).trim_end().to_owned(),
            Goal::AtMost(v, unit) => format!("≤ {} {unit}", trim(v)).trim_end().to_owned(),
            Goal::AtLeast(v, unit) => format!("≥ {} {unit}", trim(v)).trim_end().to_owned(),
        }
    }

    fn met(self, value: f64, ratio: Option<f64>) -> Option<bool> {
        match self {
            Goal::None => None,
            Goal::RatioAtMost(r) => ratio.map(|x| x <= r),
            Goal::RatioAtLeast(r) => ratio.map(|x| x >= r),
            Goal::Below(v, _) => Some(value < v),
            Goal::AtMost(v, _) => Some(value <= v),
            Goal::AtLeast(v, _) => Some(value >= v),
        }
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// How a number is shown.
#[derive(Debug, Clone, Copy)]
pub enum Unit {
    Micros,
    Millis,
    Secs,
    PerSec,
    MiB,
    KiB,
    Count,
    /// A plain ratio (0.93).
    Ratio,
}

impl Unit {
    fn show(self, v: f64) -> String {
        match self {
            Unit::Micros => format!("{v:.1} µs"),
            Unit::Millis => format!("{v:.2} ms"),
            Unit::Secs => format!("{v:.3} s"),
            Unit::PerSec => format!("{} /s", thousands(v.round() as u64)),
            Unit::MiB => format!("{v:.1} MiB"),
            Unit::KiB => format!("{v:.1} KiB"),
            Unit::Count => thousands(v.round() as u64),
            Unit::Ratio => format!("{v:.2}"),
        }
    }
}

pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn micros(ns: u64) -> f64 {
    ns as f64 / 1_000.0
}

pub fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1_000.0
}

#[derive(Debug, Clone)]
pub struct Row {
    pub figure: String,
    pub unit: Unit,
    pub value: f64,
    pub floor: Option<f64>,
    pub goal: Goal,
    /// Extra words after the value (the spread over rounds, say).
    pub note: Option<String>,
}

impl Row {
    pub fn new(figure: impl Into<String>, unit: Unit, value: f64, floor: Option<f64>) -> Row {
        Row {
            figure: figure.into(),
            unit,
            value,
            floor,
            goal: Goal::None,
            note: None,
        }
    }

    pub fn goal(mut self, goal: Goal) -> Row {
        self.goal = goal;
        self
    }

    /// Adds words to the notes column (after any already there).
    pub fn note(mut self, note: impl Into<String>) -> Row {
        let note = note.into();
        self.note = Some(match self.note.take() {
            Some(old) => format!("{old}; {note}"),
            None => note,
        });
        self
    }

    pub fn ratio(&self) -> Option<f64> {
        self.floor.filter(|f| *f > 0.0).map(|f| self.value / f)
    }
}

/// The cells of a row: figure, value, floor, ratio, goal, met?, notes.
fn cells(row: &Row, check: bool) -> [String; 7] {
    let ratio = row.ratio();
    let met = if check {
        match row.goal.met(row.value, ratio) {
            Some(true) => "yes".to_owned(),
            Some(false) => "**NO**".to_owned(),
            None => "—".to_owned(),
        }
    } else {
        "not checked".to_owned()
    };
    [
        row.figure.clone(),
        row.unit.show(row.value),
        row.floor.map_or("—".into(), |f| row.unit.show(f)),
        ratio.map_or("—".into(), |r| format!("{r:.2}×")),
        row.goal.text(),
        met,
        row.note.clone().unwrap_or_default(),
    ]
}

const HEADER: [&str; 7] = [
    "figure", "zeroclaw", "floor", "ratio", "goal", "met?", "notes",
];

/// Whether any checked goal was missed.
pub fn missed(rows: &[Row]) -> Vec<&Row> {
    rows.iter()
        .filter(|r| r.goal.met(r.value, r.ratio()) == Some(false))
        .collect()
}

pub fn text_table(rows: &[Row], check: bool) -> String {
    let all: Vec<[String; 7]> = rows.iter().map(|r| cells(r, check)).collect();
    let mut widths = HEADER.map(|h| h.chars().count());
    for row in &all {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            let pad = w - cell.chars().count();
            // Numbers read best right-aligned; words left-aligned.
            if (1..=3).contains(&i) {
                out.push_str(&" ".repeat(pad));
                out.push_str(cell);
            } else {
                out.push_str(cell);
                out.push_str(&" ".repeat(pad));
            }
            out.push_str("  ");
        }
        out.trim_end().to_owned()
    };
    let mut out = line(&HEADER.map(String::from));
    out.push('\n');
    out.push_str(&line(&widths.map(|w| "-".repeat(w))));
    out.push('\n');
    for row in &all {
        out.push_str(&line(row));
        out.push('\n');
    }
    out
}

pub fn markdown_table(rows: &[Row], check: bool) -> String {
    let mut out = format!("| {} |\n", HEADER.join(" | "));
    out.push_str("|---|---:|---:|---:|---|---|---|\n");
    for row in rows {
        out.push_str(&format!("| {} |\n", cells(row, check).join(" | ")));
    }
    out
}

/// The machine and toolchain, as `(name, value)` lines.
pub fn machine() -> Vec<(&'static str, String)> {
    let cpus = std::thread::available_parallelism().map_or(0, usize::from);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("model name"))
                .map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_owned())
        })
        .unwrap_or_else(|| "unknown".into());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|_| "unknown".into());
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    let date = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    vec![
        ("CPUs (nproc)", cpus.to_string()),
        ("CPU", cpu),
        ("kernel", kernel),
        ("rustc", rustc),
        ("date (UTC)", date),
    ]
}

/// A generated block's markers: the text between them is replaced on every run that
/// measured what the block holds.
#[derive(Debug, Clone, Copy)]
pub struct Markers {
    pub begin: &'static str,
    /// What identifies `begin` (it ends with a note that may be reworded).
    pub begin_prefix: &'static str,
    pub end: &'static str,
}

/// The per-message figures.
pub const MAIN: Markers = Markers {
    begin: "<!-- bench:begin (generated by zeroclaw-bench --markdown; edit outside the markers) -->",
    begin_prefix: "<!-- bench:begin",
    end: "<!-- bench:end -->",
};

/// The growth group (issue 16), in its own section.
pub const GROWTH: Markers = Markers {
    begin: "<!-- bench:growth-begin (generated by zeroclaw-bench --markdown; edit outside the markers) -->",
    begin_prefix: "<!-- bench:growth-begin",
    end: "<!-- bench:growth-end -->",
};

const INTRO: &str = "# Benchmarks

`zeroclaw-bench` starts the real daemon binary in a temporary config dir and measures it next
to a floor: a minimal tokio Unix-socket server (the bench binary itself in a hidden mode, a
separate process like the daemon) that parses each line with serde_json and answers
`{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":<id>}` without validation or dispatch. Both are driven by
the same small NDJSON client, interleaved in time, so every ratio compares like with like on
the same machine in the same run. `--markdown` rewrites only the part between the
`bench:begin` and `bench:end` markers below.

```sh
cargo build --release -p zeroclaw -p zeroclaw-bench
target/release/zeroclaw-bench --markdown docs/benchmarks.md   # the full run, about a minute on 2 cores
target/release/zeroclaw-bench --smoke                         # seconds, tiny counts, no thresholds (CI)
```
";

/// Writes the report to `path`: each block between its markers if the file has them (the
/// rest of the file is kept); a block whose markers are missing is appended (the main one
/// after the intro, in a new file).
pub fn write_markdown(path: &Path, blocks: &[(Markers, String)]) -> std::io::Result<()> {
    let mut text = std::fs::read_to_string(path).unwrap_or_default();
    for (markers, block) in blocks {
        let generated = format!("{}\n{block}{}\n", markers.begin, markers.end);
        let replaced = (|| {
            let start = text.find(markers.begin_prefix)?;
            let end = text[start..].find(markers.end)? + start + markers.end.len();
            let rest = text[end..].strip_prefix('\n').unwrap_or(&text[end..]);
            Some(format!("{}{generated}{rest}", &text[..start]))
        })();
        text = match replaced {
            Some(t) => t,
            None if text.is_empty() => format!("{INTRO}\n{generated}"),
            None => format!("{}\n{generated}", text.trim_end_matches('\n')),
        };
    }
    std::fs::write(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_and_ratios() {
        let row = Row::new("p50", Unit::Micros, 30.0, Some(25.0)).goal(Goal::RatioAtMost(1.25));
        assert_eq!(row.ratio(), Some(1.2));
        assert_eq!(missed(std::slice::from_ref(&row)).len(), 0);
        let row = row.goal(Goal::RatioAtMost(1.1));
        assert_eq!(missed(&[row]).len(), 1);
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
        assert_eq!(Goal::Below(15.0, "MiB").text(), "< 15 MiB");
    }

    #[test]
    fn markdown_keeps_what_is_outside_the_markers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("b.md");
        write_markdown(&path, &[(MAIN, "one\n".into())]).unwrap();
        let first = std::fs::read_to_string(&path).unwrap();
        assert!(first.starts_with("# Benchmarks") && first.contains("one\n"));
        std::fs::write(&path, format!("{first}\n## Findings\nkept\n")).unwrap();
        write_markdown(&path, &[(MAIN, "two\n".into())]).unwrap();
        let second = std::fs::read_to_string(&path).unwrap();
        assert!(second.contains("two\n") && !second.contains("one\n"));
        assert!(second.ends_with("## Findings\nkept\n"), "{second}");
        // The growth block goes to its own markers and leaves the main one alone.
        write_markdown(&path, &[(GROWTH, "g1\n".into())]).unwrap();
        std::fs::write(
            &path,
            std::fs::read_to_string(&path).unwrap() + "\n## After\n",
        )
        .unwrap();
        write_markdown(&path, &[(GROWTH, "g2\n".into())]).unwrap();
        let third = std::fs::read_to_string(&path).unwrap();
        assert!(third.contains("two\n") && third.contains("g2\n") && !third.contains("g1\n"));
        assert!(third.contains("## Findings\nkept\n") && third.ends_with("## After\n"));
    }
}
