//! Several log directories on a cluster (JBOD, KIP-858): one directory of a broker fails
//! (every write under it gets EIO, a test fail point); the broker takes the directory offline,
//! reports it to the controller in its heartbeats, and the controller moves the leadership and
//! ISR membership of exactly the replicas in it — the broker's replicas in its other directory
//! stay in sync. Every acknowledged record is read back. With the disk replaced (an empty
//! directory), the broker recreates those replicas and rejoins every ISR.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Broker, Cluster, raw_call, wait_until};
use kafka_protocol::messages::{
    ApiKey, DescribeLogDirsRequest, DescribeLogDirsResponse, MetadataRequest, MetadataResponse,
};
use rdkafka::Message;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

const TOPIC: &str = "spread";
const PARTITIONS: i32 = 6;
const KAFKA_STORAGE_ERROR: i16 = 56;

/// (leader, isr) of each partition of `TOPIC` as `bootstrap` reports it.
fn partitions(bootstrap: &str) -> BTreeMap<i32, (i32, Vec<i32>)> {
    let response: MetadataResponse = raw_call(
        bootstrap,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    );
    response
        .topics
        .into_iter()
        .filter(|t| t.name.as_ref().is_some_and(|n| n.as_str() == TOPIC))
        .flat_map(|t| t.partitions)
        .map(|p| {
            (
                p.partition_index,
                (
                    p.leader_id.0,
                    p.isr_nodes.into_iter().map(|b| b.0).collect(),
                ),
            )
        })
        .collect()
}

/// Each directory of the broker at `bootstrap`: its error code and the partitions of `TOPIC`
/// in it.
fn log_dirs(bootstrap: &str) -> Vec<(String, i16, BTreeSet<i32>)> {
    let response: DescribeLogDirsResponse = raw_call(
        bootstrap,
        ApiKey::DescribeLogDirs,
        4,
        &DescribeLogDirsRequest::default().with_topics(None),
    );
    response
        .results
        .into_iter()
        .map(|r| {
            let held = r
                .topics
                .iter()
                .filter(|t| t.name.as_str() == TOPIC)
                .flat_map(|t| t.partitions.iter().map(|p| p.partition_index))
                .collect();
            (r.log_dir.to_string(), r.error_code, held)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_log_directory_moves_exactly_its_replicas_away() {
    let mut cluster = Cluster::start(
        3,
        &[
            ("log.dirs", "{dir}/a,{dir}/b"),
            ("broker.heartbeat.interval.ms", "200"),
            // Leaders drop a lagging follower only after a minute: what moves the failed
            // directory's replicas out within the test's time is the controller.
            ("replica.lag.time.max.ms", "60000"),
        ],
    );
    // Node 3's second directory fails at its first write.
    let failing = cluster.data_dir(2).join("b");
    cluster.nodes[2].stop();
    cluster.restart_with_failpoints(2, &format!("disk-fails=return({})", failing.display()));
    let bootstrap = cluster.bootstrap();
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .unwrap();
    let topic = NewTopic::new(TOPIC, PARTITIONS, TopicReplication::Fixed(3))
        .set("min.insync.replicas", "2");
    let created = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(created[0].is_ok(), "{:?}", created[0]);
    let node3 = cluster.nodes[2].bootstrap.clone();
    assert!(
        wait_until(Duration::from_secs(30), || {
            let state = partitions(&node3);
            state.len() == PARTITIONS as usize && state.values().all(|(_, isr)| isr.len() == 3)
        }),
        "every replica in sync before the failure"
    );
    // Where node 3 placed its replicas: some in each directory.
    let placed = log_dirs(&node3);
    assert_eq!(placed.len(), 2, "{placed:?}");
    let in_b = placed[1].2.clone();
    let in_a = placed[0].2.clone();
    assert!(
        !in_a.is_empty() && !in_b.is_empty(),
        "replicas in both directories: {placed:?}"
    );

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .set("linger.ms", "5")
        .set("message.timeout.ms", "60000")
        .create()
        .unwrap();
    let total = 600;
    let mut sends = tokio::task::JoinSet::new();
    for i in 0..total {
        let producer = producer.clone();
        sends.spawn(async move {
            let payload = format!("m{i:05}");
            producer
                .send(
                    FutureRecord::<(), _>::to(TOPIC)
                        .partition(i % PARTITIONS)
                        .payload(&payload),
                    Duration::from_secs(60),
                )
                .await
                .is_ok()
        });
    }
    let acked: Vec<bool> = sends.join_all().await;
    assert!(acked.iter().all(|ok| *ok), "every record acknowledged");

    // The directory is offline on node 3, and the controller moved exactly its replicas out.
    let started = Instant::now();
    assert!(
        wait_until(Duration::from_secs(30), || {
            partitions(&cluster.nodes[0].bootstrap)
                .iter()
                .all(|(p, (leader, isr))| {
                    if in_b.contains(p) {
                        *leader != 3 && !isr.contains(&3)
                    } else {
                        isr.len() == 3
                    }
                })
        }),
        "replicas in the failed directory out of leadership and ISR, the others in sync: {:?}",
        partitions(&cluster.nodes[0].bootstrap)
    );
    eprintln!(
        "failed directory's replicas moved within {:?} of the last acknowledgement",
        started.elapsed()
    );
    let after = log_dirs(&node3);
    assert_eq!(after[1].1, KAFKA_STORAGE_ERROR, "{after:?}");
    assert_eq!(after[0].1, 0);
    assert_eq!(after[0].2, in_a);
    assert!(
        cluster.nodes[2]
            .log_text()
            .contains("log directory offline")
    );

    // Everything acknowledged is there.
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "read-back")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    consumer.subscribe(&[TOPIC]).unwrap();
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < total as usize && Instant::now() < deadline {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
            seen.insert(
                String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned(),
            );
        }
    }
    assert_eq!(
        seen.len(),
        total as usize,
        "every acknowledged record read back"
    );

    // The failed disk replaced: node 3 restarts with an empty directory in its place (a new
    // directory id), recreates the replicas that were there, copies them from the leaders
    // and is back in every ISR.
    cluster.nodes[2].stop();
    std::fs::remove_dir_all(&failing).unwrap();
    cluster.restart(2);
    assert!(
        wait_until(Duration::from_secs(60), || {
            partitions(&cluster.nodes[0].bootstrap)
                .values()
                .all(|(_, isr)| isr.len() == 3)
        }),
        "node 3 back in every ISR: {:?}",
        partitions(&cluster.nodes[0].bootstrap)
    );
    let replaced = log_dirs(&cluster.nodes[2].bootstrap);
    assert!(
        replaced.iter().all(|(_, error, _)| *error == 0),
        "{replaced:?}"
    );
    let held: BTreeSet<i32> = replaced
        .iter()
        .flat_map(|(_, _, held)| held.clone())
        .collect();
    assert_eq!(held, (0..PARTITIONS).collect());
}

/// A broker whose every log directory failed halts, as Kafka's does (`LogManager`: "Shutdown
/// broker because all log dirs in ... have failed", exit code 1): here its one directory
/// fails at the first write of a produce (its partition's segment writes get EIO).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broker_whose_every_log_directory_failed_halts() {
    let mut broker = Broker::start_with_failpoints(&[], "disk-fails=return(halts-0)");
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", broker.bootstrap.as_str())
        .set("message.timeout.ms", "5000")
        .create()
        .unwrap();
    // The broker stops under it: the send's outcome does not matter, only the exit.
    let _ = producer
        .send(
            FutureRecord::<(), _>::to("halts").payload("first"),
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(broker.wait_exit(Duration::from_secs(30)), Some(1));
    let log = broker.log_text();
    assert!(
        log.contains("Shutdown broker because all log dirs in") && log.contains("have failed"),
        "{log}"
    );
}

/// `replica.alter.log.dirs.io.max.bytes.per.second` paces a move between log directories
/// (Kafka's ReplicaAlterLogDirs quota): 8 MiB moved at 2 MiB/s, with a burst of one 1 s
/// window, cannot finish in under about 3 s; set live, as a dynamic broker config.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_between_log_directories_is_throttled() {
    use kafka_protocol::messages::alter_replica_log_dirs_request::{
        AlterReplicaLogDir, AlterReplicaLogDirTopic,
    };
    use kafka_protocol::messages::{
        AlterReplicaLogDirsRequest, AlterReplicaLogDirsResponse, TopicName,
    };
    const RATE: u64 = 2 << 20;
    const SIZE: usize = 8 << 20;
    let broker = Broker::start(&[
        ("log.dirs", "{dir}/a,{dir}/b"),
        ("replication.quota.window.num", "2"),
        ("replication.quota.window.size.seconds", "1"),
    ]);
    let bootstrap = broker.bootstrap.clone();
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .unwrap();
    let topic = NewTopic::new(TOPIC, 1, TopicReplication::Fixed(1));
    let created = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(created[0].is_ok(), "{:?}", created[0]);
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("linger.ms", "5")
        .create()
        .unwrap();
    let payload = vec![7u8; 64 << 10];
    for _ in 0..SIZE / payload.len() {
        producer
            .send(
                FutureRecord::<(), _>::to(TOPIC).payload(&payload),
                Duration::from_secs(30),
            )
            .await
            .unwrap();
    }
    let rate = RATE.to_string();
    let set = rdkafka::admin::AlterConfig::new(rdkafka::admin::ResourceSpecifier::Broker(1))
        .set("replica.alter.log.dirs.io.max.bytes.per.second", &rate);
    let altered = admin
        .alter_configs([&set], &AdminOptions::new())
        .await
        .unwrap();
    assert!(altered[0].is_ok(), "{:?}", altered[0]);

    let dirs = log_dirs(&bootstrap);
    let (from, to) = if dirs[0].2.contains(&0) {
        (0, 1)
    } else {
        (1, 0)
    };
    let target = dirs[to].0.clone();
    let started = Instant::now();
    let moved: AlterReplicaLogDirsResponse = raw_call(
        &bootstrap,
        ApiKey::AlterReplicaLogDirs,
        2,
        &AlterReplicaLogDirsRequest::default().with_dirs(vec![
            AlterReplicaLogDir::default()
                .with_path(target.clone().into())
                .with_topics(vec![
                    AlterReplicaLogDirTopic::default()
                        .with_name(TopicName(TOPIC.into()))
                        .with_partitions(vec![0]),
                ]),
        ]),
    );
    assert_eq!(moved.results[0].partitions[0].error_code, 0);
    assert!(
        wait_until(Duration::from_secs(60), || {
            let dirs = log_dirs(&bootstrap);
            dirs[to].2.contains(&0) && !dirs[from].2.contains(&0)
        }),
        "the move did not finish"
    );
    let took = started.elapsed();
    // Two windows of 1 s: after the first second's burst, the rest waits for the rate.
    let least = Duration::from_secs_f64((SIZE as u64 - 2 * RATE) as f64 / RATE as f64);
    assert!(took >= least, "8 MiB moved in {took:?} at 2 MiB/s");
    println!("moved {SIZE} bytes between log directories in {took:?} (throttle {RATE} B/s)");
}

/// A node whose metadata log cannot be written halts, as Kafka's does when its metadata log
/// directory fails (ReplicaManager: "Shutdown broker because the metadata log dir ... has
/// failed"), rather than living on without a quorum: here the metadata log's writes get EIO
/// from the start, while the second data directory is sound.
#[test]
fn a_node_whose_metadata_log_directory_failed_halts() {
    let dir = tempfile::tempdir().unwrap();
    let (mut broker, _lines) = Broker::spawn_with_failpoints(
        dir.path(),
        &[("log.dirs", "{dir}/a,{dir}/b")],
        "disk-fails=return(__cluster_metadata)",
    );
    assert_eq!(broker.wait_exit(Duration::from_secs(30)), Some(1));
    let log = broker.log_text();
    let first = dir.path().join("a");
    assert!(
        log.contains(&format!(
            "Shutdown broker because the metadata log dir {} has failed",
            first.display()
        )),
        "{log}"
    );
}
