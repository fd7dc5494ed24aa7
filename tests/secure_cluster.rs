//! A three-node cluster secured end to end: every listener — the one clients and replication
//! use, and the controller listener Raft, broker registration and forwarding use — is
//! SASL_SSL with PLAIN, with Kafka's StandardAuthorizer and the nodes' own principal a super
//! user. acks=all survives killing the partition leader, the killed node rejoins the ISR over
//! SASL_SSL, a client without ACLs sees nothing, a transaction's markers cross the brokers, and
//! the controller listener refuses a principal that is not a node (and a wrong password).
//! Certificates are made at run time.
#![allow(clippy::unwrap_used)]

mod common;

use common::pki::Pki;
use common::{Cluster, wait_until};
use kafka_protocol::messages::{
    ApiKey, BrokerRegistrationRequest, BrokerRegistrationResponse, CreateTopicsRequest,
    CreateTopicsResponse,
};
use rdkafka::ClientConfig;
use rdkafka::Message;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use sluice::config::BrokerConfig;
use sluice::net::{PeerConnection, PeerSecurity, RequestError};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

const JAAS: &str = r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";"#;

fn secured_cluster(pki: &Pki) -> Cluster {
    let server = pki.path("server.pem");
    let ca = pki.path("ca.pem");
    Cluster::start_named(
        3,
        "BROKER",
        &[
            (
                "listener.security.protocol.map",
                "BROKER:SASL_SSL,CONTROLLER:SASL_SSL",
            ),
            ("inter.broker.listener.name", "BROKER"),
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("sasl.mechanism.inter.broker.protocol", "PLAIN"),
            ("sasl.mechanism.controller.protocol", "PLAIN"),
            ("listener.name.broker.plain.sasl.jaas.config", JAAS),
            ("listener.name.controller.plain.sasl.jaas.config", JAAS),
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", &server),
            ("ssl.truststore.type", "PEM"),
            ("ssl.truststore.location", &ca),
            (
                "authorizer.class.name",
                "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            ),
            ("super.users", "User:admin"),
            ("offsets.topic.replication.factor", "3"),
        ],
    )
}

fn client(bootstrap: &str, ca: &str, user: &str, password: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config
        .set("bootstrap.servers", bootstrap)
        .set("security.protocol", "sasl_ssl")
        .set("ssl.ca.location", ca)
        .set("sasl.mechanism", "PLAIN")
        .set("sasl.username", user)
        .set("sasl.password", password)
        .set("socket.timeout.ms", "10000");
    config
}

/// (leader, ISR size) of partition 0 of `topic`.
fn partition_state(config: &ClientConfig, topic: &str) -> Option<(i32, usize)> {
    let consumer: BaseConsumer = config.create().ok()?;
    let metadata = consumer
        .fetch_metadata(Some(topic), Duration::from_secs(5))
        .ok()?;
    let partition = metadata.topics().first()?.partitions().first()?;
    (partition.leader() >= 0).then(|| (partition.leader(), partition.isr().len()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cluster_secured_with_sasl_ssl_between_nodes_survives_a_leader_kill() {
    let pki = Pki::new();
    let ca = pki.path("ca.pem");
    let mut cluster = secured_cluster(&pki);
    let bootstrap = cluster.bootstrap();
    let admin_config = client(&bootstrap, &ca, "admin", "admin-secret");

    // Topic creation is forwarded to the active controller over its SASL_SSL listener.
    let admin: AdminClient<DefaultClientContext> = admin_config.create().unwrap();
    let topic =
        NewTopic::new("secured", 1, TopicReplication::Fixed(3)).set("min.insync.replicas", "2");
    let created = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(created[0].is_ok(), "{:?}", created[0]);
    // Followers replicate over SASL_SSL: all three join the ISR.
    assert!(
        wait_until(Duration::from_secs(60), || {
            partition_state(&admin_config, "secured").is_some_and(|(_, isr)| isr == 3)
        }),
        "the followers never joined the ISR"
    );

    // A principal without ACLs is told about no topic (the authorizer runs on every node).
    let alice: BaseConsumer = client(&bootstrap, &ca, "alice", "alice-secret")
        .create()
        .unwrap();
    let seen_by_alice = alice.fetch_metadata(None, Duration::from_secs(10)).unwrap();
    assert!(
        seen_by_alice.topics().iter().all(|t| t.name() != "secured"),
        "alice may not describe the topic"
    );

    let producer: FutureProducer = admin_config
        .clone()
        .set("acks", "all")
        .set("enable.idempotence", "false")
        .set("linger.ms", "0")
        .set("message.timeout.ms", "60000")
        .set("retry.backoff.ms", "100")
        .create()
        .unwrap();
    let total = 300;
    let mut acked = Vec::new();
    let mut killed = None;
    for i in 0..total {
        if i == total / 2 {
            let (leader, _) = partition_state(&admin_config, "secured").unwrap();
            let index = (leader - 1) as usize;
            cluster.nodes[index].kill9();
            killed = Some((index, Instant::now()));
        }
        let payload = format!("m{i:05}");
        let delivery = producer
            .send(
                FutureRecord::<(), _>::to("secured").payload(&payload),
                Duration::from_secs(60),
            )
            .await;
        if delivery.is_ok() {
            acked.push(i);
        }
    }
    let (killed, killed_at) = killed.unwrap();
    eprintln!(
        "{} of {total} acknowledged; the last {:?} after the leader was killed",
        acked.len(),
        killed_at.elapsed()
    );
    assert!(
        acked.len() > total / 2,
        "production went on after the leader was killed"
    );

    let survivors: Vec<String> = (0..3)
        .filter(|i| *i != killed)
        .map(|i| cluster.nodes[i].bootstrap.clone())
        .collect();
    let reader_config = client(&survivors.join(","), &ca, "admin", "admin-secret");
    let consumer: BaseConsumer = reader_config
        .clone()
        .set("group.id", "reader")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut assignment = rdkafka::TopicPartitionList::new();
    assignment
        .add_partition_offset("secured", 0, rdkafka::Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < acked.len() && Instant::now() < deadline {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
            seen.insert(
                String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned(),
            );
        }
    }
    let lost: Vec<usize> = acked
        .iter()
        .copied()
        .filter(|i| !seen.contains(&format!("m{i:05}")))
        .collect();
    assert!(lost.is_empty(), "acknowledged but lost: {lost:?}");

    // The killed node comes back, authenticates to the quorum and its new leader, catches up.
    cluster.restart(killed);
    assert!(
        wait_until(Duration::from_secs(60), || {
            partition_state(&reader_config, "secured").is_some_and(|(_, isr)| isr == 3)
        }),
        "the restarted node rejoined the ISR"
    );
    for node in &cluster.nodes {
        let log = node.log_text();
        assert!(
            !log.contains("authentication failed") && !log.contains("cannot authenticate"),
            "a node failed to authenticate:\n{log}"
        );
    }
}

/// The controller listener's address of node `i` (from its "controller quorum listening" line).
fn controller_address(cluster: &Cluster, i: usize) -> String {
    let log = cluster.nodes[i].log_text();
    log.lines()
        .find_map(|line| {
            line.split("controller quorum listening on ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .map(str::to_string)
        })
        .unwrap()
}

/// How another process would reach the controller listener as `user`, with Sluice's own
/// client side of SASL_SSL.
fn controller_client(pki: &Pki, user: &str, password: &str) -> PeerSecurity {
    let jaas = format!(
        r#"org.apache.kafka.common.security.plain.PlainLoginModule required username="{user}" password="{password}";"#
    );
    let ca = pki.path("ca.pem");
    let config = BrokerConfig::with_overrides(&[
        ("listener.security.protocol.map", "CONTROLLER:SASL_SSL"),
        ("sasl.mechanism.controller.protocol", "PLAIN"),
        ("listener.name.controller.plain.sasl.jaas.config", &jaas),
        ("ssl.truststore.type", "PEM"),
        ("ssl.truststore.location", &ca),
    ])
    .unwrap();
    PeerSecurity::for_listener(&config, "CONTROLLER", "sasl.mechanism.controller.protocol").unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_listener_serves_only_the_clusters_own_principal() {
    let pki = Pki::new();
    let cluster = secured_cluster(&pki);
    let address = controller_address(&cluster, 0);
    let timeout = Duration::from_secs(10);
    let connect = |user: &str, password: &str| {
        let security = controller_client(&pki, user, password);
        let (address, user) = (address.clone(), user.to_string());
        async move { PeerConnection::connect(&address, &user, timeout, &security).await }
    };

    // A wrong password: refused during SASL.
    let wrong = connect("admin", "not-the-password").await.unwrap_err();
    assert!(matches!(wrong, RequestError::Authentication(..)), "{wrong}");

    // A client principal authenticates but may not act as a node.
    let mut alice = connect("alice", "alice-secret").await.unwrap();
    let registration: BrokerRegistrationResponse = alice
        .request(
            ApiKey::BrokerRegistration,
            4,
            &BrokerRegistrationRequest::default()
                .with_broker_id(kafka_protocol::messages::BrokerId(9)),
            timeout,
        )
        .await
        .unwrap();
    assert_eq!(registration.error_code, 31, "CLUSTER_AUTHORIZATION_FAILED");
    // Forwarded administration from a principal that is not a node: the connection closes.
    let forwarded: Result<CreateTopicsResponse, _> = alice
        .request(
            ApiKey::CreateTopics,
            7,
            &CreateTopicsRequest::default().with_timeout_ms(5000),
            timeout,
        )
        .await;
    assert!(forwarded.is_err(), "{forwarded:?}");

    // A Raft message from a principal that is not a node: the connection is closed.
    let mut alice = connect("alice", "alice-secret").await.unwrap();
    let message = raft::prelude::Message {
        from: 3,
        to: 1,
        term: 1,
        ..Default::default()
    };
    let frame = sluice::controller::transport::message_frame(&message, 1, "").unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    alice.stream_mut().write_all(&frame).await.unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(timeout, alice.stream_mut().read(&mut byte))
        .await
        .unwrap();
    assert!(matches!(read, Ok(0) | Err(_)), "the connection was closed");
    assert!(
        wait_until(Duration::from_secs(10), || cluster.nodes[0]
            .log_text()
            .contains("who may not take part in the quorum")),
        "one log line says why"
    );

    // The nodes themselves, as `admin`, keep working: the quorum still serves.
    let mut admin = connect("admin", "admin-secret").await.unwrap();
    let api_versions: kafka_protocol::messages::ApiVersionsResponse = admin
        .request(
            ApiKey::ApiVersions,
            3,
            &kafka_protocol::messages::ApiVersionsRequest::default()
                .with_client_software_name(kafka_protocol::protocol::StrBytes::from_static_str(
                    "test",
                ))
                .with_client_software_version(kafka_protocol::protocol::StrBytes::from_static_str(
                    "1",
                )),
            timeout,
        )
        .await
        .unwrap();
    assert_eq!(api_versions.error_code, 0);
}

/// A transaction over partitions led by different brokers: the coordinator's markers and the
/// leaders' verification requests (AddPartitionsToTxn) travel over SASL_SSL, authorized as
/// the nodes' own principal; read_committed readers see the committed records only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_commit_and_abort_across_brokers_over_sasl_ssl() {
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    let pki = Pki::new();
    let ca = pki.path("ca.pem");
    let cluster = secured_cluster(&pki);
    let config = client(&cluster.bootstrap(), &ca, "admin", "admin-secret");
    let admin: AdminClient<DefaultClientContext> = config.create().unwrap();
    let topic = NewTopic::new("spread", 3, TopicReplication::Fixed(3));
    let created = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(created[0].is_ok(), "{:?}", created[0]);
    let leaders = || -> BTreeSet<i32> {
        let consumer: BaseConsumer = config.create().unwrap();
        let metadata = consumer
            .fetch_metadata(Some("spread"), Duration::from_secs(5))
            .unwrap();
        metadata.topics()[0]
            .partitions()
            .iter()
            .map(|p| p.leader())
            .collect()
    };
    assert!(
        wait_until(Duration::from_secs(30), || leaders().len() == 3),
        "the partitions are led by three brokers"
    );
    let producer: ThreadedProducer<DefaultProducerContext> = config
        .clone()
        .set("transactional.id", "spread-secure")
        .create()
        .unwrap();
    let timeout = Duration::from_secs(60);
    producer.init_transactions(timeout).unwrap();
    let send = |prefix: &str| {
        for partition in 0..3 {
            let value = format!("{prefix}{partition}");
            producer
                .send(
                    BaseRecord::<(), _>::to("spread")
                        .payload(&value)
                        .partition(partition),
                )
                .unwrap();
        }
        producer.flush(timeout).unwrap();
    };
    producer.begin_transaction().unwrap();
    send("committed-");
    producer.commit_transaction(timeout).unwrap();
    producer.begin_transaction().unwrap();
    send("aborted-");
    producer.abort_transaction(timeout).unwrap();
    producer.begin_transaction().unwrap();
    send("after-");
    producer.commit_transaction(timeout).unwrap();

    let consumer: BaseConsumer = config
        .clone()
        .set("group.id", "committed-reader")
        .set("isolation.level", "read_committed")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut assignment = rdkafka::TopicPartitionList::new();
    for partition in 0..3 {
        assignment
            .add_partition_offset("spread", partition, rdkafka::Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&assignment).unwrap();
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while seen.len() < 6 && Instant::now() < deadline {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
            seen.insert(
                String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned(),
            );
        }
    }
    let expected: BTreeSet<String> = ["committed-", "after-"]
        .iter()
        .flat_map(|prefix| (0..3).map(move |p| format!("{prefix}{p}")))
        .collect();
    assert_eq!(seen, expected);
}
