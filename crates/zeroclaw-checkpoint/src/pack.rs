//! Writing objects into the repository as one pack (a `.pack` and its `.idx`, version 2),
//! as `git index-pack` would leave them: two files however many objects, where loose
//! objects take a file (and often a directory) each.
//!
//! The formats: <https://git-scm.com/docs/pack-format>. Objects are stored whole (no
//! deltas), zlib-compressed; the pack is written under a temporary name and renamed into
//! place before its index, so git never finds an index without its pack.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::ZlibEncoder;
use sha1::{Digest, Sha1};

/// An object's id (SHA-1).
pub(crate) type Oid = [u8; 20];

/// Git's object types, as a pack numbers them.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Kind {
    Tree = 2,
    #[cfg_attr(not(unix), allow(dead_code))] // staging here is Unix only
    Blob = 3,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Tree => "tree",
            Kind::Blob => "blob",
        }
    }
}

/// The id git gives an object of `kind` with these bytes.
pub(crate) fn oid(kind: Kind, content: &[u8]) -> Oid {
    let mut hash = Sha1::new();
    hash.update(format!("{} {}\0", kind.name(), content.len()));
    hash.update(content);
    hash.finalize().into()
}

/// Writes `objects` (id, kind, bytes; no id twice) as a new pack in `objects_dir/pack`.
/// Nothing is written for none.
pub(crate) fn write(objects_dir: &Path, objects: &[(Oid, Kind, Vec<u8>)]) -> std::io::Result<()> {
    if objects.is_empty() {
        return Ok(());
    }
    let count = u32::try_from(objects.len()).map_err(|_| too_large())?;
    let mut pack = Vec::new();
    pack.extend_from_slice(b"PACK");
    pack.extend_from_slice(&2u32.to_be_bytes());
    pack.extend_from_slice(&count.to_be_bytes());
    // (id, crc32 of its packed bytes, offset), for the index.
    let mut entries: Vec<(Oid, u32, u32)> = Vec::with_capacity(objects.len());
    for (id, kind, content) in objects {
        let offset = u32::try_from(pack.len())
            .ok()
            .filter(|o| o & 0x8000_0000 == 0)
            .ok_or_else(too_large)?;
        let start = pack.len();
        header(&mut pack, *kind, content.len());
        let mut zlib = ZlibEncoder::new(std::mem::take(&mut pack), Compression::fast());
        zlib.write_all(content)?;
        pack = zlib.finish()?;
        entries.push((*id, crc32fast::hash(&pack[start..]), offset));
    }
    let checksum: Oid = Sha1::digest(&pack).into();
    pack.extend_from_slice(&checksum);
    entries.sort_unstable_by_key(|e| e.0);
    let idx = index(&entries, &checksum);

    let dir = objects_dir.join("pack");
    let name = hex(&checksum);
    let pack_path = dir.join(format!("pack-{name}.pack"));
    let idx_path = dir.join(format!("pack-{name}.idx"));
    place(&dir, &pack_path, &pack)?;
    place(&dir, &idx_path, &idx)
}

/// A pack entry's header: the type and the inflated size, seven bits a byte after the first
/// four.
fn header(out: &mut Vec<u8>, kind: Kind, size: usize) {
    let mut byte = ((kind as u8) << 4) | (size & 0x0f) as u8;
    let mut rest = size >> 4;
    while rest > 0 {
        out.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    out.push(byte);
}

/// The version 2 index of a pack whose entries are `entries`, sorted by id.
fn index(entries: &[(Oid, u32, u32)], pack_checksum: &Oid) -> Vec<u8> {
    let mut idx = Vec::with_capacity(8 + 256 * 4 + entries.len() * 28 + 40);
    idx.extend_from_slice(&[0xff, b't', b'O', b'c']);
    idx.extend_from_slice(&2u32.to_be_bytes());
    // The fan-out table: how many ids start with a byte up to each value.
    let mut counts = [0u32; 256];
    for (id, _, _) in entries {
        counts[usize::from(id[0])] += 1;
    }
    let mut below = 0u32;
    for count in counts {
        below += count;
        idx.extend_from_slice(&below.to_be_bytes());
    }
    for (id, _, _) in entries {
        idx.extend_from_slice(id);
    }
    for (_, crc, _) in entries {
        idx.extend_from_slice(&crc.to_be_bytes());
    }
    for (_, _, offset) in entries {
        idx.extend_from_slice(&offset.to_be_bytes());
    }
    idx.extend_from_slice(pack_checksum);
    let own: Oid = Sha1::digest(&idx).into();
    idx.extend_from_slice(&own);
    idx
}

/// Writes `bytes` to `path` by way of a temporary file in `dir`, read-only as git leaves
/// its packs. Not synced, as git does not sync loose objects by default: a process killed
/// at any point leaves either the whole file or none, and only a power loss could cut one
/// short (the store then reports itself damaged, and the next snapshot after `remove`
/// starts afresh). An existing file of that name (the same objects
/// packed before: the name is the contents' hash) is left as it is.
fn place(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if path.exists() {
        return Ok(());
    }
    let temporary: PathBuf = dir.join(format!(
        "tmp_zeroclaw_{}_{}",
        std::process::id(),
        path.extension().and_then(|e| e.to_str()).unwrap_or("pack")
    ));
    let written = (|| {
        let mut file = std::fs::File::create(&temporary)?;
        file.write_all(bytes)?;
        let mut permissions = file.metadata()?.permissions();
        permissions.set_readonly(true);
        std::fs::set_permissions(&temporary, permissions)?;
        std::fs::rename(&temporary, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

fn too_large() -> std::io::Error {
    std::io::Error::other("the pack would pass 2 GiB")
}

pub(crate) fn hex(id: &Oid) -> String {
    use std::fmt::Write as _;
    id.iter().fold(String::with_capacity(40), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_tree_has_git_s_id() {
        assert_eq!(
            hex(&oid(Kind::Tree, b"")),
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        );
    }

    #[test]
    fn sizes_are_encoded_four_bits_then_seven() {
        let mut out = Vec::new();
        header(&mut out, Kind::Tree, 15);
        assert_eq!(out, [0x2f]);
        out.clear();
        header(&mut out, Kind::Tree, 16);
        assert_eq!(out, [0xa0, 0x01]);
        out.clear();
        header(&mut out, Kind::Tree, 3000);
        assert_eq!(out, [0xa8, 0xbb, 0x01]);
    }
}
