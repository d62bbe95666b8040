//! A policy's validation into the plan the platform enforces: every path canonical, the
//! writable set complete, the hidden paths that exist, and the refusals of what cannot be
//! enforced (a writable root over a system directory, a hidden path a command could create).

use std::path::{Path, PathBuf};

use crate::check::resolve_from;
use crate::{Error, Mode, Policy};

/// The directories a writable root may neither be nor hold nor sit in: writing there reaches
/// the kernel (`/proc/sys`), devices (raw disks) or firmware, whatever the file rules say.
#[cfg(unix)]
pub(crate) const SYSTEM_DIRS: [&str; 3] = ["/proc", "/sys", "/dev"];
#[cfg(not(unix))]
pub(crate) const SYSTEM_DIRS: [&str; 0] = [];

/// A validated policy: every path canonical, the writable set complete (temp dir included).
#[derive(Debug)]
// Elsewhere no sandboxed mode gets past `Support`, so only Linux reads the paths.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) struct Plan {
    pub mode: Mode,
    pub network: bool,
    pub cwd: PathBuf,
    /// The directories a command may write, canonical.
    pub writable: Vec<PathBuf>,
    /// The hidden paths that exist, canonical, none inside another.
    pub hidden: Vec<PathBuf>,
}

impl Plan {
    /// Validates `policy` (not `full`) for a command whose private temp dir is `temp`.
    pub(crate) fn new(policy: &Policy, temp: &Path) -> Result<Plan, Error> {
        absolute("working directory", &policy.cwd)?;
        for root in &policy.writable_roots {
            absolute("writable root", root)?;
        }
        for hidden in &policy.hidden {
            absolute("hidden path", hidden)?;
        }
        let cwd = policy.cwd.canonicalize().map_err(|source| Error::Cwd {
            path: policy.cwd.clone(),
            source,
        })?;
        if !cwd.is_dir() {
            return Err(Error::Cwd {
                path: policy.cwd.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotADirectory, "not a directory"),
            });
        }
        let temp = temp.canonicalize().map_err(|source| Error::Setup {
            what: format!("the private temp dir {}", temp.display()),
            source,
        })?;

        let mut writable = vec![temp];
        if policy.mode == Mode::WorkspaceWrite {
            too_wide(&cwd)?;
            writable.push(cwd.clone());
            for root in &policy.writable_roots {
                let canon = root.canonicalize().map_err(|source| Error::WritableRoot {
                    path: root.clone(),
                    source,
                })?;
                too_wide(&canon)?;
                writable.push(canon);
            }
        }

        let mut hidden = Vec::new();
        for path in &policy.hidden {
            match path.canonicalize() {
                Ok(canon) => hidden.push(canon),
                Err(_) => {
                    // Missing (or a dangling link): a command must not be able to create it.
                    let at = resolve_from(Path::new("/"), path);
                    let existing = at
                        .ancestors()
                        .find(|a| a.exists())
                        .unwrap_or(Path::new("/"));
                    if let Some(w) = writable.iter().find(|w| existing.starts_with(w)) {
                        return Err(Error::HiddenCreatable {
                            path: path.clone(),
                            writable: w.clone(),
                        });
                    }
                }
            }
        }
        // A hidden path inside another is hidden with it (and could not be mounted over once
        // its ancestor is covered): keep only the outermost, in a stable order.
        hidden.sort();
        hidden.dedup_by(|inner, outer| inner.starts_with(outer));
        if hidden.iter().any(|h| cwd.starts_with(h)) {
            return Err(Error::CwdHidden { path: cwd });
        }
        for (i, w) in writable.iter().enumerate() {
            if hidden.iter().any(|h| w.starts_with(h)) {
                if i == 0 {
                    return Err(Error::Setup {
                        what: format!(
                            "the private temp dir {} is inside a hidden path; point TMPDIR \
                             elsewhere",
                            w.display()
                        ),
                        source: std::io::ErrorKind::InvalidInput.into(),
                    });
                }
                return Err(Error::WritableHidden { path: w.clone() });
            }
        }
        Ok(Plan {
            mode: policy.mode,
            network: policy.network,
            cwd,
            writable,
            hidden,
        })
    }
}

fn absolute(what: &'static str, path: &Path) -> Result<(), Error> {
    if path.is_absolute() {
        Ok(())
    } else {
        Err(Error::NotAbsolute {
            what,
            path: path.to_path_buf(),
        })
    }
}

/// Refuses a writable directory that is, holds or sits in one of [`SYSTEM_DIRS`].
fn too_wide(dir: &Path) -> Result<(), Error> {
    for system in SYSTEM_DIRS {
        let sys = Path::new(system);
        if sys.starts_with(dir) || dir.starts_with(sys) {
            return Err(Error::TooWide {
                path: dir.to_path_buf(),
                system,
            });
        }
    }
    Ok(())
}
