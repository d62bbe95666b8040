//! The open-file limit, and how many connections fit under it.
//!
//! Each connection is a descriptor. Past the process's limit, `accept` fails with EMFILE
//! and a client waits in the listen backlog with no answer; capped below the limit, the
//! extra client is accepted and told `-32001` instead.

/// Descriptors kept back for everything but connections: the store's files, bash's pipes,
/// provider sockets, the runtime's own. Half the limit when the limit is below twice this.
#[cfg(unix)]
const RESERVE: u64 = 64;

/// Raises the soft open-file limit to the hard one, then returns `max_connections`, or the
/// limit minus the reserve where that is lower, logging the effective cap.
pub(super) fn connection_cap(max_connections: usize) -> usize {
    #[cfg(unix)]
    {
        let Some(files) = raise_soft_limit() else {
            tracing::info!(max_connections, "no open-file limit");
            return max_connections;
        };
        let usable = files - RESERVE.min(files / 2);
        let cap = usize::try_from(usable)
            .map_or(max_connections, |u| u.min(max_connections))
            .max(1);
        if cap < max_connections {
            tracing::warn!(
                max_connections = cap,
                configured = max_connections,
                open_files = files,
                reserve = files - usable,
                "connections capped by the open-file limit (raise it with `ulimit -n`)"
            );
        } else {
            tracing::info!(
                max_connections = cap,
                open_files = files,
                "connection limit"
            );
        }
        cap
    }
    #[cfg(windows)]
    {
        max_connections
    }
}

/// Sets the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force
/// (`None`: unlimited). A refusal (macOS caps an unlimited hard limit) keeps the old one.
#[cfg(unix)]
fn raise_soft_limit() -> Option<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current == limit.maximum {
        return limit.current;
    }
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => {
            tracing::info!(
                from = limit.current,
                to = limit.maximum,
                "raised the open-file limit to its hard limit"
            );
            limit.maximum
        }
        Err(e) => {
            tracing::warn!(error = %e, soft = limit.current, "could not raise the open-file limit");
            limit.current
        }
    }
}
