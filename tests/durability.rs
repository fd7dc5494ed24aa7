//! Crash recovery, clean restarts, segment roll and retention, against a real broker process.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Broker, wait_until};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

async fn create_topic(broker: &Broker, name: &str, configs: &[(&str, &str)]) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    let mut topic = NewTopic::new(name, 1, TopicReplication::Fixed(1));
    for (k, v) in configs {
        topic = topic.set(k, v);
    }
    let result = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(result[0].is_ok(), "{:?}", result[0]);
}

fn producer(broker: &Broker) -> FutureProducer {
    ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("acks", "all")
        .set("linger.ms", "0")
        .set("batch.num.messages", "10")
        .set("enable.idempotence", "false")
        .create()
        .unwrap()
}

/// Produces `values` in order, each acknowledged; returns their offsets.
async fn produce(
    broker: &Broker,
    topic: &str,
    values: &[String],
    timestamp: Option<i64>,
) -> Vec<i64> {
    let producer = producer(broker);
    let mut pending = Vec::new();
    for value in values {
        let mut record = FutureRecord::<(), str>::to(topic)
            .partition(0)
            .payload(value.as_str());
        if let Some(ts) = timestamp {
            record = record.timestamp(ts);
        }
        pending.push(producer.send_result(record).map_err(|(e, _)| e).unwrap());
    }
    let mut offsets = Vec::new();
    for delivery in pending {
        let delivered = delivery.await.unwrap().map_err(|(e, _)| e).unwrap();
        offsets.push(delivered.offset);
    }
    offsets
}

/// A consumer assigned partition 0 of `topic` from its beginning (no group management).
fn reader(broker: &Broker, topic: &str, partition_eof: bool) -> BaseConsumer {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", "manual-assignment")
        .set("enable.auto.commit", "false")
        .set(
            "enable.partition.eof",
            if partition_eof { "true" } else { "false" },
        )
        .create()
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset(topic, 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    consumer
}

fn consume_all(broker: &Broker, topic: &str, expected: usize) -> Vec<(i64, String)> {
    let consumer = reader(broker, topic, false);
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while out.len() < expected && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            out.push((
                message.offset(),
                String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned(),
            ));
        }
    }
    out
}

/// Everything from the start of partition 0 up to its end (librdkafka's partition EOF).
fn consume_to_end(broker: &Broker, topic: &str) -> Vec<(i64, String)> {
    let consumer = reader(broker, topic, true);
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        match consumer.poll(Duration::from_millis(200)) {
            Some(Ok(message)) => out.push((
                message.offset(),
                String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned(),
            )),
            Some(Err(rdkafka::error::KafkaError::PartitionEOF(_))) => break,
            Some(Err(e)) => panic!("consume: {e}"),
            None => {}
        }
    }
    out
}

fn segment_files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == extension))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_nine_then_torn_tail_loses_no_acknowledged_message() {
    let mut broker = Broker::start(&[("log.flush.interval.messages", "1")]);
    create_topic(&broker, "crash", &[]).await;
    let values: Vec<String> = (0..2000).map(|i| format!("message-{i}")).collect();
    let offsets = produce(&broker, "crash", &values, None).await;
    assert_eq!(offsets, (0..2000).collect::<Vec<i64>>());

    broker.kill9();
    let partition_dir = broker.dir().join("crash-0");
    let active = segment_files(&partition_dir, "log").pop().unwrap();
    let garbage: Vec<u8> = (0..777u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&active)
        .unwrap()
        .write_all(&garbage)
        .unwrap();

    let restarted = Broker::start_in(broker.dir(), &[("log.flush.interval.messages", "1")]);
    assert!(
        restarted.log_text().contains("clean=false"),
        "the restart knows it was unclean"
    );
    assert!(
        restarted.log_text().contains("truncated invalid data"),
        "the torn tail was cut: {}",
        restarted.log_text()
    );
    let consumed = tokio::task::block_in_place(|| consume_all(&restarted, "crash", 2000));
    let expected: Vec<(i64, String)> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (i as i64, v.clone()))
        .collect();
    assert_eq!(
        consumed, expected,
        "every acknowledged message, in order, nothing else"
    );

    let more = produce(&restarted, "crash", &["after-restart".to_string()], None).await;
    assert_eq!(
        more,
        vec![2000],
        "the partition accepts new writes after the last acknowledged offset"
    );
    let consumed = tokio::task::block_in_place(|| consume_all(&restarted, "crash", 2001));
    assert_eq!(
        consumed.last().unwrap(),
        &(2000, "after-restart".to_string())
    );
    drop(broker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clean_restart_trusts_the_log_and_keeps_everything() {
    let mut broker = Broker::start(&[]);
    create_topic(&broker, "clean", &[("segment.bytes", "4096")]).await;
    let values: Vec<String> = (0..500).map(|i| format!("v{i:0100}")).collect();
    produce(&broker, "clean", &values, None).await;
    assert_eq!(broker.stop(), Some(0), "SIGTERM exits 0");
    assert!(
        broker.dir().join(".kafka_cleanshutdown").exists(),
        "clean-shutdown marker written"
    );
    let partition_dir = broker.dir().join("clean-0");
    assert!(
        segment_files(&partition_dir, "log").len() > 3,
        "rolled by segment.bytes"
    );
    for log in segment_files(&partition_dir, "log") {
        let name = log.file_stem().unwrap().to_string_lossy().into_owned();
        assert_eq!(name.len(), 20, "base offset padded to 20 digits: {name}");
        assert!(log.with_extension("index").exists() && log.with_extension("timeindex").exists());
    }

    let restarted = Broker::start_in(broker.dir(), &[]);
    assert!(
        restarted.log_text().contains("clean=true")
            && restarted.log_text().contains("recovered_segments=0"),
        "{}",
        restarted.log_text()
    );
    let consumed = tokio::task::block_in_place(|| consume_all(&restarted, "clean", 500));
    assert_eq!(consumed.len(), 500);
    assert!(
        consumed
            .iter()
            .enumerate()
            .all(|(i, (o, v))| *o == i as i64 && *v == values[i])
    );
    drop(broker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn segments_roll_and_retention_deletes_old_ones() {
    let broker = Broker::start(&[("log.retention.check.interval.ms", "100")]);
    create_topic(
        &broker,
        "sized",
        &[("segment.bytes", "1024"), ("retention.bytes", "4096")],
    )
    .await;
    let values: Vec<String> = (0..400).map(|i| format!("{i:0100}")).collect();
    produce(&broker, "sized", &values, None).await;
    let partition_dir = broker.dir().join("sized-0");
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    let bounded = wait_until(Duration::from_secs(20), || {
        let total: u64 = segment_files(&partition_dir, "log")
            .iter()
            .map(|p| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0))
            .sum();
        total < 4096 + 1024
    });
    assert!(
        bounded,
        "retention.bytes bounds the partition: {:?}",
        segment_files(&partition_dir, "log")
    );
    let (low, high) = tokio::task::block_in_place(|| {
        consumer
            .fetch_watermarks("sized", 0, Duration::from_secs(10))
            .unwrap()
    });
    assert_eq!(high, 400);
    assert!(low > 0, "the log start offset moved past deleted segments");
    let first_file: i64 = segment_files(&partition_dir, "log")[0]
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .parse()
        .unwrap();
    assert_eq!(
        low, first_file,
        "log start offset is the first remaining segment's base offset"
    );
    let consumed =
        tokio::task::block_in_place(|| consume_all(&broker, "sized", (high - low) as usize));
    assert_eq!(consumed.first().unwrap().0, low);
    assert_eq!(consumed.last().unwrap().0, 399);

    // Time retention: records timestamped two days ago expire at once, active segment too.
    create_topic(
        &broker,
        "aged",
        &[("retention.ms", "86400000"), ("segment.bytes", "2048")],
    )
    .await;
    let old = rdkafka::util::current_time_millis() - 2 * 86_400_000;
    produce(&broker, "aged", &values[..50], Some(old)).await;
    let expired = wait_until(Duration::from_secs(20), || {
        tokio::task::block_in_place(|| {
            consumer
                .fetch_watermarks("aged", 0, Duration::from_secs(5))
                .map(|(l, h)| l == 50 && h == 50)
                .unwrap_or(false)
        })
    });
    assert!(
        expired,
        "all expired records deleted; offsets keep counting from 50"
    );
    let next = produce(&broker, "aged", &["fresh".to_string()], None).await;
    assert_eq!(next, vec![50]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compacted_topic_keeps_the_latest_value_per_key() {
    let broker = Broker::start(&[("log.retention.check.interval.ms", "100")]);
    create_topic(
        &broker,
        "compacted",
        &[("cleanup.policy", "compact"), ("segment.bytes", "1024")],
    )
    .await;
    let producer = producer(&broker);
    for round in 0..30 {
        for key in 0..10 {
            let value = format!("key{key}-round{round}");
            producer
                .send(
                    FutureRecord::to("compacted")
                        .partition(0)
                        .key(&format!("key{key}"))
                        .payload(&value),
                    Duration::from_secs(10),
                )
                .await
                .unwrap();
        }
    }
    assert!(
        wait_until(Duration::from_secs(20), || broker
            .log_text()
            .contains("compacted")),
        "the cleaner ran"
    );
    // Read to the end of the partition: the count after compaction is not known in advance.
    let consumed = tokio::task::block_in_place(|| consume_to_end(&broker, "compacted"));
    assert!(
        consumed.len() < 300,
        "older values were removed: {} left",
        consumed.len()
    );
    assert!(
        consumed.windows(2).all(|w| w[0].0 < w[1].0),
        "offsets increase, with gaps"
    );
    for key in 0..10 {
        assert!(
            consumed
                .iter()
                .any(|(_, v)| *v == format!("key{key}-round29")),
            "latest value of key{key} kept"
        );
    }
    assert_eq!(
        consumed.last().unwrap().0,
        299,
        "the end of the log is untouched"
    );
}

/// Sluice serves a partition directory Apache Kafka 4.4.0 wrote (segments, indexes, time
/// indexes, producer snapshots, leader-epoch checkpoint; written by
/// `compat/kafka-peer/write-partition-fixture`): 2,000 records in each codec, then 500 in
/// transactions, over two segments. Only `partition.metadata` stays Sluice's (it names the
/// topic id). Every record reads back, in order, and appends go on after Kafka's last offset.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_directory_kafka_wrote_is_served() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kafka-4.4.0/kafka-written-0");
    let topic = "kafka-written";
    let mut broker = Broker::start(&[]);
    create_topic(&broker, topic, &[]).await;
    let dir = broker.dir().to_path_buf();
    assert_eq!(broker.stop(), Some(0));
    let partition = dir.join(format!("{topic}-0"));
    for entry in std::fs::read_dir(&partition).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() != "partition.metadata" {
            std::fs::remove_file(path).unwrap();
        }
    }
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let path = entry.unwrap().path();
        if path.file_name().unwrap() != "partition.metadata" {
            std::fs::copy(&path, partition.join(path.file_name().unwrap())).unwrap();
        }
    }
    let broker = Broker::start_in(&dir, &[]);
    let expected: Vec<String> = (0..5)
        .flat_map(|_| 0..2000)
        .chain(0..500)
        .map(|i| i.to_string())
        .collect();
    let records = consume_to_end(&broker, topic);
    let values: Vec<String> = records.iter().map(|(_, v)| v.clone()).collect();
    assert_eq!(values.len(), expected.len());
    assert!(
        values == expected,
        "the records Kafka wrote read back differently"
    );
    // Offsets rise strictly; the transaction markers take the gaps at the end.
    assert!(records.windows(2).all(|w| w[0].0 < w[1].0));
    let next = produce(&broker, topic, &["after".to_string()], None).await;
    assert_eq!(next, vec![10502], "Kafka's log ends at 10502");
    let tail = consume_all(&broker, topic, expected.len() + 1);
    assert_eq!(tail.last().unwrap(), &(10502, "after".to_string()));
}
