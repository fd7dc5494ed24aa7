//! librdkafka (through the `rdkafka` crate) against a real broker process: produce and
//! consume byte for byte with every codec, timestamps, admin operations, long-poll latency.

#![allow(clippy::unwrap_used)]

mod common;

use common::Broker;
use rdkafka::admin::{
    AdminClient, AdminOptions, AlterConfig, NewPartitions, NewTopic, ResourceSpecifier,
    TopicReplication,
};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::{Header, Headers, Message, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::{Offset, Timestamp, TopicPartitionList};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const PARTITIONS: i32 = 4;

fn admin(broker: &Broker) -> AdminClient<DefaultClientContext> {
    ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .expect("admin client")
}

fn producer(broker: &Broker, codec: &str) -> FutureProducer {
    ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("compression.codec", codec)
        .set("linger.ms", "5")
        .set("queue.buffering.max.messages", "1000000")
        .set("enable.idempotence", "false")
        .set("message.timeout.ms", "60000")
        .create()
        .expect("producer")
}

/// A consumer with partitions assigned by hand (librdkafka needs a group id even then).
fn consumer(broker: &Broker) -> BaseConsumer {
    ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", "manual-assignment")
        .set("enable.auto.commit", "false")
        .set("fetch.wait.max.ms", "100")
        .create()
        .expect("consumer")
}

async fn create_topic(broker: &Broker, name: &str, partitions: i32, configs: &[(&str, &str)]) {
    let mut topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
    for (k, v) in configs {
        topic = topic.set(k, v);
    }
    let results = admin(broker)
        .create_topics([&topic], &AdminOptions::new())
        .await
        .expect("create_topics");
    assert!(results[0].is_ok(), "{:?}", results[0]);
}

/// The message with index `i`: key null every 7th, value null every 11th, headers on most.
struct Expected {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
    timestamp: i64,
}

fn expected(i: usize, base_ts: i64) -> Expected {
    let key = (!i.is_multiple_of(7)).then(|| format!("key-{i}").into_bytes());
    let value = (!i.is_multiple_of(11)).then(|| {
        let mut v = format!("value-{i}-").into_bytes();
        v.extend((0..(i % 50)).map(|j| (j * 31 + i) as u8));
        v
    });
    let mut headers = vec![("i".to_string(), Some(i.to_string().into_bytes()))];
    if i.is_multiple_of(3) {
        headers.push(("h-null".to_string(), None));
        headers.push(("h-bin".to_string(), Some(vec![0, 255, i as u8])));
    }
    Expected {
        key,
        value,
        headers,
        timestamp: base_ts + i as i64,
    }
}

async fn produce_all(broker: &Broker, topic: &str, codec: &str, count: usize, base_ts: i64) {
    let producer = producer(broker, codec);
    let mut pending = Vec::with_capacity(count);
    for i in 0..count {
        let e = expected(i, base_ts);
        let mut headers = OwnedHeaders::new();
        for (name, value) in &e.headers {
            headers = headers.insert(Header {
                key: name,
                value: value.as_deref(),
            });
        }
        let mut record: FutureRecord<'_, Vec<u8>, Vec<u8>> = FutureRecord::to(topic)
            .partition((i % PARTITIONS as usize) as i32)
            .timestamp(e.timestamp)
            .headers(headers);
        if let Some(k) = &e.key {
            record = record.key(k);
        }
        if let Some(v) = &e.value {
            record = record.payload(v);
        }
        pending.push(
            producer
                .send_result(record)
                .map_err(|(e, _)| e)
                .expect("enqueue"),
        );
    }
    for (i, delivery) in pending.into_iter().enumerate() {
        let delivered = delivery.await.expect("delivery future");
        assert!(delivered.is_ok(), "message {i}: {:?}", delivered.err());
    }
    producer.flush(Duration::from_secs(30)).expect("flush");
}

fn consume_and_verify(broker: &Broker, topic: &str, count: usize, base_ts: i64) {
    let consumer = consumer(broker);
    let mut assignment = TopicPartitionList::new();
    for p in 0..PARTITIONS {
        assignment
            .add_partition_offset(topic, p, Offset::Beginning)
            .expect("assign");
    }
    consumer.assign(&assignment).expect("assign");
    let mut next_index: HashMap<i32, usize> = (0..PARTITIONS).map(|p| (p, p as usize)).collect();
    let mut received = 0;
    let deadline = Instant::now() + Duration::from_secs(120);
    while received < count {
        assert!(
            Instant::now() < deadline,
            "timed out after {received} of {count}"
        );
        let Some(message) = consumer.poll(Duration::from_millis(500)) else {
            continue;
        };
        let message = message.expect("consume");
        let partition = message.partition();
        let i = next_index[&partition];
        let e = expected(i, base_ts);
        assert_eq!(
            message.offset(),
            (i / PARTITIONS as usize) as i64,
            "offset of message {i}"
        );
        assert_eq!(message.key().map(<[u8]>::to_vec), e.key, "key of {i}");
        assert_eq!(
            message.payload().map(<[u8]>::to_vec),
            e.value,
            "value of {i}"
        );
        assert_eq!(
            message.timestamp(),
            Timestamp::CreateTime(e.timestamp),
            "timestamp of {i}"
        );
        let headers: Vec<(String, Option<Vec<u8>>)> = message
            .headers()
            .map(|h| {
                h.iter()
                    .map(|h| (h.key.to_string(), h.value.map(<[u8]>::to_vec)))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(headers, e.headers, "headers of {i}");
        next_index.insert(partition, i + PARTITIONS as usize);
        received += 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn produce_and_consume_byte_for_byte_with_every_codec() {
    let broker = Broker::start(&[]);
    let count = 100_000;
    let base_ts = 1_700_000_000_000;
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let topic = format!("codec-{codec}");
        create_topic(&broker, &topic, PARTITIONS, &[]).await;
        let started = Instant::now();
        produce_all(&broker, &topic, codec, count, base_ts).await;
        let produced = started.elapsed();
        let started = Instant::now();
        let (b, t) = (&broker, topic.clone());
        tokio::task::block_in_place(|| consume_and_verify(b, &t, count, base_ts));
        eprintln!(
            "{codec}: produced {count} in {produced:?}, consumed and verified in {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_offsets_by_timestamp_and_watermarks() {
    let broker = Broker::start(&[]);
    create_topic(&broker, "times", PARTITIONS, &[]).await;
    let base_ts = 1_600_000_000_000;
    produce_all(&broker, "times", "lz4", 400, base_ts).await;
    tokio::task::block_in_place(|| {
        let consumer = consumer(&broker);
        // Message i has timestamp base + i and sits in partition i % 4 at offset i / 4.
        let mut query = TopicPartitionList::new();
        query
            .add_partition_offset("times", 1, Offset::Offset(base_ts + 201))
            .unwrap();
        query
            .add_partition_offset("times", 2, Offset::Offset(base_ts + 203))
            .unwrap();
        query
            .add_partition_offset("times", 3, Offset::Offset(base_ts + 10_000))
            .unwrap();
        let found = consumer
            .offsets_for_times(query, Duration::from_secs(10))
            .expect("offsets_for_times");
        assert_eq!(
            found.find_partition("times", 1).unwrap().offset(),
            Offset::Offset(50)
        ); // i = 201
        assert_eq!(
            found.find_partition("times", 2).unwrap().offset(),
            Offset::Offset(51)
        ); // i = 206
        assert_eq!(
            found.find_partition("times", 3).unwrap().offset(),
            Offset::End
        );
        let (low, high) = consumer
            .fetch_watermarks("times", 0, Duration::from_secs(10))
            .expect("watermarks");
        assert_eq!((low, high), (0, 100));
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_admin_create_describe_alter_delete() {
    let broker = Broker::start(&[]);
    let admin = admin(&broker);
    let opts = AdminOptions::new().operation_timeout(Some(Duration::from_secs(10)));
    create_topic(&broker, "admin-t", 3, &[("retention.ms", "3600000")]).await;

    // Duplicate creation, bad replication factor, bad config.
    let refused = |topic: NewTopic<'static>| {
        let (admin, opts) = (&admin, &opts);
        async move {
            let result = admin.create_topics([&topic], opts).await.unwrap();
            result[0].as_ref().unwrap_err().1
        }
    };
    use rdkafka::types::RDKafkaErrorCode;
    assert_eq!(
        refused(NewTopic::new("admin-t", 1, TopicReplication::Fixed(1))).await,
        RDKafkaErrorCode::TopicAlreadyExists
    );
    assert_eq!(
        refused(NewTopic::new("rf3", 1, TopicReplication::Fixed(3))).await,
        RDKafkaErrorCode::InvalidReplicationFactor
    );
    assert_eq!(
        refused(NewTopic::new("badcfg", 1, TopicReplication::Fixed(1)).set("retention.ms", "soon"))
            .await,
        RDKafkaErrorCode::InvalidConfig
    );

    let configs = admin
        .describe_configs([&ResourceSpecifier::Topic("admin-t")], &opts)
        .await
        .unwrap();
    let resource = configs[0].as_ref().expect("describe");
    let retention = resource.get("retention.ms").expect("retention.ms listed");
    assert_eq!(retention.value.as_deref(), Some("3600000"));
    assert_eq!(retention.source, rdkafka::admin::ConfigSource::DynamicTopic);
    let segment = resource.get("segment.bytes").expect("segment.bytes listed");
    assert_eq!(segment.value.as_deref(), Some("1073741824"));
    assert!(segment.is_default);
    assert!(resource.entries.len() >= 20, "every topic config is listed");

    let alter = AlterConfig::new(ResourceSpecifier::Topic("admin-t"))
        .set("retention.ms", "1234")
        .set("cleanup.policy", "delete");
    let altered = admin.alter_configs([&alter], &opts).await.unwrap();
    assert!(altered[0].is_ok(), "{:?}", altered[0]);
    let configs = admin
        .describe_configs([&ResourceSpecifier::Topic("admin-t")], &opts)
        .await
        .unwrap();
    assert_eq!(
        configs[0]
            .as_ref()
            .unwrap()
            .get("retention.ms")
            .unwrap()
            .value
            .as_deref(),
        Some("1234")
    );

    let broker_configs = admin
        .describe_configs([&ResourceSpecifier::Broker(1)], &opts)
        .await
        .unwrap();
    let broker_resource = broker_configs[0].as_ref().expect("broker configs");
    assert_eq!(
        broker_resource
            .get("num.partitions")
            .unwrap()
            .value
            .as_deref(),
        Some("1")
    );

    let grown = admin
        .create_partitions([&NewPartitions::new("admin-t", 5)], &opts)
        .await
        .unwrap();
    assert!(grown[0].is_ok(), "{:?}", grown[0]);
    let metadata = admin
        .inner()
        .fetch_metadata(Some("admin-t"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(metadata.topics()[0].partitions().len(), 5);

    // The altered config and the partition count survive a restart.
    let dir = broker.dir().to_path_buf();
    let mut broker = broker;
    assert_eq!(broker.stop(), Some(0));
    let broker2 = Broker::start_in(&dir, &[]);
    let admin2: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker2.bootstrap)
        .create()
        .unwrap();
    let configs = admin2
        .describe_configs([&ResourceSpecifier::Topic("admin-t")], &opts)
        .await
        .unwrap();
    assert_eq!(
        configs[0]
            .as_ref()
            .unwrap()
            .get("retention.ms")
            .unwrap()
            .value
            .as_deref(),
        Some("1234")
    );
    let metadata = admin2
        .inner()
        .fetch_metadata(Some("admin-t"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(metadata.topics()[0].partitions().len(), 5);

    let deleted = admin2.delete_topics(&["admin-t"], &opts).await.unwrap();
    assert!(deleted[0].is_ok(), "{:?}", deleted[0]);
    assert!(
        !dir.join("admin-t-0").exists(),
        "partition directories are removed"
    );
    let metadata = admin2
        .inner()
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    assert!(metadata.topics().iter().all(|t| t.name() != "admin-t"));
    drop(broker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_records_moves_the_log_start_offset() {
    let broker = Broker::start(&[]);
    create_topic(&broker, "dr", PARTITIONS, &[]).await;
    produce_all(&broker, "dr", "none", 400, 1_000).await;
    let admin = admin(&broker);
    let mut offsets = TopicPartitionList::new();
    offsets
        .add_partition_offset("dr", 0, Offset::Offset(60))
        .unwrap();
    offsets
        .add_partition_offset("dr", 1, Offset::Offset(500))
        .unwrap();
    let result = admin
        .delete_records(&offsets, &AdminOptions::new())
        .await
        .expect("delete_records");
    assert_eq!(
        result.find_partition("dr", 0).unwrap().offset(),
        Offset::Offset(60)
    );
    assert!(
        result.find_partition("dr", 1).unwrap().error().is_err(),
        "beyond the high watermark"
    );
    tokio::task::block_in_place(|| {
        let consumer = consumer(&broker);
        let (low, high) = consumer
            .fetch_watermarks("dr", 0, Duration::from_secs(10))
            .unwrap();
        assert_eq!((low, high), (60, 100));
        let mut assignment = TopicPartitionList::new();
        assignment
            .add_partition_offset("dr", 0, Offset::Beginning)
            .unwrap();
        consumer.assign(&assignment).unwrap();
        let first = loop {
            if let Some(m) = consumer.poll(Duration::from_secs(1)) {
                break m.unwrap().offset();
            }
        };
        assert_eq!(first, 60);
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parked_consumer_gets_a_new_message_quickly() {
    let broker = Broker::start(&[]);
    create_topic(&broker, "idle", 1, &[]).await;
    let producer = producer(&broker, "none");
    producer
        .send(
            FutureRecord::<(), [u8]>::to("idle").payload(b"warm-up"),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", "manual-assignment")
        .set("enable.auto.commit", "false")
        // A long server-side wait: only an append can end it early.
        .set("fetch.wait.max.ms", "5000")
        .create()
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    assignment
        .add_partition_offset("idle", 0, Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    tokio::task::block_in_place(|| {
        loop {
            if let Some(m) = consumer.poll(Duration::from_secs(1)) {
                assert_eq!(m.unwrap().payload(), Some(&b"warm-up"[..]));
                break;
            }
        }
    });
    let mut latencies = Vec::new();
    for round in 0..5 {
        // Let the consumer park in a long-poll fetch at the end of the partition.
        tokio::task::block_in_place(|| {
            assert!(consumer.poll(Duration::from_millis(300)).is_none())
        });
        let sent = Instant::now();
        producer
            .send(
                FutureRecord::<(), [u8]>::to("idle").payload(format!("m{round}").as_bytes()),
                Duration::from_secs(10),
            )
            .await
            .unwrap();
        let got = tokio::task::block_in_place(|| {
            loop {
                if let Some(m) = consumer.poll(Duration::from_millis(50)) {
                    break m.unwrap().payload().map(<[u8]>::to_vec);
                }
                assert!(
                    sent.elapsed() < Duration::from_secs(4),
                    "message not delivered before the long-poll expired"
                );
            }
        });
        assert_eq!(got, Some(format!("m{round}").into_bytes()));
        latencies.push(sent.elapsed());
    }
    latencies.sort();
    eprintln!(
        "produce-to-consume latency with a parked consumer: median {:?}, max {:?}",
        latencies[2], latencies[4]
    );
    assert!(
        latencies[4] < Duration::from_secs(2),
        "woken by the append, not by fetch.wait.max.ms: {latencies:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_creation_and_metadata() {
    let broker = Broker::start(&[("num.partitions", "3")]);
    let producer = producer(&broker, "none");
    producer
        .send(
            FutureRecord::<(), [u8]>::to("auto-created").payload(b"x"),
            Duration::from_secs(10),
        )
        .await
        .expect("auto-created on metadata");
    let metadata = producer
        .client()
        .fetch_metadata(Some("auto-created"), Duration::from_secs(10))
        .unwrap();
    assert_eq!(metadata.topics()[0].partitions().len(), 3);
    assert_eq!(metadata.brokers().len(), 1);

    // As Kafka's KRaft brokers, the topic is created in the background and the Metadata
    // response that asked for it says UNKNOWN_TOPIC_OR_PARTITION; a later request finds it.
    // (A producer that waits only 3 ms for a topic to appear fails its message, as on Kafka:
    // librdkafka's own test 0111 delay_create_topics.)
    use kafka_protocol::messages::{ApiKey, MetadataRequest, MetadataResponse, TopicName};
    let mut raw = common::raw::connect(&broker);
    let request = MetadataRequest::default()
        .with_allow_auto_topic_creation(true)
        .with_topics(Some(vec![
            kafka_protocol::messages::metadata_request::MetadataRequestTopic::default().with_name(
                Some(TopicName(
                    kafka_protocol::protocol::StrBytes::from_static_str("created-later"),
                )),
            ),
        ]));
    let first: MetadataResponse = common::raw::call(&mut raw, ApiKey::Metadata, 12, &request);
    assert_eq!(first.topics[0].error_code, 3, "UNKNOWN_TOPIC_OR_PARTITION");
    assert!(common::wait_until(Duration::from_secs(10), || {
        let later: MetadataResponse = common::raw::call(&mut raw, ApiKey::Metadata, 12, &request);
        later.topics[0].error_code == 0 && later.topics[0].partitions.len() == 3
    }));

    let broker = Broker::start(&[("auto.create.topics.enable", "false")]);
    let consumer = consumer(&broker);
    let metadata = consumer
        .fetch_metadata(Some("missing"), Duration::from_secs(10))
        .unwrap();
    assert!(
        metadata.topics()[0].error().is_some(),
        "unknown topic is not created"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idempotent_producer_writes_every_record_once_in_order() {
    let broker = Broker::start(&[]);
    create_topic(&broker, "idempotent", PARTITIONS, &[]).await;
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("enable.idempotence", "true")
        .set("linger.ms", "2")
        .set("max.in.flight.requests.per.connection", "5")
        .create()
        .expect("producer");
    let mut pending = Vec::new();
    for i in 0..20_000usize {
        let e = expected(i, 1_000);
        let mut record: FutureRecord<'_, Vec<u8>, Vec<u8>> = FutureRecord::to("idempotent")
            .partition((i % PARTITIONS as usize) as i32)
            .timestamp(e.timestamp);
        let mut headers = OwnedHeaders::new();
        for (name, value) in &e.headers {
            headers = headers.insert(Header {
                key: name,
                value: value.as_deref(),
            });
        }
        record = record.headers(headers);
        if let Some(k) = &e.key {
            record = record.key(k);
        }
        if let Some(v) = &e.value {
            record = record.payload(v);
        }
        pending.push(
            producer
                .send_result(record)
                .map_err(|(e, _)| e)
                .expect("enqueue"),
        );
    }
    for delivery in pending {
        assert!(delivery.await.expect("delivery").is_ok());
    }
    tokio::task::block_in_place(|| consume_and_verify(&broker, "idempotent", 20_000, 1_000));
    assert!(!broker.log_text().contains("WARN"), "{}", broker.log_text());
}
