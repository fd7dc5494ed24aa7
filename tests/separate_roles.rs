//! Kafka's topology with the roles apart: three controller-only nodes form the quorum and three
//! broker-only nodes follow it as observers (they fetch the committed metadata from the
//! quorum's leader). Clients reach the brokers only; the active controller is killed and a new
//! one elected while the brokers keep serving, and none of them is fenced for it.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Cluster, raw_call, wait_until};
use kafka_protocol::messages::create_topics_request::{CreatableTopic, CreatableTopicConfig};
use kafka_protocol::messages::{
    ApiKey, CreateTopicsRequest, CreateTopicsResponse, MetadataResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

fn metadata(bootstrap: &str) -> MetadataResponse {
    common::metadata_of(bootstrap)
}

fn create_topic(bootstrap: &str, name: &str) -> i16 {
    let request = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(name.to_string())))
                .with_num_partitions(3)
                .with_replication_factor(3)
                .with_configs(vec![
                    CreatableTopicConfig::default()
                        .with_name(StrBytes::from_static_str("min.insync.replicas"))
                        .with_value(Some(StrBytes::from_static_str("2"))),
                ]),
        ])
        .with_timeout_ms(30_000);
    let response: CreateTopicsResponse = raw_call(bootstrap, ApiKey::CreateTopics, 7, &request);
    response.topics[0].error_code
}

/// `kafka-metadata-quorum describe --replication` through `bootstrap` (the binary under
/// Kafka's script name): each row's id and status.
fn quorum_rows(bootstrap: &str) -> Vec<(String, String, i64)> {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kafka-metadata-quorum");
    std::os::unix::fs::symlink(common::broker_binary(), &script).unwrap();
    let output = std::process::Command::new(&script)
        .args(["--bootstrap-server", bootstrap, "describe", "--replication"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .skip(1)
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').map(str::trim).collect();
            (
                cells[0].to_string(),
                cells.get(6).unwrap_or(&"").to_string(),
                cells.get(2).and_then(|c| c.parse().ok()).unwrap_or(-1),
            )
        })
        .collect()
}

async fn produce(bootstrap: &str, topic: &str, range: std::ops::Range<usize>) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "60000")
        .create()
        .unwrap();
    for i in range {
        let payload = format!("message-{i}");
        producer
            .send(
                FutureRecord::<(), _>::to(topic)
                    .payload(&payload)
                    .partition((i % 3) as i32),
                Duration::from_secs(60),
            )
            .await
            .unwrap();
    }
}

fn consume_all(bootstrap: &str, topic: &str, group: &str, count: usize) -> BTreeSet<String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", group)
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    while seen.len() < count && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            seen.insert(String::from_utf8_lossy(message.payload().unwrap()).into_owned());
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_controllers_and_three_brokers_serve_clients_through_a_controller_failover() {
    let mut cluster = Cluster::start_separate(3, 3, &[]);
    let bootstrap = cluster.bootstrap();
    // The brokers (4-6) are the cluster's brokers; the controllers host nothing.
    let brokers_of =
        |m: &MetadataResponse| -> BTreeSet<i32> { m.brokers.iter().map(|b| b.node_id.0).collect() };
    assert!(wait_until(Duration::from_secs(60), || {
        cluster.nodes[3..]
            .iter()
            .all(|n| brokers_of(&metadata(&n.bootstrap)) == BTreeSet::from([4, 5, 6]))
    }));
    // Clients cannot reach the controllers: as Kafka's brokers do, Metadata names a live
    // broker as the controller (it forwards what it is sent there).
    let controller = metadata(&cluster.nodes[3].bootstrap).controller_id.0;
    assert!((4..=6).contains(&controller), "controller {controller}");

    // The quorum: three voters, the brokers its observers, caught up.
    let mut rows = Vec::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            rows = quorum_rows(&cluster.nodes[4].bootstrap);
            let observers: BTreeSet<&str> = rows
                .iter()
                .filter(|r| r.1 == "Observer")
                .map(|r| r.0.as_str())
                .collect();
            rows.iter().filter(|r| r.1 != "Observer").count() == 3
                && observers == BTreeSet::from(["4", "5", "6"])
        }),
        "{rows:?}"
    );

    assert_eq!(create_topic(&cluster.nodes[3].bootstrap, "apart"), 0);
    // Another broker learns of it from the quorum a moment later.
    let mut found = None;
    assert!(wait_until(Duration::from_secs(10), || {
        found = metadata(&cluster.nodes[5].bootstrap)
            .topics
            .into_iter()
            .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == "apart"));
        found.is_some()
    }));
    let topic = found.unwrap();
    for partition in &topic.partitions {
        let replicas: BTreeSet<i32> = partition.replica_nodes.iter().map(|r| r.0).collect();
        assert_eq!(
            replicas,
            BTreeSet::from([4, 5, 6]),
            "placed on brokers only"
        );
    }
    produce(&bootstrap, "apart", 0..300).await;

    // The active controller killed: another is elected, the brokers go on.
    let active = cluster.active_controller().unwrap();
    assert!(
        active < 3,
        "a controller is active, not node {}",
        active + 1
    );
    let killed = Instant::now();
    cluster.nodes[active].kill9();
    assert!(wait_until(Duration::from_secs(60), || {
        cluster.active_controller().is_some_and(|now| now != active)
    }));
    let elected = killed.elapsed();
    assert_eq!(
        create_topic(&bootstrap_of(&cluster, 4), "after-failover"),
        0
    );
    let first_change = killed.elapsed();
    // The figures README's cluster section quotes.
    eprintln!(
        "controller failover: a new active controller {:.2} s after the kill, a topic created through a broker {:.2} s after it",
        elected.as_secs_f64(),
        first_change.as_secs_f64()
    );
    produce(&bootstrap, "apart", 300..600).await;

    let seen = consume_all(&bootstrap, "apart", "readers", 600);
    assert_eq!(seen.len(), 600, "every acknowledged message read");
    // No broker missed its session for the failover.
    for node in &cluster.nodes[..3] {
        assert!(
            !node.log_text().contains("fencing broker"),
            "{}",
            node.log_text()
        );
    }
    assert!(wait_until(Duration::from_secs(30), || {
        cluster.nodes[3..]
            .iter()
            .all(|n| brokers_of(&metadata(&n.bootstrap)).len() == 3)
    }));

    // A broker restarted comes back from its saved copy of the metadata and serves again.
    cluster.nodes[4].stop();
    cluster.restart(4);
    assert!(wait_until(Duration::from_secs(30), || {
        cluster.nodes[4]
            .log_text()
            .contains("Transitioning from RECOVERY to RUNNING")
    }));
    let seen = consume_all(&cluster.nodes[4].bootstrap, "apart", "after-restart", 600);
    if seen.len() != 600 {
        // What the nodes said, for the report.
        let warnings: Vec<String> = cluster
            .nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| {
                n.log_text()
                    .lines()
                    .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
                    .map(|l| format!("node {}: {l}", i + 1))
                    .collect::<Vec<_>>()
            })
            .collect();
        panic!(
            "{} of 600 read after the restart; warnings:\n{}",
            seen.len(),
            warnings.join("\n")
        );
    }
    cluster.assert_one_active_controller_per_term();
}

fn bootstrap_of(cluster: &Cluster, node: usize) -> String {
    cluster.nodes[node].bootstrap.clone()
}

#[test]
fn a_broker_that_fell_behind_a_snapshot_reads_it_from_the_quorum() {
    // Snapshots every 2 KiB of records: a few topics are enough.
    let mut cluster = Cluster::start_separate(
        1,
        2,
        &[("metadata.log.max.record.bytes.between.snapshots", "2048")],
    );
    assert!(wait_until(Duration::from_secs(60), || {
        metadata(&cluster.nodes[2].bootstrap).brokers.len() == 2
    }));
    cluster.nodes[2].stop();
    let names: Vec<String> = (0..30).map(|i| format!("while-away-{i}")).collect();
    for name in &names {
        let request = CreateTopicsRequest::default()
            .with_topics(vec![
                CreatableTopic::default()
                    .with_name(TopicName(StrBytes::from_string(name.clone())))
                    .with_num_partitions(1)
                    .with_replication_factor(1),
            ])
            .with_timeout_ms(30_000);
        let response: CreateTopicsResponse = raw_call(
            &cluster.nodes[1].bootstrap,
            ApiKey::CreateTopics,
            7,
            &request,
        );
        assert_eq!(response.topics[0].error_code, 0, "{name}");
    }
    cluster.restart(2);
    assert!(wait_until(Duration::from_secs(30), || {
        cluster.nodes[2]
            .log_text()
            .contains("loaded the metadata snapshot from the controller quorum")
    }));
    assert!(wait_until(Duration::from_secs(30), || {
        let known: BTreeSet<String> = metadata(&cluster.nodes[2].bootstrap)
            .topics
            .iter()
            .filter_map(|t| t.name.as_ref().map(|n| n.to_string()))
            .collect();
        names.iter().all(|n| known.contains(n))
    }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brokers_that_know_only_bootstrap_servers_find_the_leader_and_serve() {
    // KIP-853's `controller.quorum.bootstrap.servers` on the brokers: they ask any controller,
    // which names the leader and its address (Fetch's node endpoints).
    let mut cluster =
        Cluster::start_separate_bootstrapped(3, 2, &[("offsets.topic.replication.factor", "2")]);
    let bootstrap = cluster.bootstrap();
    assert!(wait_until(Duration::from_secs(60), || {
        cluster.nodes[3..]
            .iter()
            .all(|n| metadata(&n.bootstrap).brokers.len() == 2)
    }));
    let request = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("found")))
                .with_num_partitions(3)
                .with_replication_factor(2),
        ])
        .with_timeout_ms(30_000);
    let created: CreateTopicsResponse = raw_call(
        &cluster.nodes[3].bootstrap,
        ApiKey::CreateTopics,
        7,
        &request,
    );
    assert_eq!(created.topics[0].error_code, 0);
    produce(&bootstrap, "found", 0..100).await;
    // A new leader elsewhere: the brokers follow it there.
    let active = cluster.active_controller().unwrap();
    cluster.nodes[active].kill9();
    assert!(wait_until(Duration::from_secs(60), || {
        cluster.active_controller().is_some_and(|now| now != active)
    }));
    produce(&bootstrap, "found", 100..200).await;
    assert_eq!(consume_all(&bootstrap, "found", "finders", 200).len(), 200);
}
