//! Prints the status of the daemon at the resolved endpoint, starting an ephemeral one if
//! none runs: `cargo run -p zeroclaw-client --example status`.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let paths = zeroclaw_ipc::resolve(None)?;
    let client = zeroclaw_client::connect_or_start(&paths, Default::default()).await?;
    let status = client.status().await?;
    println!(
        "zeroclaw {} (pid {}) at {}: {} client(s), {} session(s), {} running",
        status.server_version,
        status.pid,
        status.endpoint,
        status.clients,
        status.sessions.total,
        status.sessions.running
    );
    Ok(())
}
