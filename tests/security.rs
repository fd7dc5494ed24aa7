//! Security end to end: TLS listeners (server certificates, client certificates required),
//! SASL PLAIN over SASL_PLAINTEXT and SASL_SSL with librdkafka, a wrong password refused while
//! other clients carry on, and the authentication protocol's edges with raw frames (requests
//! before authentication, an unsupported mechanism, an oversized token, a TLS handshake that
//! never finishes). Certificates are made at run time with rcgen.
#![allow(clippy::unwrap_used)]

mod common;

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

/// The bound address of one of the broker's listeners, from its "listening on" line.
fn listener_address(broker: &Broker, name: &str) -> String {
    let marker = format!("listener={name}");
    let mut found = None;
    common::wait_until(Duration::from_secs(20), || {
        found = broker.log_text().lines().find_map(|line| {
            let (address, listener) = line.split("listening on ").nth(1)?.split_once(' ')?;
            (listener.trim() == marker).then(|| address.to_string())
        });
        found.is_some()
    });
    found.unwrap_or_else(|| panic!("no {name} listener:\n{}", broker.log_text()))
}

/// A raw connection authenticated with SASL PLAIN.
fn sasl_connect(address: &str, user: &str, password: &str) -> TcpStream {
    let mut stream = raw_connect(address);
    assert_eq!(handshake(&mut stream, "PLAIN", 1).error_code, 0);
    let token = SaslAuthenticateRequest::default()
        .with_auth_bytes(format!("\0{user}\0{password}").into_bytes().into());
    let response: SaslAuthenticateResponse = call(&mut stream, ApiKey::SaslAuthenticate, 2, &token);
    assert_eq!(response.error_code, 0, "{user} authenticates");
    stream
}

/// resource type, name, pattern, principal, operation, permission (Kafka's ids).
type Acl<'a> = (i8, &'a str, i8, &'a str, i8, i8);

fn create_acls(stream: &mut TcpStream, acls: &[Acl<'_>]) -> CreateAclsResponse {
    use create_acls_request::AclCreation;
    let creations = acls
        .iter()
        .map(
            |(resource_type, name, pattern, principal, operation, permission)| {
                AclCreation::default()
                    .with_resource_type(*resource_type)
                    .with_resource_name(StrBytes::from_string(name.to_string()))
                    .with_resource_pattern_type(*pattern)
                    .with_principal(StrBytes::from_string(principal.to_string()))
                    .with_host(StrBytes::from_static_str("*"))
                    .with_operation(*operation)
                    .with_permission_type(*permission)
            },
        )
        .collect();
    call(
        stream,
        ApiKey::CreateAcls,
        3,
        &CreateAclsRequest::default().with_creations(creations),
    )
}

fn describe_all_acls(stream: &mut TcpStream) -> DescribeAclsResponse {
    call(
        stream,
        ApiKey::DescribeAcls,
        3,
        &DescribeAclsRequest::default()
            .with_resource_name_filter(None)
            .with_principal_filter(None)
            .with_host_filter(None)
            .with_resource_type_filter(1)
            .with_pattern_type_filter(1)
            .with_operation(1)
            .with_permission_type(1),
    )
}

fn sasl_settings<'a>(user: &'a str, password: &'a str) -> [(&'a str, &'a str); 4] {
    [
        ("security.protocol", "sasl_plaintext"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", user),
        ("sasl.password", password),
    ]
}

const TOPIC: i8 = 2;
const GROUP: i8 = 3;
const CLUSTER: i8 = 4;
const LITERAL: i8 = 3;
const PREFIXED: i8 = 4;
const READ: i8 = 3;
const WRITE: i8 = 4;
const CREATE: i8 = 5;
const DENY: i8 = 2;
const ALLOW: i8 = 3;

#[test]
fn acls_allow_and_deny_as_kafkas_standard_authorizer_and_survive_a_restart() {
    let jaas = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";"#;
    let overrides = [
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        ),
        ("sasl.enabled.mechanisms", "PLAIN"),
        ("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:admin"),
    ];
    let mut broker = Broker::start(&overrides);
    let sasl_of = |broker: &Broker| listener_address(broker, "SASL_PLAINTEXT");
    let sasl = sasl_of(&broker);
    let alice = sasl_settings("alice", "alice-secret");
    let bob = sasl_settings("bob", "bob-secret");

    // Only APIs whose checks exist are offered (all of them now).
    let mut admin = sasl_connect(&sasl, "admin", "admin-secret");
    let versions: ApiVersionsResponse = call(
        &mut admin,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("t"))
            .with_client_software_version(StrBytes::from_static_str("1")),
    );
    let offered: Vec<i16> = versions.api_keys.iter().map(|k| k.api_key).collect();
    assert!(offered.contains(&30) && offered.contains(&0) && offered.contains(&1));
    assert!(offered.contains(&24), "AddPartitionsToTxn is authorized");
    assert!(offered.contains(&78), "ShareFetch is authorized");

    // The super user creates a topic and ACLs: alice may read and write topics named
    // orders*, but not orders-secret, and use groups named g-orders*.
    let created: CreateTopicsResponse = call(
        &mut admin,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(
                ["orders-eu", "orders-secret"]
                    .iter()
                    .map(|name| {
                        create_topics_request::CreatableTopic::default()
                            .with_name(TopicName(StrBytes::from_static_str(name)))
                            .with_num_partitions(1)
                            .with_replication_factor(1)
                    })
                    .collect(),
            )
            .with_timeout_ms(10_000),
    );
    assert!(
        created.topics.iter().all(|t| t.error_code == 0),
        "{created:?}"
    );
    let acls = create_acls(
        &mut admin,
        &[
            (TOPIC, "orders", PREFIXED, "User:alice", READ, ALLOW),
            (TOPIC, "orders", PREFIXED, "User:alice", WRITE, ALLOW),
            (TOPIC, "orders-secret", LITERAL, "User:alice", WRITE, DENY),
            (GROUP, "g-orders", PREFIXED, "User:alice", READ, ALLOW),
        ],
    );
    assert!(acls.results.iter().all(|r| r.error_code == 0), "{acls:?}");
    let invalid = create_acls(
        &mut admin,
        &[(CLUSTER, "other", LITERAL, "User:x", CREATE, ALLOW)],
    );
    assert_eq!(invalid.results[0].error_code, 42);

    // Alice produces and consumes with a group; bob may do neither.
    round_trip(&sasl, &alice, "orders-eu", 20);
    let bob_producer: rdkafka::producer::FutureProducer = client(&sasl, &bob)
        .set("message.timeout.ms", "5000")
        .create()
        .unwrap();
    let delivery = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(bob_producer.send(
            rdkafka::producer::FutureRecord::<(), str>::to("orders-eu").payload("x"),
            Duration::from_secs(5),
        ));
    let delivery = delivery.map(|_| ()).map_err(|(e, _)| e.to_string());
    let refused = delivery.unwrap_err();
    assert!(
        refused.contains("authorization"),
        "bob's produce: {refused}"
    );

    // Metadata lists only what the principal may describe.
    let topics_of = |settings: &[(&str, &str)]| -> Vec<String> {
        let consumer: BaseConsumer = client(&sasl, settings).create().unwrap();
        let metadata = consumer
            .fetch_metadata(None, Duration::from_secs(10))
            .unwrap();
        let mut names: Vec<String> = metadata
            .topics()
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(topics_of(&alice), ["orders-eu", "orders-secret"]);
    assert!(topics_of(&bob).is_empty(), "bob sees no topic");
    // DENY wins over the prefixed ALLOW.
    let mut alice_raw = sasl_connect(&sasl, "alice", "alice-secret");
    let produced = common::raw::produce(
        &mut alice_raw,
        "orders-secret",
        1,
        common::raw::batch(1, 10).freeze(),
    )
    .unwrap();
    assert_eq!(produced.error_code, 29);
    // Admin APIs need the cluster permission.
    assert_eq!(describe_all_acls(&mut alice_raw).error_code, 31);
    assert_eq!(describe_all_acls(&mut admin).resources.len(), 3);
    // Auto-creation needs CREATE.
    let auto: MetadataResponse = call(
        &mut alice_raw,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default()
            .with_allow_auto_topic_creation(true)
            .with_topics(Some(vec![
                metadata_request::MetadataRequestTopic::default()
                    .with_name(Some(TopicName(StrBytes::from_static_str("orders-new")))),
            ])),
    );
    assert_eq!(auto.topics[0].error_code, 29);
    // An anonymous PLAINTEXT client sees nothing.
    let consumer: BaseConsumer = client(&broker.bootstrap, &[]).create().unwrap();
    let anonymous = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    assert_eq!(anonymous.topics().len(), 0);
    drop(consumer);

    // ACLs come back after a restart.
    let dir = broker.dir().to_path_buf();
    broker.stop();
    let restarted = Broker::start_in(&dir, &overrides);
    let sasl = sasl_of(&restarted);
    let mut admin = sasl_connect(&sasl, "admin", "admin-secret");
    assert_eq!(describe_all_acls(&mut admin).resources.len(), 3);
    // Deleting alice's group ACL: her group requests are refused.
    let deleted: DeleteAclsResponse = call(
        &mut admin,
        ApiKey::DeleteAcls,
        3,
        &DeleteAclsRequest::default().with_filters(vec![
            delete_acls_request::DeleteAclsFilter::default()
                .with_resource_name_filter(None)
                .with_principal_filter(None)
                .with_host_filter(None)
                .with_resource_type_filter(GROUP)
                .with_pattern_type_filter(1)
                .with_operation(1)
                .with_permission_type(1),
        ]),
    );
    assert_eq!(deleted.filter_results[0].matching_acls.len(), 1);
    let mut alice_raw = sasl_connect(&sasl, "alice", "alice-secret");
    let coordinator: FindCoordinatorResponse = call(
        &mut alice_raw,
        ApiKey::FindCoordinator,
        3,
        &FindCoordinatorRequest::default().with_key(StrBytes::from_static_str("g-orders-eu")),
    );
    assert_eq!(coordinator.error_code, 30);
}

/// Share groups under ACLs (KIP-932's checks): READ on the group to join, fetch and
/// acknowledge, DESCRIBE on subscribed topics, READ on fetched topics, DESCRIBE / READ /
/// DELETE on the group for its offsets.
#[test]
fn share_groups_meet_the_acls() {
    let jaas = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";"#;
    let broker = Broker::start(&[
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        ),
        ("sasl.enabled.mechanisms", "PLAIN"),
        ("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:admin"),
    ]);
    let sasl = listener_address(&broker, "SASL_PLAINTEXT");
    let mut admin = sasl_connect(&sasl, "admin", "admin-secret");
    let created: CreateTopicsResponse = call(
        &mut admin,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(
                ["shared", "private"]
                    .iter()
                    .map(|name| {
                        create_topics_request::CreatableTopic::default()
                            .with_name(TopicName(StrBytes::from_static_str(name)))
                            .with_num_partitions(1)
                            .with_replication_factor(1)
                    })
                    .collect(),
            )
            .with_timeout_ms(10_000),
    );
    let id_of = |name: &str| {
        created
            .topics
            .iter()
            .find(|t| t.name.as_str() == name)
            .map(|t| t.topic_id)
            .unwrap()
    };
    let (shared, private) = (id_of("shared"), id_of("private"));
    let acls = create_acls(
        &mut admin,
        &[
            (TOPIC, "shared", LITERAL, "User:alice", READ, ALLOW),
            (GROUP, "sg", LITERAL, "User:alice", READ, ALLOW),
        ],
    );
    assert!(acls.results.iter().all(|r| r.error_code == 0), "{acls:?}");

    let s = |text: &str| StrBytes::from_string(text.to_string());
    let heartbeat = |stream: &mut TcpStream, group: &str, member: &str, topic: &str| {
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s(group)))
            .with_member_id(s(member))
            .with_member_epoch(0)
            .with_subscribed_topic_names(Some(vec![TopicName(s(topic))]));
        let mut response = ShareGroupHeartbeatResponse::default();
        // The first use loads the coordinator's topics: retried meanwhile, as clients do.
        assert!(common::wait_until(Duration::from_secs(10), || {
            response = call(stream, ApiKey::ShareGroupHeartbeat, 1, &request);
            !matches!(response.error_code, 14 | 15)
        }));
        response
    };
    let mut alice = sasl_connect(&sasl, "alice", "alice-secret");
    let joined = heartbeat(&mut alice, "sg", "aaaaaaaaaaaaaaaaaaaaaa", "shared");
    assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
    assert!(joined.member_epoch > 0);
    let topic_refused = heartbeat(&mut alice, "sg", "bbbbbbbbbbbbbbbbbbbbbb", "private");
    assert_eq!(
        topic_refused.error_code, 29,
        "DESCRIBE on a subscribed topic"
    );
    let group_refused = heartbeat(&mut alice, "other", "cccccccccccccccccccccc", "shared");
    assert_eq!(group_refused.error_code, 30, "READ on the group");

    let fetch = |stream: &mut TcpStream, group: &str| -> ShareFetchResponse {
        use share_fetch_request::{FetchPartition, FetchTopic};
        let request = ShareFetchRequest::default()
            .with_group_id(Some(GroupId(s(group))))
            .with_member_id(Some(s("aaaaaaaaaaaaaaaaaaaaaa")))
            .with_share_session_epoch(0)
            .with_max_wait_ms(2000)
            .with_min_bytes(1)
            .with_max_records(10)
            .with_max_bytes(1 << 20)
            .with_topics(
                [shared, private]
                    .into_iter()
                    .map(|id| {
                        FetchTopic::default()
                            .with_topic_id(id)
                            .with_partitions(vec![
                                FetchPartition::default().with_partition_index(0),
                            ])
                    })
                    .collect(),
            );
        call(stream, ApiKey::ShareFetch, 1, &request)
    };
    // The first fetch starts the share partition at the end of the log
    // (share.auto.offset.reset=latest); what is produced after it is delivered.
    assert_eq!(fetch(&mut alice, "sg").error_code, 0);
    let produced =
        common::raw::produce(&mut admin, "shared", 1, common::raw::batch(3, 10).freeze()).unwrap();
    assert_eq!(produced.error_code, 0);
    let fetched = fetch(&mut alice, "sg");
    assert_eq!(fetched.error_code, 0, "{fetched:?}");
    let error_of = |id| {
        fetched
            .responses
            .iter()
            .find(|t| t.topic_id == id)
            .map(|t| t.partitions[0].error_code)
    };
    assert_eq!(error_of(shared), Some(0));
    let acquired: i64 = fetched
        .responses
        .iter()
        .filter(|t| t.topic_id == shared)
        .flat_map(|t| t.partitions[0].acquired_records.iter())
        .map(|r| r.last_offset - r.first_offset + 1)
        .sum();
    assert_eq!(acquired, 3, "alice reads the shared topic: {fetched:?}");
    assert_eq!(error_of(private), Some(29), "READ on a fetched topic");
    assert_eq!(fetch(&mut alice, "other").error_code, 30);

    // Offsets: DESCRIBE (implied by READ) to describe, READ to alter, DELETE to delete.
    let describe = |stream: &mut TcpStream| -> DescribeShareGroupOffsetsResponse {
        use describe_share_group_offsets_request::{
            DescribeShareGroupOffsetsRequestGroup, DescribeShareGroupOffsetsRequestTopic,
        };
        call(
            stream,
            ApiKey::DescribeShareGroupOffsets,
            0,
            &DescribeShareGroupOffsetsRequest::default().with_groups(vec![
                DescribeShareGroupOffsetsRequestGroup::default()
                    .with_group_id(GroupId(s("sg")))
                    .with_topics(Some(
                        ["shared", "private"]
                            .iter()
                            .map(|t| {
                                DescribeShareGroupOffsetsRequestTopic::default()
                                    .with_topic_name(TopicName(s(t)))
                                    .with_partitions(vec![0])
                            })
                            .collect(),
                    )),
            ]),
        )
    };
    let described = describe(&mut alice);
    let group = &described.groups[0];
    assert_eq!(group.error_code, 0, "{described:?}");
    let private_offsets = group
        .topics
        .iter()
        .find(|t| t.topic_name.as_str() == "private")
        .unwrap();
    assert_eq!(private_offsets.partitions[0].error_code, 29);
    let mut bob = sasl_connect(&sasl, "bob", "bob-secret");
    assert_eq!(describe(&mut bob).groups[0].error_code, 30);
    let altered: AlterShareGroupOffsetsResponse = call(
        &mut bob,
        ApiKey::AlterShareGroupOffsets,
        0,
        &AlterShareGroupOffsetsRequest::default().with_group_id(GroupId(s("sg"))),
    );
    assert_eq!(altered.error_code, 30);
    let deleted: DeleteShareGroupOffsetsResponse = call(
        &mut alice,
        ApiKey::DeleteShareGroupOffsets,
        0,
        &DeleteShareGroupOffsetsRequest::default().with_group_id(GroupId(s("sg"))),
    );
    assert_eq!(deleted.error_code, 30, "DELETE on the group");
    let described_groups = |stream: &mut TcpStream| -> ShareGroupDescribeResponse {
        call(
            stream,
            ApiKey::ShareGroupDescribe,
            1,
            &ShareGroupDescribeRequest::default().with_group_ids(vec![GroupId(s("sg"))]),
        )
    };
    assert_eq!(described_groups(&mut alice).groups[0].error_code, 0);
    assert_eq!(described_groups(&mut bob).groups[0].error_code, 30);
}

/// A PKCS12 store holding `key` with its chain, or (no key) the trusted certificates.
fn pkcs12(path: &Path, password: &str, key: Option<&[u8]>, certs: &[&[u8]]) {
    use p12_keystore::{Certificate, KeyStore, KeyStoreEntry, PrivateKey, PrivateKeyChain};
    let mut store = KeyStore::new();
    let certs: Vec<Certificate> = certs
        .iter()
        .map(|der| Certificate::from_der(der).unwrap())
        .collect();
    match key {
        Some(key) => store.add_entry(
            "broker",
            KeyStoreEntry::PrivateKeyChain(PrivateKeyChain::new(
                "broker-key",
                PrivateKey::from_der(key).unwrap(),
                certs,
            )),
        ),
        None => {
            for (i, cert) in certs.into_iter().enumerate() {
                store.add_entry(&format!("ca-{i}"), KeyStoreEntry::Certificate(cert));
            }
        }
    }
    std::fs::write(path, store.writer(password).write().unwrap()).unwrap();
}

/// PKCS12 keystore and truststore, client certificates required, and the principal a
/// certificate maps to seen through the ACLs it gets.
#[test]
fn pkcs12_stores_and_mapped_certificate_principals_meet_the_acls() {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa,
        KeyPair,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let mut ca_name = DistinguishedName::new();
    ca_name.push(DnType::CommonName, "PKCS12 test CA");
    ca_params.distinguished_name = ca_name;
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    std::fs::write(path("ca.pem"), ca.pem()).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&server_key, &ca)
        .unwrap();
    pkcs12(
        &path("broker.p12"),
        "store-secret",
        Some(&server_key.serialize_der()),
        &[server.der(), ca.der()],
    );
    pkcs12(&path("trust.p12"), "trust-secret", None, &[ca.der()]);
    for (user, common_name) in [("alice", "Alice"), ("bob", "Bob")] {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut name = DistinguishedName::new();
        name.push(DnType::OrganizationName, "Acme");
        name.push(DnType::CommonName, common_name);
        params.distinguished_name = name;
        let cert = params.signed_by(&key, &ca).unwrap();
        std::fs::write(path(&format!("{user}.pem")), cert.pem()).unwrap();
        std::fs::write(path(&format!("{user}.key")), key.serialize_pem()).unwrap();
    }
    let keystore = path("broker.p12").display().to_string();
    let truststore = path("trust.p12").display().to_string();
    let broker = Broker::start(&[
        ("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"),
        ("ssl.keystore.type", "PKCS12"),
        ("ssl.keystore.location", &keystore),
        ("ssl.keystore.password", "store-secret"),
        // keytool's default type name, holding PKCS12 as keytool writes it since Java 9.
        ("ssl.truststore.type", "JKS"),
        ("ssl.truststore.location", &truststore),
        ("ssl.truststore.password", "trust-secret"),
        ("ssl.client.auth", "required"),
        (
            "ssl.principal.mapping.rules",
            "RULE:^CN=([^,]+),O=Acme$/$1/L,DEFAULT",
        ),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:ANONYMOUS"),
    ]);
    let ssl = listener_address(&broker, "SSL");
    // The PLAINTEXT listener's anonymous super user grants alice (the mapped name of
    // "CN=Alice,O=Acme") the topic and group.
    let mut admin = raw_connect(&broker.bootstrap);
    let acls = create_acls(
        &mut admin,
        &[
            (TOPIC, "certs", LITERAL, "User:alice", WRITE, ALLOW),
            (TOPIC, "certs", LITERAL, "User:alice", READ, ALLOW),
            (TOPIC, "certs", LITERAL, "User:alice", CREATE, ALLOW),
            (GROUP, "g-certs", LITERAL, "User:alice", READ, ALLOW),
        ],
    );
    assert!(acls.results.iter().all(|r| r.error_code == 0), "{acls:?}");
    let ca_pem = path("ca.pem").display().to_string();
    let settings = |user: &str| -> Vec<(String, String)> {
        vec![
            ("security.protocol".into(), "ssl".into()),
            ("ssl.ca.location".into(), ca_pem.clone()),
            (
                "ssl.certificate.location".into(),
                path(&format!("{user}.pem")).display().to_string(),
            ),
            (
                "ssl.key.location".into(),
                path(&format!("{user}.key")).display().to_string(),
            ),
        ]
    };
    let alice = settings("alice");
    let alice: Vec<(&str, &str)> = alice
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    round_trip(&ssl, &alice, "certs", 10);
    let bob = settings("bob");
    let bob: Vec<(&str, &str)> = bob.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let consumer: BaseConsumer = client(&ssl, &bob).create().unwrap();
    let seen = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    assert!(
        seen.topics().iter().all(|t| t.name() != "certs"),
        "bob may not describe the topic"
    );
}

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
