//! Partition reassignment that moves data (AlterPartitionReassignments as Kafka's controller
//! runs it) under replication throttles (KIP-73), on three combined nodes: a partition on
//! brokers 1 and 2 moves to 3 and 2 while a producer keeps writing; broker 3 copies the log at
//! the throttled rate, joins the ISR, the move completes (ListPartitionReassignments empty,
//! broker 1's replica removed) and every acknowledged record is read back once.
//!
//! The size moved and the rate are `SLUICE_REASSIGN_MB` (default 96) and
//! `SLUICE_REASSIGN_RATE_MB` (default 8, MB/s); the by-hand run of the cluster issue moved
//! 1 GB with Kafka's default eleven rate samples (`SLUICE_REASSIGN_WINDOWS=11`; see README's
//! cluster section). The rate is measured as the growth of broker 3's log
//! on disk while the throttle holds (after its first seconds, whose burst Kafka's rate
//! arithmetic allows too).

#![allow(clippy::unwrap_used)]

mod common;

use common::{Cluster, raw_call, wait_until};
use kafka_protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use kafka_protocol::messages::create_topics_request::{CreatableReplicaAssignment, CreatableTopic};
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::list_partition_reassignments_request::ListPartitionReassignmentsTopics;
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, ApiKey, BrokerId,
    CreateTopicsRequest, CreateTopicsResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse, ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse, MetadataRequest, MetadataResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const TOPIC: &str = "moving";

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn alter_configs(bootstrap: &str, kind: i8, name: &str, configs: &[(&str, &str)]) {
    let request = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(kind)
            .with_resource_name(s(name))
            .with_configs(
                configs
                    .iter()
                    .map(|(k, v)| {
                        AlterableConfig::default()
                            .with_name(s(k))
                            .with_config_operation(0)
                            .with_value(Some(s(v)))
                    })
                    .collect(),
            ),
    ]);
    let response: IncrementalAlterConfigsResponse =
        raw_call(bootstrap, ApiKey::IncrementalAlterConfigs, 1, &request);
    assert_eq!(response.responses[0].error_code, 0, "{name}: {response:?}");
}

fn reassign(bootstrap: &str, target: Option<&[i32]>) -> (i16, Option<String>) {
    let request = AlterPartitionReassignmentsRequest::default()
        .with_timeout_ms(30_000)
        .with_topics(vec![
            ReassignableTopic::default()
                .with_name(TopicName(s(TOPIC)))
                .with_partitions(vec![
                    ReassignablePartition::default()
                        .with_partition_index(0)
                        .with_replicas(target.map(|t| t.iter().copied().map(BrokerId).collect())),
                ]),
        ]);
    let response: AlterPartitionReassignmentsResponse =
        raw_call(bootstrap, ApiKey::AlterPartitionReassignments, 0, &request);
    let partition = &response.responses[0].partitions[0];
    (
        partition.error_code,
        partition.error_message.as_ref().map(|m| m.to_string()),
    )
}

/// The reassignment in progress: (replicas, adding, removing).
fn in_progress(bootstrap: &str) -> Option<(Vec<i32>, Vec<i32>, Vec<i32>)> {
    let request = ListPartitionReassignmentsRequest::default()
        .with_timeout_ms(30_000)
        .with_topics(Some(vec![
            ListPartitionReassignmentsTopics::default()
                .with_name(TopicName(s(TOPIC)))
                .with_partition_indexes(vec![0]),
        ]));
    let response: ListPartitionReassignmentsResponse =
        raw_call(bootstrap, ApiKey::ListPartitionReassignments, 0, &request);
    let ids = |b: &Vec<BrokerId>| b.iter().map(|b| b.0).collect::<Vec<_>>();
    response
        .topics
        .first()
        .and_then(|t| t.partitions.first())
        .map(|p| {
            (
                ids(&p.replicas),
                ids(&p.adding_replicas),
                ids(&p.removing_replicas),
            )
        })
}

/// (leader, replicas, isr).
fn partition_state(bootstrap: &str) -> (i32, Vec<i32>, Vec<i32>) {
    let metadata: MetadataResponse = raw_call(
        bootstrap,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    );
    let topic = metadata
        .topics
        .into_iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == TOPIC))
        .unwrap();
    let p = &topic.partitions[0];
    (
        p.leader_id.0,
        p.replica_nodes.iter().map(|b| b.0).collect(),
        p.isr_nodes.iter().map(|b| b.0).collect(),
    )
}

/// Bytes of `moving-0`'s segments in a node's data directory.
fn log_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir.join(format!("{TOPIC}-0")))
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_reassignment_moves_the_data_at_the_rate_and_loses_nothing() {
    let megabytes = env_number("SLUICE_REASSIGN_MB", 96);
    let rate = env_number("SLUICE_REASSIGN_RATE_MB", 8) * 1_000_000;
    // Two 1 s samples (`SLUICE_REASSIGN_WINDOWS`): the rate holds from the second second on
    // (Kafka's default of eleven lets ten seconds' worth through at once first, which a short
    // move would not outlast).
    let windows = env_number("SLUICE_REASSIGN_WINDOWS", 2).to_string();
    let cluster = Cluster::start(
        3,
        &[
            ("replication.quota.window.num", &windows),
            ("min.insync.replicas", "1"),
        ],
    );
    let bootstrap = cluster.bootstrap();
    let ask = cluster.nodes[1].bootstrap.clone();
    let create = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(TopicName(s(TOPIC)))
                .with_num_partitions(-1)
                .with_replication_factor(-1)
                .with_assignments(vec![
                    CreatableReplicaAssignment::default()
                        .with_partition_index(0)
                        .with_broker_ids(vec![BrokerId(1), BrokerId(2)]),
                ]),
        ])
        .with_timeout_ms(30_000);
    let created: CreateTopicsResponse = raw_call(&ask, ApiKey::CreateTopics, 7, &create);
    assert_eq!(created.topics[0].error_code, 0);

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "20")
        .set("batch.size", "1048576")
        .set("message.timeout.ms", "120000")
        .create()
        .unwrap();
    let payload = vec![b'x'; 16 * 1024];
    let preload = (megabytes * 1_000_000 / payload.len() as u64) as usize;
    let mut sends = Vec::new();
    for i in 0..preload {
        let key = format!("pre-{i}");
        sends.push(
            producer
                .send_result(FutureRecord::to(TOPIC).key(&key).payload(&payload))
                .unwrap(),
        );
    }
    let mut acknowledged = BTreeSet::new();
    for (i, send) in sends.into_iter().enumerate() {
        send.await.unwrap().unwrap();
        acknowledged.insert(format!("pre-{i}"));
    }

    // Throttled as `kafka-reassign-partitions --throttle` sets it: the current replicas as
    // leaders, the new one as follower, the rate on every broker.
    for (i, node) in cluster.nodes.iter().enumerate() {
        // A broker's own configs are altered through it, as Kafka's tools do.
        alter_configs(
            &node.bootstrap,
            4,
            &(i + 1).to_string(),
            &[
                ("leader.replication.throttled.rate", &rate.to_string()),
                ("follower.replication.throttled.rate", &rate.to_string()),
            ],
        );
    }
    alter_configs(
        &ask,
        2,
        TOPIC,
        &[
            ("leader.replication.throttled.replicas", "0:1,0:2"),
            ("follower.replication.throttled.replicas", "0:3"),
        ],
    );
    // Kafka's checks and messages first.
    assert_eq!(reassign(&ask, None).0, 85, "NO_REASSIGNMENT_IN_PROGRESS");
    let (code, message) = reassign(&ask, Some(&[3, 3]));
    assert_eq!(code, 39, "INVALID_REPLICA_ASSIGNMENT");
    assert_eq!(
        message.as_deref(),
        Some("The manual partition assignment includes the broker 3 more than once.")
    );
    assert_eq!(reassign(&ask, Some(&[3, 9])).0, 39);

    // Load during the move.
    let producing = Arc::new(AtomicBool::new(true));
    let background = {
        let producer = producer.clone();
        let producing = producing.clone();
        tokio::spawn(async move {
            let mut acked = Vec::new();
            let mut i = 0;
            while producing.load(Ordering::SeqCst) {
                let key = format!("during-{i}");
                if producer
                    .send(
                        FutureRecord::to(TOPIC).key(&key).payload(b"small"),
                        Duration::from_secs(120),
                    )
                    .await
                    .is_ok()
                {
                    acked.push(key);
                }
                i += 1;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            acked
        })
    };

    let started = Instant::now();
    assert_eq!(reassign(&ask, Some(&[3, 2])), (0, None));
    let listed = in_progress(&ask).expect("listed while in progress");
    assert_eq!(listed, (vec![3, 2, 1], vec![3], vec![1]));
    let moved_total = log_bytes(cluster.nodes[0].dir());
    // Broker 3's copy, sampled while it grows.
    let target_dir = cluster.nodes[2].dir().to_path_buf();
    let mut samples: Vec<(f64, u64)> = Vec::new();
    let done = wait_until(Duration::from_secs(120 + 3 * moved_total / rate), || {
        samples.push((started.elapsed().as_secs_f64(), log_bytes(&target_dir)));
        in_progress(&ask).is_none()
    });
    let elapsed = started.elapsed().as_secs_f64();
    producing.store(false, Ordering::SeqCst);
    assert!(done, "the reassignment did not complete");
    let during = background.await.unwrap();
    acknowledged.extend(during);

    // Completed: replicas 3 and 2, leader among them, broker 1's copy gone.
    let mut state = (0, Vec::new(), Vec::new());
    assert!(
        wait_until(Duration::from_secs(30), || {
            state = partition_state(&ask);
            state.1 == vec![3, 2] && state.2.len() == 2
        }),
        "{state:?}"
    );
    assert!([3, 2].contains(&state.0));
    assert!(wait_until(Duration::from_secs(30), || !cluster.nodes[0]
        .dir()
        .join(format!("{TOPIC}-0"))
        .exists()));

    // The throttled rate: broker 3's log growth between 1.5 s in and the last sample that
    // still grew before it was complete.
    let complete = samples.last().map_or(0, |s| s.1);
    let steady: Vec<&(f64, u64)> = samples
        .iter()
        .filter(|(t, bytes)| *t >= 1.5 && *bytes < complete * 95 / 100)
        .collect();
    assert!(
        steady.len() >= 10,
        "too few samples while throttled: {samples:?}"
    );
    // The least-squares slope of bytes over time.
    let n = steady.len() as f64;
    let mean_t = steady.iter().map(|s| s.0).sum::<f64>() / n;
    let mean_b = steady.iter().map(|s| s.1 as f64).sum::<f64>() / n;
    let covariance: f64 = steady
        .iter()
        .map(|s| (s.0 - mean_t) * (s.1 as f64 - mean_b))
        .sum();
    let variance: f64 = steady.iter().map(|s| (s.0 - mean_t).powi(2)).sum();
    let measured = covariance / variance;
    eprintln!(
        "moved {:.1} MB in {elapsed:.1} s; steady rate {:.2} MB/s for a throttle of {:.2} MB/s ({:.1}% off)",
        moved_total as f64 / 1e6,
        measured / 1e6,
        rate as f64 / 1e6,
        (measured / rate as f64 - 1.0) * 100.0
    );
    assert!(
        (measured - rate as f64).abs() <= rate as f64 * 0.15,
        "measured {measured:.0} B/s for a throttle of {rate} B/s"
    );

    // Every acknowledged record, once.
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "after-the-move")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    consumer.subscribe(&[TOPIC]).unwrap();
    let mut seen = BTreeSet::new();
    let mut duplicates = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while seen.len() < acknowledged.len() && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            let key = String::from_utf8_lossy(message.key().unwrap()).into_owned();
            if !seen.insert(key) {
                duplicates += 1;
            }
        }
    }
    let lost: Vec<&String> = acknowledged.difference(&seen).take(5).collect();
    assert!(lost.is_empty(), "acknowledged records lost: {lost:?}");
    assert_eq!(duplicates, 0, "records read twice");
}
