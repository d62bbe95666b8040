//! A prompt template filled in for one run (the rules are in docs/unattended.md).

use crate::config::{Piece, Template};

/// The most of a body `{{body}}` puts in a prompt; the rest is cut, and said to be.
pub const BODY_CAP: usize = 64 * 1024;

/// A webhook's request, for `{{body}}`, `{{json}}` and `{{header}}`.
pub struct Request<'a> {
    /// Lowercase names.
    pub headers: &'a [(String, String)],
    pub body: &'a [u8],
}

/// The prompt of one run. `now` is RFC 3339 in local time.
pub fn render(template: &Template, name: &str, now: &str, request: Option<&Request<'_>>) -> String {
    let json = request.and_then(|r| serde_json::from_slice::<serde_json::Value>(r.body).ok());
    let mut out = String::new();
    for piece in &template.0 {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Name => out.push_str(name),
            Piece::Now => out.push_str(now),
            Piece::Body => {
                if let Some(r) = request {
                    out.push_str(&capped(r.body));
                }
            }
            Piece::Header(wanted) => {
                let value = request.and_then(|r| {
                    r.headers
                        .iter()
                        .find(|(n, _)| n.eq_ignore_ascii_case(wanted))
                });
                if let Some((_, v)) = value {
                    out.push_str(v);
                }
            }
            Piece::Json(pointer) => match json.as_ref().and_then(|j| j.pointer(pointer)) {
                Some(serde_json::Value::String(s)) => out.push_str(s),
                Some(other) => out.push_str(&other.to_string()),
                None => {
                    tracing::debug!(
                        run = name,
                        pointer,
                        "{{json}} found nothing: the body is not JSON or has no such member"
                    );
                }
            },
        }
    }
    out
}

fn capped(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if text.len() <= BODY_CAP {
        return text.into_owned();
    }
    let end = (0..=BODY_CAP)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    format!(
        "{}\n[... {} more bytes of the body cut]",
        &text[..end],
        text.len() - end
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_fill_in_as_the_design_settles() {
        let t = Template::parse(
            "{{name}} {{json /ref}} {{json /n}} {{json /missing}}|{{header x-github-event}}|{{header Absent}}|{{now}}\n{{body}}",
            true,
        )
        .unwrap();
        let headers = vec![("x-github-event".to_owned(), "push".to_owned())];
        let body = br#"{"ref":"main","n":{"a":1}}"#;
        let r = Request {
            headers: &headers,
            body,
        };
        assert_eq!(
            render(&t, "ci", "T", Some(&r)),
            "ci main {\"a\":1} |push||T\n{\"ref\":\"main\",\"n\":{\"a\":1}}"
        );
        let not_json = Request {
            headers: &[],
            body: b"plain",
        };
        assert_eq!(render(&t, "ci", "T", Some(&not_json)), "ci   |||T\nplain");
    }

    #[test]
    fn a_long_body_is_cut_at_the_cap_and_says_so() {
        let t = Template::parse("{{body}}", true).unwrap();
        let body = "é".repeat(BODY_CAP);
        let r = Request {
            headers: &[],
            body: body.as_bytes(),
        };
        let out = render(&t, "n", "T", Some(&r));
        assert!(out.len() < BODY_CAP + 100);
        assert!(
            out.ends_with(&format!(
                "[... {} more bytes of the body cut]",
                body.len() - BODY_CAP
            )),
            "{}",
            &out[out.len() - 60..]
        );
    }
}
