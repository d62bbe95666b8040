//! `zeroclaw dashboard --open`: the one-time login link reaches the browser through a
//! redirect file, never through the opener's command line (which every local user can read
//! in `/proc/PID/cmdline`) or its environment. The way Jupyter does it: an HTML file that
//! redirects to the link, written `0600` in `<data dir>/run/` (a `0700` directory), and its
//! *path* handed to the system's opener.
//!
//! The file cannot be deleted as soon as the opener returns (a browser may read it later),
//! so each `--open` deletes the redirect files of earlier runs once their code has expired
//! (a login code lasts 5 minutes): at most the last 5 minutes' files remain, readable only
//! by their owner, holding codes that are spent or about to expire.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The private directory inside the data dir.
const RUN_DIR: &str = "run";
const FILE_PREFIX: &str = "dashboard-open-";
/// A login code's lifetime: an older redirect file holds a dead code.
const STALE: Duration = Duration::from_secs(300);
/// How long the opener gets to say it failed. One still running then is taken to be the
/// browser itself (some openers run it in the foreground) and left to run.
const OPENER_WAIT: Duration = Duration::from_secs(10);

/// The system's opener: `xdg-open`, `open` on macOS, `explorer` on Windows.
fn opener() -> &'static str {
    if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    }
}

/// Writes the redirect file for `url` and has the opener open it. Every failure is said on
/// stderr with the link to open by hand; none is an error of the command (the link was
/// printed).
pub async fn open(data_dir: &Path, url: &str) {
    let file = match redirect_file(data_dir, url) {
        Ok(file) => file,
        Err(e) => {
            eprintln!(
                "could not write the browser's redirect file ({e}); open the link yourself: {url}"
            );
            return;
        }
    };
    let program = opener();
    let child = tokio::process::Command::new(program)
        .arg(&file)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => {
            eprintln!("could not start {program} ({e}); open the link yourself: {url}");
            return;
        }
    };
    match tokio::time::timeout(OPENER_WAIT, child.wait()).await {
        // explorer.exe answers 1 even when it opened the file: only its start can fail.
        Ok(Ok(status)) if status.success() || cfg!(windows) => {}
        Ok(Ok(status)) => {
            eprintln!(
                "{program} could not open the browser ({status}); open the link yourself: {url}"
            );
        }
        Ok(Err(e)) => {
            eprintln!("{program} failed ({e}); open the link yourself: {url}");
        }
        Err(_) => {}
    }
}

/// `<data dir>/run/dashboard-open-<pid>-<nanos>.html`, created `0600` (never over an
/// existing file or through a link), after the stale ones are deleted.
fn redirect_file(data_dir: &Path, url: &str) -> std::io::Result<PathBuf> {
    let dir = data_dir.join(RUN_DIR);
    private_dir(data_dir, &dir)?;
    remove_stale(&dir);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    let path = dir.join(format!("{FILE_PREFIX}{}-{nanos}.html", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    std::io::Write::write_all(&mut file, redirect_html(url).as_bytes())?;
    Ok(path)
}

/// Creates `dir` `0700`, or checks the one there: a directory (not a link) of the data
/// dir's owner, tightened to `0700` if others could enter it.
fn private_dir(data_dir: &Path, dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a directory",
            dir.display()
        )));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let owner = std::fs::metadata(data_dir)?.uid();
        if meta.uid() != owner {
            return Err(std::io::Error::other(format!(
                "{} belongs to uid {}, not to the data directory's owner (uid {owner})",
                dir.display(),
                meta.uid()
            )));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    #[cfg(not(unix))]
    let _ = data_dir;
    Ok(())
}

/// Deletes the redirect files whose code has expired.
fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let ours = name
            .to_str()
            .is_some_and(|n| n.starts_with(FILE_PREFIX) && n.ends_with(".html"));
        let stale = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|at| now.duration_since(at).is_ok_and(|age| age >= STALE));
        if ours && stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// A page that goes to `url` at once (a meta refresh: no script needed) and shows it as a
/// link meanwhile.
fn redirect_html(url: &str) -> String {
    let mut escaped = String::with_capacity(url.len());
    for c in url.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    let mut html = String::new();
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"refresh\" content=\"0;url={escaped}\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>zeroclaw: opening the dashboard</title>\n</head>\n<body>\n\
         <p>Opening the zeroclaw dashboard… <a href=\"{escaped}\">continue</a> if nothing happens.</p>\n\
         </body>\n</html>\n"
    );
    html
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_redirect_page_escapes_the_link() {
        let html = redirect_html("http://127.0.0.1:1/login#code=a\"><script>");
        assert!(html.contains("url=http://127.0.0.1:1/login#code=a&quot;&gt;&lt;script&gt;"));
        assert!(!html.contains("<script>"));
    }
}
