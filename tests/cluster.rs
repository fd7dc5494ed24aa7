//! Three combined broker+controller processes on loopback forming one cluster: the
//! controller quorum over TCP, brokers registering with the active controller, topic
//! administration forwarded to it, clients spread over every broker, and a new active
//! controller after the old one is killed or cut off the network; the quorum as
//! `kafka-metadata-quorum` describes it from every node. (Replication itself is
//! `replication.rs`.)

#![allow(clippy::unwrap_used)]

mod common;

use common::{Cluster, raw_call, wait_until};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, CreateTopicsRequest, CreateTopicsResponse,
    DescribeClusterRequest, DescribeClusterResponse, MetadataResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

fn create_topic(bootstrap: &str, name: &str, partitions: i32, replication: i16) -> i16 {
    let request = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(TopicName(StrBytes::from_string(name.to_string())))
                .with_num_partitions(partitions)
                .with_replication_factor(replication),
        ])
        .with_timeout_ms(30_000);
    let response: CreateTopicsResponse = raw_call(bootstrap, ApiKey::CreateTopics, 7, &request);
    response.topics[0].error_code
}

fn metadata(bootstrap: &str) -> MetadataResponse {
    common::metadata_of(bootstrap)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_form_one_cluster_and_clients_use_every_broker() {
    let cluster = Cluster::start(3, &[]);
    // Every node knows every broker, the same cluster id and the same controller.
    assert!(wait_until(Duration::from_secs(30), || {
        cluster
            .nodes
            .iter()
            .all(|n| metadata(&n.bootstrap).brokers.len() == 3)
    }));
    let views: BTreeSet<(String, i32)> = cluster
        .nodes
        .iter()
        .map(|n| {
            let m = metadata(&n.bootstrap);
            (m.cluster_id.unwrap().to_string(), m.controller_id.0)
        })
        .collect();
    assert_eq!(
        views.len(),
        1,
        "one cluster id and one controller: {views:?}"
    );
    assert!((1..=3).contains(&views.iter().next().unwrap().1));
    // DescribeCluster (Kafka's AdminClient.describeCluster, which its tools read the live
    // brokers from) agrees with Metadata on every node: all three brokers, the same
    // controller; controller endpoints are asked of a controller, not a broker (KIP-919).
    let controller = views.iter().next().unwrap().1;
    for node in &cluster.nodes {
        let described: DescribeClusterResponse = raw_call(
            &node.bootstrap,
            ApiKey::DescribeCluster,
            1,
            &DescribeClusterRequest::default().with_endpoint_type(1),
        );
        let ids: BTreeSet<i32> = described.brokers.iter().map(|b| b.broker_id.0).collect();
        assert_eq!(ids, BTreeSet::from([1, 2, 3]));
        assert_eq!(described.controller_id.0, controller);
        let wrong: DescribeClusterResponse = raw_call(
            &node.bootstrap,
            ApiKey::DescribeCluster,
            1,
            &DescribeClusterRequest::default().with_endpoint_type(2),
        );
        assert_eq!(wrong.error_code, 114, "MISMATCHED_ENDPOINT_TYPE");
    }

    // Share groups are served by a cluster too (ApiVersions lists their APIs, the share
    // coordinator's state RPCs and share.version).
    let versions: ApiVersionsResponse = raw_call(
        &cluster.nodes[0].bootstrap,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("t"))
            .with_client_software_version(StrBytes::from_static_str("1")),
    );
    let keys: BTreeSet<i16> = versions.api_keys.iter().map(|k| k.api_key).collect();
    for api in [
        ApiKey::Fetch,
        ApiKey::ShareGroupHeartbeat,
        ApiKey::ShareFetch,
        ApiKey::ShareAcknowledge,
        ApiKey::ReadShareGroupState,
        ApiKey::WriteShareGroupState,
    ] {
        assert!(
            keys.contains(&(api as i16)),
            "{api:?} not offered by a cluster"
        );
    }
    assert!(
        versions
            .finalized_features
            .iter()
            .any(|f| f.name.as_str() == "share.version")
    );

    // Created through whichever node: forwarded to the active controller.
    for (i, node) in cluster.nodes.iter().enumerate() {
        assert_eq!(create_topic(&node.bootstrap, &format!("via-{i}"), 3, 1), 0);
    }
    assert_eq!(create_topic(&cluster.nodes[1].bootstrap, "via-0", 3, 1), 36);
    assert_eq!(
        create_topic(&cluster.nodes[2].bootstrap, "too-wide", 3, 4),
        38,
        "INVALID_REPLICATION_FACTOR: only three brokers"
    );
    let topic = metadata(&cluster.nodes[0].bootstrap)
        .topics
        .into_iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == "via-1"))
        .unwrap();
    let leaders: BTreeSet<i32> = topic.partitions.iter().map(|p| p.leader_id.0).collect();
    assert_eq!(
        leaders,
        BTreeSet::from([1, 2, 3]),
        "one partition per broker"
    );

    // librdkafka produces to and consumes from all three brokers.
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("linger.ms", "5")
        .set("message.timeout.ms", "30000")
        .create()
        .unwrap();
    let count = 300;
    for i in 0..count {
        let payload = format!("message-{i}");
        producer
            .send(
                FutureRecord::<(), _>::to("via-1")
                    .payload(&payload)
                    .partition(i % 3),
                Duration::from_secs(30),
            )
            .await
            .unwrap();
    }
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", cluster.bootstrap())
        .set("group.id", "cluster-readers")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&["via-1"]).unwrap();
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < count as usize && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            seen.insert(String::from_utf8_lossy(message.payload().unwrap()).into_owned());
        }
    }
    assert_eq!(
        seen.len(),
        count as usize,
        "every message, from every broker"
    );
}

#[test]
fn topics_can_be_created_again_after_the_active_controller_is_killed() {
    let mut cluster = Cluster::start(3, &[]);
    assert_eq!(create_topic(&cluster.nodes[0].bootstrap, "before", 2, 1), 0);
    let active = cluster.active_controller().unwrap();
    let killed_at = Instant::now();
    cluster.nodes[active].kill9();
    let survivor = (active + 1) % 3;
    // The request waits for the new active controller instead of failing.
    assert_eq!(
        create_topic(&cluster.nodes[survivor].bootstrap, "after", 2, 1),
        0
    );
    let elapsed = killed_at.elapsed();
    eprintln!("topic created {elapsed:?} after the active controller was killed");
    let new_active = cluster.active_controller().unwrap();
    assert_ne!(new_active, active);
    let names: BTreeSet<String> = metadata(&cluster.nodes[survivor].bootstrap)
        .topics
        .iter()
        .filter_map(|t| t.name.as_ref().map(|n| n.to_string()))
        .collect();
    assert!(names.contains("before") && names.contains("after"));

    // The killed node comes back and learns what happened while it was gone.
    cluster.restart(active);
    assert!(wait_until(Duration::from_secs(30), || {
        metadata(&cluster.nodes[active].bootstrap)
            .topics
            .iter()
            .any(|t| t.name.as_ref().is_some_and(|n| n.as_str() == "after"))
    }));
}

#[test]
fn an_active_controller_cut_off_the_network_steps_down_and_the_majority_goes_on() {
    let mut cluster = Cluster::start_partitionable(3, &[]);
    assert_eq!(create_topic(&cluster.nodes[0].bootstrap, "before", 2, 3), 0);
    let active = cluster.active_controller().unwrap();
    cluster.network().isolate(active as u32 + 1);
    let cut_at = Instant::now();
    // Alone, it cannot reach a quorum: it stops acting as the controller (Raft's check
    // quorum), while the other two elect one of themselves and go on.
    assert!(
        wait_until(Duration::from_secs(30), || {
            cluster.nodes[active]
                .log_text()
                .contains("no longer the active controller")
        }),
        "the cut-off controller stepped down"
    );
    let survivor = (active + 1) % 3;
    assert_eq!(
        create_topic(&cluster.nodes[survivor].bootstrap, "during", 2, 2),
        0
    );
    eprintln!(
        "active controller cut off: topic created by the majority {:?} later",
        cut_at.elapsed()
    );
    let new_active = cluster.active_controller().unwrap();
    assert_ne!(new_active, active);

    // Healed, it follows the new controller and learns what it missed.
    cluster.network().heal();
    assert!(
        wait_until(Duration::from_secs(30), || {
            metadata(&cluster.nodes[active].bootstrap)
                .topics
                .iter()
                .any(|t| t.name.as_ref().is_some_and(|n| n.as_str() == "during"))
        }),
        "the healed node learned the topic created without it"
    );
    assert_eq!(cluster.active_controller(), Some(new_active));
    cluster.assert_one_active_controller_per_term();
}

/// Runs `kafka-metadata-quorum` (the binary under Kafka's script name, as the image links it)
/// against `bootstrap`; its exit code and standard output.
fn metadata_quorum(bootstrap: &str, view: &str) -> (i32, String) {
    metadata_quorum_via("--bootstrap-server", bootstrap, view)
}

/// [`metadata_quorum`] through `connect` (`--bootstrap-server` or `--bootstrap-controller`).
fn metadata_quorum_via(connect: &str, bootstrap: &str, view: &str) -> (i32, String) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("kafka-metadata-quorum");
    std::os::unix::fs::symlink(common::broker_binary(), &script).unwrap();
    let output = std::process::Command::new(&script)
        .args([connect, bootstrap, "describe", view])
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

/// The value of a `--status` line (`LeaderId:               2`).
fn status_field(text: &str, field: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .map(|v| v.trim().to_string())
}

#[test]
fn every_node_describes_the_quorum_as_its_leader_sees_it_and_a_new_leader_after_a_kill() {
    let mut cluster = Cluster::start(3, &[]);
    let active = cluster.active_controller().unwrap();
    let leader_id = (active + 1).to_string();
    // Asked of any node (the others forward to the leader), the same leader and voters; the
    // followers are heard from within a few heartbeats.
    for node in &cluster.nodes {
        let mut replication = String::new();
        assert!(
            wait_until(Duration::from_secs(20), || {
                let (code, text) = metadata_quorum(&node.bootstrap, "--replication");
                replication = text;
                code == 0
                    && replication.lines().count() == 4
                    && replication
                        .lines()
                        .skip(1)
                        .all(|l| l.split('\t').nth(4).is_some_and(|t| t.trim() != "-1"))
            }),
            "{replication}"
        );
        let rows: Vec<Vec<&str>> = replication
            .lines()
            .skip(1)
            .map(|l| l.split('\t').map(str::trim).collect())
            .collect();
        assert_eq!((rows[0][0], rows[0][6]), (leader_id.as_str(), "Leader"));
        assert!(rows[1..].iter().all(|r| r[6] == "Follower"));
        // Static voters have no directory id (Kafka prints the all-zero one).
        assert!(rows.iter().all(|r| r[1] == "AAAAAAAAAAAAAAAAAAAAAA"));

        let (code, status) = metadata_quorum(&node.bootstrap, "--status");
        assert_eq!(code, 0, "{status}");
        assert_eq!(status_field(&status, "LeaderId"), Some(leader_id.clone()));
        let voters = status_field(&status, "CurrentVoters").unwrap();
        for (i, port) in cluster.controller_ports().iter().enumerate() {
            let voter = format!(
                "{{\"id\": {}, \"endpoints\": [\"CONTROLLER://127.0.0.1:{port}\"]}}",
                i + 1
            );
            assert!(voters.contains(&voter), "{voter} not in {voters}");
        }
        assert_eq!(status_field(&status, "CurrentObservers").unwrap(), "[]");
        let high_watermark: i64 = status_field(&status, "HighWatermark")
            .unwrap()
            .parse()
            .unwrap();
        assert!(high_watermark > 0, "{status}");
    }
    // Straight to the controllers (KIP-919): DescribeCluster on a controller listener lists
    // the voters and the leader; the tool then asks the leader.
    let controller_port = cluster.controller_ports()[(active + 1) % 3];
    let controller = format!("127.0.0.1:{controller_port}");
    let controllers: DescribeClusterResponse = raw_call(
        &controller,
        ApiKey::DescribeCluster,
        1,
        &DescribeClusterRequest::default().with_endpoint_type(2),
    );
    let ids: BTreeSet<i32> = controllers.brokers.iter().map(|b| b.broker_id.0).collect();
    assert_eq!(ids, BTreeSet::from([1, 2, 3]));
    assert_eq!(controllers.controller_id.0.to_string(), leader_id);
    let (code, status) = metadata_quorum_via("--bootstrap-controller", &controller, "--status");
    assert_eq!(code, 0, "{status}");
    assert_eq!(status_field(&status, "LeaderId"), Some(leader_id.clone()));

    let (_, before) = metadata_quorum(&cluster.nodes[active].bootstrap, "--status");
    let epoch_before: i64 = status_field(&before, "LeaderEpoch")
        .unwrap()
        .parse()
        .unwrap();

    cluster.nodes[active].kill9();
    let survivor = (active + 1) % 3;
    let mut status = String::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            let (code, text) = metadata_quorum(&cluster.nodes[survivor].bootstrap, "--status");
            status = text;
            code == 0
                && status_field(&status, "LeaderId").is_some_and(|l| l != leader_id)
                && status_field(&status, "LeaderEpoch")
                    .and_then(|e| e.parse::<i64>().ok())
                    .is_some_and(|e| e > epoch_before)
        }),
        "{status}"
    );
    // The killed voter is still a voter; the leader has not heard from it in its term.
    let (_, replication) = metadata_quorum(&cluster.nodes[survivor].bootstrap, "--replication");
    let killed = replication
        .lines()
        .find(|l| l.split('\t').next().map(str::trim) == Some(&(active + 1).to_string()))
        .unwrap();
    assert_eq!(
        killed.split('\t').nth(4).map(str::trim),
        Some("-1"),
        "{replication}"
    );
}
