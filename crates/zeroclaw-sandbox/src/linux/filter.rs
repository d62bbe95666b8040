//! The seccomp programs: sockets and io_uring.
//!
//! | program  | when                                    | refuses                                 | errno          |
//! |----------|-----------------------------------------|-----------------------------------------|----------------|
//! | io_uring | always                                  | `io_uring_setup`, `_enter`, `_register` | `ENOSYS`       |
//! | sockets  | network off, user namespaces            | `socket()` of every family but AF_UNIX  | `EAFNOSUPPORT` |
//! | sockets  | network on, no user namespaces          | `socket(AF_UNIX)`                       | `EAFNOSUPPORT` |
//! | sockets  | network off, no user namespaces         | `socket()` of every family              | `EAFNOSUPPORT` |
//!
//! io_uring is refused because its requests (`IORING_OP_SOCKET`, `IORING_OP_CONNECT`) do not
//! pass through the system calls a filter sees; programs that use it fall back to plain
//! calls on `ENOSYS`. `EAFNOSUPPORT` ("Address family not supported by protocol") is what
//! a kernel without that family answers: programs handle it, and it is easy to recognise in
//! their output. Without user namespaces, Unix sockets go too, since nothing else keeps a
//! command from connecting to the daemon's socket (Landlock controls that only from ABI 9).
//! `socketpair` stays allowed: it reaches no one outside.
//!
//! Each program checks the architecture first and kills the process on a mismatch
//! (seccompiler's rule), so 32-bit system calls (`int 0x80` on x86-64, with their
//! `socketcall`) cannot go around it. x32 system calls share the x86-64 architecture value
//! with numbers offset by `0x4000_0000`, so each rule is repeated at that number too.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::Error;

/// The errno a refused `socket()` returns.
pub(crate) const SOCKET_ERRNO: i32 = libc::EAFNOSUPPORT;

/// The seccomp programs for a command, in install order.
pub(crate) fn programs(network: bool, userns: bool) -> Result<Vec<Vec<libc::sock_filter>>, Error> {
    let arch = target_arch()?;
    let mut programs = Vec::new();

    let mut io_uring = BTreeMap::new();
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        for n in numbers(nr) {
            io_uring.insert(n, Vec::new());
        }
    }
    programs.push(compile(io_uring, libc::ENOSYS, arch)?);

    // Which `socket()` calls are refused: none, all but AF_UNIX, only AF_UNIX, or all.
    let unix = u64::try_from(libc::AF_UNIX).unwrap_or_default();
    let rule = match (network, userns) {
        (true, true) => None,
        (false, true) => Some(vec![condition(SeccompCmpOp::Ne, unix)?]),
        (true, false) => Some(vec![condition(SeccompCmpOp::Eq, unix)?]),
        (false, false) => Some(Vec::new()),
    };
    if let Some(conditions) = rule {
        let mut sockets = BTreeMap::new();
        for n in numbers(libc::SYS_socket) {
            let chain = if conditions.is_empty() {
                Vec::new()
            } else {
                vec![SeccompRule::new(conditions.clone()).map_err(seccomp_error)?]
            };
            sockets.insert(n, chain);
        }
        programs.push(compile(sockets, SOCKET_ERRNO, arch)?);
    }
    Ok(programs)
}

/// The architecture the programs are built for: this build's.
pub(crate) fn target_arch() -> Result<TargetArch, Error> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(seccomp_error)
}

/// A condition on `socket()`'s first argument (the family, an `int`).
fn condition(op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, Error> {
    SeccompCondition::new(0, SeccompCmpArgLen::Dword, op, value).map_err(seccomp_error)
}

/// The numbers a system call can be made with: its own, and on x86-64 its x32 one.
fn numbers(nr: libc::c_long) -> Vec<i64> {
    // `c_long` is `i64` on every architecture seccompiler builds for, `i32` elsewhere.
    #[allow(clippy::useless_conversion)]
    let nr = i64::from(nr);
    if cfg!(target_arch = "x86_64") {
        vec![nr, nr | 0x4000_0000]
    } else {
        vec![nr]
    }
}

/// A program that answers `errno` to the calls `rules` match and allows the rest.
fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<Vec<libc::sock_filter>, Error> {
    let errno = u32::try_from(errno).map_err(seccomp_error)?;
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .map_err(seccomp_error)?;
    let program: BpfProgram = filter.try_into().map_err(seccomp_error)?;
    // seccompiler's `sock_filter` has libc's layout; copied field by field, no transmute.
    Ok(program
        .into_iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect())
}

fn seccomp_error(e: impl std::fmt::Display) -> Error {
    Error::Seccomp(e.to_string())
}
