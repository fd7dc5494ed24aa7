//! Security end to end: TLS listeners (server certificates, client certificates required),
//! SASL PLAIN over SASL_PLAINTEXT and SASL_SSL with librdkafka, a wrong password refused while
//! other clients carry on, and the authentication protocol's edges with raw frames (requests
//! before authentication, an unsupported mechanism, an oversized token, a TLS handshake that
//! never finishes). Certificates are made at run time with rcgen.
#![allow(clippy::unwrap_used)]

#[path = "security/acls.rs"]
mod acls;
mod common;
#[path = "security/oauthbearer.rs"]
mod oauthbearer;

use acls::listener_address;

use common::Broker;
use common::pki::Pki;
use common::raw::{call, frame, is_closed, read_frame, write_refused};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

const PLAIN_JAAS: &str = r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";"#;

/// A broker with PLAINTEXT (the harness's bootstrap), SSL, SASL_PLAINTEXT and SASL_SSL
/// listeners, PLAIN on both SASL ones, client certificates required on MTLS.
fn secure_broker(pki: &Pki, extra: &[(&str, &str)]) -> (Broker, Listeners) {
    let server_pem = pki.path("server.pem");
    let ca = pki.path("ca.pem");
    let mut overrides: Vec<(&str, &str)> = vec![
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,MTLS://127.0.0.1:0",
        ),
        (
            "listener.security.protocol.map",
            "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,MTLS:SSL",
        ),
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.location", &server_pem),
        ("ssl.truststore.type", "PEM"),
        ("ssl.truststore.location", &ca),
        ("listener.name.mtls.ssl.client.auth", "required"),
        ("sasl.enabled.mechanisms", "PLAIN"),
        (
            "listener.name.sasl_plaintext.plain.sasl.jaas.config",
            PLAIN_JAAS,
        ),
        ("listener.name.sasl_ssl.plain.sasl.jaas.config", PLAIN_JAAS),
    ];
    overrides.extend_from_slice(extra);
    let broker = Broker::start(&overrides);
    let listeners = Listeners::of(&broker);
    (broker, listeners)
}

/// The bound address of each listener, from the broker's "listening on" lines.
struct Listeners(std::collections::BTreeMap<String, String>);

impl Listeners {
    fn of(broker: &Broker) -> Self {
        let mut found = std::collections::BTreeMap::new();
        common::wait_until(Duration::from_secs(20), || {
            for line in broker.log_text().lines() {
                if let (Some(address), Some(name)) = (
                    line.split("listening on ")
                        .nth(1)
                        .and_then(|r| r.split_whitespace().next()),
                    line.split("listener=")
                        .nth(1)
                        .and_then(|r| r.split_whitespace().next()),
                ) {
                    found.insert(name.to_string(), address.to_string());
                }
            }
            found.len() >= 5
        });
        assert_eq!(
            found.len(),
            5,
            "listeners: {found:?}\n{}",
            broker.log_text()
        );
        Self(found)
    }

    fn get(&self, name: &str) -> &str {
        &self.0[name]
    }
}

fn client(bootstrap: &str, settings: &[(&str, &str)]) -> ClientConfig {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", bootstrap)
        .set("socket.timeout.ms", "10000")
        .set("message.timeout.ms", "15000");
    for (key, value) in settings {
        config.set(*key, *value);
    }
    config
}

/// Produces `count` records to `topic` and reads them back, both over `settings`.
fn round_trip(bootstrap: &str, settings: &[(&str, &str)], topic: &str, count: usize) {
    let producer: ThreadedProducer<DefaultProducerContext> =
        client(bootstrap, settings).create().unwrap();
    for i in 0..count {
        producer
            .send(BaseRecord::<(), str>::to(topic).payload(&format!("value-{i}")))
            .map_err(|(e, _)| e)
            .unwrap();
    }
    producer.flush(Duration::from_secs(30)).unwrap();
    let consumer: BaseConsumer = client(bootstrap, settings)
        .set("group.id", format!("g-{topic}"))
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let mut seen = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while seen < count && std::time::Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            message.unwrap();
            seen += 1;
        }
    }
    assert_eq!(seen, count, "records read back from {topic}");
}

#[test]
fn clients_produce_and_consume_over_ssl_sasl_plaintext_and_sasl_ssl() {
    let pki = Pki::new();
    let (_broker, listeners) = secure_broker(&pki, &[]);
    let ca = pki.path("ca.pem");
    round_trip(
        listeners.get("SSL"),
        &[("security.protocol", "ssl"), ("ssl.ca.location", &ca)],
        "over-ssl",
        50,
    );
    round_trip(
        listeners.get("SASL_PLAINTEXT"),
        &[
            ("security.protocol", "sasl_plaintext"),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.username", "alice"),
            ("sasl.password", "alice-secret"),
        ],
        "over-sasl-plaintext",
        50,
    );
    round_trip(
        listeners.get("SASL_SSL"),
        &[
            ("security.protocol", "sasl_ssl"),
            ("ssl.ca.location", &ca),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.username", "admin"),
            ("sasl.password", "admin-secret"),
        ],
        "over-sasl-ssl",
        50,
    );
    // Client certificates: required on MTLS, and accepted when signed by the truststore's CA.
    round_trip(
        listeners.get("MTLS"),
        &[
            ("security.protocol", "ssl"),
            ("ssl.ca.location", &ca),
            ("ssl.certificate.location", &pki.path("client.pem")),
            ("ssl.key.location", &pki.path("client.key")),
        ],
        "over-mtls",
        20,
    );
}

/// Metadata through `settings`; the error librdkafka reports when it cannot get it.
fn metadata(bootstrap: &str, settings: &[(&str, &str)]) -> Result<usize, String> {
    let consumer: BaseConsumer = client(bootstrap, settings).create().unwrap();
    consumer
        .fetch_metadata(None, Duration::from_secs(5))
        .map(|m| m.brokers().len())
        .map_err(|e| e.to_string())
}

#[test]
fn a_wrong_password_or_missing_certificate_is_refused_while_others_carry_on() {
    let pki = Pki::new();
    let (broker, listeners) = secure_broker(&pki, &[]);
    let good = [
        ("security.protocol", "sasl_plaintext"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", "alice"),
        ("sasl.password", "alice-secret"),
    ];
    let bad = [
        ("security.protocol", "sasl_plaintext"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", "alice"),
        ("sasl.password", "not-her-password"),
    ];
    let sasl = listeners.get("SASL_PLAINTEXT");
    assert_eq!(metadata(sasl, &good), Ok(1));
    let refused = metadata(sasl, &bad).unwrap_err();
    assert!(!refused.is_empty());
    assert!(
        common::wait_until(Duration::from_secs(10), || broker.log_text().contains(
            "authentication failed: Authentication failed: Invalid username or password"
        )),
        "{}",
        broker.log_text()
    );
    assert!(
        !broker.log_text().contains("not-her-password"),
        "the password is never logged"
    );
    assert_eq!(metadata(sasl, &good), Ok(1), "others carry on");
    // A mechanism the listener does not offer.
    let scram = [
        ("security.protocol", "sasl_plaintext"),
        ("sasl.mechanism", "SCRAM-SHA-256"),
        ("sasl.username", "alice"),
        ("sasl.password", "alice-secret"),
    ];
    assert!(metadata(sasl, &scram).is_err());
    // No client certificate where one is required.
    let ca = pki.path("ca.pem");
    let no_certificate = [("security.protocol", "ssl"), ("ssl.ca.location", &ca)];
    assert!(metadata(listeners.get("MTLS"), &no_certificate).is_err());
    assert_eq!(metadata(listeners.get("SSL"), &no_certificate), Ok(1));
    // A client that does not trust the broker's certificate.
    let untrusting = [("security.protocol", "ssl")];
    assert!(metadata(listeners.get("SSL"), &untrusting).is_err());
}

fn raw_connect(address: &str) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

fn handshake(stream: &mut TcpStream, mechanism: &str, version: i16) -> SaslHandshakeResponse {
    call(
        stream,
        ApiKey::SaslHandshake,
        version,
        &SaslHandshakeRequest::default().with_mechanism(StrBytes::from_string(mechanism.into())),
    )
}

#[test]
fn the_sasl_protocol_refuses_what_breaks_it() {
    let pki = Pki::new();
    let (broker, listeners) = secure_broker(&pki, &[("connections.max.idle.ms", "2000")]);
    let sasl = listeners.get("SASL_PLAINTEXT");

    // ApiVersions is answered before authentication; Metadata closes the connection.
    let mut stream = raw_connect(sasl);
    let versions: ApiVersionsResponse = call(
        &mut stream,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("t"))
            .with_client_software_version(StrBytes::from_static_str("1")),
    );
    assert_eq!(versions.error_code, 0);
    for (key, max) in [(17, 1), (36, 2)] {
        let api = versions.api_keys.iter().find(|k| k.api_key == key).unwrap();
        assert_eq!(api.max_version, max);
    }
    stream
        .write_all(&frame(ApiKey::Metadata, 12, 1, &MetadataRequest::default()))
        .unwrap();
    assert!(is_closed(&mut stream), "Metadata before authentication");

    // An unsupported mechanism: UNSUPPORTED_SASL_MECHANISM with the enabled ones, then close.
    let mut stream = raw_connect(sasl);
    let response = handshake(&mut stream, "GSSAPI", 1);
    assert_eq!(response.error_code, 33);
    assert_eq!(
        response.mechanisms,
        vec![StrBytes::from_static_str("PLAIN")]
    );
    assert!(is_closed(&mut stream));

    // After the handshake only SaslAuthenticate is accepted.
    let mut stream = raw_connect(sasl);
    assert_eq!(handshake(&mut stream, "PLAIN", 1).error_code, 0);
    stream
        .write_all(&frame(ApiKey::Metadata, 12, 1, &MetadataRequest::default()))
        .unwrap();
    assert!(is_closed(&mut stream), "Metadata during authentication");

    // A token larger than sasl.server.max.receive.size closes the connection unread.
    let mut stream = raw_connect(sasl);
    assert_eq!(handshake(&mut stream, "PLAIN", 1).error_code, 0);
    let huge = SaslAuthenticateRequest::default().with_auth_bytes(vec![0u8; 600_000].into());
    assert!(
        write_refused(&mut stream, &frame(ApiKey::SaslAuthenticate, 2, 2, &huge)),
        "oversized token"
    );

    // A malformed PLAIN token: SASL_AUTHENTICATION_FAILED, then close.
    let mut stream = raw_connect(sasl);
    assert_eq!(handshake(&mut stream, "PLAIN", 1).error_code, 0);
    let garbage =
        SaslAuthenticateRequest::default().with_auth_bytes(b"no separators".to_vec().into());
    let failed: SaslAuthenticateResponse = call(&mut stream, ApiKey::SaslAuthenticate, 2, &garbage);
    assert_eq!(failed.error_code, 58);
    assert!(is_closed(&mut stream));

    // v1 handshake + SaslAuthenticate, then requests are served as the user.
    let mut stream = raw_connect(sasl);
    assert_eq!(handshake(&mut stream, "PLAIN", 1).error_code, 0);
    let token = SaslAuthenticateRequest::default()
        .with_auth_bytes(b"\0alice\0alice-secret".to_vec().into());
    let ok: SaslAuthenticateResponse = call(&mut stream, ApiKey::SaslAuthenticate, 2, &token);
    assert_eq!(ok.error_code, 0);
    assert_eq!(ok.session_lifetime_ms, 0);
    let served: MetadataResponse = call(
        &mut stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default(),
    );
    assert_eq!(served.brokers.len(), 1);

    // v0 handshake: the token is a raw frame, and so is the (empty) answer.
    let mut stream = raw_connect(sasl);
    assert_eq!(handshake(&mut stream, "PLAIN", 0).error_code, 0);
    let raw_token = b"\0admin\0admin-secret";
    let mut raw = (raw_token.len() as i32).to_be_bytes().to_vec();
    raw.extend_from_slice(raw_token);
    stream.write_all(&raw).unwrap();
    assert_eq!(read_frame(&mut stream).unwrap().len(), 0);
    let served: MetadataResponse = call(
        &mut stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default(),
    );
    assert_eq!(served.brokers.len(), 1);

    // SaslHandshake on a listener without SASL: ILLEGAL_SASL_STATE.
    let mut plain = raw_connect(&broker.bootstrap);
    assert_eq!(handshake(&mut plain, "PLAIN", 1).error_code, 34);

    // A TLS client hello that never finishes: closed after connections.max.idle.ms.
    let mut stalled = raw_connect(listeners.get("SSL"));
    stalled
        .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01])
        .unwrap();
    let started = std::time::Instant::now();
    assert!(is_closed(&mut stalled), "a stalled TLS handshake is closed");
    assert!(started.elapsed() < Duration::from_secs(9));
    // And the broker still serves everyone.
    let mut again = raw_connect(sasl);
    assert_eq!(handshake(&mut again, "PLAIN", 1).error_code, 0);
}

#[test]
fn sessions_expire_without_reauthentication_and_survive_with_it() {
    let pki = Pki::new();
    let (_broker, listeners) = secure_broker(
        &pki,
        &[(
            "listener.name.sasl_plaintext.connections.max.reauth.ms",
            "4000",
        )],
    );
    let sasl = listeners.get("SASL_PLAINTEXT");
    let authenticate = |stream: &mut TcpStream, user: &str, password: &str| {
        assert_eq!(handshake(stream, "PLAIN", 1).error_code, 0);
        let token = SaslAuthenticateRequest::default()
            .with_auth_bytes(format!("\0{user}\0{password}").into_bytes().into());
        let response: SaslAuthenticateResponse = call(stream, ApiKey::SaslAuthenticate, 2, &token);
        response
    };
    let mut stream = raw_connect(sasl);
    let first = authenticate(&mut stream, "alice", "alice-secret");
    assert_eq!(first.error_code, 0);
    assert_eq!(first.session_lifetime_ms, 4000);
    // Re-authenticating in time keeps the connection.
    std::thread::sleep(Duration::from_millis(2000));
    assert_eq!(
        authenticate(&mut stream, "alice", "alice-secret").error_code,
        0
    );
    std::thread::sleep(Duration::from_millis(2000));
    let served: MetadataResponse = call(
        &mut stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default(),
    );
    assert_eq!(served.brokers.len(), 1, "within the renewed session");
    // Re-authenticating as someone else fails.
    let other = authenticate(&mut stream, "admin", "admin-secret");
    assert_eq!(other.error_code, 58);
    assert!(is_closed(&mut stream));
    // A session left to expire: the next request closes the connection.
    let mut lapsed = raw_connect(sasl);
    assert_eq!(
        authenticate(&mut lapsed, "alice", "alice-secret").error_code,
        0
    );
    std::thread::sleep(Duration::from_millis(4300));
    lapsed
        .write_all(&frame(ApiKey::Metadata, 12, 1, &MetadataRequest::default()))
        .unwrap();
    assert!(is_closed(&mut lapsed), "expired session");
}

fn alter_scram(
    bootstrap: &str,
    user: &str,
    password: &str,
    mechanism: i8,
    iterations: i32,
) -> AlterUserScramCredentialsResponse {
    use alter_user_scram_credentials_request::ScramCredentialUpsertion;
    let scram = sluice::auth::scram::ScramMechanism::from_type_id(mechanism)
        .unwrap_or(sluice::auth::scram::ScramMechanism::Sha256);
    let salt = b"a salt of the client's choosing".to_vec();
    let salted = scram.salted_password(password.as_bytes(), &salt, iterations.max(1) as u32);
    let request = AlterUserScramCredentialsRequest::default().with_upsertions(vec![
        ScramCredentialUpsertion::default()
            .with_name(StrBytes::from_string(user.into()))
            .with_mechanism(mechanism)
            .with_iterations(iterations)
            .with_salt(salt.into())
            .with_salted_password(salted.into()),
    ]);
    let mut stream = raw_connect(bootstrap);
    call(&mut stream, ApiKey::AlterUserScramCredentials, 0, &request)
}

fn scram_settings<'a>(
    mechanism: &'a str,
    user: &'a str,
    password: &'a str,
) -> [(&'a str, &'a str); 4] {
    [
        ("security.protocol", "sasl_plaintext"),
        ("sasl.mechanism", mechanism),
        ("sasl.username", user),
        ("sasl.password", password),
    ]
}

/// `sluice format --add-scram`, as `kafka-storage format --add-scram`: the users exist from
/// the first start, a malformed argument writes nothing, a formatted directory is refused;
/// raw SCRAM exchanges with a wrong nonce or proof are refused.
#[test]
fn users_added_at_format_time_authenticate_from_the_first_start() {
    let dir = tempfile::tempdir().unwrap();
    let format = |args: &[&str]| {
        std::process::Command::new(common::broker_binary())
            .arg("format")
            .arg("--override")
            .arg(format!("log.dirs={}", dir.path().display()))
            .args(args)
            .output()
            .unwrap()
    };
    let bad = format(&["--add-scram", "SCRAM-SHA-256=[name=alice]"]);
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("'password' or 'saltedpassword'"),
        "{bad:?}"
    );
    assert!(!dir.path().join("meta.properties").exists());
    let formatted = format(&[
        "-t",
        "q1Sh-9_ISia_zwGINzRvyQ",
        "--standalone",
        "--add-scram",
        "SCRAM-SHA-256=[name=alice,password=alice-secret]",
        "--add-scram",
        "SCRAM-SHA-512=[name=bob,iterations=8192,password=bob-secret]",
    ]);
    assert!(formatted.status.success(), "{formatted:?}");
    assert!(!format(&[]).status.success(), "formatted twice");
    assert!(format(&["--ignore-formatted"]).status.success());

    let broker = Broker::start_in(
        dir.path(),
        &[
            (
                "listeners",
                "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            ),
            ("sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512"),
        ],
    );
    let sasl = listener_address(&broker, "SASL_PLAINTEXT");
    assert_eq!(
        metadata(
            &sasl,
            &scram_settings("SCRAM-SHA-256", "alice", "alice-secret")
        ),
        Ok(1)
    );
    assert_eq!(
        metadata(&sasl, &scram_settings("SCRAM-SHA-512", "bob", "bob-secret")),
        Ok(1)
    );
    assert!(metadata(&sasl, &scram_settings("SCRAM-SHA-256", "bob", "bob-secret")).is_err());
    let log = broker.log_text();
    assert!(
        log.contains("Replayed UserScramCredentialRecord creating new entry for alice with mechanism SCRAM-SHA-256."),
        "{log}"
    );
    let meta = std::fs::read_to_string(dir.path().join("meta.properties")).unwrap();
    assert!(meta.contains("cluster.id=q1Sh-9_ISia_zwGINzRvyQ"), "{meta}");

    // Raw SCRAM exchanges for that user: a client-final message with another nonce, or with
    // a wrong proof, is SASL_AUTHENTICATION_FAILED and the connection closes.
    let authenticate = |stream: &mut TcpStream, token: &[u8]| -> SaslAuthenticateResponse {
        call(
            stream,
            ApiKey::SaslAuthenticate,
            2,
            &SaslAuthenticateRequest::default().with_auth_bytes(token.to_vec().into()),
        )
    };
    for (case, final_of) in [
        (
            "a wrong nonce",
            (|_: &str| "c=biws,r=someone-elses-nonce,p=AAAA".to_string()) as fn(&str) -> String,
        ),
        ("a wrong proof", |nonce: &str| {
            format!("c=biws,r={nonce},p=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=")
        }),
    ] {
        let mut stream = raw_connect(&sasl);
        assert_eq!(handshake(&mut stream, "SCRAM-SHA-256", 1).error_code, 0);
        let first = authenticate(&mut stream, b"n,,n=alice,r=clientnonce123");
        assert_eq!(first.error_code, 0, "{case}: {first:?}");
        let server_first = String::from_utf8(first.auth_bytes.to_vec()).unwrap();
        let nonce = server_first
            .split(',')
            .find_map(|f| f.strip_prefix("r="))
            .unwrap()
            .to_string();
        assert!(nonce.starts_with("clientnonce123"), "{server_first}");
        let last = authenticate(&mut stream, final_of(&nonce).as_bytes());
        assert_eq!(last.error_code, 58, "{case}: {last:?}");
        assert!(is_closed(&mut stream), "{case}");
    }
    // alice is still served.
    assert_eq!(
        metadata(
            &sasl,
            &scram_settings("SCRAM-SHA-256", "alice", "alice-secret")
        ),
        Ok(1)
    );
}

#[test]
fn scram_credentials_made_through_the_admin_api_work_at_once_and_survive_a_restart() {
    let pki = Pki::new();
    let scram_overrides = [(
        "sasl.enabled.mechanisms",
        "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    )];
    let (mut broker, listeners) = secure_broker(&pki, &scram_overrides);
    let sasl = listeners.get("SASL_PLAINTEXT").to_string();
    assert!(metadata(&sasl, &scram_settings("SCRAM-SHA-256", "carol", "carol-pw")).is_err());

    let created = alter_scram(&broker.bootstrap, "carol", "carol-pw", 1, 8192);
    assert_eq!(created.results.len(), 1);
    assert_eq!(created.results[0].error_code, 0, "{created:?}");
    assert_eq!(
        alter_scram(&broker.bootstrap, "carol", "carol-512", 2, 4096).results[0].error_code,
        0
    );
    // Used at once, by librdkafka's own SCRAM.
    round_trip(
        &sasl,
        &scram_settings("SCRAM-SHA-256", "carol", "carol-pw"),
        "over-scram",
        20,
    );
    assert_eq!(
        metadata(
            &sasl,
            &scram_settings("SCRAM-SHA-512", "carol", "carol-512")
        ),
        Ok(1)
    );
    assert!(metadata(&sasl, &scram_settings("SCRAM-SHA-256", "carol", "wrong")).is_err());
    assert!(metadata(&sasl, &scram_settings("SCRAM-SHA-512", "carol", "carol-pw")).is_err());

    // Kafka's validation, per user.
    for (mechanism, iterations, error) in [(1, 100, 93), (1, 20_000, 93), (9, 4096, 33)] {
        let refused = alter_scram(&broker.bootstrap, "dave", "pw", mechanism, iterations);
        assert_eq!(refused.results[0].error_code, error, "{refused:?}");
    }
    let mut stream = raw_connect(&broker.bootstrap);
    let missing: AlterUserScramCredentialsResponse = call(
        &mut stream,
        ApiKey::AlterUserScramCredentials,
        0,
        &AlterUserScramCredentialsRequest::default().with_deletions(vec![
            alter_user_scram_credentials_request::ScramCredentialDeletion::default()
                .with_name(StrBytes::from_static_str("nobody"))
                .with_mechanism(1),
        ]),
    );
    assert_eq!(missing.results[0].error_code, 91);

    let describe = |bootstrap: &str| -> DescribeUserScramCredentialsResponse {
        let mut stream = raw_connect(bootstrap);
        call(
            &mut stream,
            ApiKey::DescribeUserScramCredentials,
            0,
            &DescribeUserScramCredentialsRequest::default(),
        )
    };
    let described = describe(&broker.bootstrap);
    assert_eq!(described.results.len(), 1);
    let infos: Vec<(i8, i32)> = described.results[0]
        .credential_infos
        .iter()
        .map(|c| (c.mechanism, c.iterations))
        .collect();
    assert_eq!(infos, vec![(1, 8192), (2, 4096)]);

    // Restart: credentials come back from the metadata log.
    let dir = broker.dir().to_path_buf();
    broker.stop();
    let restarted = Broker::start_in(
        &dir,
        &[
            (
                "listeners",
                "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            ),
            ("sasl.enabled.mechanisms", "SCRAM-SHA-256"),
        ],
    );
    let sasl = listener_address(&restarted, "SASL_PLAINTEXT");
    assert_eq!(
        metadata(&sasl, &scram_settings("SCRAM-SHA-256", "carol", "carol-pw")),
        Ok(1)
    );
    assert_eq!(describe(&restarted.bootstrap).results.len(), 1);
}
