//! The network: off means no socket but `AF_UNIX`, to any address, loopback included; on
//! means a TCP listener the test started on 127.0.0.1 accepts the command's connection.

use std::net::{TcpListener, UdpSocket};

use zeroclaw_sandbox::{Mode, Refusal};

use crate::common::{Fixture, have, helper, helper_result, run, variants};

#[test]
fn with_the_network_off_no_connection_reaches_a_listener_on_loopback() {
    for (variant, support) in variants() {
        for mode in [Mode::ReadOnly, Mode::WorkspaceWrite] {
            let fx = Fixture::new();
            let policy = fx.policy(mode).network(false);
            let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
            tcp.set_nonblocking(true).unwrap();
            let udp = UdpSocket::bind("127.0.0.1:0").unwrap();
            udp.set_nonblocking(true).unwrap();
            let what = format!("{variant}, {mode}");

            let r = run(
                &fx,
                &policy,
                &support,
                &helper(&format!("connect-tcp {}", tcp.local_addr().unwrap())),
            );
            assert_eq!(
                helper_result(&r.output()),
                Err(libc::EAFNOSUPPORT),
                "{what}: TCP"
            );
            let r = run(
                &fx,
                &policy,
                &support,
                &helper(&format!("udp {}", udp.local_addr().unwrap())),
            );
            assert_eq!(
                helper_result(&r.output()),
                Err(libc::EAFNOSUPPORT),
                "{what}: UDP"
            );
            let r = run(
                &fx,
                &policy,
                &support,
                &helper(&format!(
                    "connect-tcp [::1]:{}",
                    tcp.local_addr().unwrap().port()
                )),
            );
            assert!(helper_result(&r.output()).is_err(), "{what}: IPv6");

            if have("bash") {
                let port = tcp.local_addr().unwrap().port();
                let r = run(
                    &fx,
                    &policy,
                    &support,
                    &format!("bash -c 'echo hi > /dev/tcp/127.0.0.1/{port}'"),
                );
                r.assert_failed(&what);
                assert_eq!(
                    r.prepared.explain(&r.output()),
                    Some(Refusal::Network),
                    "{what}: {}",
                    r.output()
                );
            }
            if have("curl") {
                let addr = tcp.local_addr().unwrap();
                let r = run(
                    &fx,
                    &policy,
                    &support,
                    &format!("curl -sS --max-time 20 http://{addr}/"),
                );
                r.assert_failed(&what);
                assert_eq!(
                    r.prepared.explain(&r.output()),
                    Some(Refusal::Network),
                    "{what}: {}",
                    r.output()
                );
                let r = run(
                    &fx,
                    &policy,
                    &support,
                    "curl -sS --max-time 20 http://example.invalid/",
                );
                assert_eq!(
                    r.prepared.explain(&r.output()),
                    Some(Refusal::Network),
                    "{what}: {}",
                    r.output()
                );
            }

            assert!(
                matches!(tcp.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
                "{what}: a TCP connection got through"
            );
            let mut buf = [0u8; 8];
            assert!(
                matches!(udp.recv_from(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
                "{what}: a datagram got through"
            );
        }
    }
}

#[test]
fn with_the_network_on_a_listener_on_loopback_accepts_the_command() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        let policy = fx.policy(Mode::WorkspaceWrite).network(true);
        let tcp = TcpListener::bind("127.0.0.1:0").unwrap();
        let r = run(
            &fx,
            &policy,
            &support,
            &helper(&format!("connect-tcp {}", tcp.local_addr().unwrap())),
        );
        assert_eq!(
            helper_result(&r.output()),
            Ok(()),
            "{variant}: {}",
            r.output()
        );
        // The connection the command made is in the backlog.
        tcp.set_nonblocking(true).unwrap();
        assert!(tcp.accept().is_ok(), "{variant}: no connection arrived");
        assert_eq!(
            r.prepared.explain("curl: (7) Couldn't connect to server"),
            None
        );
    }
}

#[test]
fn without_user_namespaces_unix_sockets_are_off_even_with_the_network_on() {
    let support = crate::common::support().without_user_namespaces();
    let fx = Fixture::new();
    let listener = std::os::unix::net::UnixListener::bind(fx.cwd.join("app.sock")).unwrap();
    listener.set_nonblocking(true).unwrap();
    let policy = fx.policy(Mode::WorkspaceWrite).network(true);
    let r = run(
        &fx,
        &policy,
        &support,
        &helper(&format!(
            "connect-unix {}",
            fx.cwd.join("app.sock").display()
        )),
    );
    assert_eq!(
        helper_result(&r.output()),
        Err(libc::EAFNOSUPPORT),
        "{}",
        r.output()
    );
    assert!(listener.accept().is_err());
    assert!(
        support
            .gaps()
            .iter()
            .any(|g| g.contains("Unix sockets are off")),
        "{:?}",
        support.gaps()
    );
}

#[test]
fn io_uring_is_not_available_to_a_sandboxed_command() {
    for (variant, support) in variants() {
        let fx = Fixture::new();
        for network in [false, true] {
            let policy = fx.policy(Mode::WorkspaceWrite).network(network);
            let r = run(&fx, &policy, &support, &helper("io_uring"));
            assert_eq!(
                helper_result(&r.output()),
                Err(libc::ENOSYS),
                "{variant}, network {network}"
            );
        }
    }
}
