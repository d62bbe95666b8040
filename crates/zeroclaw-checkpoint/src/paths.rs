//! Paths as git writes them (bytes, `/`-separated, relative to the work tree) and as the
//! file system takes them.

use std::path::{Component, Path, PathBuf};

/// A path's bytes: raw on Unix; on Windows the WTF-8 form, which is UTF-8 for every name
/// git can hold.
pub(crate) fn to_bytes(path: &Path) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        path.as_os_str().as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        path.as_os_str().as_encoded_bytes().to_vec()
    }
}

/// The path for bytes from git or from our own records. On Windows git speaks UTF-8; a
/// name that is not (which git cannot produce there) is decoded lossily.
pub(crate) fn from_bytes(bytes: &[u8]) -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// A git path (`a/b/c`) as a relative path of this platform.
pub(crate) fn relative(git_path: &[u8]) -> PathBuf {
    let mut out = PathBuf::new();
    for part in git_path.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
        out.push(from_bytes(part));
    }
    out
}

/// A relative path as git writes it, or `None` when it is not a plain relative path (a
/// root, a prefix, `..`) or, on Windows, not valid UTF-8.
pub(crate) fn git_form(path: &Path) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => {
                if !out.is_empty() {
                    out.push(b'/');
                }
                #[cfg(unix)]
                {
                    use std::os::unix::ffi::OsStrExt;
                    out.extend_from_slice(part.as_bytes());
                }
                #[cfg(not(unix))]
                {
                    out.extend_from_slice(part.to_str()?.as_bytes());
                }
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// `std::fs::canonicalize`, without Windows' `\\?\` prefix on an ordinary drive path
/// (git does not take it).
pub(crate) fn canonical(path: &Path) -> std::io::Result<PathBuf> {
    let canonical = std::fs::canonicalize(path)?;
    #[cfg(windows)]
    {
        if let Some(s) = canonical.to_str()
            && let Some(rest) = s.strip_prefix(r"\\?\")
            && rest.as_bytes().get(1) == Some(&b':')
        {
            return Ok(PathBuf::from(rest));
        }
    }
    Ok(canonical)
}

/// Every proper ancestor of a git path, shortest first: `a/b/c` gives `a`, `a/b`.
pub(crate) fn ancestors(git_path: &[u8]) -> impl Iterator<Item = &[u8]> {
    git_path
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'/')
        .map(move |(i, _)| &git_path[..i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_are_listed_shortest_first() {
        let all: Vec<&[u8]> = ancestors(b"a/b/c").collect();
        assert_eq!(all, vec![&b"a"[..], &b"a/b"[..]]);
        assert_eq!(ancestors(b"a").count(), 0);
    }

    #[test]
    fn git_form_takes_only_plain_relative_paths() {
        assert_eq!(git_form(Path::new("a/./b")), Some(b"a/b".to_vec()));
        assert_eq!(git_form(Path::new("../a")), None);
        assert_eq!(relative(b"a/b"), Path::new("a").join("b"));
    }
}
