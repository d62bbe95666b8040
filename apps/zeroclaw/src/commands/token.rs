//! `zeroclaw token create|list|revoke` and `zeroclaw dashboard`: the gateway's
//! credentials, over the local socket (never over `--url`: tokens are minted where the OS
//! vouches for the user).

use super::{Outcome, describe_call_error, pretty};
use zeroclaw_client::Client;
use zeroclaw_ipc::Paths;
use zeroclaw_protocol::{
    DashboardLink, NoParams, Scope, TokenCreate, TokenCreateParams, TokenList, TokenRevoke,
    TokenRevokeParams,
};

async fn local(paths: &Paths) -> Result<Client, String> {
    if super::remote().is_some() {
        return Err("tokens are managed over the local socket only: run this on the daemon's machine, without --url".into());
    }
    super::connect(paths).await
}

/// `30d`, `12h`, `90m`, `45s`: a duration in whole seconds.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text.len().saturating_sub(1);
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration: write 30d, 12h, 90m or 45s"))?;
    let unit = match unit {
        "d" => 86_400,
        "h" => 3_600,
        "m" => 60,
        "s" => 1,
        _ => {
            return Err(format!(
                "{text:?} is not a duration: write 30d, 12h, 90m or 45s"
            ));
        }
    };
    match number.checked_mul(unit) {
        Some(0) | None => Err(format!("{text:?} is not a usable duration")),
        Some(secs) => Ok(secs),
    }
}

pub async fn create(paths: &Paths, name: &str, scope: Scope, expires: Option<&str>) -> Outcome {
    let expires_in = expires.map(parse_duration).transpose()?;
    let client = local(paths).await?;
    let params = TokenCreateParams {
        name: name.to_owned(),
        scope: Some(scope),
        expires_in,
    };
    let created = client
        .request::<TokenCreate>(&params)
        .await
        .map_err(|e| format!("token create failed: {}", describe_call_error(&e)))?;
    // The token alone on stdout, so `$(zeroclaw token create ci)` works; the rest on stderr.
    println!("{}", created.token);
    eprintln!(
        "token {:?}: scope {}, {}. It is shown only this once.",
        created.name,
        created.scope.as_str(),
        created
            .expires_at
            .map_or_else(|| "never expires".to_owned(), |at| format!("expires {at}"))
    );
    Ok(())
}

pub async fn list(paths: &Paths, json: bool) -> Outcome {
    let client = local(paths).await?;
    let list = client
        .request::<TokenList>(&NoParams)
        .await
        .map_err(|e| format!("token list failed: {}", describe_call_error(&e)))?;
    if json {
        let value = serde_json::to_value(&list).map_err(|e| e.to_string())?;
        println!("{}", pretty(&value));
        return Ok(());
    }
    if list.tokens.is_empty() {
        println!("no tokens (zeroclaw token create NAME mints one)");
        return Ok(());
    }
    let rows: Vec<[String; 6]> = list
        .tokens
        .iter()
        .map(|t| {
            [
                t.name.clone(),
                t.kind.as_str().to_owned(),
                t.scope.as_str().to_owned(),
                t.created_at.clone(),
                t.last_used_at.clone().unwrap_or_else(|| "never".into()),
                t.expires_at.clone().unwrap_or_else(|| "never".into()),
            ]
        })
        .collect();
    let header = ["NAME", "KIND", "SCOPE", "CREATED", "LAST USED", "EXPIRES"].map(String::from);
    print!("{}", table(&header, &rows));
    Ok(())
}

/// Rows under a header, each column as wide as its widest cell (names run to 64
/// characters), two spaces between columns, the last one not padded.
fn table<const N: usize>(header: &[String; N], rows: &[[String; N]]) -> String {
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    for row in std::iter::once(header).chain(rows) {
        let mut line = String::new();
        for (i, (cell, width)) in row.iter().zip(widths).enumerate() {
            if i + 1 == N {
                line.push_str(cell);
            } else {
                line.push_str(&format!("{cell:<width$}  "));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

pub async fn revoke(paths: &Paths, name: &str) -> Outcome {
    let client = local(paths).await?;
    let params = TokenRevokeParams {
        name: name.to_owned(),
    };
    let result = client
        .request::<TokenRevoke>(&params)
        .await
        .map_err(|e| format!("token revoke failed: {}", describe_call_error(&e)))?;
    if !result.revoked {
        return Err(format!(
            "no token named {name:?} (zeroclaw token list shows them)"
        ));
    }
    println!("token {name:?} revoked; its connections are closed");
    Ok(())
}

pub async fn dashboard(paths: &Paths, open: bool) -> Outcome {
    let client = local(paths).await?;
    let link = client
        .request::<DashboardLink>(&NoParams)
        .await
        .map_err(|e| format!("dashboard failed: {}", describe_call_error(&e)))?;
    println!("{}", link.url);
    eprintln!("one-time login link, valid until {}", link.expires_at);
    if open {
        super::browser::open(&paths.data_dir, &link.url).await;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_days_hours_minutes_or_seconds() {
        assert_eq!(parse_duration("30d"), Ok(30 * 86_400));
        assert_eq!(parse_duration("12h"), Ok(43_200));
        assert_eq!(parse_duration("90m"), Ok(5_400));
        assert!(parse_duration("0d").is_err());
        assert!(parse_duration("soon").is_err());
    }
}
