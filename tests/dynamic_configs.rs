//! Dynamic broker configs (KIP-226) against a real broker: changed per broker and as the
//! cluster default with IncrementalAlterConfigs (raw frames) and AlterConfigs (librdkafka),
//! described with Kafka's sources, applied without a restart (a retention change deletes old
//! segments, a segment size change rolls, the per-address connection limit follows), refused
//! with Kafka's messages where Kafka refuses, and kept across a restart.

#![allow(clippy::unwrap_used)]

mod common;

use common::raw::{call, connect};
use common::{Broker, wait_until};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::describe_configs_response::DescribeConfigsResourceResult;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::admin::{AdminClient, AdminOptions, AlterConfig, ResourceSpecifier};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use std::net::TcpStream;
use std::time::Duration;

const BROKER: i8 = 4;
const TOPIC: i8 = 2;
const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// IncrementalAlterConfigs of one resource; its error code and message.
fn alter(
    stream: &mut TcpStream,
    kind: i8,
    name: &str,
    ops: &[(&str, i8, Option<&str>)],
) -> (i16, Option<String>) {
    let configs = ops
        .iter()
        .map(|(key, op, value)| {
            AlterableConfig::default()
                .with_name(s(key))
                .with_config_operation(*op)
                .with_value(value.map(s))
        })
        .collect();
    let request = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(kind)
            .with_resource_name(s(name))
            .with_configs(configs),
    ]);
    let response: IncrementalAlterConfigsResponse =
        call(stream, ApiKey::IncrementalAlterConfigs, 1, &request);
    let result = &response.responses[0];
    (
        result.error_code,
        result.error_message.as_ref().map(|m| m.to_string()),
    )
}

/// DescribeConfigs (with synonyms) of one resource: its entries by name.
fn describe(
    stream: &mut TcpStream,
    kind: i8,
    name: &str,
) -> std::collections::BTreeMap<String, DescribeConfigsResourceResult> {
    let request = DescribeConfigsRequest::default()
        .with_resources(vec![
            DescribeConfigsResource::default()
                .with_resource_type(kind)
                .with_resource_name(s(name)),
        ])
        .with_include_synonyms(true);
    let response: DescribeConfigsResponse = call(stream, ApiKey::DescribeConfigs, 4, &request);
    let result = &response.results[0];
    assert_eq!(result.error_code, 0, "{:?}", result.error_message);
    result
        .configs
        .iter()
        .map(|c| (c.name.to_string(), c.clone()))
        .collect()
}

/// (source, name, value) of each synonym.
fn synonyms(entry: &DescribeConfigsResourceResult) -> Vec<(i8, String, Option<String>)> {
    entry
        .synonyms
        .iter()
        .map(|s| {
            (
                s.source,
                s.name.to_string(),
                s.value.as_ref().map(|v| v.to_string()),
            )
        })
        .collect()
}

fn value(entry: &DescribeConfigsResourceResult) -> Option<String> {
    entry.value.as_ref().map(|v| v.to_string())
}

/// Whether a new connection is served (ApiVersions answered) rather than closed.
fn served(broker: &Broker) -> bool {
    let mut stream = connect(broker);
    let request = ApiVersionsRequest::default();
    let frame = common::raw::frame(ApiKey::ApiVersions, 0, 1, &request);
    use std::io::Write;
    stream.write_all(&frame).is_ok() && common::raw::read_frame(&mut stream).is_some()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_broker_configs_apply_without_a_restart() {
    let mut broker = Broker::start(&[
        ("log.retention.hours", "2"),
        ("log.segment.bytes", "5000000"),
        ("log.retention.check.interval.ms", "200"),
    ]);
    let mut admin_conn = connect(&broker);

    // Kafka's refusals and messages (compat/java's DynamicConfigs runs the same on Kafka).
    for (name, ops, message) in [
        (
            "",
            vec![("num.partitions", SET, Some("3"))],
            "Cannot update these configs dynamically: [num.partitions]",
        ),
        (
            "",
            vec![("ssl.keystore.location", SET, Some("/x"))],
            "These security configs can be dynamically updated only per-listener using the listener prefix: [ssl.keystore.location]",
        ),
        (
            "",
            vec![("listeners", SET, Some("PLAINTEXT://127.0.0.1:0"))],
            "Cannot update these configs at default cluster level, broker id must be specified: [listeners]",
        ),
        (
            "",
            vec![("log.retention.ms", SET, Some("abc"))],
            "Invalid value abc for configuration log.retention.ms: Not a number of type LONG",
        ),
        (
            "7",
            vec![("log.retention.ms", SET, Some("1"))],
            "Unexpected broker id, expected 1, but received 7",
        ),
    ] {
        let (code, text) = alter(&mut admin_conn, BROKER, name, &ops);
        assert_eq!((code, text.as_deref()), (42, Some(message)), "{ops:?}");
    }

    // max.connections.per.ip follows at once: with 2, a third connection from here is closed.
    let (code, _) = alter(
        &mut admin_conn,
        BROKER,
        "",
        &[("max.connections.per.ip", SET, Some("2"))],
    );
    assert_eq!(code, 0);
    let second = connect(&broker);
    assert!(!served(&broker), "a third connection from this address");
    // An override for this address (max.connections.per.ip.overrides) lets a third one in.
    let (code, text) = alter(
        &mut admin_conn,
        BROKER,
        "",
        &[("max.connections.per.ip.overrides", SET, Some("127.0.0.1:3"))],
    );
    assert_eq!(code, 0, "{text:?}");
    assert!(
        served(&broker),
        "a third connection under the address's override"
    );
    let (code, _) = alter(
        &mut admin_conn,
        BROKER,
        "",
        &[
            ("max.connections.per.ip", DELETE, None),
            ("max.connections.per.ip.overrides", DELETE, None),
        ],
    );
    assert_eq!(code, 0);
    assert!(served(&broker), "the limit is back to its static value");
    drop(second);

    // Segments roll at a per-broker segment size; a cluster-wide retention deletes them.
    let (code, text) = alter(
        &mut admin_conn,
        BROKER,
        "1",
        &[("log.segment.bytes", SET, Some("2000"))],
    );
    assert_eq!(code, 0, "{text:?}");
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("linger.ms", "0")
        .create()
        .unwrap();
    let payload = vec![b'x'; 300];
    for _ in 0..60 {
        producer
            .send(
                FutureRecord::<(), _>::to("dyn").payload(&payload),
                Duration::from_secs(10),
            )
            .await
            .unwrap();
    }
    producer.flush(Duration::from_secs(10)).unwrap();
    let segments = || {
        std::fs::read_dir(broker.dir().join("dyn-0"))
            .map(|d| {
                d.filter(|e| {
                    e.as_ref()
                        .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "log"))
                })
                .count()
            })
            .unwrap_or(0)
    };
    assert!(
        segments() > 5,
        "segments rolled at 2000 bytes: {}",
        segments()
    );
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", "dyn-watermarks")
        .create()
        .unwrap();
    let (low, high) = consumer
        .fetch_watermarks("dyn", 0, Duration::from_secs(10))
        .unwrap();
    assert_eq!((low, high), (0, 60));

    let (code, _) = alter(
        &mut admin_conn,
        BROKER,
        "",
        &[
            ("log.retention.ms", SET, Some("1000")),
            ("log.cleanup.policy", APPEND, Some("compact")),
        ],
    );
    assert_eq!(code, 0);
    let described = describe(&mut admin_conn, BROKER, "");
    assert_eq!(
        described.keys().collect::<Vec<_>>(),
        ["log.cleanup.policy", "log.retention.ms"],
        "the default resource lists the dynamic defaults only"
    );
    assert_eq!(
        value(&described["log.cleanup.policy"]).as_deref(),
        Some("delete,compact")
    );
    let (code, _) = alter(
        &mut admin_conn,
        BROKER,
        "",
        &[("log.cleanup.policy", DELETE, None)],
    );
    assert_eq!(code, 0);
    assert!(
        wait_until(Duration::from_secs(30), || {
            consumer
                .fetch_watermarks("dyn", 0, Duration::from_secs(5))
                .is_ok_and(|(low, _)| low > 0)
        }),
        "retention deletes old segments without a restart"
    );

    // Sources and synonyms in Kafka's order (as Kafka 4.4 describes the same layers).
    let own = describe(&mut admin_conn, BROKER, "1");
    let retention = &own["log.retention.ms"];
    assert_eq!(
        (value(retention).as_deref(), retention.config_source),
        (Some("1000"), 3)
    );
    assert!(!retention.read_only);
    assert_eq!(
        synonyms(retention),
        vec![
            (3, "log.retention.ms".into(), Some("1000".into())),
            (4, "log.retention.hours".into(), Some("2".into())),
            (5, "log.retention.hours".into(), Some("168".into())),
        ]
    );
    let segment = &own["log.segment.bytes"];
    assert_eq!(
        (value(segment).as_deref(), segment.config_source),
        (Some("2000"), 2)
    );
    assert_eq!(
        synonyms(segment),
        vec![
            (2, "log.segment.bytes".into(), Some("2000".into())),
            (4, "log.segment.bytes".into(), Some("5000000".into())),
            (5, "log.segment.bytes".into(), Some("1073741824".into())),
        ]
    );
    assert!(own["num.partitions"].read_only);
    let topic = describe(&mut admin_conn, TOPIC, "dyn");
    assert_eq!(
        (
            value(&topic["retention.ms"]).as_deref(),
            topic["retention.ms"].config_source
        ),
        (Some("1000"), 3)
    );
    assert_eq!(
        (
            value(&topic["segment.bytes"]).as_deref(),
            topic["segment.bytes"].config_source
        ),
        (Some("2000"), 2)
    );

    // librdkafka's AlterConfigs (the legacy form) replaces this broker's dynamic set.
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    let opts = AdminOptions::new().request_timeout(Some(Duration::from_secs(10)));
    let change =
        AlterConfig::new(ResourceSpecifier::Broker(1)).set("log.retention.bytes", "100000");
    let altered = admin.alter_configs([&change], &opts).await.unwrap();
    assert!(altered[0].is_ok(), "{:?}", altered[0]);
    let legacy = AlterConfigsRequest::default().with_resources(vec![
        kafka_protocol::messages::alter_configs_request::AlterConfigsResource::default()
            .with_resource_type(BROKER)
            .with_resource_name(s("1"))
            .with_configs(vec![
                kafka_protocol::messages::alter_configs_request::AlterableConfig::default()
                    .with_name(s("auto.create.topics.enable"))
                    .with_value(Some(s("false"))),
            ]),
    ]);
    let response: AlterConfigsResponse = call(&mut admin_conn, ApiKey::AlterConfigs, 2, &legacy);
    assert_eq!(
        (
            response.responses[0].error_code,
            response.responses[0]
                .error_message
                .as_deref()
                .map(|m| m.to_string())
        ),
        (
            42,
            Some("Cannot update these configs dynamically: [auto.create.topics.enable]".into())
        ),
        "a static config cannot change"
    );
    let own = describe(&mut admin_conn, BROKER, "1");
    assert_eq!(
        own["log.segment.bytes"].config_source, 4,
        "replaced: static again"
    );
    assert_eq!(
        (
            value(&own["log.retention.bytes"]).as_deref(),
            own["log.retention.bytes"].config_source
        ),
        (Some("100000"), 2)
    );

    // Kept in the metadata: applied again after a restart, before the logs load.
    drop((admin, consumer, producer, admin_conn));
    let dir = broker.dir().to_path_buf();
    assert_eq!(broker.stop(), Some(0));
    let broker = Broker::start_in(&dir, &[("log.retention.hours", "2")]);
    let mut stream = connect(&broker);
    let own = describe(&mut stream, BROKER, "1");
    assert_eq!(
        (
            value(&own["log.retention.bytes"]).as_deref(),
            own["log.retention.bytes"].config_source
        ),
        (Some("100000"), 2)
    );
    assert_eq!(
        (
            value(&own["log.retention.ms"]).as_deref(),
            own["log.retention.ms"].config_source
        ),
        (Some("1000"), 3)
    );
    // Back to the static configs: the cluster default deleted.
    let (code, _) = alter(
        &mut stream,
        BROKER,
        "",
        &[("log.retention.ms", DELETE, None)],
    );
    assert_eq!(code, 0);
    let topic = describe(&mut stream, TOPIC, "dyn");
    assert_eq!(
        (
            value(&topic["retention.ms"]).as_deref(),
            topic["retention.ms"].config_source
        ),
        (Some("7200000"), 5),
        "static log.retention.hours: Kafka describes retention.ms as a default"
    );
}

/// GROUP configs of consumer and streams groups (Kafka 4.4's names, bounds and messages),
/// applied to a live consumer group: the heartbeat interval it is given changes.
#[test]
fn group_configs_are_checked_and_reach_live_groups() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    const GROUP: i8 = 32;
    for (config, value, message) in [
        (
            "consumer.session.timeout.ms",
            "1000",
            "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
        ),
        (
            "consumer.heartbeat.interval.ms",
            "50000",
            "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.",
        ),
        (
            "streams.session.timeout.ms",
            "40000",
            "streams.session.timeout.ms must be in the range 45000 to 60000 inclusive.",
        ),
        (
            "streams.num.standby.replicas",
            "5",
            "streams.num.standby.replicas must be less than or equal to 2",
        ),
        ("foo.bar", "1", "Unknown group config name: foo.bar"),
        (
            "share.delivery.count.limit",
            "11",
            "share.delivery.count.limit must be in the range 2 to 10 inclusive.",
        ),
        (
            "share.partition.max.record.locks",
            "5000",
            "share.partition.max.record.locks must be in the range 100 to 4000 inclusive.",
        ),
        (
            "streams.assignment.interval.ms",
            "20000",
            "streams.assignment.interval.ms must be in the range 0 to 15000 inclusive.",
        ),
        (
            "streams.assignor.name",
            "balanced",
            "streams.assignor.name 'balanced' is not a registered task assignor. Registered assignors are: [sticky].",
        ),
        (
            "streams.rack.aware.assignment.tags",
            "zone, zone",
            "streams.rack.aware.assignment.tags must not contain duplicate tag keys.",
        ),
        (
            "errors.deadletterqueue.topic.name",
            "__dlq",
            "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'",
        ),
    ] {
        let (code, text) = alter(&mut stream, GROUP, "g-cfg", &[(config, SET, Some(value))]);
        assert_eq!(
            (code, text.as_deref()),
            (40, Some(message)),
            "{config}={value}"
        );
    }

    // A consumer protocol member joins and is given the broker's heartbeat interval; after
    // the group's config changes, its next heartbeat is given the group's.
    // Polled while the group coordinator loads (COORDINATOR_LOAD_IN_PROGRESS,
    // COORDINATOR_NOT_AVAILABLE) just after the start.
    let heartbeat = |stream: &mut TcpStream, member: &str, epoch: i32| {
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s("g-cfg")))
            .with_member_id(s(member))
            .with_member_epoch(epoch)
            .with_rebalance_timeout_ms(30_000)
            .with_subscribed_topic_names(Some(vec![TopicName(s("cfg-topic"))]))
            .with_topic_partitions(Some(vec![]));
        let mut response = ConsumerGroupHeartbeatResponse::default();
        assert!(wait_until(Duration::from_secs(30), || {
            response = call(stream, ApiKey::ConsumerGroupHeartbeat, 1, &request);
            !matches!(response.error_code, 14 | 15)
        }));
        assert_eq!(response.error_code, 0, "{:?}", response.error_message);
        response
    };
    let member = "a-member-of-the-test-group";
    let joined = heartbeat(&mut stream, member, 0);
    assert_eq!(joined.heartbeat_interval_ms, 5000);
    let (code, text) = alter(
        &mut stream,
        GROUP,
        "g-cfg",
        &[
            ("consumer.heartbeat.interval.ms", SET, Some("6000")),
            ("consumer.session.timeout.ms", SET, Some("50000")),
            ("streams.num.standby.replicas", SET, Some("1")),
        ],
    );
    assert_eq!(code, 0, "{text:?}");
    let again = heartbeat(&mut stream, member, joined.member_epoch);
    assert_eq!(again.heartbeat_interval_ms, 6000);

    let described = describe(&mut stream, GROUP, "g-cfg");
    let session = &described["consumer.session.timeout.ms"];
    assert_eq!(
        (value(session).as_deref(), session.config_source),
        (Some("50000"), 8)
    );
    assert_eq!(
        synonyms(session),
        vec![
            (
                8,
                "consumer.session.timeout.ms".into(),
                Some("50000".into())
            ),
            (
                5,
                "group.consumer.session.timeout.ms".into(),
                Some("45000".into())
            ),
        ]
    );
    let reset = &described["share.auto.offset.reset"];
    assert_eq!(
        synonyms(reset),
        vec![(5, "share.auto.offset.reset".into(), Some("latest".into()))]
    );
    // Kafka 4.4 describes these 21 for a group (`kafka-configs --describe --all`).
    let kafkas: std::collections::BTreeSet<&str> = [
        "consumer.assignment.interval.ms",
        "consumer.heartbeat.interval.ms",
        "consumer.session.timeout.ms",
        "errors.deadletterqueue.copy.record.enable",
        "errors.deadletterqueue.topic.name",
        "share.assignment.interval.ms",
        "share.auto.offset.reset",
        "share.delivery.count.limit",
        "share.heartbeat.interval.ms",
        "share.isolation.level",
        "share.partition.max.record.locks",
        "share.record.lock.duration.ms",
        "share.renew.acknowledge.enable",
        "share.session.timeout.ms",
        "streams.assignment.interval.ms",
        "streams.assignor.name",
        "streams.heartbeat.interval.ms",
        "streams.initial.rebalance.delay.ms",
        "streams.num.standby.replicas",
        "streams.rack.aware.assignment.tags",
        "streams.session.timeout.ms",
    ]
    .into();
    let ours: std::collections::BTreeSet<&str> = described.keys().map(String::as_str).collect();
    assert_eq!(ours, kafkas);
    let assignor = &described["streams.assignor.name"];
    assert_eq!(
        synonyms(assignor),
        vec![(5, "group.streams.assignors".into(), Some("sticky".into()))]
    );
}

/// The leaf certificate an SSL listener presents to a new connection (rustls, trusting the
/// test CA).
fn served_certificate(address: &str, ca_pem: &str) -> Vec<u8> {
    use std::sync::Arc;
    let mut roots = rustls::RootCertStore::empty();
    for block in pem::parse_many(std::fs::read(ca_pem).unwrap()).unwrap() {
        roots
            .add(rustls_pki_types::CertificateDer::from(
                block.into_contents(),
            ))
            .unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
    let mut connection = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    let mut socket = TcpStream::connect(address).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    while connection.is_handshaking() {
        connection.complete_io(&mut socket).unwrap();
    }
    connection.peer_certificates().unwrap()[0].as_ref().to_vec()
}

/// The certificate in a PEM keystore file.
fn keystore_certificate(path: &str) -> Vec<u8> {
    pem::parse_many(std::fs::read(path).unwrap())
        .unwrap()
        .into_iter()
        .find(|b| b.tag() == "CERTIFICATE")
        .unwrap()
        .into_contents()
}

/// A listener's keystore replaced at runtime (`listener.name.ssl.ssl.keystore.location` for
/// this broker), renewed in place by setting the same location again, and replacements Kafka
/// refuses (another subject, lost subject alternative names) refused with its message while
/// the listener keeps serving its certificate.
#[test]
fn a_listeners_keystore_is_replaced_without_a_restart() {
    let pki = common::pki::Pki::new();
    let (keystore, ca) = (pki.path("server.pem"), pki.path("ca.pem"));
    let broker = Broker::start(&[
        ("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"),
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.location", &keystore),
        ("ssl.truststore.type", "PEM"),
        ("ssl.truststore.location", &ca),
    ]);
    let mut ssl = String::new();
    assert!(wait_until(Duration::from_secs(20), || {
        ssl = broker
            .log_text()
            .lines()
            .find(|l| l.contains("listener=SSL"))
            .and_then(|l| l.split("listening on ").nth(1))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_default()
            .to_string();
        !ssl.is_empty()
    }));
    assert_eq!(
        served_certificate(&ssl, &ca),
        keystore_certificate(&keystore)
    );
    let mut stream = connect(&broker);
    let location = "listener.name.ssl.ssl.keystore.location";

    let renewed = pki.server_keystore("renewed.pem", &["localhost", "127.0.0.1"], None);
    let (code, text) = alter(&mut stream, BROKER, "1", &[(location, SET, Some(&renewed))]);
    assert_eq!(code, 0, "{text:?}");
    assert_eq!(
        served_certificate(&ssl, &ca),
        keystore_certificate(&renewed)
    );

    // Renewed in place: the same location set again reads the file again.
    pki.server_keystore("renewed.pem", &["localhost", "127.0.0.1"], None);
    let (code, text) = alter(&mut stream, BROKER, "1", &[(location, SET, Some(&renewed))]);
    assert_eq!(code, 0, "{text:?}");
    assert_eq!(
        served_certificate(&ssl, &ca),
        keystore_certificate(&renewed)
    );

    let fewer_names = pki.server_keystore("fewer.pem", &["localhost"], None);
    let other_subject = pki.server_keystore(
        "other.pem",
        &["localhost", "127.0.0.1"],
        Some("someone else"),
    );
    for (path, why) in [
        (&fewer_names, "Keystore SubjectAltNames do not match"),
        (&other_subject, "Keystore DistinguishedName does not match"),
    ] {
        let (code, text) = alter(&mut stream, BROKER, "1", &[(location, SET, Some(path))]);
        let text = text.unwrap_or_default();
        assert_eq!(code, 42, "{text}");
        assert!(
            text.starts_with(&format!(
                "Validation of dynamic config update of SSLFactory failed: {why}"
            )),
            "{text}"
        );
    }
    assert_eq!(
        served_certificate(&ssl, &ca),
        keystore_certificate(&renewed),
        "a refused change leaves the listener as it was"
    );
    let described = describe(&mut stream, BROKER, "1");
    let entry = &described[location];
    assert_eq!(
        (value(entry).as_deref(), entry.config_source),
        (Some(renewed.as_str()), 2)
    );
}

/// KIP-612: a listener's `max.connection.creation.rate`, set as a cluster default at runtime,
/// holds the connections over it (served after their throttle time, none refused), and
/// Kafka's socket-server metrics show it.
#[test]
fn a_listeners_connection_creation_rate_holds_new_connections() {
    let broker = Broker::start(&[("http.listener", "127.0.0.1:0")]);
    let mut admin = connect(&broker);
    let rate = "listener.name.plaintext.max.connection.creation.rate";
    assert_eq!(
        alter(&mut admin, BROKER, "", &[(rate, SET, Some("2"))]),
        (0, None)
    );
    let described = describe(&mut admin, BROKER, "");
    assert_eq!(described.get(rate).and_then(value).as_deref(), Some("2"));
    // 2/s over a new sensor's 10 s: 20 connections go through; the ones after wait.
    let connections: Vec<TcpStream> = (0..24).map(|_| connect(&broker)).collect();
    drop(connections);
    assert!(served(&broker), "a held connection is served, not refused");
    let metrics = broker.scrape_metrics();
    let metric = |name: &str| metrics.value(name);
    let throttle = metric(
        "kafka_server_socket_server_metrics_listener_plaintext_connection_accept_throttle_time",
    );
    assert!(throttle > 0.0 && throttle <= 1000.0, "{throttle}");
    assert!(
        metric("kafka_server_socket_server_metrics_listener_plaintext_connection_accept_rate")
            > 0.0
    );
    assert!(
        metric("kafka_network_acceptor_acceptorblockedpercent_count_total{listener=\"PLAINTEXT\"}")
            > 0.0
    );
    assert!(
        metric("kafka_server_socket_server_metrics_listener_plaintext_ip_connection_accept_throttle_time")
            .is_nan()
    );
}
