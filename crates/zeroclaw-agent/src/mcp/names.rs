//! The names the model sees: `<server>__<tool>`, with characters outside `[a-zA-Z0-9_-]`
//! replaced by `-` and, past 64 characters (the providers' limit), cut with a short hash of
//! the whole name so two long names stay apart.

const MAX: usize = 64;

pub fn tool_name(server: &str, tool: &str) -> String {
    let full: String = format!("{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if full.len() <= MAX {
        return full;
    }
    let hash = format!(
        "{:08x}",
        fnv1a(format!("{server}__{tool}").as_bytes()) as u32
    );
    // All ASCII by now: any byte index is a character boundary.
    format!("{}-{hash}", &full[..MAX - hash.len() - 1])
}

/// FNV-1a, 64 bits: stable across builds and Rust releases (std's hasher is not).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_prefixed_cleaned_and_cut_with_a_hash() {
        assert_eq!(tool_name("docs", "search"), "docs__search");
        assert_eq!(tool_name("fs", "read file.v2"), "fs__read-file-v2");
        let a = tool_name("s", &"x".repeat(100));
        let b = tool_name("s", &format!("{}y", "x".repeat(99)));
        assert_eq!(a.len(), 64);
        assert_eq!(b.len(), 64);
        assert_ne!(a, b);
        assert!(a.starts_with("s__xxx"));
    }
}
