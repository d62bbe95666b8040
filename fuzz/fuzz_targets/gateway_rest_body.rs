//! A REST request body, as every gateway route with a body reads it (`POST /sessions`,
//! `…/prompt`, `…/approvals/{id}`, `/auth/exchange`), and the same bytes as an upgrade's
//! `Sec-WebSocket-Protocol` list. Nothing may panic; a body is refused only as `-32700`
//! (not JSON) or `-32602` (JSON of the wrong shape), and JSON is never called "not JSON".
#![no_main]

use libfuzzer_sys::fuzz_target;
use zeroclaw_protocol::codes;

fuzz_target!(|data: &[u8]| {
    let is_json = serde_json::from_slice::<serde_json::Value>(data).is_ok();
    for code in zeroclaw_gateway::fuzzing::decode_bodies(data)
        .into_iter()
        .flatten()
    {
        assert!(
            code == codes::PARSE_ERROR || code == codes::INVALID_PARAMS,
            "unexpected code {code}"
        );
        assert_eq!(code == codes::PARSE_ERROR, !is_json, "JSON-ness misjudged");
    }
    if let Ok(header) = std::str::from_utf8(data) {
        let (_, bearer, proof) = zeroclaw_gateway::fuzzing::ws_protocols(header);
        if let Some(token) = bearer {
            assert!(header.contains(&format!("zeroclaw.bearer.{token}")));
        }
        if let Some(proof) = proof {
            assert!(header.contains(&format!("zeroclaw.proof.{proof}")));
        }
    }
});
