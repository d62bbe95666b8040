//! Reading the shadow index (git's `index` file, versions 2 to 4): each entry's mode,
//! object id and path, in the index's order, for the trees, and its cached `lstat` data,
//! for the walk. Only what this crate's own
//! git writes is understood; anything else (a split or sparse index, an unknown version, a
//! merge stage) is `None`, and the caller lets git do the work instead. And writing one
//! (version 2, no extensions), for a snapshot that staged its changes here (`stage.rs`).
//!
//! The format: <https://git-scm.com/docs/index-format>.

/// One index entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// Git's mode bits: `0o100644`, `0o100755`, `0o120000` (a symlink), `0o160000`.
    pub mode: u32,
    pub oid: [u8; 20],
    pub path: Vec<u8>,
    /// The file's `lstat` when git last looked, as git keeps it (32 bits a field).
    pub stat: Stat,
}

/// The `lstat` data git caches per entry (`ctime` and `mtime` in seconds and nanoseconds;
/// `size` is truncated to 32 bits, as git stores it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Stat {
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    /// Kept, not compared: git does not compare it (unless built with USE_STDEV).
    pub dev: u32,
    pub ino: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u32,
}

/// The entries of an index file's bytes, or `None` if they are not an index this reader
/// understands whole.
pub(crate) fn entries(bytes: &[u8]) -> Option<Vec<Entry>> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != b"DIRC" {
        return None;
    }
    let version = r.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = r.u32()? as usize;
    // Each entry takes at least 62 bytes: a count the file cannot hold is damage.
    if count > bytes.len() / 62 {
        return None;
    }
    let mut entries = Vec::with_capacity(count);
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        let start = r.at;
        let ctime = (r.u32()?, r.u32()?);
        let mtime = (r.u32()?, r.u32()?);
        let dev = r.u32()?;
        let ino = r.u32()?;
        let mode = r.u32()?;
        let (uid, gid, size) = (r.u32()?, r.u32()?, r.u32()?);
        let stat = Stat {
            ctime,
            mtime,
            dev,
            ino,
            uid,
            gid,
            size,
        };
        let oid: [u8; 20] = r.take(20)?.try_into().ok()?;
        let flags = r.u16()?;
        if flags & 0x3000 != 0 {
            return None; // a merge stage: never in our index
        }
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            let extended = r.u16()?;
            if extended & 0x2000 != 0 {
                return None; // intent-to-add: `write-tree` leaves such entries out
            }
        }
        let path = if version == 4 {
            let strip = r.varint()?;
            let kept = previous.len().checked_sub(strip)?;
            let mut path = previous[..kept].to_vec();
            path.extend_from_slice(r.until_nul()?);
            path
        } else {
            let path = r.until_nul()?.to_vec();
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes (the NUL read
            // above is the first of them).
            let len = r.at - start;
            r.take((8 - len % 8) % 8)?;
            path
        };
        if !matches!(mode, 0o100644 | 0o100755 | 0o120000 | 0o160000) {
            return None; // a sparse directory entry, or something newer
        }
        previous.clone_from(&path);
        entries.push(Entry {
            mode,
            oid,
            path,
            stat,
        });
    }
    // Extensions follow; a split index's `link` means the entries above are not all.
    while r.bytes.len() - r.at > 20 {
        let signature = r.take(4)?;
        if signature == b"link" || signature == b"sdir" {
            return None;
        }
        let size = r.u32()? as usize;
        r.take(size)?;
    }
    Some(entries)
}

/// An index file (version 2, no extensions) holding `entries`, which must be in the
/// index's order (by path, bytewise) with no path twice. Without extensions git has no
/// cached trees to trust, so nothing stale can outlive the entries written here.
#[cfg_attr(not(unix), allow(dead_code))] // staging here is Unix only
pub(crate) fn encode(entries: &[Entry]) -> Vec<u8> {
    use sha1::{Digest, Sha1};
    let size: usize = entries.iter().map(|e| 70 + e.path.len()).sum();
    let mut out = Vec::with_capacity(12 + size + 20);
    out.extend_from_slice(b"DIRC");
    out.extend_from_slice(&2u32.to_be_bytes());
    // An index holds far fewer than 2^32 entries (`Options::max_files` caps a workspace).
    out.extend_from_slice(
        &u32::try_from(entries.len())
            .unwrap_or(u32::MAX)
            .to_be_bytes(),
    );
    for e in entries {
        let start = out.len();
        let s = &e.stat;
        for field in [
            s.ctime.0, s.ctime.1, s.mtime.0, s.mtime.1, s.dev, s.ino, e.mode, s.uid, s.gid, s.size,
        ] {
            out.extend_from_slice(&field.to_be_bytes());
        }
        out.extend_from_slice(&e.oid);
        // The flags: stage 0, no extended flags, the name's length (0xfff when longer).
        let flags = u16::try_from(e.path.len().min(0xfff)).unwrap_or(0xfff);
        out.extend_from_slice(&flags.to_be_bytes());
        out.extend_from_slice(&e.path);
        // 1 to 8 NULs, to a multiple of 8 bytes.
        let len = out.len() - start;
        out.resize(out.len() + 8 - len % 8, 0);
    }
    let checksum: [u8; 20] = Sha1::digest(&out).into();
    out.extend_from_slice(&checksum);
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n)?;
        let out = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }

    /// The bytes up to the next NUL, which is consumed.
    fn until_nul(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let len = rest.iter().position(|&b| b == 0)?;
        self.at += len + 1;
        Some(&rest[..len])
    }

    /// Git's offset varint (each continuation adds one before shifting).
    fn varint(&mut self) -> Option<usize> {
        let mut byte = *self.take(1)?.first()?;
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = *self.take(1)?.first()?;
            value = value
                .checked_add(1)?
                .checked_shl(7)?
                .checked_add(usize::from(byte & 0x7f))?;
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn truncated_or_foreign_bytes_are_not_an_index() {
        assert_eq!(entries(b""), None);
        assert_eq!(entries(b"DIRC\0\0\0\x05\0\0\0\0"), None);
        assert_eq!(entries(b"DIRC\0\0\0\x04\0\0\0\x01"), None);
        assert_eq!(
            entries(b"DIRC\0\0\0\x04\0\0\0\0"),
            Some(Vec::new()),
            "an empty index"
        );
    }

    /// Every version git writes reads as `git ls-files -s` lists it (where git runs).
    #[test]
    fn each_index_version_reads_as_git_lists_it() {
        let Ok(dir) = tempfile::tempdir() else { return };
        let git = |args: &[&str]| {
            std::process::Command::new("git")
                .current_dir(dir.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .args(args)
                .output()
        };
        if !git(&["init", "-q"]).is_ok_and(|o| o.status.success()) {
            eprintln!("SKIPPED: no git here");
            return;
        }
        let long = format!("{0}/{0}", "n".repeat(250));
        for path in ["a.b", "a/x", "a0", "d/é space", &format!("d/{long}")] {
            let full = dir.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(&full, path).unwrap();
        }
        for version in ["2", "3", "4"] {
            let _ = std::fs::remove_file(dir.path().join(".git/index"));
            let config = format!("index.version={version}");
            assert!(git(&["-c", &config, "add", "-A"]).unwrap().status.success());
            let listed = git(&["ls-files", "-s", "-z"]).unwrap().stdout;
            let expected: Vec<String> = listed
                .split(|&b| b == 0)
                .filter(|l| !l.is_empty())
                .map(|l| String::from_utf8_lossy(l).into_owned())
                .collect();
            let bytes = std::fs::read(dir.path().join(".git/index")).unwrap();
            let read: Vec<String> = entries(&bytes)
                .unwrap()
                .iter()
                .map(|e| {
                    let oid: String = e.oid.iter().map(|b| format!("{b:02x}")).collect();
                    format!("{:o} {oid} 0\t{}", e.mode, String::from_utf8_lossy(&e.path))
                })
                .collect();
            assert_eq!(read, expected, "index version {version}");
        }
    }

    fn entry(path: &str, mode: u32, seed: u32) -> Entry {
        Entry {
            mode,
            oid: [seed as u8; 20],
            path: path.as_bytes().to_vec(),
            stat: Stat {
                ctime: (seed, seed + 1),
                mtime: (seed + 2, seed + 3),
                dev: seed + 4,
                ino: seed + 5,
                uid: seed + 6,
                gid: seed + 7,
                size: seed + 8,
            },
        }
    }

    #[test]
    fn an_encoded_index_reads_back_whole() {
        let long = "l".repeat(5000);
        let written = vec![
            entry("a", 0o100644, 1),
            entry("a.b", 0o100755, 2),
            entry("a/x", 0o120000, 3),
            entry("abcdefg", 0o100644, 4),
            entry(&long, 0o100644, 5),
        ];
        assert_eq!(entries(&encode(&written)), Some(written.clone()));
        assert_eq!(entries(&encode(&[])), Some(Vec::new()));
    }

    /// Git takes the index written here: `git ls-files -s` lists it, `git write-tree`
    /// writes the tree of its entries and `git fsck` finds nothing wrong with it.
    #[test]
    fn git_reads_an_encoded_index() {
        let Ok(dir) = tempfile::tempdir() else { return };
        let git = |args: &[&str], input: Option<&[u8]>| {
            use std::io::Write;
            let mut child = std::process::Command::new("git")
                .current_dir(dir.path())
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .args(args)
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()?;
            let mut stdin = child.stdin.take().unwrap();
            stdin.write_all(input.unwrap_or_default())?;
            drop(stdin);
            child.wait_with_output()
        };
        if !git(&["init", "-q"], None).is_ok_and(|o| o.status.success()) {
            eprintln!("SKIPPED: no git here");
            return;
        }
        let hash = |content: &str| {
            let out = git(&["hash-object", "-w", "--stdin"], Some(content.as_bytes())).unwrap();
            let hex = String::from_utf8(out.stdout).unwrap();
            let mut oid = [0u8; 20];
            for (i, byte) in oid.iter_mut().enumerate() {
                *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap();
            }
            oid
        };
        let long = format!("d/{}", "n".repeat(4200));
        let mut written = Vec::new();
        for (path, mode) in [
            ("a.b", 0o100644),
            ("a/x", 0o100755),
            ("a0", 0o120000),
            (long.as_str(), 0o100644),
            ("d/é space", 0o100644),
        ] {
            let mut e = entry(path, mode, 9);
            e.oid = hash(path);
            written.push(e);
        }
        std::fs::write(dir.path().join(".git/index"), encode(&written)).unwrap();
        let listed = git(&["ls-files", "-s", "-z"], None).unwrap();
        assert!(listed.status.success(), "{listed:?}");
        let expected: Vec<String> = written
            .iter()
            .map(|e| {
                let oid: String = e.oid.iter().map(|b| format!("{b:02x}")).collect();
                format!("{:o} {oid} 0\t{}", e.mode, String::from_utf8_lossy(&e.path))
            })
            .collect();
        let got: Vec<String> = listed
            .stdout
            .split(|&b| b == 0)
            .filter(|l| !l.is_empty())
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect();
        assert_eq!(got, expected);
        let tree = git(&["write-tree"], None).unwrap();
        assert!(tree.status.success(), "{tree:?}");
        let fsck = git(&["fsck"], None).unwrap();
        assert!(fsck.status.success(), "{fsck:?}");
    }

    #[test]
    fn varints_read_as_git_writes_them() {
        let mut r = Reader {
            bytes: &[0x00, 0x7f, 0x80, 0x00, 0x81, 0x7f],
            at: 0,
        };
        assert_eq!(r.varint(), Some(0));
        assert_eq!(r.varint(), Some(127));
        assert_eq!(r.varint(), Some(128));
        assert_eq!(r.varint(), Some(((1 + 1) << 7) + 127));
        assert_eq!(r.varint(), None);
    }
}
