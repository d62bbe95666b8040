//! `<config dir>/config.toml`. Every key has a default, so no file at all is a valid
//! configuration; an unknown key is an error (a typo should not be silently ignored).

use serde::Deserialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub daemon: DaemonConfig,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonConfig {
    /// Longest NDJSON line accepted, in bytes (the newline not counted).
    pub max_frame_bytes: usize,
    /// Connections served at once; one more is answered `-32001` and closed.
    pub max_connections: usize,
    /// Requests one connection may have being handled at once; one more is answered `-32001`.
    pub max_requests_in_flight: usize,
    /// Frames queued for one connection before its senders wait.
    pub outbound_queue: usize,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            max_frame_bytes: zeroclaw_rpc::DEFAULT_MAX_FRAME_BYTES,
            max_connections: 16_384,
            max_requests_in_flight: 256,
            outbound_queue: 1024,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{} is not valid: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

impl Config {
    /// Loads the file if it exists; defaults if it does not.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let config: Config = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        config.validate().map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })?;
        Ok(config)
    }

    fn validate(&self) -> Result<(), String> {
        let d = &self.daemon;
        for (name, value) in [
            ("daemon.max_frame_bytes", d.max_frame_bytes),
            ("daemon.max_connections", d.max_connections),
            ("daemon.max_requests_in_flight", d.max_requests_in_flight),
            ("daemon.outbound_queue", d.outbound_queue),
        ] {
            if value == 0 {
                return Err(format!("{name} must be at least 1"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            Config::load(&dir.path().join("config.toml")).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn keys_override_defaults_and_typos_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[daemon]\nmax_frame_bytes = 1024\n").unwrap();
        let config = Config::load(&path).unwrap();
        assert_eq!(config.daemon.max_frame_bytes, 1024);
        assert_eq!(
            config.daemon.max_connections,
            DaemonConfig::default().max_connections
        );

        std::fs::write(&path, "[daemon]\nmax_frame_byte = 1024\n").unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(err.contains("max_frame_byte"), "{err}");

        std::fs::write(&path, "[daemon]\nmax_connections = 0\n").unwrap();
        let err = Config::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("daemon.max_connections must be at least 1"),
            "{err}"
        );

        std::fs::write(&path, "[daemon\n").unwrap();
        assert!(Config::load(&path).is_err());
    }
}
