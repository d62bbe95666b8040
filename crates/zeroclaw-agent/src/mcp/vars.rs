//! `${VAR}` in a server's `env` and `headers` values, taken from the daemon's environment
//! when the server starts. A variable that is not set (or not Unicode) fails the server with
//! an error naming it; nothing else in the value is touched. The values are secrets as often
//! as not: they go into the child's environment or the request headers, never into a log.

use std::collections::BTreeMap;

/// `value` with each `${VAR}` replaced by `lookup(VAR)`; `Err(VAR)` for the first one unset.
pub fn substitute(value: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        // `config.rs` checked every `${` is closed around a name.
        let Some(end) = after.find('}') else {
            out.push_str(&rest[at..]);
            return Ok(out);
        };
        let name = &after[..end];
        out.push_str(&lookup(name).ok_or_else(|| name.to_owned())?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Every value of `map` substituted from the daemon's environment; the error names the
/// variable and the key it was for.
pub fn resolve(
    map: &BTreeMap<String, String>,
    what: &str,
) -> Result<Vec<(String, String)>, String> {
    map.iter()
        .map(|(key, value)| {
            substitute(value, |name| std::env::var(name).ok())
                .map(|v| (key.clone(), v))
                .map_err(|var| {
                    format!("environment variable {var} is not set (needed by {what} {key:?})")
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_replaced_and_a_missing_one_is_named() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "s3cret".to_owned());
        assert_eq!(
            substitute("Bearer ${TOKEN}!", lookup).as_deref(),
            Ok("Bearer s3cret!")
        );
        assert_eq!(
            substitute("plain $TOKEN", lookup).as_deref(),
            Ok("plain $TOKEN")
        );
        assert_eq!(
            substitute("${TOKEN}${NOPE}", lookup),
            Err("NOPE".to_owned())
        );
    }
}
