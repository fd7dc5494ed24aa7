//! More partitions than open-file descriptors (issue 30): with `nofile` 256, a broker
//! creates 1,000 partitions, serves produce and fetch on a sample of them, restarts over
//! them and serves them again. Segment files are opened on use and closed beyond
//! `log.segment.open.files.max` (half the limit by default), which the metrics show.

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
