//! A topic's `compression.type` as Kafka applies it: whatever codec the producer used, the
//! records are stored (and served) in the topic's codec, and read back by librdkafka; with
//! `producer` they are kept as sent.

#![allow(clippy::unwrap_used)]

mod common;

use common::Broker;
use common::raw::{connect, create_topic, fetch, produce};
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use std::time::{Duration, Instant};

/// The codec id in the attributes of the first batch fetched from `topic` at `offset`.
fn stored_codec(stream: &mut std::net::TcpStream, topic: &str, offset: i64) -> i16 {
    let data = fetch(stream, topic, offset, 1 << 20);
    let records = data.records.expect("records");
    assert!(records.len() > 23, "a batch at {offset}");
    i16::from_be_bytes([records[21], records[22]]) & 0x07
}

#[test]
fn records_are_stored_in_the_topics_codec() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    for (topic, codec, id) in [
        ("as-zstd", "zstd", 4),
        ("as-gzip", "gzip", 1),
        ("as-lz4", "lz4", 3),
        ("as-snappy", "snappy", 2),
        ("as-sent", "producer", 0),
    ] {
        create_topic(&mut stream, topic, 1, &[("compression.type", codec)]);
        let batch = common::raw::batch(20, 100);
        let response = produce(&mut stream, topic, 1, batch.freeze()).unwrap();
        assert_eq!(response.error_code, 0, "{topic}");
        assert_eq!(stored_codec(&mut stream, topic, 0), id, "{topic}");
    }

    // The topic's level (KIP-390), checked as Kafka checks it.
    let mut sizes = Vec::new();
    for level in ["1", "9"] {
        let topic = format!("gzip-{level}");
        create_topic(
            &mut stream,
            &topic,
            1,
            &[
                ("compression.type", "gzip"),
                ("compression.gzip.level", level),
            ],
        );
        let response = produce(
            &mut stream,
            &topic,
            1,
            common::raw::batch(200, 300).freeze(),
        );
        assert_eq!(response.unwrap().error_code, 0);
        assert_eq!(stored_codec(&mut stream, &topic, 0), 1);
        sizes.push(
            fetch(&mut stream, &topic, 0, 1 << 20)
                .records
                .unwrap()
                .len(),
        );
    }
    assert!(
        sizes[1] <= sizes[0],
        "level 9 {} vs level 1 {}",
        sizes[1],
        sizes[0]
    );
    let refused = common::raw::create_topic_result(
        &mut stream,
        "zstd-30",
        &[("compression.zstd.level", "30")],
    );
    assert_eq!(
        refused,
        (
            40,
            Some("Invalid value 30 for configuration compression.zstd.level: Value must be no more than 22".to_string())
        )
    );

    // librdkafka reads what the broker recompressed, as produced by librdkafka (lz4 in,
    // gzip stored).
    create_topic(
        &mut stream,
        "lz4-to-gzip",
        1,
        &[("compression.type", "gzip")],
    );
    let producer: rdkafka::producer::BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("compression.type", "lz4")
        .set("linger.ms", "5")
        .create()
        .unwrap();
    for i in 0..100 {
        producer
            .send(
                rdkafka::producer::BaseRecord::<(), _>::to("lz4-to-gzip")
                    .payload(&format!("message {i}")),
            )
            .unwrap();
    }
    rdkafka::producer::Producer::flush(&producer, Duration::from_secs(10)).unwrap();
    assert_eq!(stored_codec(&mut stream, "lz4-to-gzip", 0), 1);
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", "reader")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&["lz4-to-gzip"]).unwrap();
    let mut read = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while read.len() < 100 && Instant::now() < deadline {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) {
            read.push(String::from_utf8(message.payload().unwrap().to_vec()).unwrap());
        }
    }
    let expected: Vec<String> = (0..100).map(|i| format!("message {i}")).collect();
    assert_eq!(read, expected);
}
