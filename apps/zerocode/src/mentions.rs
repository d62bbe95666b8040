//! `@path` mentions: a prompt naming a file under the session's cwd gets the file's text
//! appended as context. Each file follows the prompt as a fenced block headed by its path
//! (the fence longer than any run of backticks in the file, so no content can close it
//! early). A mentioned image (by its extension: `@shot.png`), and an image whose path is a
//! line of the prompt on its own (a pasted path), go with the prompt as image content
//! blocks instead (`images.rs`); one that cannot be attached stops the prompt.
//!
//! Bounded: [`MAX_FILE_BYTES`] of one file and [`MAX_TOTAL_BYTES`] of all are attached; a
//! file cut short says so in its heading (and on screen). Refused with a reason, the text
//! left as typed: a path that does not exist, leaves the cwd (`..`, an absolute path, a
//! symlink pointing out), is not a regular file, or is binary (a NUL byte, or not UTF-8).

use crate::images::{self, Image};
use crate::units::size;
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most of one file attached.
pub const MAX_FILE_BYTES: usize = 100 * 1024;
/// The most of all the files of one prompt attached.
pub const MAX_TOTAL_BYTES: usize = 256 * 1024;

/// A file attached to the prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attached {
    /// As mentioned (relative to the cwd).
    pub path: String,
    /// The file's size.
    pub size: u64,
    /// The bytes attached, when fewer than `size`.
    pub cut: Option<usize>,
}

/// A mention that attached nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub mention: String,
    pub why: String,
}

/// The prompt to send, and what its mentions did.
#[derive(Debug, Default)]
pub struct Expanded {
    pub prompt: String,
    pub attached: Vec<Attached>,
    pub refused: Vec<Refused>,
    /// The images, in the order the prompt names them.
    pub images: Vec<Image>,
    /// Why images named could not be attached: the prompt must not be sent without them.
    pub errors: Vec<String>,
}

/// The prompt `text` with the files its `@path` mentions name (under `cwd`) appended, and
/// the images it names.
pub fn expand(text: &str, cwd: &Path) -> Expanded {
    let mut out = Expanded {
        prompt: text.to_owned(),
        ..Expanded::default()
    };
    let Ok(root) = cwd.canonicalize() else {
        return out;
    };
    let mut seen = HashSet::new();
    let mut seen_images = HashSet::new();
    let mut budget = MAX_TOTAL_BYTES;
    for line in text.lines() {
        if let Some(path) = images::pasted_path(line, &root) {
            let label = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            if seen_images.insert(path.clone()) {
                match images::attach(&path, &label) {
                    Ok(image) => out.images.push(image),
                    Err(why) => out.errors.push(why),
                }
            }
            continue;
        }
        for word in line.split_whitespace() {
            let Some(mention) = word.strip_prefix('@').filter(|m| !m.is_empty()) else {
                continue;
            };
            // Punctuation closing a sentence is not part of the path, unless the file has it.
            let trimmed =
                mention.trim_end_matches(['.', ',', ';', ':', '!', '?', ')', ']', '"', '\'']);
            // Tested under the canonical root, as `read` opens it: on Windows a plain path
            // drops a trailing dot (`lib.rs.` is `lib.rs`), a verbatim one does not.
            let path = if !root.join(mention).exists() && !trimmed.is_empty() {
                trimmed
            } else {
                mention
            };
            if !seen.insert(path.to_owned()) {
                continue;
            }
            if zeroclaw_client::image_type(Path::new(path)).is_some() {
                let attached = locate(&root, path)
                    .map_err(|missing| images::not_found(path, &missing.image()))
                    .and_then(|(real, _)| {
                        if seen_images.insert(real.clone()) {
                            images::attach(&real, path).map(Some)
                        } else {
                            Ok(None)
                        }
                    });
                match attached {
                    Ok(image) => out.images.extend(image),
                    Err(why) => out.errors.push(why),
                }
                continue;
            }
            match read(&root, path, budget) {
                Ok(file) => {
                    budget -= file.text.len();
                    out.prompt.push_str(&block(path, &file));
                    out.attached.push(Attached {
                        path: path.to_owned(),
                        size: file.size,
                        cut: ((file.text.len() as u64) < file.size).then_some(file.text.len()),
                    });
                }
                Err(why) => out.refused.push(Refused {
                    mention: format!("@{path}"),
                    why,
                }),
            }
        }
    }
    if let Some(why) = images::too_many(&out.images) {
        out.errors.push(why);
    }
    out
}

/// Why a mentioned path names no file that may be attached.
enum Missing {
    NotFound(PathBuf),
    Outside(PathBuf),
    Directory,
    NotRegular,
    Unreadable(std::io::Error),
}

impl Missing {
    /// As a text mention's refusal says it (the prompt is sent without the file).
    fn text(&self) -> String {
        match self {
            Missing::NotFound(root) => format!("no such file in {}; left as typed", root.display()),
            Missing::Outside(root) => format!(
                "outside the session's directory {}; not attached",
                root.display()
            ),
            Missing::Directory => "a directory; mention the files in it".into(),
            Missing::NotRegular => "not a regular file; not attached".into(),
            Missing::Unreadable(e) => format!("cannot open it: {e}"),
        }
    }

    /// As an image mention's error says it (the prompt is not sent).
    fn image(&self) -> String {
        match self {
            Missing::NotFound(root) => format!("no such file in {}", root.display()),
            Missing::Outside(root) => format!(
                "outside the session's directory {} (paste the image's path on a line of its own to attach it from anywhere)",
                root.display()
            ),
            Missing::Directory => "a directory".into(),
            Missing::NotRegular => "not a regular file".into(),
            Missing::Unreadable(e) => format!("cannot open it: {e}"),
        }
    }
}

/// The file `path` under `root` (a canonical directory) names, resolved, with its metadata:
/// a regular file inside `root` (symlinks followed, then checked), or why not.
fn locate(root: &Path, path: &str) -> Result<(PathBuf, std::fs::Metadata), Missing> {
    let real = match root.join(path).canonicalize() {
        Ok(real) => real,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Missing::NotFound(root.to_path_buf()));
        }
        Err(e) => return Err(Missing::Unreadable(e)),
    };
    if !real.starts_with(root) {
        return Err(Missing::Outside(root.to_path_buf()));
    }
    let meta = std::fs::metadata(&real).map_err(Missing::Unreadable)?;
    if meta.is_dir() {
        return Err(Missing::Directory);
    }
    if !meta.is_file() {
        return Err(Missing::NotRegular);
    }
    Ok((real, meta))
}

struct File {
    text: String,
    size: u64,
}

/// Reads up to `budget` bytes (and at most [`MAX_FILE_BYTES`]) of `path` under `root` (a
/// canonical directory), or says why not.
fn read(root: &Path, path: &str, budget: usize) -> Result<File, String> {
    let (real, meta) = locate(root, path).map_err(|missing| missing.text())?;
    if budget == 0 {
        return Err(format!(
            "the prompt already has {} of attachments, the most it takes; not attached",
            size(MAX_TOTAL_BYTES as u64)
        ));
    }
    let cap = budget.min(MAX_FILE_BYTES);
    let file = std::fs::File::open(&real).map_err(|e| format!("cannot open it: {e}"))?;
    let mut bytes = Vec::new();
    file.take(cap as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.contains(&0) {
        return Err("a binary file; not attached".into());
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        // Cut inside a character: keep the characters before it.
        Err(e) if e.utf8_error().error_len().is_none() && e.as_bytes().len() == cap => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).map_err(|_| "a binary file; not attached".to_owned())?
        }
        Err(_) => return Err("not UTF-8 text (a binary file?); not attached".into()),
    };
    Ok(File {
        text,
        size: meta.len(),
    })
}

/// The file as the model reads it: a heading with its path (and the cut), then its text
/// fenced.
fn block(path: &str, file: &File) -> String {
    let longest_run = file
        .text
        .split(|c| c != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    let what = if (file.text.len() as u64) < file.size {
        format!(
            "the first {} of its {} bytes; the rest is left out",
            file.text.len(),
            file.size
        )
    } else {
        format!("{} bytes", file.size)
    };
    let newline = if file.text.ends_with('\n') { "" } else { "\n" };
    format!(
        "\n\nAttached file `{path}` ({what}):\n{fence}\n{}{newline}{fence}",
        file.text
    )
}

/// The dim line listing what was attached: `attached: a.rs (1.2 KB) · b.log (first 100.0
/// KB of 4.8 MB)`.
pub fn summary(attached: &[Attached]) -> Option<String> {
    if attached.is_empty() {
        return None;
    }
    let parts: Vec<String> = attached
        .iter()
        .map(|a| match a.cut {
            Some(kept) => format!(
                "{} (first {} of {}: cut)",
                a.path,
                size(kept as u64),
                size(a.size)
            ),
            None => format!("{} ({})", a.path, size(a.size)),
        })
        .collect();
    Some(format!("attached: {}", parts.join(" · ")))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_mentioned_file_is_appended_fenced_under_its_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), "fn a() {}\n```\n").unwrap();
        let out = expand("explain @src/lib.rs.", dir.path());
        assert_eq!(
            out.prompt,
            "explain @src/lib.rs.\n\nAttached file `src/lib.rs` (14 bytes):\n````\nfn a() {}\n```\n````"
        );
        assert_eq!(out.attached.len(), 1);
        assert!(out.refused.is_empty());
    }

    #[test]
    fn missing_outside_binary_and_directory_mentions_are_refused_with_the_text_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("cwd");
        std::fs::create_dir(&cwd).unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        std::fs::write(cwd.join("bin"), b"a\0b").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(dir.path().join("secret"), cwd.join("link")).unwrap();
        let text = "@nope @../secret @bin @. @link me@example.com";
        let out = expand(text, &cwd);
        assert_eq!(out.prompt, text);
        assert!(out.attached.is_empty());
        let why: Vec<(&str, &str)> = out
            .refused
            .iter()
            .map(|r| (r.mention.as_str(), r.why.as_str()))
            .collect();
        assert!(
            why[0].0 == "@nope" && why[0].1.contains("no such file"),
            "{why:?}"
        );
        assert!(why[1].1.contains("outside"), "{why:?}");
        assert!(why[2].1.contains("binary"), "{why:?}");
        assert!(why[3].1.contains("directory"), "{why:?}");
        #[cfg(unix)]
        assert!(why[4].1.contains("outside"), "{why:?}");
    }

    #[test]
    fn images_go_as_content_blocks_and_one_that_cannot_stops_the_prompt() {
        let dir = tempfile::tempdir().unwrap();
        let png = b"\x89PNG\r\n\x1a\n";
        std::fs::write(dir.path().join("shot.png"), png).unwrap();
        std::fs::create_dir(dir.path().join("img")).unwrap();
        std::fs::write(dir.path().join("img/b.JPG"), b"\xff\xd8\xff").unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let pasted = elsewhere.path().join("drop.gif");
        std::fs::write(&pasted, b"GIF89a").unwrap();
        let text = format!(
            "@shot.png what is this, and @img/b.JPG?\n{}\n",
            pasted.display()
        );
        let out = expand(&text, dir.path());
        // The text is sent as typed; the images go beside it, in order.
        assert_eq!(out.prompt, text);
        let labels: Vec<&str> = out.images.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["shot.png", "img/b.JPG", "drop.gif"]);
        assert!(out.errors.is_empty() && out.refused.is_empty() && out.attached.is_empty());

        // The same image twice is attached once.
        let out = expand("@shot.png @shot.png", dir.path());
        assert_eq!(out.images.len(), 1);

        // An image mention that names nothing is an error, not text.
        let out = expand("@gone.png @../x.png", dir.path());
        assert!(out.images.is_empty());
        assert!(
            out.errors[0].starts_with("cannot attach @gone.png: no such file"),
            "{:?}",
            out.errors
        );
        assert_eq!(out.errors.len(), 2, "{:?}", out.errors);
    }

    #[test]
    fn files_are_cut_at_the_per_file_and_total_caps() {
        let dir = tempfile::tempdir().unwrap();
        let big = "é".repeat(MAX_FILE_BYTES); // two bytes each
        for name in ["a", "b", "c", "d"] {
            std::fs::write(dir.path().join(name), &big).unwrap();
        }
        let out = expand("@a @b @c @d", dir.path());
        let kept: Vec<Option<usize>> = out.attached.iter().map(|a| a.cut).collect();
        assert_eq!(
            kept,
            [
                Some(MAX_FILE_BYTES),
                Some(MAX_FILE_BYTES),
                Some(MAX_TOTAL_BYTES - 2 * MAX_FILE_BYTES)
            ]
        );
        assert!(out.refused[0].why.contains("the most it takes"));
        assert!(
            out.prompt
                .contains("the first 102400 of its 204800 bytes; the rest is left out")
        );
        assert!(out.prompt.len() < MAX_TOTAL_BYTES + 1024);
        assert!(
            summary(&out.attached)
                .unwrap()
                .contains("a (first 100.0 KB of 200.0 KB: cut)")
        );
    }
}
