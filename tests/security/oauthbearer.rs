//! OAUTHBEARER: Kafka's unsecured-JWS default and signed tokens checked against a JWKS
//! endpoint over HTTPS, principals seen through ACLs, bad tokens refused the RFC 7628 way.

use super::acls::*;
use super::*;

/// OAUTHBEARER with Kafka's unsecured-JWS default: librdkafka's own unsecured tokens, the
/// principal seen through ACLs, and a bad token refused the RFC 7628 way.
#[test]
fn oauthbearer_unsecured_tokens_authenticate_and_bad_ones_are_refused() {
    let overrides = [
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        ),
        ("sasl.enabled.mechanisms", "OAUTHBEARER"),
        (
            "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config",
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;",
        ),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:ANONYMOUS"),
    ];
    let broker = Broker::start(&overrides);
    let sasl = listener_address(&broker, "SASL_PLAINTEXT");
    let mut admin = raw_connect(&broker.bootstrap);
    let acls = create_acls(
        &mut admin,
        &[
            (TOPIC, "tokens", LITERAL, "User:alice", WRITE, ALLOW),
            (TOPIC, "tokens", LITERAL, "User:alice", READ, ALLOW),
            (TOPIC, "tokens", LITERAL, "User:alice", CREATE, ALLOW),
            (GROUP, "g-tokens", LITERAL, "User:alice", READ, ALLOW),
        ],
    );
    assert!(acls.results.iter().all(|r| r.error_code == 0), "{acls:?}");
    let settings = |principal: &'static str| {
        [
            ("security.protocol", "sasl_plaintext"),
            ("sasl.mechanism", "OAUTHBEARER"),
            ("enable.sasl.oauthbearer.unsecure.jwt", "true"),
            ("sasl.oauthbearer.config", principal),
        ]
    };
    round_trip(&sasl, &settings("principal=alice"), "tokens", 10);
    let consumer: BaseConsumer = client(&sasl, &settings("principal=mallory"))
        .create()
        .unwrap();
    let seen = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    assert!(seen.topics().iter().all(|t| t.name() != "tokens"));

    // A token that is not an unsecured JWS: the invalid_token challenge, then the failure.
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let token = format!(
        "{}.{}.c2lnbmF0dXJl",
        b64.encode(br#"{"alg":"RS256"}"#),
        b64.encode(br#"{"sub":"alice","exp":9999999999}"#)
    );
    let mut stream = raw_connect(&sasl);
    assert_eq!(handshake(&mut stream, "OAUTHBEARER", 1).error_code, 0);
    let first: SaslAuthenticateResponse = call(
        &mut stream,
        ApiKey::SaslAuthenticate,
        2,
        &SaslAuthenticateRequest::default().with_auth_bytes(
            format!("n,,\u{1}auth=Bearer {token}\u{1}\u{1}")
                .into_bytes()
                .into(),
        ),
    );
    assert_eq!(first.error_code, 0);
    assert_eq!(&first.auth_bytes[..], br#"{"status":"invalid_token"}"#);
    let last: SaslAuthenticateResponse = call(
        &mut stream,
        ApiKey::SaslAuthenticate,
        2,
        &SaslAuthenticateRequest::default().with_auth_bytes(vec![1u8].into()),
    );
    assert_eq!(last.error_code, 58);
    assert!(is_closed(&mut stream));
}

/// A JWKS served over HTTPS (a thread answering every request with the current document,
/// `Connection: close`), with the test PKI's server certificate.
struct JwksServer {
    address: String,
    document: std::sync::Arc<std::sync::Mutex<String>>,
    requests: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl JwksServer {
    fn start(pki: &Pki, document: String) -> Self {
        use std::io::Read;
        use std::sync::atomic::Ordering;
        let pem = std::fs::read(pki.path("server.pem")).unwrap();
        let blocks = pem::parse_many(&pem).unwrap();
        let chain: Vec<rustls_pki_types::CertificateDer<'static>> = blocks
            .iter()
            .filter(|b| b.tag() == "CERTIFICATE")
            .map(|b| b.contents().to_vec().into())
            .collect();
        let key = blocks.iter().find(|b| b.tag() == "PRIVATE KEY").unwrap();
        let key = rustls_pki_types::PrivateKeyDer::Pkcs8(key.contents().to_vec().into());
        let config = std::sync::Arc::new(
            rustls::ServerConfig::builder_with_provider(std::sync::Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap(),
        );
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = format!("localhost:{}", listener.local_addr().unwrap().port());
        let document = std::sync::Arc::new(std::sync::Mutex::new(document));
        let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (served, counted) = (document.clone(), requests.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let connection = rustls::ServerConnection::new(config.clone()).unwrap();
                let mut tls = rustls::StreamOwned::new(connection, stream);
                let mut request = Vec::new();
                let mut buffer = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buffer) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                if request.is_empty() {
                    continue;
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let body = served.lock().unwrap().clone();
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = tls.write_all(response.as_bytes());
                let _ = tls.flush();
                tls.conn.send_close_notify();
                let _ = tls.flush();
            }
        });
        Self {
            address,
            document,
            requests,
        }
    }
}

/// An ES256 key as a JWKS entry with `kid`, and a token it signs for `sub`.
fn es256_key(kid: &str) -> (serde_json::Value, jsonwebtoken::EncodingKey) {
    use jsonwebtoken::{Algorithm, EncodingKey};
    let key = rcgen::KeyPair::generate().unwrap();
    let encoding = EncodingKey::from_ec_pem(key.serialize_pem().as_bytes()).unwrap();
    let mut jwk = jsonwebtoken::jwk::Jwk::from_encoding_key(&encoding, Algorithm::ES256).unwrap();
    jwk.common.key_id = Some(kid.into());
    (serde_json::to_value(jwk).unwrap(), encoding)
}

fn signed_token(kid: &str, key: &jsonwebtoken::EncodingKey, sub: &str) -> String {
    use jsonwebtoken::{Algorithm, Header, encode};
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.into());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    encode(
        &header,
        &serde_json::json!({"sub": sub, "iat": now, "exp": now + 60, "aud": "kafka"}),
        key,
    )
    .unwrap()
}

/// One OAUTHBEARER authentication with `token` on a new connection: the first answer's error
/// code.
fn oauthbearer_error(address: &str, token: &str) -> i16 {
    let mut stream = raw_connect(address);
    assert_eq!(handshake(&mut stream, "OAUTHBEARER", 1).error_code, 0);
    let answer: SaslAuthenticateResponse = call(
        &mut stream,
        ApiKey::SaslAuthenticate,
        2,
        &SaslAuthenticateRequest::default().with_auth_bytes(
            format!("n,,\u{1}auth=Bearer {token}\u{1}\u{1}")
                .into_bytes()
                .into(),
        ),
    );
    if answer.error_code == 0 && !answer.auth_bytes.is_empty() {
        // The invalid_token challenge: the exchange ends in SASL_AUTHENTICATION_FAILED.
        let last: SaslAuthenticateResponse = call(
            &mut stream,
            ApiKey::SaslAuthenticate,
            2,
            &SaslAuthenticateRequest::default().with_auth_bytes(vec![1u8].into()),
        );
        return last.error_code;
    }
    answer.error_code
}

/// Signed OAUTHBEARER tokens checked against a JWKS endpoint over HTTPS (its CA from the login
/// module's options): fetched at startup, fetched again when a token names a new key id, and a
/// broker whose endpoint cannot be reached does not start.
#[test]
fn signed_oauthbearer_tokens_are_checked_against_a_jwks_endpoint_over_https() {
    use std::sync::atomic::Ordering;
    let pki = Pki::new();
    let (k1, key1) = es256_key("k1");
    let server = JwksServer::start(&pki, serde_json::json!({ "keys": [k1] }).to_string());
    let jaas = format!(
        r#"org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ssl.truststore.location="{}";"#,
        pki.path("ca.pem")
    );
    let url = format!("https://{}/jwks", server.address);
    let overrides =
        |url: &str| {
            vec![
            (
                "listeners".to_string(),
                "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0".to_string(),
            ),
            ("sasl.enabled.mechanisms".into(), "OAUTHBEARER".into()),
            (
                "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config".into(),
                jaas.clone(),
            ),
            (
                "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class"
                    .into(),
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
                    .into(),
            ),
            ("sasl.oauthbearer.jwks.endpoint.url".into(), url.to_string()),
            ("sasl.oauthbearer.expected.audience".into(), "kafka".into()),
            ("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms".into(), "50".into()),
        ]
        };
    let owned = overrides(&url);
    let pairs: Vec<(&str, &str)> = owned
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let broker = Broker::start(&pairs);
    let sasl = listener_address(&broker, "SASL_PLAINTEXT");
    assert_eq!(
        server.requests.load(Ordering::SeqCst),
        1,
        "fetched at startup"
    );
    assert_eq!(
        oauthbearer_error(&sasl, &signed_token("k1", &key1, "alice")),
        0
    );
    let (_, stranger) = es256_key("k1");
    assert_eq!(
        oauthbearer_error(&sasl, &signed_token("k1", &stranger, "alice")),
        58,
        "signed by a key the JWKS does not hold"
    );

    // The endpoint rotates its keys: a token naming the new key id is refused at first, makes
    // the broker fetch again, and is accepted once it has.
    let (k2, key2) = es256_key("k2");
    *server.document.lock().unwrap() = serde_json::json!({ "keys": [k2] }).to_string();
    let token = signed_token("k2", &key2, "bob");
    assert!(
        common::wait_until(Duration::from_secs(10), || oauthbearer_error(&sasl, &token)
            == 0),
        "the new key was fetched"
    );
    assert!(server.requests.load(Ordering::SeqCst) >= 2);
    assert_eq!(
        oauthbearer_error(&sasl, &signed_token("k1", &key1, "alice")),
        58,
        "k1 is gone"
    );

    // An endpoint that cannot be reached: the broker refuses to start, saying why.
    let unreachable = overrides("https://127.0.0.1:1/jwks");
    let mut command = std::process::Command::new(common::broker_binary());
    let dir = tempfile::tempdir().unwrap();
    command
        .arg("--override")
        .arg(format!("log.dirs={}", dir.path().display()));
    for (key, value) in &unreachable {
        command.arg("--override").arg(format!("{key}={value}"));
    }
    let output = command.output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot fetch the JWKS"), "{stderr}");
}
