//! Endpoint resolution: one resolver, shared by the daemon and every client, so the two can
//! never disagree about where the daemon listens.
//!
//! | input | effect |
//! |---|---|
//! | `--config-dir DIR` | config dir = DIR (wins over the variable) |
//! | `ZEROCLAW_CONFIG_DIR` | config dir, when no flag |
//! | neither | `~/.zeroclaw` |
//! | `ZEROCLAW_DATA_DIR` | data dir; otherwise `<config dir>/data` |
//! | `ZEROCLAW_SOCKET` (non-empty) | the endpoint, verbatim |
//! | default, Unix | `<data dir>/daemon.sock` |
//! | default, Windows | `\\.\pipe\zeroclaw-<first 16 hex digits of SHA-256(data dir)>` |

use sha2::{Digest, Sha256};
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

pub const ENV_CONFIG_DIR: &str = "ZEROCLAW_CONFIG_DIR";
pub const ENV_DATA_DIR: &str = "ZEROCLAW_DATA_DIR";
pub const ENV_SOCKET: &str = "ZEROCLAW_SOCKET";

/// Longest Unix socket path `bind`/`connect` accept: `sun_path` holds 108 bytes on Linux
/// (104 on the BSDs and macOS), one of which is the terminating NUL.
#[cfg(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
))]
pub const SUN_PATH_LEN: usize = 104;
#[cfg(not(any(
    target_os = "macos",
    target_os = "ios",
    target_os = "freebsd",
    target_os = "openbsd",
    target_os = "netbsd",
    target_os = "dragonfly"
)))]
pub const SUN_PATH_LEN: usize = 108;

/// Where the daemon listens: a socket path on Unix, a pipe name on Windows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Endpoint(PathBuf);

impl Endpoint {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self(path.into())
    }

    pub fn as_path(&self) -> &Path {
        &self.0
    }

    /// The lock file beside a Unix socket: `<endpoint>.lock`.
    pub fn lock_path(&self) -> PathBuf {
        let mut name = self.0.clone().into_os_string();
        name.push(".lock");
        PathBuf::from(name)
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.display().fmt(f)
    }
}

/// The directories and endpoint one daemon instance uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    pub config_dir: PathBuf,
    pub data_dir: PathBuf,
    pub endpoint: Endpoint,
}

impl Paths {
    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.toml")
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error(
        "cannot find your home directory to place ~/.zeroclaw; pass --config-dir DIR or set {ENV_CONFIG_DIR}"
    )]
    NoHome,
    #[error(
        "socket path {path} is {len} bytes, but this platform allows at most {max} ({SUN_PATH_LEN} including the terminating NUL); set {ENV_SOCKET} to a shorter path, e.g. {ENV_SOCKET}=/tmp/zeroclaw.sock"
    )]
    SocketPathTooLong {
        path: String,
        len: usize,
        max: usize,
    },
    #[error("cannot make {path} absolute: {reason}")]
    NotAbsolute { path: String, reason: String },
}

/// Resolves the paths from the process environment.
pub fn resolve(config_dir_flag: Option<&Path>) -> Result<Paths, ResolveError> {
    resolve_with(config_dir_flag, |name| std::env::var_os(name))
}

/// Resolves the paths with `env` standing in for the environment (for tests).
pub fn resolve_with(
    config_dir_flag: Option<&Path>,
    env: impl Fn(&str) -> Option<OsString>,
) -> Result<Paths, ResolveError> {
    let non_empty = |name: &str| env(name).filter(|v| !v.is_empty());
    let config_dir = match config_dir_flag {
        Some(dir) => dir.to_path_buf(),
        None => match non_empty(ENV_CONFIG_DIR) {
            Some(dir) => PathBuf::from(dir),
            None => home_dir(&non_empty)?.join(".zeroclaw"),
        },
    };
    let config_dir = absolute(&config_dir)?;
    let data_dir = match non_empty(ENV_DATA_DIR) {
        Some(dir) => absolute(Path::new(&dir))?,
        None => config_dir.join("data"),
    };
    let endpoint = match non_empty(ENV_SOCKET) {
        Some(socket) => Endpoint::new(socket),
        None => default_endpoint(&data_dir),
    };
    #[cfg(unix)]
    check_socket_path_len(endpoint.as_path())?;
    Ok(Paths {
        config_dir,
        data_dir,
        endpoint,
    })
}

fn home_dir(env: &impl Fn(&str) -> Option<OsString>) -> Result<PathBuf, ResolveError> {
    let var = if cfg!(windows) { "USERPROFILE" } else { "HOME" };
    env(var).map(PathBuf::from).ok_or(ResolveError::NoHome)
}

fn absolute(path: &Path) -> Result<PathBuf, ResolveError> {
    std::path::absolute(path).map_err(|e| ResolveError::NotAbsolute {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

#[cfg(unix)]
fn default_endpoint(data_dir: &Path) -> Endpoint {
    unix_socket_in(data_dir)
}

#[cfg(windows)]
fn default_endpoint(data_dir: &Path) -> Endpoint {
    Endpoint::new(pipe_name_for(data_dir))
}

/// The default Unix endpoint for a data dir.
pub fn unix_socket_in(data_dir: &Path) -> Endpoint {
    Endpoint::new(data_dir.join("daemon.sock"))
}

/// The default Windows pipe name for a data dir. SHA-256 rather than std's hasher, whose
/// output may change between Rust releases: clients of one build must find daemons of another.
pub fn pipe_name_for(data_dir: &Path) -> String {
    let digest = Sha256::digest(data_dir.to_string_lossy().as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!(r"\\.\pipe\zeroclaw-{hex}")
}

/// Fails with a message naming the path, the limit and `ZEROCLAW_SOCKET` when a socket
/// path cannot be bound on this platform.
pub fn check_socket_path_len(path: &Path) -> Result<(), ResolveError> {
    let len = path.as_os_str().len();
    let max = SUN_PATH_LEN - 1;
    if len > max {
        return Err(ResolveError::SocketPathTooLong {
            path: path.display().to_string(),
            len,
            max,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<OsString> {
        let map: std::collections::HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[cfg(unix)]
    #[test]
    fn flag_wins_over_variable_and_data_dir_defaults_under_config_dir() {
        let paths = resolve_with(
            Some(Path::new("/etc/zc")),
            env(&[("ZEROCLAW_CONFIG_DIR", "/other"), ("HOME", "/home/u")]),
        )
        .unwrap();
        assert_eq!(paths.config_dir, Path::new("/etc/zc"));
        assert_eq!(paths.data_dir, Path::new("/etc/zc/data"));
        assert_eq!(
            paths.endpoint.as_path(),
            Path::new("/etc/zc/data/daemon.sock")
        );
        assert_eq!(paths.config_file(), Path::new("/etc/zc/config.toml"));
    }

    #[cfg(unix)]
    #[test]
    fn variables_then_home() {
        let paths = resolve_with(
            None,
            env(&[("ZEROCLAW_CONFIG_DIR", "/cfg"), ("HOME", "/h")]),
        )
        .unwrap();
        assert_eq!(paths.config_dir, Path::new("/cfg"));
        let paths =
            resolve_with(None, env(&[("HOME", "/h"), ("ZEROCLAW_CONFIG_DIR", "")])).unwrap();
        assert_eq!(paths.config_dir, Path::new("/h/.zeroclaw"));
        assert_eq!(
            paths.endpoint.as_path(),
            Path::new("/h/.zeroclaw/data/daemon.sock")
        );
        let paths =
            resolve_with(None, env(&[("HOME", "/h"), ("ZEROCLAW_DATA_DIR", "/d")])).unwrap();
        assert_eq!(paths.data_dir, Path::new("/d"));
        assert_eq!(paths.endpoint.as_path(), Path::new("/d/daemon.sock"));
        assert_eq!(resolve_with(None, env(&[])), Err(ResolveError::NoHome));
    }

    #[cfg(unix)]
    #[test]
    fn socket_variable_is_taken_verbatim() {
        let paths = resolve_with(
            None,
            env(&[("HOME", "/h"), ("ZEROCLAW_SOCKET", "/tmp/x.sock")]),
        )
        .unwrap();
        assert_eq!(paths.endpoint.as_path(), Path::new("/tmp/x.sock"));
        assert_eq!(paths.endpoint.lock_path(), Path::new("/tmp/x.sock.lock"));
        let paths = resolve_with(None, env(&[("HOME", "/h"), ("ZEROCLAW_SOCKET", "")])).unwrap();
        assert_eq!(
            paths.endpoint.as_path(),
            Path::new("/h/.zeroclaw/data/daemon.sock")
        );
    }

    #[cfg(unix)]
    #[test]
    fn overlong_socket_path_names_the_path_the_limit_and_the_variable() {
        let long = format!("/tmp/{}", "x".repeat(200));
        let err =
            resolve_with(None, env(&[("HOME", "/h"), ("ZEROCLAW_SOCKET", &long)])).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&long), "{text}");
        assert!(text.contains("ZEROCLAW_SOCKET"), "{text}");
        assert!(text.contains(&(SUN_PATH_LEN - 1).to_string()), "{text}");
        let exact = format!("/{}", "x".repeat(SUN_PATH_LEN - 2));
        assert!(check_socket_path_len(Path::new(&exact)).is_ok());
    }

    #[test]
    fn pipe_name_is_a_stable_sha256_prefix() {
        // The digest was computed independently (Python's hashlib); pinning it makes a
        // change of hashing break this test rather than every client of an older build.
        let name = pipe_name_for(Path::new(r"C:\Users\u\.zeroclaw\data"));
        assert_eq!(name, r"\\.\pipe\zeroclaw-ec1e6dbfaa850c5e");
        assert_ne!(name, pipe_name_for(Path::new(r"C:\Users\v\.zeroclaw\data")));
    }
}
