//! Reading file contents out of the shadow repository: one `git cat-file --batch` for a
//! whole restore, each blob streamed to its destination (never held whole in memory).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use crate::error::Error;
use crate::git::{Context, Git};

pub(crate) struct Blobs {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Blobs {
    pub(crate) fn start(git: &Git, ctx: &Context) -> Result<Self, Error> {
        let mut cmd = git.command(ctx, ["cat-file", "--batch"]);
        cmd.stdin(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::io("start git cat-file in", &ctx.git_dir, e))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::io(
                "start git cat-file in",
                &ctx.git_dir,
                std::io::Error::other("no pipes"),
            ));
        };
        Ok(Self {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
        })
    }

    /// Copies blob `oid` into `out`; returns its size.
    pub(crate) fn copy(&mut self, oid: &str, out: &mut impl Write) -> std::io::Result<u64> {
        let size = self.request(oid)?;
        let copied = std::io::copy(&mut (&mut self.stdout).take(size), out)?;
        if copied != size {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("git cat-file ended inside object {oid}"),
            ));
        }
        let mut newline = [0u8; 1];
        self.stdout.read_exact(&mut newline)?;
        Ok(size)
    }

    /// Blob `oid` whole, for small ones (symlink targets, comparisons); `None` when it is
    /// larger than `limit`.
    pub(crate) fn read(&mut self, oid: &str, limit: u64) -> std::io::Result<Option<Vec<u8>>> {
        let mut out = Vec::new();
        let size = self.request(oid)?;
        if size > limit {
            std::io::copy(&mut (&mut self.stdout).take(size + 1), &mut std::io::sink())?;
            return Ok(None);
        }
        (&mut self.stdout).take(size).read_to_end(&mut out)?;
        let mut newline = [0u8; 1];
        self.stdout.read_exact(&mut newline)?;
        Ok(Some(out))
    }

    /// Asks for `oid` and reads its header: `<oid> blob <size>`.
    fn request(&mut self, oid: &str) -> std::io::Result<u64> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::other("git cat-file is closed"))?;
        stdin.write_all(oid.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()?;
        let mut header = String::new();
        self.stdout.read_line(&mut header)?;
        let mut parts = header.split_whitespace();
        match (parts.next(), parts.next(), parts.next()) {
            (Some(_), Some("blob"), Some(size)) => size
                .parse()
                .map_err(|_| std::io::Error::other(format!("git cat-file said {header:?}"))),
            _ => Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "object {oid} cannot be read from the checkpoint store (git cat-file said {:?})",
                    header.trim()
                ),
            )),
        }
    }
}

impl Drop for Blobs {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = std::io::copy(&mut self.stdout, &mut std::io::sink());
        let _ = self.child.wait();
    }
}
