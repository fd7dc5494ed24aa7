//! A broker killed (kill -9, or a crash point that exits on the spot) while it ends a
//! transaction or with one open, then restarted over the same data: the decision written
//! before the crash is carried out on every partition, and an undecided transaction is aborted
//! once its timeout has passed.

use super::*;

/// Creates `topic` with `partitions` partitions.
fn create_topic_with_partitions(bootstrap: &str, topic: &str, partitions: i32) {
    let request = CreateTopicsRequest::default()
        .with_topics(vec![
            CreatableTopic::default()
                .with_name(name(topic))
                .with_num_partitions(partitions)
                .with_replication_factor(1),
        ])
        .with_timeout_ms(10_000);
    let response: CreateTopicsResponse = raw_call(bootstrap, ApiKey::CreateTopics, 7, &request);
    assert_eq!(response.topics[0].error_code, 0);
}

/// ListOffsets "latest" of every partition of `topic` (0..partitions): (high watermark, last
/// stable offset) of each.
fn watermarks(bootstrap: &str, topic: &str, partitions: i32) -> Vec<(i64, i64)> {
    latest_offsets(bootstrap, topic, partitions, false)
        .into_iter()
        .zip(latest_offsets(bootstrap, topic, partitions, true))
        .collect()
}

fn crash_producer(
    bootstrap: &str,
    id: &str,
) -> rdkafka::producer::ThreadedProducer<rdkafka::producer::DefaultProducerContext> {
    ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("transactional.id", id)
        .set("transaction.timeout.ms", "3000")
        .set("message.timeout.ms", "3000")
        .create()
        .unwrap()
}

/// Writes five records to each of partitions 0 and 1 of `topic` in an open transaction of
/// `producer`, sent and acknowledged.
fn write_open_transaction(
    producer: &rdkafka::producer::ThreadedProducer<rdkafka::producer::DefaultProducerContext>,
    topic: &str,
) {
    use rdkafka::producer::{BaseRecord, Producer};
    let timeout = Duration::from_secs(30);
    producer.init_transactions(timeout).unwrap();
    producer.begin_transaction().unwrap();
    for i in 0..10 {
        let value = format!("t{i}");
        producer
            .send(
                BaseRecord::<(), _>::to(topic)
                    .payload(&value)
                    .partition(i % 2),
            )
            .unwrap();
    }
    producer.flush(timeout).unwrap();
}

/// After a restart: the transaction of `id` on partitions 0 and 1 of `topic` ends as
/// `committed` says — on both partitions, all of it or none — its last stable offsets catch up
/// with the high watermarks, and a new instance of the producer commits a transaction of its own.
fn assert_ended_everywhere(bootstrap: &str, topic: &str, id: &str, committed: bool) {
    use rdkafka::producer::{BaseRecord, Producer};
    let settled = if committed {
        "CompleteCommit"
    } else {
        "CompleteAbort"
    };
    assert!(
        wait_until(Duration::from_secs(30), || describe_transaction(
            bootstrap, id
        )
        .1 == settled),
        "the transaction ends as {settled} after the restart (now {:?})",
        describe_transaction(bootstrap, id)
    );
    assert!(
        wait_until(Duration::from_secs(10), || watermarks(bootstrap, topic, 2)
            .iter()
            .all(|(high, stable)| high == stable)),
        "last stable offsets reach the high watermarks: {:?}",
        watermarks(bootstrap, topic, 2)
    );
    for partition in 0..2 {
        let expected: Vec<String> = (0..10)
            .filter(|i| i % 2 == partition)
            .map(|i| format!("t{i}"))
            .collect();
        let patience = Duration::from_secs(if committed { 30 } else { 3 });
        let seen = common::read_partition(
            bootstrap,
            topic,
            partition,
            "read_committed",
            expected.len(),
            patience,
        );
        if committed {
            assert_eq!(
                seen, expected,
                "partition {partition}: all of the transaction"
            );
        } else {
            assert_eq!(
                seen,
                Vec::<String>::new(),
                "partition {partition}: none of it"
            );
        }
        let uncommitted = common::read_partition(
            bootstrap,
            topic,
            partition,
            "read_uncommitted",
            5,
            Duration::from_secs(30),
        );
        assert_eq!(
            uncommitted, expected,
            "partition {partition}: every record once"
        );
    }
    let successor = crash_producer(bootstrap, id);
    let timeout = Duration::from_secs(30);
    successor.init_transactions(timeout).unwrap();
    successor.begin_transaction().unwrap();
    successor
        .send(BaseRecord::<(), _>::to(topic).payload("after").partition(0))
        .unwrap();
    successor.commit_transaction(timeout).unwrap();
    let partition0 = common::read_partition(
        bootstrap,
        topic,
        0,
        "read_committed",
        if committed { 6 } else { 1 },
        Duration::from_secs(30),
    );
    assert_eq!(partition0.last().map(String::as_str), Some("after"));
}

/// kill -9 (a crash point: the process exits on the spot) while the broker ends a
/// transaction, then a restart over the same data: the decision written before the crash is
/// carried out on every partition.
fn crash_while_ending(failpoint: &str, commit: bool) {
    use rdkafka::producer::Producer;
    let mut broker = Broker::start_with_failpoints(&[], failpoint);
    let bootstrap = broker.bootstrap.clone();
    create_topic_with_partitions(&bootstrap, "crash", 2);
    let producer = crash_producer(&bootstrap, "crash-tx");
    write_open_transaction(&producer, "crash");
    // The broker ends itself somewhere in here; whether the client heard the answer depends
    // on the crash point.
    let timeout = Duration::from_secs(5);
    let _ = if commit {
        producer.commit_transaction(timeout)
    } else {
        producer.abort_transaction(timeout)
    };
    assert_eq!(
        broker.wait_exit(Duration::from_secs(30)),
        Some(137),
        "the crash point {failpoint} ended the broker"
    );
    drop(producer);
    let restarted = Broker::start_in(broker.dir(), &[]);
    assert_ended_everywhere(&restarted.bootstrap, "crash", "crash-tx", commit);
}

#[test]
fn killed_once_the_commit_is_decided_the_transaction_commits_after_restart() {
    crash_while_ending("txn-after-prepare=return", true);
}

#[test]
fn killed_with_one_commit_marker_written_the_other_partition_gets_its_marker_after_restart() {
    // The first marker is appended, the process ends at the second.
    crash_while_ending("txn-marker-appended=1*off->return", true);
}

#[test]
fn killed_with_one_abort_marker_written_the_other_partition_gets_its_marker_after_restart() {
    crash_while_ending("txn-marker-appended=1*off->return", false);
}

#[test]
fn killed_before_the_completed_state_is_written_the_transaction_still_completes() {
    crash_while_ending("txn-before-complete=return", true);
}

#[test]
fn killed_with_a_transaction_open_the_transaction_is_aborted_after_restart() {
    // Nothing was decided: the restarted coordinator finds the transaction Ongoing and aborts
    // it once its timeout (3 s) has passed.
    let overrides = [(
        "transaction.abort.timed.out.transaction.cleanup.interval.ms",
        "500",
    )];
    let mut broker = Broker::start(&overrides);
    let bootstrap = broker.bootstrap.clone();
    create_topic_with_partitions(&bootstrap, "open", 2);
    let producer = crash_producer(&bootstrap, "open-tx");
    write_open_transaction(&producer, "open");
    broker.kill9();
    drop(producer);
    let restarted = Broker::start_in(broker.dir(), &overrides);
    assert_ended_everywhere(&restarted.bootstrap, "open", "open-tx", false);
}
