//! Host names and origins as the gateway reads them, in `Host` headers and in
//! `gateway.allowed_hosts` / `gateway.allowed_origins`, each brought to one spelling so
//! that comparing two is comparing strings: ASCII lowercase, a DNS name without its
//! trailing dot, an IPv6 address in brackets in its shortest form.

use std::net::{Ipv4Addr, Ipv6Addr};

/// Longest DNS name (RFC 1035), and longest label.
const MAX_NAME: usize = 253;
const MAX_LABEL: usize = 63;

/// A host: a DNS name (letters, digits, `-`, `_`, dot-separated labels), an IPv4 address,
/// or an IPv6 address in brackets. `None` for anything else (a port, a user, a zone id,
/// spaces, percent-escapes, `*`).
pub fn host(text: &str) -> Option<String> {
    if let Some(inner) = text.strip_prefix('[') {
        let address: Ipv6Addr = inner.strip_suffix(']')?.parse().ok()?;
        return Some(format!("[{address}]"));
    }
    let name = text.strip_suffix('.').unwrap_or(text);
    if name.is_empty() || name.len() > MAX_NAME {
        return None;
    }
    let labels_ok = name.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= MAX_LABEL
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    });
    if !labels_ok {
        return None;
    }
    // All digits and dots: it is meant as an IPv4 address, and must be one.
    if name.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        return name.parse::<Ipv4Addr>().ok().map(|a| a.to_string());
    }
    Some(name.to_ascii_lowercase())
}

/// `host[:port]`, as in a `Host` header or a URL's authority: the host (as [`host`]) and
/// the port when one is written (an empty port, `host:`, counts as none).
pub fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let (host_part, port_part) = if text.starts_with('[') {
        let end = text.find(']')?;
        let (host_part, rest) = text.split_at(end + 1);
        if rest.is_empty() {
            (host_part, None)
        } else {
            (host_part, Some(rest.strip_prefix(':')?))
        }
    } else {
        match text.split_once(':') {
            Some((host_part, port)) => (host_part, Some(port)),
            None => (text, None),
        }
    };
    let port = match port_part {
        None | Some("") => None,
        Some(digits) if digits.bytes().all(|b| b.is_ascii_digit()) => Some(digits.parse().ok()?),
        Some(_) => return None,
    };
    Some((host(host_part)?, port))
}

/// Why an `allowed_origins` entry is refused: the rest of a sentence that starts with the
/// key and the value.
pub fn origin(text: &str) -> Result<String, String> {
    const EXAMPLE: &str =
        "e.g. allowed_origins = [\"https://app.example.com\", \"http://localhost:5173\"]";
    if text.contains('*') {
        return Err(format!(
            "is a wildcard: it would let every web page the user opens call the gateway with their dashboard session (a wildcard cannot go with credentials). There is no wildcard: list each origin instead, {EXAMPLE}"
        ));
    }
    if text.trim().eq_ignore_ascii_case("null") {
        return Err(format!(
            "is the origin of sandboxed frames and local files, which any page can take. List each real origin instead, {EXAMPLE}"
        ));
    }
    let malformed = || {
        format!(
            "is not an origin: write scheme://host[:port], with no path, user or spaces, {EXAMPLE}"
        )
    };
    let trimmed = text.strip_suffix('/').unwrap_or(text);
    let (scheme, rest) = trimmed.split_once("://").ok_or_else(malformed)?;
    let scheme_ok = scheme
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic())
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'));
    if !scheme_ok || rest.contains(['/', '?', '#', '@']) {
        return Err(malformed());
    }
    let scheme = scheme.to_ascii_lowercase();
    let (host, port) = authority(rest).ok_or_else(malformed)?;
    // A browser leaves the scheme's own port out of `Origin`.
    let default = match scheme.as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    };
    Ok(match port {
        Some(port) if Some(port) != default => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    })
}

/// Why an `allowed_hosts` entry is refused (the rest of a sentence, as for [`origin`]);
/// a bare IPv6 address is taken as if it were bracketed.
pub fn allowed_host(text: &str) -> Result<String, String> {
    const EXAMPLE: &str = "e.g. allowed_hosts = [\"zeroclaw.lan\"]";
    if text.contains('*') {
        return Err(format!(
            "is a wildcard: it would let any DNS name pointed at this machine reach the gateway (DNS rebinding). There is no wildcard: list each host name clients use, {EXAMPLE}"
        ));
    }
    if let Some(host) = host(text) {
        return Ok(host);
    }
    if let Ok(address) = text.parse::<Ipv6Addr>() {
        return Ok(format!("[{address}]"));
    }
    if text.contains("://") {
        return Err(format!("is a URL: write the host name alone, {EXAMPLE}"));
    }
    if let Some((_, Some(_))) = authority(text) {
        return Err(format!(
            "has a port: write the host name alone (it is accepted with any port), {EXAMPLE}"
        ));
    }
    Err(format!(
        "is not a host name: write a DNS name, an IPv4 address or an IPv6 address, {EXAMPLE}"
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn hosts_come_in_one_spelling_and_anything_else_is_refused() {
        assert_eq!(host("LocalHost").as_deref(), Some("localhost"));
        assert_eq!(host("box.lan.").as_deref(), Some("box.lan"));
        assert_eq!(host("[0:0::1]").as_deref(), Some("[::1]"));
        assert_eq!(host("127.0.0.1").as_deref(), Some("127.0.0.1"));
        for bad in [
            "",
            ".",
            "a..b",
            "a b",
            "*",
            "256.0.0.1",
            "[::1",
            "::1",
            "[fe80::1%25eth0]",
            "u@h",
            "h:1",
            "%41",
        ] {
            assert_eq!(host(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn an_authority_is_a_host_and_maybe_a_port() {
        assert_eq!(
            authority("localhost:80"),
            Some(("localhost".into(), Some(80)))
        );
        assert_eq!(authority("[::1]:8080"), Some(("[::1]".into(), Some(8080))));
        assert_eq!(authority("[::1]"), Some(("[::1]".into(), None)));
        assert_eq!(authority("box.lan:"), Some(("box.lan".into(), None)));
        for bad in [
            "a:99999", "a:+1", "a:1:2", "[::1]x", "[::1]:x", ":80", "a b:1",
        ] {
            assert_eq!(authority(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn origins_are_normalized_and_wildcards_null_and_paths_are_refused() {
        assert_eq!(
            origin("HTTPS://App.Example/").unwrap(),
            "https://app.example"
        );
        assert_eq!(
            origin("https://app.example:443").unwrap(),
            "https://app.example"
        );
        assert_eq!(origin("http://[::1]:8080").unwrap(), "http://[::1]:8080");
        assert_eq!(
            origin("chrome-extension://abcdef").unwrap(),
            "chrome-extension://abcdef"
        );
        assert!(origin("*").unwrap_err().contains("list each origin"));
        assert!(
            origin("https://*.example")
                .unwrap_err()
                .contains("wildcard")
        );
        assert!(origin("null").unwrap_err().contains("sandboxed"));
        for bad in [
            "",
            "app.example",
            "https://app.example/x",
            "https://u@app.example",
            "https://",
            "1http://a",
            "https://a:99999",
            "https://a\n",
        ] {
            assert!(
                origin(bad).unwrap_err().contains("not an origin"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn allowed_hosts_are_names_without_ports() {
        assert_eq!(allowed_host("Box.LAN").unwrap(), "box.lan");
        assert_eq!(allowed_host("::1").unwrap(), "[::1]");
        assert_eq!(allowed_host("[fd00::1]").unwrap(), "[fd00::1]");
        assert!(allowed_host("*").unwrap_err().contains("DNS rebinding"));
        assert!(allowed_host("box.lan:8080").unwrap_err().contains("port"));
        assert!(allowed_host("[::1]:8080").unwrap_err().contains("port"));
        assert!(allowed_host("http://box.lan").unwrap_err().contains("URL"));
        assert!(allowed_host("").unwrap_err().contains("not a host name"));
        assert!(allowed_host("a b").unwrap_err().contains("not a host name"));
    }
}
