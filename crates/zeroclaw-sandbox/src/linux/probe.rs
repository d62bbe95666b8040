//! Finding what the kernel offers, by asking it and then by trying.
//!
//! Landlock's ABI and seccomp's filter mode are asked for directly. User namespaces are
//! tried: a distribution may allow `unshare(CLONE_NEWUSER)` yet refuse what follows
//! (Ubuntu's AppArmor lets the namespace be made and then denies mounts in it), so the
//! probe forks a child that applies a whole sandbox (namespace, covers, Landlock, seccomp)
//! and exits. If that fails, the same without a user namespace; if that fails too, the
//! sandbox is unavailable, with the step and the error that stopped it.

use std::io;

use super::{MAX_ABI, filter};
use crate::{Mode, Policy, Support};

/// `LANDLOCK_CREATE_RULESET_VERSION`: `landlock_create_ruleset` returns the ABI.
const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
/// The oldest ABI that can be enforced: ABI 3 (Linux 6.2) controls truncation; before it,
/// `truncate(2)` and `open(O_TRUNC)` could empty any readable file.
const MIN_ABI: u32 = 3;

pub(crate) fn probe() -> Support {
    let abi = match landlock_abi() {
        Ok(abi) => abi,
        Err(reason) => return Support::unavailable(reason),
    };
    if abi < MIN_ABI {
        return Support::unavailable(format!(
            "this kernel's Landlock ABI is {abi}; the sandbox needs ABI {MIN_ABI} (Linux 6.2), \
             the first that controls truncation"
        ));
    }
    if let Err(reason) = seccomp_filters() {
        return Support::unavailable(reason);
    }
    if filter::target_arch().is_err() {
        return Support::unavailable(format!(
            "the seccomp filters are not built for the {} architecture",
            std::env::consts::ARCH
        ));
    }
    let abi = abi.min(MAX_ABI);
    let with_userns = Support::available(abi, Ok(()));
    let Err(why) = trial(&with_userns) else {
        return with_userns;
    };
    let without = Support::available(abi, Err(why));
    match trial(&without) {
        Ok(()) => without,
        Err(why) => Support::unavailable(format!("a trial sandboxed process failed: {why}")),
    }
}

fn landlock_abi() -> Result<u32, String> {
    // SAFETY: the documented ABI query: NULL attributes, size 0, the version flag.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if v >= 0 {
        return u32::try_from(v).map_err(|_| "Landlock returned no ABI".to_string());
    }
    Err(match io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => {
            "Landlock is built into this kernel but not enabled (add `landlock` to the `lsm=` \
             boot parameter)"
                .to_string()
        }
        _ => "this kernel has no Landlock (Linux 6.2 or later with CONFIG_SECURITY_LANDLOCK is \
              needed)"
            .to_string(),
    })
}

fn seccomp_filters() -> Result<(), String> {
    let action: u32 = libc::SECCOMP_RET_ERRNO;
    // SAFETY: asks whether an action is available; reads the u32.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_GET_ACTION_AVAIL,
            0u32,
            &action as *const u32,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "this kernel has no seccomp filters (CONFIG_SECCOMP_FILTER): {}",
            io::Error::last_os_error()
        ))
    }
}

/// Applies a sandbox with `support` in a forked child; the step and error if it fails.
fn trial(support: &Support) -> Result<(), String> {
    let dir = tempfile::Builder::new()
        .prefix("zeroclaw-sandbox-probe-")
        .tempdir()
        .map_err(|e| format!("creating the probe's temp dir: {e}"))?;
    let work = dir.path().join("work");
    let hidden_dir = dir.path().join("hidden");
    let hidden_file = dir.path().join("hidden.sock");
    std::fs::create_dir(&work)
        .and_then(|()| std::fs::create_dir(&hidden_dir))
        .and_then(|()| std::fs::write(&hidden_file, b""))
        .map_err(|e| format!("creating the probe's files: {e}"))?;
    let policy = Policy::new(Mode::WorkspaceWrite, &work)
        .hide(&hidden_dir)
        .hide(&hidden_file);
    let prepared = policy.prepare(support).map_err(|e| e.to_string())?;
    let Some(setup) = prepared.setup() else {
        return Err("nothing was prepared".into());
    };
    // SAFETY: the child makes only async-signal-safe calls (`Setup::apply`, then `_exit`).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        let code = match setup.apply() {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(libc::EIO).clamp(1, 255),
        };
        // SAFETY: ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    loop {
        // SAFETY: waits for the child forked above.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(format!("waitpid: {e}"));
        }
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(());
    }
    let step = setup
        .failed_step()
        .unwrap_or_else(|| "an unknown step".into());
    if libc::WIFEXITED(status) {
        let errno = io::Error::from_raw_os_error(libc::WEXITSTATUS(status));
        Err(format!("{step}: {errno}"))
    } else {
        Err(format!("{step}: the child ended with wait status {status}"))
    }
}
