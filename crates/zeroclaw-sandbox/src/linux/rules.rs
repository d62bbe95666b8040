//! The Landlock ruleset: what a command may read, write and execute.
//!
//! Every file access right of the ABI is handled, so whatever no rule grants is denied.
//! Rules are hierarchical (a right granted on a directory holds for everything beneath it)
//! and cannot subtract, so a directory that must stay out of reach is excluded *by
//! construction*: its ancestors get only the right to be listed, and each of their other
//! entries gets the full grant, down the path to it.
//!
//! | grant                     | where                                              | rights                          |
//! |---------------------------|----------------------------------------------------|---------------------------------|
//! | read cover                | `/`, built around `/dev` (and the hidden paths)    | execute, read file, read dir    |
//! | devices                   | `/dev/{null,zero,full,random,urandom}`             | read, write, truncate           |
//! | writable set              | temp dir; cwd and writable roots (workspace-write) | read cover's + every write right but device nodes and device ioctl |
//!
//! `/` is always built around `/dev` (so an entry created in `/` later is not readable).
//! Without a user namespace, both grants are also built around the hidden paths, listing
//! each of their ancestors; with one, the hidden paths are covered by mounts in the child
//! (an empty read-only tmpfs, `/dev/null` over the socket), so plain grants are safe and
//! much cheaper.
//!
//! Network (ABI 4+, network off): TCP bind and connect are handled with no rule, so both are
//! denied; the seccomp filter already refuses the sockets, this is a second fence. Scopes
//! (ABI 6+): signals and abstract Unix sockets stay inside the sandbox. Ptrace of anything
//! outside the sandbox is denied by Landlock at every ABI.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope,
};
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};

use crate::Error;
use crate::plan::Plan;
use crate::refusal::DEVICES;

/// The ruleset for `plan` at Landlock ABI `abi` (3 to 7), as an fd for the child.
pub(crate) fn ruleset(plan: &Plan, abi: u32, userns: bool) -> Result<OwnedFd, Error> {
    let abi = match abi {
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    };
    let read = AccessFs::from_read(abi);
    let write = AccessFs::from_write(abi)
        & !(AccessFs::MakeChar | AccessFs::MakeBlock | AccessFs::IoctlDev);
    let mut rules = Rules {
        hidden: &plan.hidden,
        file_rights: AccessFs::from_file(abi),
        out: Vec::new(),
    };
    // With a user namespace the hidden paths are covered by mounts in the child, so the
    // rules need not go around them (and listing every ancestor of theirs, `/tmp` or a
    // crowded home directory, would cost a system call or three per entry per command).
    let around_hidden = !userns;
    rules.grant(Path::new("/"), read, around_hidden)?;
    for dir in &plan.writable {
        rules.grant(dir, read | write, around_hidden)?;
    }

    // HardRequirement: every right asked for is enforced, or the ruleset is refused, never
    // quietly weakened.
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(landlock_error)?;
    if !plan.network && abi >= ABI::V4 {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(landlock_error)?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset
            .scope(Scope::from_all(abi))
            .map_err(landlock_error)?;
    }
    let mut created = ruleset.create().map_err(landlock_error)?;
    for (fd, access) in rules.out {
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(landlock_error)?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| Error::Landlock("the kernel returned no ruleset".into()))
}

fn landlock_error(e: impl std::fmt::Display) -> Error {
    Error::Landlock(e.to_string())
}

struct Rules<'a> {
    hidden: &'a [PathBuf],
    /// The rights a rule on a non-directory may carry.
    file_rights: BitFlags<AccessFs>,
    out: Vec<(OwnedFd, BitFlags<AccessFs>)>,
}

impl Rules<'_> {
    /// Grants `access` beneath `path` (canonical, existing), around the hidden paths when
    /// `around_hidden`; `/` is always built around `/dev` too.
    fn grant(
        &mut self,
        path: &Path,
        access: BitFlags<AccessFs>,
        around_hidden: bool,
    ) -> Result<(), Error> {
        // No symlink anywhere on the way: the path was canonical a moment ago, and one
        // swapped in since must not redirect the grant.
        let fd = rustix::fs::openat2(
            rustix::fs::CWD,
            path,
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::NO_SYMLINKS,
        )
        .map_err(|e| Error::Setup {
            what: format!("opening {} for a Landlock rule", path.display()),
            source: e.into(),
        })?;
        self.grant_fd(path, fd, access, around_hidden);
        Ok(())
    }

    fn grant_fd(
        &mut self,
        path: &Path,
        fd: OwnedFd,
        access: BitFlags<AccessFs>,
        around_hidden: bool,
    ) {
        if self.hidden.iter().any(|h| path.starts_with(h)) {
            return;
        }
        let Ok(stat) = rustix::fs::fstat(&fd) else {
            return;
        };
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Directory => {}
            FileType::Symlink => return,
            _ => {
                self.push(fd, access & self.file_rights);
                return;
            }
        }
        let is_root = path == Path::new("/");
        let holds_hidden = around_hidden
            && self
                .hidden
                .iter()
                .any(|h| h.starts_with(path) && h.as_path() != path);
        if !is_root && !holds_hidden {
            self.push(fd, access);
            return;
        }
        for name in entries(&fd) {
            let child = path.join(&name);
            if is_root && name == "dev" {
                if let Some(dev) = open_entry(&fd, &name) {
                    self.devices(dev, access);
                }
                continue;
            }
            if let Some(child_fd) = open_entry(&fd, &name) {
                self.grant_fd(&child, child_fd, access, around_hidden);
            }
        }
        // The directory itself: only its listing, which holds for everything beneath it.
        self.push(fd, access & AccessFs::ReadDir);
    }

    /// `/dev`: listing it, and the harmless devices.
    fn devices(&mut self, dev: OwnedFd, access: BitFlags<AccessFs>) {
        for device in DEVICES {
            let Some(name) = device.strip_prefix("/dev/") else {
                continue;
            };
            let Some(fd) = open_entry(&dev, OsStr::new(name)) else {
                continue;
            };
            if rustix::fs::fstat(&fd)
                .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::CharacterDevice)
            {
                let rights = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate;
                self.push(fd, rights & self.file_rights);
            }
        }
        self.push(dev, access & AccessFs::ReadDir);
    }

    fn push(&mut self, fd: OwnedFd, access: BitFlags<AccessFs>) {
        if !access.is_empty() {
            self.out.push((fd, access));
        }
    }
}

/// The names in the directory `dir` (an `O_PATH` fd), `.` and `..` left out. An unreadable
/// directory has none: nothing under it is granted.
fn entries(dir: &OwnedFd) -> Vec<std::ffi::OsString> {
    let Ok(listing) = rustix::fs::openat(
        dir,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return Vec::new();
    };
    let Ok(mut reader) = rustix::fs::Dir::new(listing) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    while let Some(Ok(entry)) = reader.read() {
        let name = entry.file_name().to_bytes();
        if name != b"." && name != b".." {
            names.push(OsStr::from_bytes(name).to_os_string());
        }
    }
    names
}

/// `name` in `dir`, opened without following a symlink (a symlink's own fd is returned and
/// then skipped by its type).
fn open_entry(dir: &impl AsFd, name: &OsStr) -> Option<OwnedFd> {
    rustix::fs::openat(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()
}
