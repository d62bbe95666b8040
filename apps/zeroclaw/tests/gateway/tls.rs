//! TLS: a gateway with a certificate serves `https://` and `wss://`; a remote bind
//! without TLS is refused at start-up.

use crate::common::*;
use crate::harness::*;
use serde_json::json;

#[test]
fn with_a_certificate_the_gateway_serves_wss_and_the_client_library_connects() {
    let dir = TestDir::new();
    let cert =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let cert_path = dir.path().join("cert.pem");
    let key_path = dir.path().join("key.pem");
    std::fs::write(&cert_path, cert.cert.pem()).unwrap();
    std::fs::write(&key_path, cert.signing_key.serialize_pem()).unwrap();
    dir.write_config(&format!(
        "{GATEWAY}\ntls_cert = {:?}\ntls_key = {:?}\n",
        cert_path.display().to_string(),
        key_path.display().to_string()
    ));
    let daemon = dir.start(&[]);
    let status = daemon.client().call("status", json!({}));
    assert_eq!(status["gateway"]["tls"], true, "{status}");
    let url = status["gateway"]["url"].as_str().unwrap().to_owned();
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let token = daemon
        .client()
        .call("token/create", json!({"name": "tls", "scope": "read"}))["token"]
        .as_str()
        .unwrap()
        .to_owned();
    block(async {
        let remote = zeroclaw_client::Remote {
            url: url.replace("https://", "wss://"),
            token: token.clone(),
            ca_pem: Some(cert.cert.pem().into_bytes()),
        };
        let client = zeroclaw_client::Client::connect_remote(&remote, Default::default())
            .await
            .unwrap();
        let status = client.status().await.unwrap();
        assert_eq!(status.pid, daemon.pid());

        // Without trusting the certificate, no connection.
        let untrusted = zeroclaw_client::Remote {
            ca_pem: None,
            ..remote
        };
        let refused = zeroclaw_client::Client::connect_remote(&untrusted, Default::default()).await;
        assert!(refused.is_err());

        let https = reqwest::Client::builder()
            .add_root_certificate(
                reqwest::Certificate::from_pem(cert.cert.pem().as_bytes()).unwrap(),
            )
            .build()
            .unwrap();
        let health = https
            .get(format!("{url}/api/v1/health"))
            .send()
            .await
            .unwrap();
        assert_eq!(health.status(), 200);
    });
}

#[test]
fn a_remote_bind_without_tls_is_refused_at_start_up_naming_the_key() {
    let dir = TestDir::new();
    dir.write_config("[gateway]\nlisten = \"0.0.0.0:0\"\nallow_remote = true\n");
    let mut daemon = dir.spawn_with(&[], &[]);
    assert!(!daemon.wait_exit().success());
    let log = daemon.wait_for_stderr_end();
    assert!(log.contains("gateway.tls_cert"), "{log}");
    assert!(!dir.default_endpoint().exists(), "no socket left behind");

    let dir = TestDir::new();
    let mut daemon = dir.spawn_with(&["--gateway", "0.0.0.0:0"], &[]);
    assert!(!daemon.wait_exit().success());
    assert!(
        daemon
            .wait_for_stderr_end()
            .contains("gateway.allow_remote")
    );
}
