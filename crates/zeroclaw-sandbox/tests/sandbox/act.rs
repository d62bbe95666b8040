//! The helper the other tests run inside the sandbox (this same binary, re-executed with
//! `ZC_SANDBOX_ACT`), for what a shell cannot do: connect a socket, ptrace, io_uring.

use std::net::{TcpStream, UdpSocket};
use std::os::unix::net::UnixStream;

#[test]
#[ignore = "run inside the sandbox by the other tests, with ZC_SANDBOX_ACT set"]
fn helper() {
    let Ok(act) = std::env::var("ZC_SANDBOX_ACT") else {
        return;
    };
    let (verb, arg) = act.split_once(' ').unwrap_or((act.as_str(), ""));
    let result: std::io::Result<()> = match verb {
        "connect-unix" => UnixStream::connect(arg).map(drop),
        "connect-tcp" => TcpStream::connect(arg).map(drop),
        "connect-abstract" => {
            use std::os::linux::net::SocketAddrExt;
            std::os::unix::net::SocketAddr::from_abstract_name(arg)
                .and_then(|a| UnixStream::connect_addr(&a))
                .map(drop)
        }
        "udp" => UdpSocket::bind("127.0.0.1:0")
            .and_then(|s| s.send_to(b"x", arg))
            .map(drop),
        "ptrace" => {
            let pid: libc::pid_t = arg.parse().unwrap();
            // SAFETY: PTRACE_ATTACH on a pid; detached again at once if it worked.
            let rc = unsafe { libc::ptrace(libc::PTRACE_ATTACH, pid, 0, 0) };
            if rc == 0 {
                unsafe { libc::ptrace(libc::PTRACE_DETACH, pid, 0, 0) };
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        }
        "io_uring" => {
            // struct io_uring_params is 120 bytes; zeroed asks for the defaults.
            let mut params = [0u8; 120];
            // SAFETY: io_uring_setup(1, &params); the ring fd is closed if one was made.
            let rc = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
            if rc >= 0 {
                unsafe { libc::close(rc as i32) };
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        }
        "service-sockets" => {
            for p in zeroclaw_sandbox::service_sockets() {
                println!("SERVICE {}", p.display());
            }
            Ok(())
        }
        other => panic!("unknown action {other}"),
    };
    match result {
        Ok(()) => println!("RESULT ok"),
        Err(e) => println!("RESULT err {}", e.raw_os_error().unwrap_or(-1)),
    }
}
