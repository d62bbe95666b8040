//! Arbitrary bytes from a WebSocket client after the handshake, through tungstenite and
//! the `/rpc` transport (`zeroclaw_rpc::websocket`), as the gateway serves them. Nothing may
//! panic, it must end within a deadline, and what reaches the peer keeps the frame rules:
//! a line is never over the cap nor blank, and every `Oversized` is followed by its
//! `OversizedEnd`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::runtime::Runtime;
use zeroclaw_rpc::Frame;

const MAX: usize = 256;
const DEADLINE: Duration = Duration::from_secs(10);

fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    })
}

fuzz_target!(|data: &[u8]| {
    let data = data.to_vec();
    runtime().block_on(async move {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let feed = tokio::spawn(async move {
            let _ = client.write_all(&data).await;
            let _ = client.shutdown().await;
            // Drain what the server writes (pongs, a close) until it is done.
            let mut sink = Vec::new();
            let _ = client.read_to_end(&mut sink).await;
        });
        let frames =
            tokio::time::timeout(DEADLINE, zeroclaw_gateway::fuzzing::ws_frames(server, MAX))
                .await
                .expect("the transport did not end within the deadline");
        feed.abort();
        let mut owed_end = false;
        for frame in frames {
            match frame {
                Frame::Line(line) => {
                    assert!(!owed_end, "a line between Oversized and its end");
                    assert!(line.len() <= MAX, "a line over the cap");
                    assert!(!line.iter().all(u8::is_ascii_whitespace), "a blank line");
                }
                Frame::Oversized { limit } => {
                    assert_eq!(limit, MAX);
                    owed_end = true;
                }
                Frame::OversizedEnd { tail } => {
                    assert!(owed_end, "an end without its start");
                    assert!(tail.len() <= zeroclaw_rpc::codec::OVERSIZED_TAIL);
                    owed_end = false;
                }
            }
        }
    });
});
