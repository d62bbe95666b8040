//! The whole output of a command too long for its result, kept in a file.
//!
//! A bash result holds the head and tail of the output (`tools.output_limit_bytes`); once the
//! output passes that, everything from the start is written to
//! `<data dir>/tool-output/<session id>/<random>.log` and the result names the file, so
//! nothing is silently dropped. The file is bounded by `tools.saved_output_limit_bytes`
//! (what passes it is left out, and the result says so), and removed with its session.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The directory of a session's saved outputs.
pub fn session_dir(data_dir: &Path, session_id: &str) -> PathBuf {
    data_dir.join("tool-output").join(session_id)
}

/// Where one call may save its output, and how much.
#[derive(Debug, Clone)]
pub struct SpillTo {
    pub dir: PathBuf,
    pub limit: u64,
}

/// An output being saved. Writing is blocking, in chunks of at most a pipe read (64 KiB),
/// to a local file: cheap next to the command producing them.
pub struct Spill {
    path: PathBuf,
    file: Option<std::fs::File>,
    limit: u64,
    written: u64,
    dropped: u64,
    error: Option<String>,
}

impl Spill {
    /// Creates the file (and its directory, private to the user).
    pub fn create(to: &SpillTo) -> Self {
        let path = to.dir.join(format!("{}.log", uuid::Uuid::new_v4()));
        let opened = create_dir_private(&to.dir).and_then(|()| {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            options.open(&path)
        });
        let (file, error) = match opened {
            Ok(file) => (Some(file), None),
            Err(e) => (None, Some(e.to_string())),
        };
        Self {
            path,
            file,
            limit: to.limit,
            written: 0,
            dropped: 0,
            error,
        }
    }

    pub fn write(&mut self, data: &[u8]) {
        let room = usize::try_from(self.limit.saturating_sub(self.written)).unwrap_or(usize::MAX);
        let take = room.min(data.len());
        self.dropped += (data.len() - take) as u64;
        if take == 0 {
            return;
        }
        if let Some(file) = &mut self.file {
            match file.write_all(&data[..take]) {
                Ok(()) => self.written += take as u64,
                Err(e) => {
                    self.error = Some(e.to_string());
                    self.file = None;
                }
            }
        }
    }

    /// The line the result ends with: where the whole output is, or why it is not.
    pub fn note(&self) -> String {
        match &self.error {
            Some(e) => {
                format!("[the whole output could not be saved ({e}); only the part above is kept]")
            }
            None if self.dropped > 0 => format!(
                "[the first {} bytes of the output are saved in {} (tools.saved_output_limit_bytes); the {} bytes after them were not kept]",
                self.written,
                self.path.display(),
                self.dropped
            ),
            None => format!(
                "[the whole output ({} bytes) is saved in {}; read parts of it with read_file or grep]",
                self.written,
                self.path.display()
            ),
        }
    }
}

fn create_dir_private(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spill_keeps_what_fits_its_limit_and_says_what_it_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let to = SpillTo {
            dir: dir.path().join("tool-output/s"),
            limit: 10,
        };
        let mut spill = Spill::create(&to);
        spill.write(b"0123456");
        spill.write(b"789abcdef");
        let note = spill.note();
        let saved = std::fs::read(&spill.path).unwrap();
        assert_eq!(saved, b"0123456789");
        assert!(
            note.contains("first 10 bytes") && note.contains("the 6 bytes"),
            "{note}"
        );

        let mut whole = Spill::create(&SpillTo { limit: 100, ..to });
        whole.write(b"abc");
        assert!(
            whole.note().contains("whole output (3 bytes)"),
            "{}",
            whole.note()
        );
    }
}
