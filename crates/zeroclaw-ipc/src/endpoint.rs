//! Endpoint resolution: one resolver, shared by the daemon and every client, so the two can
//! never disagree about where the daemon listens.
//!
//! | input | effect |
//! |---|---|
//! | `--config-dir DIR` | config dir = DIR (wins over the variable) |
//! | `ZEROCLAW_CONFIG_DIR` | config dir, when no flag |
//! | neither | `~/.zeroclaw` |
//! | `ZEROCLAW_DATA_DIR` | data dir; otherwise `<config dir>/data` |
//! | `ZEROCLAW_SOCKET` (non-empty) | the endpoint, verbatim (on Windows it must be a pipe name, `\\.\pipe\NAME`, of at most 256 characters) |
//! | default, Unix | `<data dir>/daemon.sock` |
//! | default, Windows | `\\.\pipe\zeroclaw-<first 16 hex digits of SHA-256(data dir, normalised)>` |

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

/// How every local named pipe's name starts (compared without regard to case).
pub const PIPE_PREFIX: &str = r"\\.\pipe\";

/// Longest pipe name Windows accepts, prefix included, in UTF-16 units (CreateNamedPipeW:
/// "the entire pipe name string can be up to 256 characters long"); a longer one fails
/// with error 206.
pub const PIPE_NAME_MAX: usize = 256;

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
    #[error(
        "{ENV_SOCKET} is {value:?}, which is not a named pipe: on Windows it must name one, like {ENV_SOCKET}=\\\\.\\pipe\\my-zeroclaw (a file there would be overwritten, so it is never opened)"
    )]
    NotAPipeName { value: String },
    #[error(
        "{ENV_SOCKET} names a pipe of {len} characters, but Windows allows at most {PIPE_NAME_MAX} (the \\\\.\\pipe\\ prefix included); set {ENV_SOCKET} to a shorter name, e.g. \\\\.\\pipe\\my-zeroclaw"
    )]
    PipeNameTooLong { value: String, len: usize },
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
    #[cfg(windows)]
    check_pipe_name(endpoint.as_path().as_os_str())?;
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
/// The path is normalised first ([`normalize_windows_path`]), so every spelling of one
/// directory names one pipe.
pub fn pipe_name_for(data_dir: &Path) -> String {
    let normal = normalize_windows_path(&data_dir.to_string_lossy());
    let digest = Sha256::digest(normal.as_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!(r"\\.\pipe\zeroclaw-{hex}")
}

/// One spelling for each Windows path that names the same directory by its text alone:
/// `/` becomes `\`, a `\\?\` (or `\\?\UNC\`) prefix goes, repeated and trailing separators
/// go (a drive's root keeps its one), and the whole is lower-cased (Windows paths are
/// case-insensitive). What the text cannot show (8.3 short names, links) is the data dir
/// lock's to catch. Pure text, so it behaves the same on every platform.
pub fn normalize_windows_path(path: &str) -> String {
    let path = path.replace('/', "\\");
    let (lead, rest) = if let Some(rest) = strip_prefix_ignore_case(&path, r"\\?\UNC\") {
        (r"\\", rest)
    } else if let Some(rest) = path.strip_prefix(r"\\?\") {
        ("", rest)
    } else if let Some(rest) = path.strip_prefix(r"\\") {
        (r"\\", rest)
    } else {
        ("", path.as_str())
    };
    let mut out = String::from(lead);
    let mut parts = rest.split('\\').filter(|part| !part.is_empty()).peekable();
    let absolute = rest.starts_with('\\') && lead.is_empty();
    if absolute {
        out.push('\\');
    }
    while let Some(part) = parts.next() {
        out.push_str(part);
        // A drive's root (`c:\`) keeps its separator; anything else loses a trailing one.
        if parts.peek().is_some() || (part.ends_with(':') && out.len() == part.len()) {
            out.push('\\');
        }
    }
    out.to_lowercase()
}

fn strip_prefix_ignore_case<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    let head = text.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix)
        .then(|| &text[prefix.len()..])
}

/// Fails unless `name` is a local pipe name (`\\.\pipe\NAME`, any case) that Windows can
/// create: a client must never open, and write JSON-RPC frames into, a file that
/// `ZEROCLAW_SOCKET` names by mistake.
pub fn check_pipe_name(name: &std::ffi::OsStr) -> Result<(), ResolveError> {
    let text = name.to_string_lossy();
    let is_pipe = strip_prefix_ignore_case(&text, PIPE_PREFIX).is_some_and(|rest| !rest.is_empty());
    if !is_pipe {
        return Err(ResolveError::NotAPipeName {
            value: text.into_owned(),
        });
    }
    let len = text.encode_utf16().count();
    if len > PIPE_NAME_MAX {
        return Err(ResolveError::PipeNameTooLong {
            value: text.into_owned(),
            len,
        });
    }
    Ok(())
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
        // The digest was computed independently (Python's hashlib, of the normalised text
        // `c:\users\u\.zeroclaw\data`); pinning it makes a change of hashing break this test
        // rather than every client of an older build.
        let name = pipe_name_for(Path::new(r"C:\Users\u\.zeroclaw\data"));
        assert_eq!(name, r"\\.\pipe\zeroclaw-69d8a60e06755a74");
        assert_ne!(name, pipe_name_for(Path::new(r"C:\Users\v\.zeroclaw\data")));
    }

    /// Issue 12, defect 2: `C:\zc2\data` and `c:\ZC2\DATA\` got two pipes, and two daemons
    /// served one database.
    #[test]
    fn every_spelling_of_one_data_dir_names_one_pipe() {
        let one = pipe_name_for(Path::new(r"C:\zc2\data"));
        for spelling in [
            r"c:\ZC2\DATA\",
            r"C:\zc2\data\\",
            r"C:/zc2/data/",
            r"C:\zc2/Data",
            r"\\?\C:\zc2\data",
            r"\\?\c:\ZC2\DATA\",
            r"C:\\zc2\\data",
        ] {
            assert_eq!(pipe_name_for(Path::new(spelling)), one, "{spelling}");
        }
        assert_ne!(pipe_name_for(Path::new(r"C:\zc2\data2")), one);
        assert_ne!(pipe_name_for(Path::new(r"D:\zc2\data")), one);
    }

    #[test]
    fn windows_paths_normalise_to_one_spelling() {
        for (input, expected) in [
            (r"C:\", r"c:\"),
            (r"C:", r"c:\"),
            (r"c:/", r"c:\"),
            (r"\\?\C:\", r"c:\"),
            (r"\\?\UNC\Server\Share\Dir\", r"\\server\share\dir"),
            (r"\\Server\Share\", r"\\server\share"),
            (r"\Users\U\", r"\users\u"),
            (r"C:\Users\Ü\Data", r"c:\users\ü\data"),
        ] {
            assert_eq!(normalize_windows_path(input), expected, "{input}");
        }
    }

    /// Issue 12, defects 1 and 4: a `ZEROCLAW_SOCKET` that is not a pipe name (a file, or a
    /// Unix path from the docs) or is too long is refused with the variable named.
    #[test]
    fn only_local_pipe_names_of_at_most_256_characters_are_endpoints_on_windows() {
        use std::ffi::OsStr;
        for ok in [r"\\.\pipe\zc", r"\\.\PIPE\zc", r"\\.\pipe\a\b"] {
            assert_eq!(check_pipe_name(OsStr::new(ok)), Ok(()), "{ok}");
        }
        for bad in [
            r"C:\zc-x\notes.txt",
            "/tmp/zc.sock",
            r"\\.\pipe\",
            r"\\server\pipe\zc",
            r"\\?\pipe\zc",
            "zc",
        ] {
            let err = check_pipe_name(OsStr::new(bad)).unwrap_err();
            let text = err.to_string();
            assert!(
                matches!(err, ResolveError::NotAPipeName { .. }),
                "{bad}: {text}"
            );
            assert!(text.contains("ZEROCLAW_SOCKET"), "{text}");
            assert!(text.contains(r"\\.\pipe\my-zeroclaw"), "{text}");
        }
        let longest = format!(
            r"\\.\pipe\{}",
            "x".repeat(PIPE_NAME_MAX - PIPE_PREFIX.len())
        );
        assert_eq!(check_pipe_name(OsStr::new(&longest)), Ok(()));
        let long = format!("{longest}x");
        let text = check_pipe_name(OsStr::new(&long)).unwrap_err().to_string();
        assert!(
            text.contains("ZEROCLAW_SOCKET") && text.contains("257") && text.contains("256"),
            "{text}"
        );
    }
}
