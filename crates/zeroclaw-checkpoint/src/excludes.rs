//! The shadow repository's own `info/exclude`: the directories never captured (the
//! engine's root, the daemon's data dir) and a copy of the user repository's
//! `info/exclude`, which git would otherwise not see (it reads `info/exclude` only from the
//! repository it runs in, which is the shadow one). The user's file is only read.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::paths;
use crate::record::Record;

/// Rewrites `<git_dir>/info/exclude` if its content changed; says whether it did (the
/// ignore rules changed, so tracked files may have become ignored).
pub(crate) fn sync(git_dir: &Path, record: &Record, never: &[PathBuf]) -> Result<bool, Error> {
    let mut content =
        b"# Written by zeroclaw for its checkpoints; rewritten on each snapshot.\n".to_vec();
    for dir in never {
        if let Some(pattern) = never_pattern(&record.work_tree, dir) {
            content.extend_from_slice(&pattern);
            content.push(b'\n');
        }
    }
    if let Some(user) = &record.user_exclude
        && let Ok(bytes) = std::fs::read(user)
    {
        content.extend_from_slice(b"# from ");
        content.extend_from_slice(
            &paths::to_bytes(user)
                .iter()
                .map(|&b| if b == b'\n' { b'?' } else { b })
                .collect::<Vec<_>>(),
        );
        content.push(b'\n');
        content.extend_from_slice(&bytes);
        content.push(b'\n');
    }
    let path = git_dir.join("info").join("exclude");
    if std::fs::read(&path).ok().as_deref() == Some(content.as_slice()) {
        return Ok(false);
    }
    std::fs::write(&path, &content).map_err(|e| Error::io("write", &path, e))?;
    Ok(true)
}

/// An anchored directory pattern for `dir` if it lies inside the work tree.
fn never_pattern(work_tree: &Path, dir: &Path) -> Option<Vec<u8>> {
    let rel = paths::git_form(dir.strip_prefix(work_tree).ok()?)?;
    if rel.is_empty() || rel.contains(&b'\n') {
        return None;
    }
    let mut out = vec![b'/'];
    out.extend_from_slice(&escape(&rel));
    out.push(b'/');
    Some(out)
}

/// Escapes a path so that gitignore reads it literally.
fn escape(path: &[u8]) -> Vec<u8> {
    let trailing_spaces = path.iter().rev().take_while(|&&b| b == b' ').count();
    let mut out = Vec::with_capacity(path.len() + 4);
    for (i, &b) in path.iter().enumerate() {
        let special = matches!(b, b'\\' | b'*' | b'?' | b'[')
            || (i == 0 && matches!(b, b'!' | b'#'))
            || (b == b' ' && i >= path.len() - trailing_spaces);
        if special {
            out.push(b'\\');
        }
        out.push(b);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_are_anchored_escaped_directories_inside_the_work_tree() {
        let tree = Path::new("/w");
        assert_eq!(
            never_pattern(tree, Path::new("/w/data/cp")),
            Some(b"/data/cp/".to_vec())
        );
        assert_eq!(
            never_pattern(tree, Path::new("/w/#a*[b] ")),
            Some(b"/\\#a\\*\\[b]\\ /".to_vec())
        );
        assert_eq!(never_pattern(tree, Path::new("/elsewhere")), None);
        assert_eq!(never_pattern(tree, Path::new("/w")), None);
    }
}
