//! Help text that differs by platform: where the endpoint is, and how to reach it by hand
//! (a Unix socket and `socat`, or a named pipe and PowerShell). Issue 12, defect 4: Windows
//! showed `<data dir>/daemon.sock` and `socat UNIX-CONNECT` advice.

#[cfg(unix)]
pub const LONG_ABOUT: &str = "zeroclaw runs an AI agent as a local daemon. Clients talk to it with \
JSON-RPC 2.0 over NDJSON on a Unix socket.\n\n\
The endpoint is <data dir>/daemon.sock, where the data dir is <config dir>/data and the config \
dir is --config-dir, $ZEROCLAW_CONFIG_DIR or ~/.zeroclaw. $ZEROCLAW_DATA_DIR overrides the data \
dir and $ZEROCLAW_SOCKET the endpoint itself. The provider is set in <config dir>/config.toml.";

#[cfg(windows)]
pub const LONG_ABOUT: &str = "zeroclaw runs an AI agent as a local daemon. Clients talk to it with \
JSON-RPC 2.0 over NDJSON on a named pipe.\n\n\
The endpoint is the pipe \\\\.\\pipe\\zeroclaw-<hash of the data dir>, where the data dir is \
<config dir>\\data and the config dir is --config-dir, %ZEROCLAW_CONFIG_DIR% or \
%USERPROFILE%\\.zeroclaw (`zeroclaw endpoint` prints the pipe's name). %ZEROCLAW_DATA_DIR% \
overrides the data dir and %ZEROCLAW_SOCKET% the endpoint itself, which must be a pipe name \
(\\\\.\\pipe\\NAME, at most 256 characters). The provider is set in <config dir>\\config.toml.";

#[cfg(unix)]
pub const EXAMPLES: &str = "Examples:\n  zeroclaw daemon                       # run the daemon in the foreground\n  zeroclaw prompt \"what is in this directory?\"\n  zeroclaw status\n  socat - UNIX-CONNECT:$(zeroclaw endpoint)\n  zeroclaw stop";

#[cfg(windows)]
pub const EXAMPLES: &str = "Examples:\n  zeroclaw daemon                       # run the daemon in the foreground\n  zeroclaw prompt \"what is in this directory?\"\n  zeroclaw status\n  zeroclaw call status                  # one raw JSON-RPC call over the pipe\n  zeroclaw stop";

#[cfg(unix)]
pub const DAEMON_EXAMPLES: &str = "Examples:\n  zeroclaw daemon\n  ZEROCLAW_SOCKET=/tmp/zc.sock zeroclaw daemon\n  RUST_LOG=debug zeroclaw daemon --config-dir ./dev-config";

#[cfg(windows)]
pub const DAEMON_EXAMPLES: &str = "Examples:\n  zeroclaw daemon\n  $env:ZEROCLAW_SOCKET = '\\\\.\\pipe\\my-zeroclaw'; zeroclaw daemon     # PowerShell\n  set ZEROCLAW_SOCKET=\\\\.\\pipe\\my-zeroclaw && zeroclaw daemon          # cmd\n  $env:RUST_LOG = 'debug'; zeroclaw daemon --config-dir .\\dev-config";

#[cfg(unix)]
pub const ENDPOINT_EXAMPLE: &str = "Example:\n  socat - UNIX-CONNECT:$(zeroclaw endpoint)";

#[cfg(windows)]
pub const ENDPOINT_EXAMPLE: &str = "Examples:\n  zeroclaw endpoint                     # \\\\.\\pipe\\zeroclaw-<hash>\n  \
zeroclaw call status                  # a raw JSON-RPC call over it\n  \
# PowerShell, with the name after \\\\.\\pipe\\:\n  \
$p = [System.IO.Pipes.NamedPipeClientStream]::new('.', 'zeroclaw-<hash>', 'InOut'); $p.Connect(5000)";
