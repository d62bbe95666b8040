//! The network: off by default (the test's own listener on 127.0.0.1 is never reached),
//! on for a session that asks (from the local socket, which may widen).

use crate::Sandboxed;
use serde_json::{Value, json};
use std::net::TcpListener;

fn connect_command(port: u16) -> String {
    format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected")
}

#[test]
fn with_the_network_off_a_listener_on_loopback_is_not_reached() {
    let mut s = Sandboxed::new("", Value::Null);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = s.bash(&connect_command(port));
    out.blocked("network is off in this session's sandbox");
    assert!(!out.text.contains("connected\n"), "{}", out.text);
    // The command has exited: a connection it made would be queued by now.
    assert_eq!(
        listener.accept().map(|_| ()).unwrap_err().kind(),
        std::io::ErrorKind::WouldBlock
    );
}

#[test]
fn a_session_with_the_network_on_reaches_the_listener() {
    let mut s = Sandboxed::new("", json!({"network": true}));
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = s.bash(&connect_command(port));
    out.allowed();
    assert!(out.text.contains("connected"), "{}", out.text);
    listener.accept().unwrap();
}
