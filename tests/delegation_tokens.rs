//! Delegation tokens (KIP-48) driven with raw frames: created, described, renewed and expired
//! over SASL as Kafka answers them (who may, the lifetimes, the errors), refused on PLAINTEXT
//! and without `delegation.token.secret.key`; a SCRAM exchange with `tokenauth=true`
//! authenticates as the token's owner (and may not ask for tokens), until the token is
//! expired; a cluster node forwards the requests to the active controller. Kafka's own
//! `kafka-delegation-tokens` and clients run the same in `compat/kafka-scripts`.

#![allow(clippy::unwrap_used)]

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use common::raw::call;
use common::{Broker, Cluster, wait_until};
use kafka_protocol::messages::create_delegation_token_request::CreatableRenewers;
use kafka_protocol::messages::describe_delegation_token_request::DescribeDelegationTokenOwner;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use sha2::Digest;
use sluice::auth::scram::ScramMechanism;
use std::net::TcpStream;
use std::time::Duration;

const SECRET: &str = "a-secret-of-the-cluster";
const JAAS: &str = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret" user_eve="eve-secret";"#;

const NOT_FOUND: i16 = 62;
const OWNER_MISMATCH: i16 = 63;
const REQUEST_NOT_ALLOWED: i16 = 64;
const AUTH_DISABLED: i16 = 61;
const EXPIRED: i16 = 66;
const SASL_AUTHENTICATION_FAILED: i16 = 58;

fn text(value: &str) -> StrBytes {
    StrBytes::from_string(value.to_string())
}

/// The listeners and SASL settings of [`broker`]: a PLAINTEXT and a SASL_PLAINTEXT listener
/// (PLAIN users admin, alice, bob, eve; SCRAM for tokens).
const SASL_OVERRIDES: [(&str, &str); 3] = [
    (
        "listeners",
        "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
    ),
    (
        "sasl.enabled.mechanisms",
        "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
    ),
    ("listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS),
];

/// A broker with [`SASL_OVERRIDES`] and `extra`; returns it with the SASL listener's address.
fn broker(extra: &[(&str, &str)]) -> (Broker, String) {
    let mut overrides = SASL_OVERRIDES.to_vec();
    overrides.extend_from_slice(extra);
    let broker = Broker::start(&overrides);
    let sasl = listener_address(&broker, "SASL_PLAINTEXT");
    (broker, sasl)
}

fn listener_address(broker: &Broker, name: &str) -> String {
    let marker = format!("listener={name}");
    let mut found = None;
    wait_until(Duration::from_secs(20), || {
        found = broker.log_text().lines().find_map(|line| {
            let (address, listener) = line.split("listening on ").nth(1)?.split_once(' ')?;
            (listener.trim() == marker).then(|| address.to_string())
        });
        found.is_some()
    });
    found.unwrap_or_else(|| panic!("no {name} listener:\n{}", broker.log_text()))
}

fn connect(address: &str) -> TcpStream {
    let stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    stream
}

fn handshake(stream: &mut TcpStream, mechanism: &str) {
    let response: SaslHandshakeResponse = call(
        stream,
        ApiKey::SaslHandshake,
        1,
        &SaslHandshakeRequest::default().with_mechanism(text(mechanism)),
    );
    assert_eq!(response.error_code, 0, "{mechanism}: {response:?}");
}

fn authenticate(stream: &mut TcpStream, token: Vec<u8>) -> SaslAuthenticateResponse {
    call(
        stream,
        ApiKey::SaslAuthenticate,
        2,
        &SaslAuthenticateRequest::default().with_auth_bytes(token.into()),
    )
}

/// A connection authenticated with SASL PLAIN.
fn plain(address: &str, user: &str) -> TcpStream {
    let mut stream = connect(address);
    handshake(&mut stream, "PLAIN");
    let response = authenticate(&mut stream, format!("\0{user}\0{user}-secret").into_bytes());
    assert_eq!(response.error_code, 0, "{user}: {response:?}");
    stream
}

/// A SCRAM-SHA-512 exchange with a delegation token, as Kafka's client runs it (the token id
/// as user name, the base64 hmac as password, `tokenauth=true`). The connection and the last
/// answer's error code.
fn token_login(address: &str, token_id: &str, hmac: &[u8]) -> (TcpStream, i16) {
    let mechanism = ScramMechanism::Sha512;
    let password = BASE64.encode(hmac);
    let mut stream = connect(address);
    handshake(&mut stream, "SCRAM-SHA-512");
    let bare = format!("n={token_id},r=clientnonce,tokenauth=true");
    let first = authenticate(&mut stream, format!("n,,{bare}").into_bytes());
    if first.error_code != 0 {
        return (stream, first.error_code);
    }
    let server_first = String::from_utf8(first.auth_bytes.to_vec()).unwrap();
    let field = |key: &str| {
        server_first
            .split(',')
            .find_map(|f| f.strip_prefix(key))
            .unwrap()
            .to_string()
    };
    let (nonce, salt, iterations) = (field("r="), field("s="), field("i="));
    let salted = mechanism.salted_password(
        password.as_bytes(),
        &BASE64.decode(salt).unwrap(),
        iterations.parse().unwrap(),
    );
    let client_key = mechanism.hmac(&salted, b"Client Key");
    let stored_key = sha2::Sha512::digest(&client_key).to_vec();
    let without_proof = format!("c=biws,r={nonce}");
    let auth_message = format!("{bare},{server_first},{without_proof}");
    let signature = mechanism.hmac(&stored_key, auth_message.as_bytes());
    let proof: Vec<u8> = client_key
        .iter()
        .zip(&signature)
        .map(|(k, s)| k ^ s)
        .collect();
    let last = authenticate(
        &mut stream,
        format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes(),
    );
    (stream, last.error_code)
}

fn create(
    stream: &mut TcpStream,
    owner: Option<&str>,
    renewers: &[&str],
) -> CreateDelegationTokenResponse {
    let request = CreateDelegationTokenRequest::default()
        .with_owner_principal_type(owner.map(|_| text("User")))
        .with_owner_principal_name(owner.map(text))
        .with_renewers(
            renewers
                .iter()
                .map(|r| {
                    CreatableRenewers::default()
                        .with_principal_type(text("User"))
                        .with_principal_name(text(r))
                })
                .collect(),
        )
        .with_max_lifetime_ms(-1);
    call(stream, ApiKey::CreateDelegationToken, 3, &request)
}

fn renew(stream: &mut TcpStream, hmac: &[u8], period: i64) -> RenewDelegationTokenResponse {
    let request = RenewDelegationTokenRequest::default()
        .with_hmac(hmac.to_vec().into())
        .with_renew_period_ms(period);
    call(stream, ApiKey::RenewDelegationToken, 2, &request)
}

fn expire(stream: &mut TcpStream, hmac: &[u8], period: i64) -> ExpireDelegationTokenResponse {
    let request = ExpireDelegationTokenRequest::default()
        .with_hmac(hmac.to_vec().into())
        .with_expiry_time_period_ms(period);
    call(stream, ApiKey::ExpireDelegationToken, 2, &request)
}

fn describe(stream: &mut TcpStream, owners: Option<&[&str]>) -> DescribeDelegationTokenResponse {
    let request = DescribeDelegationTokenRequest::default().with_owners(owners.map(|owners| {
        owners
            .iter()
            .map(|o| {
                DescribeDelegationTokenOwner::default()
                    .with_principal_type(text("User"))
                    .with_principal_name(text(o))
            })
            .collect()
    }));
    call(stream, ApiKey::DescribeDelegationToken, 3, &request)
}

#[test]
fn tokens_are_made_renewed_expired_and_authenticate_as_their_owner() {
    let (broker, sasl) = broker(&[
        ("delegation.token.secret.key", SECRET),
        ("delegation.token.expiry.time.ms", "60000"),
        ("delegation.token.max.lifetime.ms", "120000"),
    ]);
    let mut alice = plain(&sasl, "alice");

    // PLAINTEXT may not ask for tokens at all.
    let mut anonymous = connect(&broker.bootstrap);
    assert_eq!(
        create(&mut anonymous, None, &[]).error_code,
        REQUEST_NOT_ALLOWED
    );
    assert_eq!(
        describe(&mut anonymous, None).error_code,
        REQUEST_NOT_ALLOWED
    );

    let created = create(&mut alice, None, &["bob"]);
    assert_eq!(created.error_code, 0, "{created:?}");
    assert_eq!(
        (
            created.principal_name.as_str(),
            created.token_requester_principal_name.as_str()
        ),
        ("alice", "alice")
    );
    assert_eq!(created.token_id.len(), 22);
    assert_eq!(
        created.max_timestamp_ms - created.issue_timestamp_ms,
        120_000
    );
    assert_eq!(
        created.expiry_timestamp_ms - created.issue_timestamp_ms,
        60_000
    );
    let hmac = created.hmac.to_vec();
    assert_eq!(hmac.len(), 64, "HmacSHA512");

    // Described with its hmac, by owner or renewer; an empty owner list asks for none.
    let all = describe(&mut alice, None);
    assert_eq!(all.error_code, 0);
    assert_eq!(all.tokens.len(), 1);
    assert_eq!(all.tokens[0].hmac.to_vec(), hmac);
    assert_eq!(all.tokens[0].renewers[0].principal_name.as_str(), "bob");
    assert_eq!(describe(&mut alice, Some(&["bob"])).tokens.len(), 1);
    assert_eq!(describe(&mut alice, Some(&["eve"])).tokens.len(), 0);
    assert_eq!(describe(&mut alice, Some(&[])).tokens.len(), 0);

    // The token authenticates as alice, over SCRAM with tokenauth; that connection may not
    // ask for more tokens.
    let (mut as_token, code) = token_login(&sasl, created.token_id.as_str(), &hmac);
    assert_eq!(code, 0, "{}", broker.log_text());
    assert_eq!(
        create(&mut as_token, None, &[]).error_code,
        REQUEST_NOT_ALLOWED
    );
    let (_, code) = token_login(&sasl, created.token_id.as_str(), b"a wrong hmac");
    assert_eq!(code, SASL_AUTHENTICATION_FAILED);

    // The owner and the renewer renew; eve may not; an unknown hmac is not found.
    let mut bob = plain(&sasl, "bob");
    let mut eve = plain(&sasl, "eve");
    assert_eq!(renew(&mut eve, &hmac, 1_000).error_code, OWNER_MISMATCH);
    assert_eq!(renew(&mut bob, b"unknown", 1_000).error_code, NOT_FOUND);
    let renewed = renew(&mut bob, &hmac, 5_000);
    assert_eq!(renewed.error_code, 0);
    assert!(renewed.expiry_timestamp_ms < created.expiry_timestamp_ms);
    assert_eq!(
        describe(&mut alice, None).tokens[0].expiry_timestamp,
        renewed.expiry_timestamp_ms
    );

    // Expired after a period it no longer renews; expired at once it is gone, and no longer
    // authenticates.
    assert_eq!(expire(&mut alice, &hmac, 0).error_code, 0);
    wait_until(Duration::from_secs(5), || {
        renew(&mut alice, &hmac, 1_000).error_code == EXPIRED
    });
    assert_eq!(renew(&mut alice, &hmac, 1_000).error_code, EXPIRED);
    let gone = expire(&mut alice, &hmac, -1);
    assert_eq!(gone.error_code, 0);
    assert_eq!(describe(&mut alice, None).tokens.len(), 0);
    let (_, code) = token_login(&sasl, created.token_id.as_str(), &hmac);
    assert_eq!(code, SASL_AUTHENTICATION_FAILED);

    // Kept across a restart: a second token, found again after it.
    let second = create(&mut alice, None, &[]);
    assert_eq!(second.error_code, 0);
    drop((alice, bob, eve, as_token, anonymous));
    let dir = broker.dir().to_path_buf();
    let mut broker = broker;
    broker.stop();
    let mut overrides = SASL_OVERRIDES.to_vec();
    overrides.push(("delegation.token.secret.key", SECRET));
    let restarted = Broker::start_in(&dir, &overrides);
    let sasl = listener_address(&restarted, "SASL_PLAINTEXT");
    let (_, code) = token_login(&sasl, second.token_id.as_str(), &second.hmac);
    assert_eq!(code, 0, "{}", restarted.log_text());
    drop(broker);
}

#[test]
fn without_a_secret_key_tokens_are_disabled() {
    let (_broker, sasl) = broker(&[]);
    let mut alice = plain(&sasl, "alice");
    assert_eq!(create(&mut alice, None, &[]).error_code, AUTH_DISABLED);
    assert_eq!(renew(&mut alice, b"x", 1).error_code, AUTH_DISABLED);
    assert_eq!(expire(&mut alice, b"x", 1).error_code, AUTH_DISABLED);
    assert_eq!(describe(&mut alice, None).error_code, AUTH_DISABLED);
}

#[test]
fn a_node_forwards_token_requests_to_the_active_controller() {
    // The client listener speaks SASL_PLAINTEXT, between brokers too (JAAS's own
    // username/password); the controller listener stays PLAINTEXT.
    const CLUSTER_JAAS: &str = r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret" user_eve="eve-secret";"#;
    let mut cluster = Cluster::start_named(
        3,
        "BROKER",
        &[
            ("delegation.token.secret.key", SECRET),
            (
                "listener.security.protocol.map",
                "BROKER:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
            ),
            ("inter.broker.listener.name", "BROKER"),
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("sasl.mechanism.inter.broker.protocol", "PLAIN"),
            ("listener.name.broker.plain.sasl.jaas.config", CLUSTER_JAAS),
        ],
    );
    assert!(wait_until(Duration::from_secs(30), || cluster
        .active_controller()
        .is_some()));
    let controller = cluster.active_controller().unwrap();
    let other = &cluster.nodes[(controller + 1) % 3];
    let mut alice = plain(&other.bootstrap, "alice");
    let created = create(&mut alice, None, &["bob"]);
    assert_eq!(created.error_code, 0, "{created:?}");
    let mut bob = plain(&other.bootstrap, "bob");
    assert_eq!(renew(&mut bob, &created.hmac, 1_000).error_code, 0);
    let mut eve = plain(&other.bootstrap, "eve");
    assert_eq!(
        renew(&mut eve, &created.hmac, 1_000).error_code,
        OWNER_MISMATCH
    );
    // Every node knows the token (and its hmac) soon after.
    for node in &cluster.nodes {
        let mut alice = plain(&node.bootstrap, "alice");
        assert!(wait_until(Duration::from_secs(15), || describe(
            &mut alice, None
        )
        .tokens
        .len()
            == 1));
    }
}
