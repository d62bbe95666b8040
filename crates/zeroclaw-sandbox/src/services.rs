//! Local services that run commands for whoever connects: to be hidden like the daemon's
//! own socket.
//!
//! Landlock (before ABI 9) does not control `connect()` to a pathname Unix socket, and the
//! sandbox keeps `AF_UNIX` where a user namespace can hide the daemon's socket. So any
//! other socket stays reachable, and some of them are ways out: `systemd-run --user` over
//! the session bus, `tmux new-window`, `docker run -v /:/host`, the system bus and systemd's
//! private socket for a root daemon. Hiding them (a cover in the child's mount namespace)
//! closes those doors; this list is the well-known ones, not a proof that none is left
//! (docs/sandbox.md, "Limits").
//!
//! A directory is listed rather than the socket in it where the directory is the service's
//! own: a socket file is covered by a bind mount on its path, and the kernel lifts mounts
//! from a path that is unlinked, so a service that re-creates its socket while a sandboxed
//! process lives would be reachable again. A covered directory stays covered.

use std::path::PathBuf;

/// The well-known service sockets and socket directories that exist on this machine, for
/// [`crate::Policy::hidden`]: the user's runtime dir (`$XDG_RUNTIME_DIR`: session bus,
/// systemd, podman, gpg-agent), `$SSH_AUTH_SOCK`, tmux's and screen's socket dirs, the
/// container engines' sockets, the system bus, systemd's private socket, snapd, libvirt and
/// LXD. Only existing paths are returned; a hidden path that does not exist is skipped by
/// `prepare` anyway unless a command could create it.
pub fn service_sockets() -> Vec<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: geteuid cannot fail.
        let uid = unsafe { libc::geteuid() };
        let env = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let mut paths: Vec<PathBuf> = Vec::new();
        paths.push(
            env("XDG_RUNTIME_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from(format!("/run/user/{uid}"))),
        );
        if let Some(sock) = env("SSH_AUTH_SOCK") {
            // OpenSSH's agent makes a directory of its own (`/tmp/ssh-XXXX/agent.N`): hiding
            // the directory keeps a re-created socket hidden too (see the module doc).
            let sock = PathBuf::from(sock);
            let own_dir = sock.parent().filter(|d| {
                d.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("ssh-"))
            });
            paths.push(own_dir.map_or(sock.clone(), PathBuf::from));
        }
        let tmux_base = env("TMUX_TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
        paths.push(tmux_base.join(format!("tmux-{uid}")));
        for fixed in [
            "/run/screen",
            "/var/run/screen",
            "/run/docker.sock",
            "/var/run/docker.sock",
            "/run/containerd",
            "/run/podman",
            "/run/crio",
            "/run/dbus/system_bus_socket",
            "/var/run/dbus/system_bus_socket",
            "/run/systemd/private",
            "/run/snapd.socket",
            "/run/snapd-snap.socket",
            "/run/libvirt",
            "/var/snap/lxd/common/lxd/unix.socket",
            "/var/lib/lxd/unix.socket",
        ] {
            paths.push(fixed.into());
        }
        paths.retain(|p| p.is_absolute() && std::fs::symlink_metadata(p).is_ok());
        paths
    }
    // Elsewhere there is no sandbox to hide anything from.
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}
