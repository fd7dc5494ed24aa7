//! Replication across three broker processes: acks=all to a replication-factor-3 topic with
//! min.insync.replicas=2 while the partition leader is killed, the killed broker catching up
//! when it returns, and acks=all refused when too few replicas are left.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Cluster, raw_call, wait_until};
use kafka_protocol::messages::{ApiKey, MetadataRequest, MetadataResponse};
use rdkafka::Message;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// (leader, isr) of partition 0 of `topic` as `bootstrap` reports it.
fn partition_state(bootstrap: &str, topic: &str) -> Option<(i32, Vec<i32>)> {
    let response: MetadataResponse = raw_call(
        bootstrap,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    );
    let topic = response
        .topics
        .into_iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == topic))?;
    let p = topic.partitions.into_iter().next()?;
    Some((
        p.leader_id.0,
        p.isr_nodes.into_iter().map(|b| b.0).collect(),
    ))
}

async fn create_replicated(bootstrap: &str, name: &str) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let topic = NewTopic::new(name, 1, TopicReplication::Fixed(3)).set("min.insync.replicas", "2");
    let results = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(results[0].is_ok(), "{:?}", results[0]);
}

fn read_all(bootstrap: &str, topic: &str, expected: usize) -> BTreeSet<String> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("check-{topic}"))
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    // Assigned by hand: no group coordinator is involved (this test is about the data).
    let mut assignment = rdkafka::TopicPartitionList::new();
    assignment
        .add_partition_offset(topic, 0, rdkafka::Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < expected && Instant::now() < deadline {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) {
            seen.insert(
                String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned(),
            );
        }
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acks_all_loses_nothing_when_the_leader_is_killed() {
    let mut cluster = Cluster::start(3, &[]);
    let bootstrap = cluster.bootstrap();
    create_replicated(&bootstrap, "durable").await;
    assert!(wait_until(Duration::from_secs(30), || {
        partition_state(&cluster.nodes[0].bootstrap, "durable")
            .is_some_and(|(_, isr)| isr.len() == 3)
    }));

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "false")
        .set("linger.ms", "0")
        .set("message.timeout.ms", "60000")
        .set("retry.backoff.ms", "100")
        .create()
        .unwrap();
    let acked: Arc<Mutex<Vec<(usize, Instant)>>> = Arc::default();
    let total = 400;
    let mut killed_at = None;
    for i in 0..total {
        if i == total / 2 {
            let (leader, _) = partition_state(&cluster.nodes[0].bootstrap, "durable").unwrap();
            cluster.nodes[(leader - 1) as usize].kill9();
            killed_at = Some((Instant::now(), (leader - 1) as usize));
        }
        let payload = format!("m{i:05}");
        let delivery = producer
            .send(
                FutureRecord::<(), _>::to("durable").payload(&payload),
                Duration::from_secs(60),
            )
            .await;
        if delivery.is_ok() {
            acked.lock().unwrap().push((i, Instant::now()));
        }
    }
    let (killed_at, killed) = killed_at.unwrap();
    let acked = acked.lock().unwrap().clone();
    let first_after = acked
        .iter()
        .find(|(_, at)| *at > killed_at)
        .map(|(_, at)| *at - killed_at)
        .unwrap();
    eprintln!(
        "leader killed: first acknowledgement after it in {first_after:?}; {} of {total} acknowledged",
        acked.len()
    );
    let survivor = (killed + 1) % 3;
    let seen = read_all(&cluster.nodes[survivor].bootstrap, "durable", acked.len());
    let missing: Vec<usize> = acked
        .iter()
        .map(|(i, _)| *i)
        .filter(|i| !seen.contains(&format!("m{i:05}")))
        .collect();
    assert!(missing.is_empty(), "acknowledged but lost: {missing:?}");

    // The killed broker returns, catches up and is back in the ISR.
    cluster.restart(killed);
    assert!(
        wait_until(Duration::from_secs(60), || {
            partition_state(&cluster.nodes[survivor].bootstrap, "durable")
                .is_some_and(|(_, isr)| isr.len() == 3)
        }),
        "the restarted broker rejoined the ISR"
    );
}

/// One record, as the protocol crate encodes it, for a raw Produce request.
fn one_record_batch(value: &str) -> bytes::Bytes {
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };
    let record = Record {
        transactional: false,
        control: false,
        partition_leader_epoch: -1,
        producer_id: -1,
        producer_epoch: -1,
        timestamp_type: TimestampType::Creation,
        offset: 0,
        sequence: -1,
        timestamp: 1_000,
        key: None,
        value: Some(bytes::Bytes::from(value.to_string())),
        headers: Default::default(),
        delete_horizon: false,
    };
    let mut buf = bytes::BytesMut::new();
    RecordBatchEncoder::encode(
        &mut buf,
        &[record],
        &RecordEncodeOptions {
            version: 2,
            compression: Compression::None,
        },
    )
    .unwrap();
    buf.freeze()
}

fn produce_acks_all(bootstrap: &str, topic: &str, value: &str) -> i16 {
    use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
    use kafka_protocol::messages::{ProduceRequest, ProduceResponse, TopicName};
    use kafka_protocol::protocol::StrBytes;
    let request = ProduceRequest::default()
        .with_acks(-1)
        .with_timeout_ms(5_000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(TopicName(StrBytes::from_string(topic.into())))
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(one_record_batch(value))),
                ]),
        ]);
    let response: ProduceResponse = raw_call(bootstrap, ApiKey::Produce, 9, &request);
    response.responses[0].partition_responses[0].error_code
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_two_of_three_brokers_gone_acks_all_is_refused_and_reads_go_on() {
    let mut cluster = Cluster::start(3, &[("replica.lag.time.max.ms", "3000")]);
    create_replicated(&cluster.bootstrap(), "guarded").await;
    assert!(wait_until(Duration::from_secs(30), || {
        partition_state(&cluster.nodes[0].bootstrap, "guarded")
            .is_some_and(|(_, isr)| isr.len() == 3)
    }));
    let (leader, _) = partition_state(&cluster.nodes[0].bootstrap, "guarded").unwrap();
    let leader = (leader - 1) as usize;
    for i in 0..20 {
        assert_eq!(
            produce_acks_all(
                &cluster.nodes[leader].bootstrap,
                "guarded",
                &format!("g{i}")
            ),
            0
        );
    }
    // Stop the two followers; the leader is left alone.
    for i in (0..3).filter(|i| *i != leader) {
        cluster.nodes[i].kill9();
    }
    let survivor = &cluster.nodes[leader].bootstrap;
    // Two of three combined nodes gone take the controller quorum with them, so the ISR
    // cannot shrink in the metadata; the leader still counts only followers caught up
    // within replica.lag.time.max.ms (3 s here) toward min.insync.replicas.
    assert!(
        wait_until(Duration::from_secs(60), || {
            produce_acks_all(survivor, "guarded", "refused") == 19
        }),
        "NOT_ENOUGH_REPLICAS instead of accepting data it cannot protect"
    );
    let seen = read_all(survivor, "guarded", 20);
    assert_eq!(seen.len(), 20, "committed data is still read");
    assert!(!seen.contains("refused"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_keeps_its_committed_offsets_when_its_coordinator_dies() {
    use kafka_protocol::messages::{FindCoordinatorRequest, FindCoordinatorResponse};
    use kafka_protocol::protocol::StrBytes;
    let mut cluster = Cluster::start(3, &[]);
    let bootstrap = cluster.bootstrap();
    create_replicated(&bootstrap, "work").await;
    for i in 0..40 {
        assert_eq!(
            produce_acks_all(
                &bootstrap_of_leader(&cluster, "work"),
                "work",
                &format!("w{i:03}")
            ),
            0
        );
    }
    let group_consumer = |bootstrap: &str| -> BaseConsumer {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", bootstrap)
            .set("group.id", "survivors")
            .set("auto.offset.reset", "earliest")
            .set("enable.auto.commit", "false")
            .create()
            .unwrap();
        consumer.subscribe(&["work"]).unwrap();
        consumer
    };
    // Read 15 and commit after them.
    let consumer = group_consumer(&bootstrap);
    let mut read = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    while read < 15 && Instant::now() < deadline {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) {
            read += 1;
            if read == 15 {
                let mut offsets = rdkafka::TopicPartitionList::new();
                offsets
                    .add_partition_offset("work", 0, rdkafka::Offset::Offset(message.offset() + 1))
                    .unwrap();
                consumer
                    .commit(&offsets, rdkafka::consumer::CommitMode::Sync)
                    .unwrap();
            }
        }
    }
    assert_eq!(read, 15);
    drop(consumer);

    let coordinator: FindCoordinatorResponse = raw_call(
        &cluster.nodes[0].bootstrap,
        ApiKey::FindCoordinator,
        3,
        &FindCoordinatorRequest::default().with_key(StrBytes::from_static_str("survivors")),
    );
    assert_eq!(coordinator.error_code, 0);
    let dead = (coordinator.node_id.0 - 1) as usize;
    cluster.nodes[dead].kill9();
    let alive: Vec<String> = (0..3)
        .filter(|i| *i != dead)
        .map(|i| cluster.nodes[i].bootstrap.clone())
        .collect();

    // A new member of the group, through the brokers left, starts after the commit.
    let consumer = group_consumer(&alive.join(","));
    let deadline = Instant::now() + Duration::from_secs(90);
    let first = loop {
        assert!(Instant::now() < deadline, "the group never resumed");
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) {
            break String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned();
        }
    };
    assert_eq!(first, "w015", "resumed from the committed offset");
}

/// The client address of the broker leading partition 0 of `topic`.
fn bootstrap_of_leader(cluster: &Cluster, topic: &str) -> String {
    let (leader, _) = partition_state(&cluster.nodes[0].bootstrap, topic).unwrap();
    cluster.nodes[(leader - 1) as usize].bootstrap.clone()
}
