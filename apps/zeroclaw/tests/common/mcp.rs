//! The testkit's MCP test server (`mcp-test-server`: rmcp's server side, whose tools echo,
//! fail, hang, crash, change the list and ask), for every test binary that needs a real
//! MCP server.

use super::bin;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The test server's binary beside `zeroclaw`'s, brought up to date once per test process:
/// `cargo test -p zeroclaw` does not rebuild another package's binary, and a stale one
/// (an older build of the server) fails tests for no reason of theirs. A no-op when fresh.
pub fn mcp_test_server() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let name = format!("mcp-test-server{}", std::env::consts::EXE_SUFFIX);
        let path = Path::new(bin()).with_file_name(name);
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args([
                "build",
                "--quiet",
                "-p",
                "zeroclaw-testkit",
                "--bin",
                "mcp-test-server",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .status()
            .expect("run cargo build for mcp-test-server");
        assert!(status.success(), "could not build mcp-test-server");
        assert!(path.exists(), "no {}", path.display());
        path
    })
}

/// A `[[mcp_servers]]` stdio entry for the test server named `name`; `extra` adds keys.
pub fn mcp_stdio_server(name: &str, extra: &str) -> String {
    format!(
        "[[mcp_servers]]\nname = {name:?}\ncommand = {:?}\n{extra}\n",
        mcp_test_server().display().to_string()
    )
}
