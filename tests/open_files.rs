//! More partitions than open-file descriptors, more index files than maps (issue 30): with
//! `nofile` 256, a broker creates 1,000 partitions, serves produce and fetch on a sample of
//! them, restarts over them and serves them again. Segment files are opened on use and closed
//! beyond `log.segment.open.files.max` (half the limit by default); index files are mapped on
//! use and unmapped beyond `log.index.mapped.files.max` (half of `vm.max_map_count` by
//! default, lowered here), which the metrics and the process's maps show.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Broker, wait_until};
use rdkafka::Message;
use rdkafka::TopicPartitionList;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::time::{Duration, Instant};

const LIMIT: u32 = 256;
const TOPIC: &str = "wide";
const PARTITIONS: i32 = 1000;

/// Every 10th partition gets `round` records, and each of them is read back.
async fn produce_and_fetch_a_sample(bootstrap: &str, round: i64) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("linger.ms", "5")
        .set("message.timeout.ms", "30000")
        .create()
        .unwrap();
    let sample: Vec<i32> = (0..PARTITIONS).step_by(10).collect();
    for partition in &sample {
        let value = format!("r{round}-p{partition}");
        producer
            .send(
                FutureRecord::<(), _>::to(TOPIC)
                    .partition(*partition)
                    .payload(&value),
                Duration::from_secs(30),
            )
            .await
            .unwrap();
    }
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("reader-{round}"))
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    for partition in &sample {
        assignment
            .add_partition_offset(TOPIC, *partition, rdkafka::Offset::Beginning)
            .unwrap();
    }
    consumer.assign(&assignment).unwrap();
    let mut seen = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < sample.len() * round as usize && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            let value = String::from_utf8(message.payload().unwrap().to_vec()).unwrap();
            assert!(
                value.ends_with(&format!("-p{}", message.partition())),
                "{value}"
            );
            seen.insert(value);
        }
    }
    assert_eq!(
        seen.len(),
        sample.len() * round as usize,
        "records read back"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_partitions_than_descriptors_are_created_served_and_restarted() {
    let data = tempfile::tempdir().unwrap();
    let overrides = [("http.listener", "127.0.0.1:0")];
    let mut broker = Broker::start_in_with_fd_limit(data.path(), LIMIT, &overrides);
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    let topic = NewTopic::new(TOPIC, PARTITIONS, TopicReplication::Fixed(1));
    let created = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(created[0].is_ok(), "{:?}", created[0]);
    assert!(
        wait_until(Duration::from_secs(60), || {
            std::fs::read_dir(data.path())
                .unwrap()
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("wide-"))
                .count()
                == PARTITIONS as usize
        }),
        "every partition's log created"
    );
    produce_and_fetch_a_sample(&broker.bootstrap, 1).await;
    let metrics = broker.scrape_metrics();
    let open = metrics.value("sluice_log_segment_files_open");
    let bound = metrics.value("sluice_log_segment_files_open_max");
    assert_eq!(bound, f64::from(LIMIT / 2));
    assert!(open <= bound, "{open} open, bound {bound}");
    assert!(metrics.value("sluice_log_segment_files_closed_total") > 0.0);
    assert!(metrics.value("process_open_fds") < f64::from(LIMIT));

    // A restart loads every partition, then serves them again.
    broker.stop();
    let broker = Broker::start_in_with_fd_limit(data.path(), LIMIT, &overrides);
    produce_and_fetch_a_sample(&broker.bootstrap, 2).await;
    assert!(!broker.log_text().contains("Too many open files"));
}

/// Index files of `pid` mapped now (`/proc/<pid>/maps`).
fn mapped_index_files(pid: u32) -> usize {
    std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .unwrap()
        .lines()
        .filter(|line| line.ends_with(".index") || line.ends_with(".timeindex"))
        .count()
}

const MAPS: usize = 16;

/// Reads each partition of `topic` from offset 10 (a lookup in a sealed segment's index)
/// and checks what comes back.
fn read_from_the_middle(bootstrap: &str, topic: &str, partitions: i32, records: i32) {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", "middle")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    for partition in 0..partitions {
        assignment
            .add_partition_offset(topic, partition, rdkafka::Offset::Offset(10))
            .unwrap();
    }
    consumer.assign(&assignment).unwrap();
    let expected = (partitions * (records - 10)) as usize;
    let mut seen = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while seen.len() < expected && Instant::now() < deadline {
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            let value = String::from_utf8(message.payload().unwrap().to_vec()).unwrap();
            assert_eq!(
                value,
                format!("p{}-r{}", message.partition(), message.offset()),
                "the record at its offset"
            );
            seen.insert(value);
        }
    }
    assert_eq!(seen.len(), expected, "records from offset 10 on");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_index_files_than_maps_are_looked_up_and_restarted_within_the_bound() {
    const TOPIC: &str = "indexed";
    const PARTITIONS: i32 = 60;
    const RECORDS: i32 = 20;
    let data = tempfile::tempdir().unwrap();
    let bound = MAPS.to_string();
    let overrides = [
        ("http.listener", "127.0.0.1:0"),
        ("log.index.mapped.files.max", bound.as_str()),
    ];
    let mut broker = Broker::start_in(data.path(), &overrides);
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    // Small segments, an index entry for every batch: about 4 segments, 8 index files with
    // entries, per partition.
    let topic = NewTopic::new(TOPIC, PARTITIONS, TopicReplication::Fixed(1))
        .set("segment.bytes", "1024")
        .set("index.interval.bytes", "0");
    let created = admin
        .create_topics([&topic], &AdminOptions::new())
        .await
        .unwrap();
    assert!(created[0].is_ok(), "{:?}", created[0]);
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("linger.ms", "0")
        .set("message.timeout.ms", "30000")
        .create()
        .unwrap();
    for record in 0..RECORDS {
        let values: Vec<String> = (0..PARTITIONS)
            .map(|partition| format!("p{partition}-r{record}"))
            .collect();
        let sends: Vec<_> = (0..PARTITIONS)
            .zip(&values)
            .map(|(partition, value)| {
                producer.send(
                    FutureRecord::<(), _>::to(TOPIC)
                        .partition(partition)
                        .payload(value),
                    Duration::from_secs(30),
                )
            })
            .collect();
        for send in sends {
            send.await.unwrap();
        }
    }
    read_from_the_middle(&broker.bootstrap, TOPIC, PARTITIONS, RECORDS);
    let index_files = std::fs::read_dir(data.path())
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with("indexed-"))
        .flat_map(|dir| {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(Result::ok)
        })
        .filter(|file| {
            let name = file.file_name().to_string_lossy().into_owned();
            (name.ends_with(".index") || name.ends_with(".timeindex"))
                && file.metadata().unwrap().len() > 0
        })
        .count();
    assert!(
        index_files > 4 * MAPS,
        "{index_files} index files with entries"
    );
    let metrics = broker.scrape_metrics();
    assert_eq!(metrics.value("sluice_log_index_maps_open_max"), MAPS as f64);
    assert!(metrics.value("sluice_log_index_maps_open") <= MAPS as f64);
    assert!(metrics.value("sluice_log_index_maps_closed_total") > 0.0);
    assert!(mapped_index_files(broker.pid()) <= MAPS);

    // A restart maps nothing to load the logs; lookups map on use, within the bound.
    broker.stop();
    let broker = Broker::start_in(data.path(), &overrides);
    let log = broker.log_text();
    assert!(
        log.contains("clean=true") && log.contains("recovered_segments=0"),
        "a clean restart:\n{log}"
    );
    assert!(mapped_index_files(broker.pid()) <= MAPS);
    read_from_the_middle(&broker.bootstrap, TOPIC, PARTITIONS, RECORDS);
    assert!(mapped_index_files(broker.pid()) <= MAPS);
    let metrics = broker.scrape_metrics();
    assert!(metrics.value("sluice_log_index_maps_open") <= MAPS as f64);
    assert!(metrics.value("sluice_log_index_maps_opens_total") > 0.0);
}
