//! Idempotent and transactional producers. Idempotence: librdkafka's producer through a
//! proxy that sends every Produce request twice. Transactions on a partition, driven with raw
//! frames where the coordinator will later stand: transactional batches from two producers,
//! markers written with WriteTxnMarkers, and what read_committed and read_uncommitted
//! consumers (librdkafka) then see.

#![allow(clippy::unwrap_used)]

mod common;
#[path = "transactions/crash_recovery.rs"]
mod crash_recovery;

use common::{Broker, raw_call, wait_until};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic};
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::write_txn_markers_request::{
    WritableTxnMarker, WritableTxnMarkerTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::config::ClientConfig;
use std::time::Duration;

fn name(text: &str) -> TopicName {
    TopicName(StrBytes::from_string(text.to_string()))
}

fn create_topic(bootstrap: &str, topic: &str) {
    let request = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(name(topic))
                .with_num_partitions(1)
                .with_replication_factor(1),
        ])
        .with_timeout_ms(10_000);
    let response: CreateTopicsResponse = raw_call(bootstrap, ApiKey::CreateTopics, 7, &request);
    assert_eq!(response.topics[0].error_code, 0);
}

/// A batch of `values` from `producer_id` (epoch 0, sequences from `sequence`), in a
/// transaction when `transactional`.
fn batch(values: &[&str], producer_id: i64, sequence: i32, transactional: bool) -> bytes::Bytes {
    common::raw::producer_batch(values, producer_id, 0, sequence, transactional)
}

fn produce(bootstrap: &str, topic: &str, records: bytes::Bytes) {
    assert_eq!(produce_to(bootstrap, topic, 0, None, records), 0);
}

/// Ends `producer_id`'s transaction on partition 0 of `topic`; the partition's error code.
fn end_transaction(
    bootstrap: &str,
    topic: &str,
    producer_id: i64,
    commit: bool,
    coordinator_epoch: i32,
) -> i16 {
    let request = WriteTxnMarkersRequest::default().with_markers(vec![
        WritableTxnMarker::default()
            .with_producer_id(ProducerId(producer_id))
            .with_producer_epoch(0)
            .with_transaction_result(commit)
            .with_coordinator_epoch(coordinator_epoch)
            .with_topics(vec![
                WritableTxnMarkerTopic::default()
                    .with_name(name(topic))
                    .with_partition_indexes(vec![0]),
            ]),
    ]);
    let response: WriteTxnMarkersResponse =
        raw_call(bootstrap, ApiKey::WriteTxnMarkers, 1, &request);
    response.markers[0].topics[0].partitions[0].error_code
}

/// ListOffsets "latest" for partition 0: the high watermark, or for read_committed the last
/// stable offset.
fn latest(bootstrap: &str, topic: &str, read_committed: bool) -> i64 {
    latest_offsets(bootstrap, topic, 1, read_committed)[0]
}

/// DescribeProducers for partition 0: (producer id, last sequence, open transaction start,
/// coordinator epoch) of each.
fn producers(bootstrap: &str, topic: &str) -> Vec<(i64, i32, i64, i32)> {
    use kafka_protocol::messages::describe_producers_request::TopicRequest;
    let request = DescribeProducersRequest::default().with_topics(vec![
        TopicRequest::default()
            .with_name(name(topic))
            .with_partition_indexes(vec![0]),
    ]);
    let response: DescribeProducersResponse =
        raw_call(bootstrap, ApiKey::DescribeProducers, 0, &request);
    let partition = &response.topics[0].partitions[0];
    assert_eq!(partition.error_code, 0);
    partition
        .active_producers
        .iter()
        .map(|p| {
            (
                p.producer_id.0,
                p.last_sequence,
                p.current_txn_start_offset,
                p.coordinator_epoch,
            )
        })
        .collect()
}

/// DescribeTransactions for one id: (error code, state, producer id, partitions per topic).
fn describe_transaction(bootstrap: &str, id: &str) -> (i16, String, i64, Vec<(String, Vec<i32>)>) {
    let request = DescribeTransactionsRequest::default()
        .with_transactional_ids(vec![TransactionalId(StrBytes::from_string(id.to_string()))]);
    let response: DescribeTransactionsResponse =
        raw_call(bootstrap, ApiKey::DescribeTransactions, 0, &request);
    let state = &response.transaction_states[0];
    assert_eq!(state.transactional_id.as_str(), id);
    (
        state.error_code,
        state.transaction_state.to_string(),
        state.producer_id.0,
        state
            .topics
            .iter()
            .map(|t| (t.topic.to_string(), t.partitions.clone()))
            .collect(),
    )
}

/// ListTransactions v2 filtered by `states` and an id pattern: (ids with their state, unknown
/// state filters).
fn list_transactions(
    bootstrap: &str,
    states: &[&str],
    pattern: &str,
) -> (Vec<(String, String)>, Vec<String>) {
    let request = ListTransactionsRequest::default()
        .with_state_filters(
            states
                .iter()
                .map(|s| StrBytes::from_string(s.to_string()))
                .collect(),
        )
        .with_duration_filter(-1)
        .with_transactional_id_pattern(Some(StrBytes::from_string(pattern.to_string())));
    let response: ListTransactionsResponse =
        raw_call(bootstrap, ApiKey::ListTransactions, 2, &request);
    assert_eq!(response.error_code, 0);
    (
        response
            .transaction_states
            .iter()
            .map(|t| {
                (
                    t.transactional_id.to_string(),
                    t.transaction_state.to_string(),
                )
            })
            .collect(),
        response
            .unknown_state_filters
            .iter()
            .map(|s| s.to_string())
            .collect(),
    )
}

/// Every value a consumer with `isolation` reads from the start, once `expected` arrived
/// (or after a short quiet period when none are expected).
fn consume(bootstrap: &str, topic: &str, isolation: &str, expected: usize) -> Vec<String> {
    let patience = Duration::from_secs(if expected > 0 { 30 } else { 3 });
    common::read_partition(bootstrap, topic, 0, isolation, expected, patience)
}

#[test]
fn read_committed_consumers_see_committed_transactions_only() {
    // The log's side of transactions alone: batches written without a coordinator (no
    // KIP-890 verification) and ended by markers sent as a coordinator would.
    let broker = Broker::start(&[("transaction.partition.verification.enable", "false")]);
    let bootstrap = broker.bootstrap.clone();
    create_topic(&bootstrap, "tx");
    let (committer, aborter) = (7_001, 7_002);
    let write =
        |id: &str, records| assert_eq!(produce_transactional(&bootstrap, "tx", id, records), 0);
    write("committer", batch(&["c1", "c2"], committer, 0, true)); // 0-1
    produce(&bootstrap, "tx", batch(&["plain"], -1, -1, false)); // 2
    write("aborter", batch(&["x1", "x2"], aborter, 0, true)); // 3-4
    write("committer", batch(&["c3"], committer, 2, true)); // 5

    // Both transactions are open: read_committed readers stop before the first.
    assert_eq!(latest(&bootstrap, "tx", false), 6);
    assert_eq!(latest(&bootstrap, "tx", true), 0);
    assert!(consume(&bootstrap, "tx", "read_committed", 0).is_empty());

    // DescribeProducers shows where each open transaction starts.
    assert_eq!(
        producers(&bootstrap, "tx"),
        vec![(committer, 2, 0, -1), (aborter, 1, 3, -1)]
    );

    assert_eq!(end_transaction(&bootstrap, "tx", committer, true, 0), 0); // 6
    assert_eq!(
        latest(&bootstrap, "tx", true),
        3,
        "the aborter's is still open"
    );
    assert_eq!(end_transaction(&bootstrap, "tx", aborter, false, 0), 0); // 7
    assert_eq!(latest(&bootstrap, "tx", true), 8);
    assert_eq!(
        producers(&bootstrap, "tx"),
        vec![(committer, 2, -1, 0), (aborter, 1, -1, 0)]
    );
    // A marker from an older coordinator is refused.
    assert_eq!(
        end_transaction(&bootstrap, "tx", aborter, false, -1),
        52,
        "TRANSACTION_COORDINATOR_FENCED"
    );

    // The raw answer lists the aborted transaction for the range it returns.
    let fetch = FetchRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_max_wait_ms(0)
        .with_max_bytes(1 << 20)
        .with_isolation_level(1)
        .with_topics(vec![
            FetchTopic::default()
                .with_topic(name("tx"))
                .with_partitions(vec![
                    FetchPartition::default()
                        .with_partition(0)
                        .with_fetch_offset(0)
                        .with_partition_max_bytes(1 << 20),
                ]),
        ]);
    let fetched: FetchResponse = raw_call(&bootstrap, ApiKey::Fetch, 11, &fetch);
    let partition = &fetched.responses[0].partitions[0];
    assert_eq!(partition.last_stable_offset, 8);
    let aborted: Vec<(i64, i64)> = partition
        .aborted_transactions
        .as_ref()
        .unwrap()
        .iter()
        .map(|t| (t.producer_id.0, t.first_offset))
        .collect();
    assert_eq!(aborted, vec![(aborter, 3)]);

    // librdkafka drops the aborted records and the markers itself.
    assert_eq!(
        consume(&bootstrap, "tx", "read_committed", 4),
        vec!["c1", "c2", "plain", "c3"]
    );
    assert_eq!(
        consume(&bootstrap, "tx", "read_uncommitted", 6),
        vec!["c1", "c2", "plain", "x1", "x2", "c3"]
    );

    // The same after a restart: the aborted-transaction index and producer state persist.
    let dir = broker.dir().to_path_buf();
    let mut broker = broker;
    assert_eq!(broker.stop(), Some(0));
    let broker = Broker::start_in(&dir, &[]);
    assert!(wait_until(Duration::from_secs(10), || latest(
        &broker.bootstrap,
        "tx",
        true
    ) == 8));
    assert_eq!(
        consume(&broker.bootstrap, "tx", "read_committed", 4),
        vec!["c1", "c2", "plain", "c3"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotent_producer_writes_each_record_once_when_every_request_is_sent_twice() {
    use rdkafka::producer::{FutureProducer, FutureRecord};
    // The broker advertises the proxy, so the producer's every connection goes through it.
    let proxy_listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let proxy_port = proxy_listener.local_addr().unwrap().port();
    let broker_port = common::free_port();
    let listeners = format!("PLAINTEXT://127.0.0.1:{broker_port}");
    let advertised = format!("PLAINTEXT://127.0.0.1:{proxy_port}");
    let broker = Broker::start(&[
        ("listeners", &listeners),
        ("advertised.listeners", &advertised),
    ]);
    let proxy = common::proxy::ProduceReplayer::start(proxy_listener, broker_port);
    create_topic(&broker.bootstrap, "once");

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", format!("127.0.0.1:{}", proxy.port))
        .set("enable.idempotence", "true")
        .set("linger.ms", "2")
        .create()
        .unwrap();
    // Rounds of ten, each awaited: many produce requests, each with several records.
    let total = 2_000;
    for round in 0..total / 10 {
        let mut deliveries = Vec::with_capacity(10);
        for i in round * 10..round * 10 + 10 {
            let payload = format!("{i:05}");
            let delivery = producer
                .send_result(
                    FutureRecord::<(), _>::to("once")
                        .payload(&payload)
                        .partition(0),
                )
                .map_err(|(e, _)| e);
            deliveries.push(delivery);
        }
        for delivery in deliveries {
            delivery.unwrap().await.unwrap().unwrap();
        }
    }
    assert!(
        proxy.replayed() >= 100,
        "the proxy replayed produce requests: {}",
        proxy.replayed()
    );
    eprintln!(
        "{} produce requests were sent twice; {total} records written",
        proxy.replayed()
    );
    // Each record once, in the order sent.
    assert_eq!(latest(&broker.bootstrap, "once", false), total as i64);
    let seen = consume(&broker.bootstrap, "once", "read_uncommitted", total);
    let expected: Vec<String> = (0..total).map(|i| format!("{i:05}")).collect();
    assert_eq!(seen, expected);
}

#[test]
fn a_transactional_producer_commits_and_aborts_and_a_new_instance_fences_the_old() {
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    let broker = Broker::start(&[]);
    let bootstrap = broker.bootstrap.clone();
    create_topic(&bootstrap, "txp");
    let transactional = |id: &str| -> ThreadedProducer<DefaultProducerContext> {
        ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .set("transactional.id", id)
            .set("transaction.timeout.ms", "60000")
            .create()
            .unwrap()
    };
    let timeout = Duration::from_secs(30);
    let producer = transactional("txp-1");
    producer.init_transactions(timeout).unwrap();
    let send = |producer: &ThreadedProducer<DefaultProducerContext>, values: &[String]| {
        for value in values {
            producer
                .send(BaseRecord::<(), _>::to("txp").payload(value).partition(0))
                .unwrap();
        }
    };
    let values = |prefix: &str, range: std::ops::Range<i32>| -> Vec<String> {
        range.map(|i| format!("{prefix}{i}")).collect()
    };
    producer.begin_transaction().unwrap();
    send(&producer, &values("c", 0..5));
    producer.commit_transaction(timeout).unwrap();
    producer.begin_transaction().unwrap();
    send(&producer, &values("a", 0..5));
    // Written before the abort (librdkafka drops what it has not sent yet).
    producer.flush(timeout).unwrap();
    producer.abort_transaction(timeout).unwrap();
    producer.begin_transaction().unwrap();
    send(&producer, &values("c", 5..10));
    producer.commit_transaction(timeout).unwrap();

    let committed = values("c", 0..10);
    assert_eq!(consume(&bootstrap, "txp", "read_committed", 10), committed);
    let everything: Vec<String> = values("c", 0..5)
        .into_iter()
        .chain(values("a", 0..5))
        .chain(values("c", 5..10))
        .collect();
    assert_eq!(
        consume(&bootstrap, "txp", "read_uncommitted", 15),
        everything
    );

    // A second instance with the same transactional id fences the first: its open
    // transaction is aborted, and it can no longer commit.
    producer.begin_transaction().unwrap();
    send(&producer, &values("z", 0..3));
    producer.flush(timeout).unwrap();
    // The open transaction as the coordinator reports it (kafka-transactions.sh).
    let (error, state, zombie_id, topics) = describe_transaction(&bootstrap, "txp-1");
    assert_eq!(error, 0);
    assert_eq!(state, "Ongoing");
    assert_eq!(topics, vec![("txp".to_string(), vec![0])]);
    assert_eq!(
        list_transactions(&bootstrap, &["Ongoing", "Sleeping"], "txp-.*"),
        (
            vec![("txp-1".to_string(), "Ongoing".to_string())],
            vec!["Sleeping".to_string()]
        )
    );
    assert_eq!(
        list_transactions(&bootstrap, &["CompleteCommit"], "txp-.*").0,
        vec![]
    );
    assert_eq!(
        describe_transaction(&bootstrap, "no-such-id").0,
        105,
        "TRANSACTIONAL_ID_NOT_FOUND"
    );
    let successor = transactional("txp-1");
    successor.init_transactions(timeout).unwrap();
    assert!(
        producer.commit_transaction(timeout).is_err(),
        "the fenced instance cannot commit"
    );
    successor.begin_transaction().unwrap();
    send(&successor, &values("s", 0..2));
    successor.commit_transaction(timeout).unwrap();
    let after: Vec<String> = committed.into_iter().chain(values("s", 0..2)).collect();
    assert_eq!(consume(&bootstrap, "txp", "read_committed", 12), after);
    assert!(
        wait_until(Duration::from_secs(10), || {
            describe_transaction(&bootstrap, "txp-1").1 == "CompleteCommit"
        }),
        "the successor's transaction completes"
    );
    let (_, _, successor_id, topics) = describe_transaction(&bootstrap, "txp-1");
    assert_eq!(
        successor_id, zombie_id,
        "the same producer id, a newer epoch"
    );
    assert!(
        topics.is_empty(),
        "a completed transaction has no partitions"
    );
}

#[test]
fn a_transaction_spanning_partitions_led_by_other_brokers_commits_and_aborts_everywhere() {
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    let cluster = common::Cluster::start(3, &[]);
    let bootstrap = cluster.bootstrap();
    let request = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(name("spread"))
                .with_num_partitions(3)
                .with_replication_factor(3),
        ])
        .with_timeout_ms(10_000);
    let created: CreateTopicsResponse = raw_call(
        &cluster.nodes[0].bootstrap,
        ApiKey::CreateTopics,
        7,
        &request,
    );
    assert_eq!(created.topics[0].error_code, 0);
    let producer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("transactional.id", "spread-1")
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
    // Partition leaders are spread over the three brokers: whichever coordinates the
    // transaction wrote its markers to at least two others.
    for partition in 0..3 {
        assert_eq!(
            common::read_partition(
                &bootstrap,
                "spread",
                partition,
                "read_committed",
                2,
                Duration::from_secs(30)
            ),
            vec![
                format!("committed-{partition}"),
                format!("after-{partition}")
            ]
        );
        assert_eq!(
            common::read_partition(
                &bootstrap,
                "spread",
                partition,
                "read_uncommitted",
                3,
                Duration::from_secs(30)
            ),
            vec![
                format!("committed-{partition}"),
                format!("aborted-{partition}"),
                format!("after-{partition}")
            ]
        );
    }
    // KIP-890 verification across brokers: a transactional write no coordinator knows of is
    // refused by each partition's leader, which asks the coordinator of the id (on another
    // broker for at least two of the three partitions).
    for partition in 0..3 {
        let answers: Vec<i16> = cluster
            .nodes
            .iter()
            .map(|node| {
                produce_to(
                    &node.bootstrap,
                    "spread",
                    partition,
                    Some("stranger"),
                    batch(&["stray"], 4_242, 0, true),
                )
            })
            .filter(|code| *code != 6) // NOT_LEADER_OR_FOLLOWER
            .collect();
        assert_eq!(
            answers,
            vec![48],
            "partition {partition}: INVALID_TXN_STATE from its leader"
        );
    }
}

/// Consume-transform-produce: offsets committed in the producer's transaction move with it —
/// visible when it commits, discarded when it aborts, so a restarted consumer redoes exactly
/// the aborted work.
#[test]
fn consume_transform_produce_is_exactly_once_across_an_abort_a_producer_crash_and_a_restart() {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    use rdkafka::{Message, Offset, TopicPartitionList};
    let broker = Broker::start(&[]);
    let bootstrap = broker.bootstrap.clone();
    create_topic(&bootstrap, "input");
    create_topic(&bootstrap, "output");
    for i in 0..10 {
        produce(
            &bootstrap,
            "input",
            batch(&[&format!("in{i}")], -1, -1, false),
        );
    }
    let timeout = Duration::from_secs(30);
    let new_producer = || -> ThreadedProducer<DefaultProducerContext> {
        let producer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .set("transactional.id", "transformer")
            .create()
            .unwrap();
        producer.init_transactions(timeout).unwrap();
        producer
    };
    let consumer = || -> BaseConsumer {
        let consumer: BaseConsumer = ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .set("group.id", "transformers")
            .set("isolation.level", "read_committed")
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .create()
            .unwrap();
        let mut assignment = TopicPartitionList::new();
        assignment
            .add_partition_offset("input", 0, Offset::Stored)
            .unwrap();
        consumer.assign(&assignment).unwrap();
        consumer
    };
    // Processes `count` records in one transaction, ending it as `end` says (None: the
    // producer dies before it ends it); returns the input values it read.
    let process = |producer: &ThreadedProducer<DefaultProducerContext>,
                   consumer: &BaseConsumer,
                   count: usize,
                   end: Option<bool>|
     -> Vec<String> {
        producer.begin_transaction().unwrap();
        let mut read = Vec::new();
        let mut next = 0;
        let deadline = std::time::Instant::now() + timeout;
        while read.len() < count && std::time::Instant::now() < deadline {
            if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
                let value = String::from_utf8_lossy(message.payload().unwrap()).into_owned();
                let out = value.replace("in", "out");
                producer
                    .send(BaseRecord::<(), _>::to("output").payload(&out).partition(0))
                    .unwrap();
                next = message.offset() + 1;
                read.push(value);
            }
        }
        let mut offsets = TopicPartitionList::new();
        offsets
            .add_partition_offset("input", 0, Offset::Offset(next))
            .unwrap();
        producer
            .send_offsets_to_transaction(&offsets, &consumer.group_metadata().unwrap(), timeout)
            .unwrap();
        match end {
            Some(true) => producer.commit_transaction(timeout).unwrap(),
            Some(false) => {
                producer.flush(timeout).unwrap();
                producer.abort_transaction(timeout).unwrap();
            }
            None => producer.flush(timeout).unwrap(),
        }
        read
    };
    let producer = new_producer();
    let first = consumer();
    assert_eq!(process(&producer, &first, 4, Some(true)).len(), 4);
    assert_eq!(
        process(&producer, &first, 3, Some(false)).len(),
        3,
        "processed, then aborted"
    );
    drop(first);
    // The producer crashes mid-transaction: its output and offsets are sent, and the
    // transaction is never ended (the coordinator still has it open).
    let crashing = consumer();
    assert_eq!(
        process(&producer, &crashing, 2, None),
        vec!["in4".to_string(), "in5".to_string()]
    );
    drop(crashing);
    drop(producer);
    assert_eq!(describe_transaction(&bootstrap, "transformer").1, "Ongoing");
    // Its successor fences it (the open transaction is aborted), and a restarted consumer
    // resumes at the offset the last committed transaction stored (4), not the aborted (7)
    // or the crashed (6) one's.
    let producer = new_producer();
    let second = consumer();
    let redone = process(&producer, &second, 6, Some(true));
    assert_eq!(redone.first().map(String::as_str), Some("in4"));
    let committed = second
        .committed(timeout)
        .unwrap()
        .find_partition("input", 0)
        .unwrap()
        .offset();
    assert_eq!(committed, Offset::Offset(10));
    let expected: Vec<String> = (0..10).map(|i| format!("out{i}")).collect();
    assert_eq!(
        consume(&bootstrap, "output", "read_committed", 10),
        expected
    );

    // After a restart the group's offsets are rebuilt from __consumer_offsets, the
    // transactional ones decided by their markers.
    drop(second);
    drop(producer);
    let dir = broker.dir().to_path_buf();
    let mut broker = broker;
    assert_eq!(broker.stop(), Some(0));
    let restarted = Broker::start_in(&dir, &[]);
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &restarted.bootstrap)
        .set("group.id", "transformers")
        .create()
        .unwrap();
    let mut wanted = TopicPartitionList::new();
    wanted.add_partition("input", 0);
    let committed = consumer
        .committed_offsets(wanted, timeout)
        .unwrap()
        .find_partition("input", 0)
        .unwrap()
        .offset();
    assert_eq!(committed, Offset::Offset(10));
}

/// ListOffsets "latest" of partitions 0..`partitions` of `topic`, in partition order.
fn latest_offsets(bootstrap: &str, topic: &str, partitions: i32, read_committed: bool) -> Vec<i64> {
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_isolation_level(read_committed as i8)
        .with_topics(vec![
            ListOffsetsTopic::default()
                .with_name(name(topic))
                .with_partitions(
                    (0..partitions)
                        .map(|p| {
                            ListOffsetsPartition::default()
                                .with_partition_index(p)
                                .with_timestamp(-1)
                        })
                        .collect(),
                ),
        ]);
    let response: ListOffsetsResponse = raw_call(bootstrap, ApiKey::ListOffsets, 7, &request);
    let mut offsets: Vec<(i32, i64)> = response.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.offset))
        .collect();
    offsets.sort();
    offsets.into_iter().map(|(_, offset)| offset).collect()
}

/// A transactional Produce v9 of `records` to partition 0 of `topic` for `transactional_id`;
/// the partition's error code.
fn produce_transactional(
    bootstrap: &str,
    topic: &str,
    transactional_id: &str,
    records: bytes::Bytes,
) -> i16 {
    produce_to(bootstrap, topic, 0, Some(transactional_id), records)
}

/// Produce v9 (acks=all) of `records` to one partition; the partition's error code.
fn produce_to(
    bootstrap: &str,
    topic: &str,
    partition: i32,
    transactional_id: Option<&str>,
    records: bytes::Bytes,
) -> i16 {
    let request = ProduceRequest::default()
        .with_transactional_id(
            transactional_id.map(|id| TransactionalId(StrBytes::from_string(id.to_string()))),
        )
        .with_acks(-1)
        .with_timeout_ms(5_000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(name(topic))
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(partition)
                        .with_records(Some(records)),
                ]),
        ]);
    let response: ProduceResponse = raw_call(bootstrap, ApiKey::Produce, 9, &request);
    response.responses[0].partition_responses[0].error_code
}

#[test]
fn a_transactional_write_its_coordinator_does_not_know_is_refused() {
    // KIP-890 verification: a batch that would begin a transaction on a partition is written
    // only if the coordinator has the partition in the producer's ongoing transaction. This
    // stops a retried batch arriving after its transaction ended from opening a "hanging"
    // transaction that holds read_committed consumers back until it times out.
    let broker = Broker::start(&[]);
    let bootstrap = broker.bootstrap.clone();
    create_topic(&bootstrap, "verified");
    let id = || TransactionalId(StrBytes::from_static_str("verified-tx"));
    let mut init = InitProducerIdResponse::default().with_error_code(-1);
    assert!(
        wait_until(Duration::from_secs(30), || {
            // FindCoordinator creates __transaction_state on first use.
            let _: FindCoordinatorResponse = raw_call(
                &bootstrap,
                ApiKey::FindCoordinator,
                4,
                &FindCoordinatorRequest::default()
                    .with_key_type(1)
                    .with_coordinator_keys(vec![StrBytes::from_static_str("verified-tx")]),
            );
            init = raw_call(
                &bootstrap,
                ApiKey::InitProducerId,
                4,
                &InitProducerIdRequest::default()
                    .with_transactional_id(Some(id()))
                    .with_transaction_timeout_ms(60_000)
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1),
            );
            init.error_code == 0
        }),
        "InitProducerId: {init:?}"
    );
    let producer_id = init.producer_id.0;
    assert_eq!(init.producer_epoch, 0);

    // Not added to the transaction: refused, nothing written.
    let refused = produce_transactional(
        &bootstrap,
        "verified",
        "verified-tx",
        batch(&["a", "b"], producer_id, 0, true),
    );
    assert_eq!(refused, 48, "INVALID_TXN_STATE");
    assert_eq!(latest(&bootstrap, "verified", false), 0);

    // Added: written.
    let add = AddPartitionsToTxnRequest::default()
        .with_v3_and_below_transactional_id(id())
        .with_v3_and_below_producer_id(ProducerId(producer_id))
        .with_v3_and_below_producer_epoch(0)
        .with_v3_and_below_topics(vec![
            kafka_protocol::messages::add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                .with_name(name("verified"))
                .with_partitions(vec![0]),
        ]);
    let added: AddPartitionsToTxnResponse =
        raw_call(&bootstrap, ApiKey::AddPartitionsToTxn, 3, &add);
    assert_eq!(
        added.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code,
        0
    );
    let accepted = produce_transactional(
        &bootstrap,
        "verified",
        "verified-tx",
        batch(&["a", "b"], producer_id, 0, true),
    );
    assert_eq!(accepted, 0);
    // Within the open transaction, later batches need no new verification.
    let more = produce_transactional(
        &bootstrap,
        "verified",
        "verified-tx",
        batch(&["c"], producer_id, 2, true),
    );
    assert_eq!(more, 0);

    // The transaction is aborted; a straggler of it arriving afterwards is refused.
    let end: EndTxnResponse = raw_call(
        &bootstrap,
        ApiKey::EndTxn,
        3,
        &EndTxnRequest::default()
            .with_transactional_id(id())
            .with_producer_id(ProducerId(producer_id))
            .with_producer_epoch(0)
            .with_committed(false),
    );
    assert_eq!(end.error_code, 0);
    assert!(
        wait_until(Duration::from_secs(10), || latest(
            &bootstrap, "verified", true
        ) == 4),
        "the abort marker makes everything stable"
    );
    let straggler = produce_transactional(
        &bootstrap,
        "verified",
        "verified-tx",
        batch(&["late"], producer_id, 3, true),
    );
    assert_eq!(straggler, 48, "INVALID_TXN_STATE");
    assert_eq!(
        (
            latest(&bootstrap, "verified", false),
            latest(&bootstrap, "verified", true)
        ),
        (4, 4),
        "no hanging transaction: the last stable offset is the high watermark"
    );
}

#[test]
fn an_idle_transactional_id_expires() {
    use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
    let broker = Broker::start(&[
        // Long enough for the producer to go from InitProducerId to its commit.
        ("transactional.id.expiration.ms", "1000"),
        (
            "transaction.remove.expired.transaction.cleanup.interval.ms",
            "200",
        ),
    ]);
    let bootstrap = broker.bootstrap.clone();
    create_topic(&bootstrap, "expiring");
    let producer: ThreadedProducer<DefaultProducerContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("transactional.id", "expiring-tx")
        .create()
        .unwrap();
    let timeout = Duration::from_secs(30);
    producer.init_transactions(timeout).unwrap();
    producer.begin_transaction().unwrap();
    producer
        .send(
            BaseRecord::<(), _>::to("expiring")
                .payload("x")
                .partition(0),
        )
        .unwrap();
    producer.commit_transaction(timeout).unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || describe_transaction(
            &bootstrap,
            "expiring-tx"
        )
        .0 == 105),
        "forgotten: TRANSACTIONAL_ID_NOT_FOUND (now {:?})",
        describe_transaction(&bootstrap, "expiring-tx")
    );
    assert_eq!(
        consume(&bootstrap, "expiring", "read_committed", 1),
        vec!["x"]
    );
}

#[test]
fn with_verification_off_a_transactional_write_is_taken_unverified() {
    // transaction.partition.verification.enable=false: Kafka before KIP-890 (and Kafka with
    // the switch off) writes what the producer sends.
    let broker = Broker::start(&[("transaction.partition.verification.enable", "false")]);
    let bootstrap = broker.bootstrap.clone();
    create_topic(&bootstrap, "unverified");
    let taken = produce_transactional(
        &bootstrap,
        "unverified",
        "stranger",
        batch(&["stray"], 4_242, 0, true),
    );
    assert_eq!(taken, 0);
    assert_eq!(latest(&bootstrap, "unverified", false), 1);
}
