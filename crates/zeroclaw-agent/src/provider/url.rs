//! A base URL may carry credentials (`https://user:pass@host/v1`, as some proxies take
//! them). They are the provider's business alone: every URL shown or logged (status, error
//! messages and their data, `{:?}`) goes through here first.

/// `url` without the `user:pass@` of its authority, if it has one.
pub fn without_credentials(url: &str) -> String {
    scrub(url)
}

/// `text` with the credentials of every URL in it removed: after each `://`, an `@` before
/// the authority ends (`/`, `?`, `#`, white space, a quote or a bracket) marks userinfo.
pub fn scrub(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | ')' | '>' | ']') || c.is_whitespace()
            })
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(userinfo_end) => out.push_str(&authority[userinfo_end + 1..]),
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_removed_and_the_rest_kept() {
        assert_eq!(
            without_credentials("https://user:s3cret@proxy.example:8443/v1"),
            "https://proxy.example:8443/v1"
        );
        assert_eq!(
            without_credentials("http://127.0.0.1:11434/v1"),
            "http://127.0.0.1:11434/v1"
        );
        assert_eq!(
            scrub("error sending request for url (https://a:b@h/v1/chat/completions): refused"),
            "error sending request for url (https://h/v1/chat/completions): refused"
        );
        assert_eq!(scrub("mail me@example.com"), "mail me@example.com");
    }
}
