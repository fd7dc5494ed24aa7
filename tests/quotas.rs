//! Client quotas (KIP-546) against a real broker: stored and described with Kafka's filter
//! rules and messages (raw frames and the `kafka-configs` script), and enforced — librdkafka
//! clients over a byte rate are held to it and told to back off, with nothing lost or read
//! twice; CreateTopics past a mutation quota is refused with THROTTLING_QUOTA_EXCEEDED; a
//! request-time quota throttles; connections over an address's creation rate are closed.

#![allow(clippy::unwrap_used)]

mod common;

use common::raw::{call, connect};
use common::{Broker, broker_binary, wait_until};
use kafka_protocol::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kafka_protocol::messages::describe_client_quotas_request::ComponentData;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use rdkafka::ClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::message::Message;
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::statistics::Statistics;
use std::io::Read;
use std::net::TcpStream;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// AlterClientQuotas of one entity: the entry's error code and message.
fn alter(
    stream: &mut TcpStream,
    entity: &[(&str, Option<&str>)],
    ops: &[(&str, Option<f64>)],
    validate_only: bool,
) -> (i16, Option<String>) {
    let request = AlterClientQuotasRequest::default()
        .with_validate_only(validate_only)
        .with_entries(vec![
            EntryData::default()
                .with_entity(
                    entity
                        .iter()
                        .map(|(t, n)| {
                            EntityData::default()
                                .with_entity_type(s(t))
                                .with_entity_name(n.map(s))
                        })
                        .collect(),
                )
                .with_ops(
                    ops.iter()
                        .map(|(k, v)| {
                            OpData::default()
                                .with_key(s(k))
                                .with_value(v.unwrap_or(0.0))
                                .with_remove(v.is_none())
                        })
                        .collect(),
                ),
        ]);
    let response: AlterClientQuotasResponse = call(stream, ApiKey::AlterClientQuotas, 1, &request);
    let entry = &response.entries[0];
    (
        entry.error_code,
        entry.error_message.as_ref().map(|m| m.to_string()),
    )
}

/// One described entity: its "type=name" pairs, and its values sorted by key.
type Described = (String, Vec<(String, f64)>);

/// DescribeClientQuotas: the entries, sorted, or the error.
fn describe(
    stream: &mut TcpStream,
    components: &[(&str, i8, Option<&str>)],
    strict: bool,
) -> Result<Vec<Described>, (i16, String)> {
    let request = DescribeClientQuotasRequest::default()
        .with_strict(strict)
        .with_components(
            components
                .iter()
                .map(|(t, m, n)| {
                    ComponentData::default()
                        .with_entity_type(s(t))
                        .with_match_type(*m)
                        .with_match(n.map(s))
                })
                .collect(),
        );
    let response: DescribeClientQuotasResponse =
        call(stream, ApiKey::DescribeClientQuotas, 1, &request);
    if response.error_code != 0 {
        return Err((
            response.error_code,
            response
                .error_message
                .map(|m| m.to_string())
                .unwrap_or_default(),
        ));
    }
    let mut entries: Vec<Described> = response
        .entries
        .unwrap()
        .into_iter()
        .map(|e| {
            let mut entity: Vec<String> = e
                .entity
                .iter()
                .map(|d| {
                    format!(
                        "{}={}",
                        d.entity_type,
                        d.entity_name.as_deref().unwrap_or("<default>")
                    )
                })
                .collect();
            entity.sort();
            let mut values: Vec<(String, f64)> = e
                .values
                .iter()
                .map(|v| (v.key.to_string(), v.value))
                .collect();
            values.sort_by(|a, b| a.0.cmp(&b.0));
            (entity.join(","), values)
        })
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

const INVALID_REQUEST: i16 = 42;

#[test]
fn quotas_are_stored_described_and_refused_as_kafka_does() {
    let mut broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    let user = |n| ("user", n);
    let client = |n| ("client-id", n);
    assert_eq!(
        alter(
            &mut stream,
            &[user(Some("alice"))],
            &[
                ("producer_byte_rate", Some(1_048_576.0)),
                ("consumer_byte_rate", Some(2e7))
            ],
            false
        ),
        (0, None)
    );
    assert_eq!(
        alter(
            &mut stream,
            &[user(Some("alice")), client(None)],
            &[("request_percentage", Some(12.5))],
            false
        ),
        (0, None)
    );
    assert_eq!(
        alter(
            &mut stream,
            &[("ip", Some("10.1.2.3"))],
            &[("connection_creation_rate", Some(5.0))],
            false
        ),
        (0, None)
    );
    // validate_only changes nothing.
    assert_eq!(
        alter(
            &mut stream,
            &[client(Some("tool"))],
            &[("producer_byte_rate", Some(1.0))],
            true
        ),
        (0, None)
    );
    // Kafka's refusals, with its messages.
    let refused =
        |stream: &mut TcpStream, entity: &[(&str, Option<&str>)], ops: &[(&str, Option<f64>)]| {
            let (code, message) = alter(stream, entity, ops, false);
            assert_eq!(code, INVALID_REQUEST, "{message:?}");
            message.unwrap()
        };
    assert_eq!(
        refused(
            &mut stream,
            &[user(Some("bob"))],
            &[("producer_byte_rate", Some(0.0))]
        ),
        "Quota producer_byte_rate must be greater than 0"
    );
    assert_eq!(
        refused(
            &mut stream,
            &[user(Some("bob"))],
            &[("producer_byte_rate", Some(1.5))]
        ),
        "producer_byte_rate cannot be a fractional value."
    );
    assert_eq!(
        refused(
            &mut stream,
            &[("ip", None)],
            &[("producer_byte_rate", Some(1.0))]
        ),
        "Invalid configuration key producer_byte_rate"
    );
    assert_eq!(
        refused(
            &mut stream,
            &[("group", Some("g"))],
            &[("producer_byte_rate", Some(1.0))]
        ),
        "Unhandled client quota entity type: group"
    );
    assert_eq!(
        refused(
            &mut stream,
            &[("ip", Some("no-such-host.invalid"))],
            &[("connection_creation_rate", Some(1.0))]
        ),
        "no-such-host.invalid is not a valid IP or resolvable host."
    );

    let described = |stream: &mut TcpStream, components: &[(&str, i8, Option<&str>)], strict| {
        describe(stream, components, strict).unwrap()
    };
    let alice = described(&mut stream, &[("user", 0, Some("alice"))], false);
    assert_eq!(
        alice,
        vec![
            (
                "client-id=<default>,user=alice".to_string(),
                vec![("request_percentage".to_string(), 12.5)]
            ),
            (
                "user=alice".to_string(),
                vec![
                    ("consumer_byte_rate".to_string(), 2e7),
                    ("producer_byte_rate".to_string(), 1_048_576.0)
                ]
            ),
        ]
    );
    assert_eq!(
        described(&mut stream, &[("user", 0, Some("alice"))], true).len(),
        1
    );
    assert_eq!(
        described(&mut stream, &[("client-id", 1, None)], false).len(),
        1
    );
    assert_eq!(described(&mut stream, &[("ip", 2, None)], true).len(), 1);
    assert!(described(&mut stream, &[("client-id", 0, Some("tool"))], false).is_empty());
    assert_eq!(
        describe(&mut stream, &[("user", 0, None)], false).unwrap_err(),
        (
            INVALID_REQUEST,
            "Request specified MATCH_TYPE_EXACT, but set match string to null.".to_string()
        )
    );
    assert_eq!(
        describe(&mut stream, &[("group", 2, None)], false)
            .unwrap_err()
            .0,
        35,
        "UNSUPPORTED_VERSION for an entity type Kafka does not know"
    );

    // Removal, and the quotas outlive a restart (they are in the metadata log).
    assert_eq!(
        alter(
            &mut stream,
            &[user(Some("alice"))],
            &[("consumer_byte_rate", None)],
            false
        ),
        (0, None)
    );
    drop(stream);
    let dir = broker.dir().to_path_buf();
    broker.stop();
    let broker = Broker::start_in(&dir, &[]);
    let mut stream = connect(&broker);
    assert_eq!(
        described(&mut stream, &[("user", 0, Some("alice"))], true),
        vec![(
            "user=alice".to_string(),
            vec![("producer_byte_rate".to_string(), 1_048_576.0)]
        )]
    );

    // The kafka-configs script over the same APIs, with Kafka's output.
    let configs = |args: &[&str]| {
        let output = Command::new(broker_binary())
            .arg("configs")
            .args(["--bootstrap-server", &broker.bootstrap])
            .args(args)
            .output()
            .unwrap();
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stdout).to_string(),
        )
    };
    assert_eq!(
        configs(&[
            "--alter",
            "--entity-type",
            "clients",
            "--entity-default",
            "--add-config",
            "consumer_byte_rate=20000000"
        ]),
        (
            Some(0),
            "Completed updating default config for clients in the cluster.\n".into()
        )
    );
    assert_eq!(
        configs(&[
            "--describe",
            "--entity-type",
            "users",
            "--entity-name",
            "alice"
        ])
        .1,
        "Quota configs for user-principal 'alice' are producer_byte_rate=1048576.0\n"
    );
    assert_eq!(
        configs(&["--describe", "--entity-type", "clients", "--entity-default"]).1,
        "Quota configs for the default client-id are consumer_byte_rate=2.0E7\n"
    );
    assert_eq!(
        configs(&["--describe", "--entity-type", "ips"]).1,
        "Quota configs for ip '10.1.2.3' are connection_creation_rate=5.0\n"
    );
}

/// Delivered payload bytes and the largest throttle time librdkafka reported.
#[derive(Default)]
struct Observed {
    bytes: AtomicU64,
    records: AtomicU64,
    failed: AtomicU64,
    throttled: AtomicBool,
}

#[derive(Clone)]
struct Counting(Arc<Observed>);

impl ClientContext for Counting {
    fn stats(&self, statistics: Statistics) {
        if statistics
            .brokers
            .values()
            .any(|b| b.throttle.as_ref().is_some_and(|w| w.max > 0))
        {
            self.0.throttled.store(true, Ordering::SeqCst);
        }
    }
}

impl ProducerContext for Counting {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(message) => {
                self.0
                    .bytes
                    .fetch_add(message.payload_len() as u64, Ordering::SeqCst);
                self.0.records.fetch_add(1, Ordering::SeqCst);
            }
            Err(_) => {
                self.0.failed.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
}

impl ConsumerContext for Counting {}

const RATE: u64 = 1_048_576;
const MEASURED: Duration = Duration::from_secs(20);
const VALUE: usize = 10_000;
/// Kafka's rate assumes at least `quota.window.num - 1` windows have passed and drops a whole
/// sample once it is a span old, so a client that sends as fast as it may gets that many
/// windows' worth at once, then a trickle, then another burst when the burst's sample ages
/// out: with Kafka's default of 11 one-second windows, 10 s of quota every 11 s, and a 20-s
/// average anywhere between 0.6 and 1.1 of the quota depending on where it starts (on Kafka
/// as here; the arithmetic is Kafka's). With 2 windows the burst is 1 s of quota and 20 s
/// average to within 5%: the test's brokers run so, after a warm-up of one span.
const QUOTA_WINDOWS: [(&str, &str); 1] = [("quota.window.num", "2")];
const WARM_UP: Duration = Duration::from_secs(3);

/// Produces for `MEASURED` as fast as librdkafka will; the payload bytes per second delivered.
fn produce_for(bootstrap: &str, topic: &str, client_id: &str, observed: &Arc<Observed>) -> f64 {
    let producer: ThreadedProducer<Counting> = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("client.id", client_id)
        .set("linger.ms", "5")
        // Requests of about 100 KB: the rate is judged per request, so smaller requests
        // follow it more closely.
        .set("batch.size", "100000")
        .set("queue.buffering.max.kbytes", "2048")
        .set("statistics.interval.ms", "500")
        .create_with_context(Counting(observed.clone()))
        .unwrap();
    let value = vec![b'q'; VALUE];
    let started = Instant::now();
    let mut key = 0u64;
    let mut at_warm = None;
    while started.elapsed() < WARM_UP + MEASURED {
        if at_warm.is_none() && started.elapsed() >= WARM_UP {
            at_warm = Some(observed.bytes.load(Ordering::SeqCst));
        }
        let k = key.to_string();
        match producer.send(BaseRecord::to(topic).key(&k).payload(&value)) {
            Ok(()) => key += 1,
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    let delivered = observed.bytes.load(Ordering::SeqCst) - at_warm.unwrap_or(0);
    producer.flush(Duration::from_secs(60)).unwrap();
    delivered as f64 / MEASURED.as_secs_f64()
}

#[test]
fn clients_over_their_byte_rate_are_held_to_it_and_lose_nothing() {
    let broker = Broker::start(&QUOTA_WINDOWS);
    // The same against Apache Kafka when one is named (`compat/kafka-peer/kafka start DIR`
    // with `KAFKA_PEER_PROPERTIES=quota.window.num=2`): the case holds there too.
    if let Ok(peer) = std::env::var("QUOTA_KAFKA_PEER") {
        held_to_byte_rates(&peer);
    }
    held_to_byte_rates(&broker.bootstrap);
}

fn held_to_byte_rates(bootstrap: &str) {
    let bootstrap = bootstrap.to_string();
    let mut admin = TcpStream::connect(&bootstrap).unwrap();
    admin
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    for (client_id, key) in [
        ("quota-producer", "producer_byte_rate"),
        ("quota-consumer", "consumer_byte_rate"),
    ] {
        let entity = [("client-id", Some(client_id))];
        assert_eq!(
            alter(&mut admin, &entity, &[(key, Some(RATE as f64))], false),
            (0, None)
        );
    }
    // Data for the consumer, written without a quota (30 MB: more than it may read in 23 s).
    let unlimited = Arc::new(Observed::default());
    let filler: ThreadedProducer<Counting> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("client.id", "filler")
        .create_with_context(Counting(unlimited.clone()))
        .unwrap();
    let value = vec![b'c'; VALUE];
    let filled = 3_000u64;
    for i in 0..filled {
        let key = i.to_string();
        while filler
            .send(BaseRecord::to("quota-in").key(&key).payload(&value))
            .is_err()
        {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    filler.flush(Duration::from_secs(120)).unwrap();
    assert_eq!(unlimited.records.load(Ordering::SeqCst), filled);

    // The producer and the consumer run side by side, each under its own quota.
    let producing = {
        let bootstrap = bootstrap.clone();
        std::thread::spawn(move || {
            let observed = Arc::new(Observed::default());
            let rate = produce_for(&bootstrap, "quota-out", "quota-producer", &observed);
            (rate, observed)
        })
    };
    let observed = Arc::new(Observed::default());
    let consumer: BaseConsumer<Counting> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("client.id", "quota-consumer")
        .set("group.id", format!("quota-group-{}", std::process::id()))
        .set("auto.offset.reset", "earliest")
        .set("statistics.interval.ms", "500")
        .create_with_context(Counting(observed.clone()))
        .unwrap();
    consumer.subscribe(&["quota-in"]).unwrap();
    let mut next_offset = 0i64;
    let mut consumed_bytes = 0u64;
    let mut started = None;
    loop {
        let elapsed = started.map_or(Duration::ZERO, |s: Instant| s.elapsed());
        if elapsed >= WARM_UP + MEASURED {
            break;
        }
        let Some(message) = consumer.poll(Duration::from_millis(100)) else {
            continue;
        };
        let message = message.unwrap();
        started.get_or_insert_with(Instant::now);
        // In order, each once.
        assert_eq!(message.offset(), next_offset);
        next_offset += 1;
        if elapsed >= WARM_UP {
            consumed_bytes += message.payload_len() as u64;
        }
    }
    let consume_rate = consumed_bytes as f64 / MEASURED.as_secs_f64();
    let (produce_rate, produced) = producing.join().unwrap();

    eprintln!("{bootstrap}: produced {produce_rate:.0} B/s, consumed {consume_rate:.0} B/s");
    let within = |rate: f64| (0.9 * RATE as f64..=1.1 * RATE as f64).contains(&rate);
    assert!(
        within(produce_rate),
        "produced {produce_rate:.0} B/s under a {RATE} B/s quota"
    );
    // A consumer is held under its quota, not to it: a fetch that would go over is answered
    // empty (its bytes not counted) and librdkafka comes back later than the throttle time,
    // so it reads less than the quota allows — on Apache Kafka 4.4 as here (measured with
    // QUOTA_KAFKA_PEER: 0.5 to 0.8 of the quota).
    assert!(
        (0.4 * RATE as f64..=1.1 * RATE as f64).contains(&consume_rate),
        "consumed {consume_rate:.0} B/s under a {RATE} B/s quota"
    );
    assert!(
        produced.throttled.load(Ordering::SeqCst),
        "the producer saw no throttle time"
    );
    assert!(
        observed.throttled.load(Ordering::SeqCst),
        "the consumer saw no throttle time"
    );
    assert_eq!(produced.failed.load(Ordering::SeqCst), 0);
    // Nothing the producer was told was written is missing, and nothing is there twice.
    let written = produced.records.load(Ordering::SeqCst) as i64;
    let offsets: ListOffsetsResponse = call(
        &mut admin,
        ApiKey::ListOffsets,
        7,
        &ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_topics(vec![
                list_offsets_request::ListOffsetsTopic::default()
                    .with_name(TopicName(s("quota-out")))
                    .with_partitions(vec![
                        list_offsets_request::ListOffsetsPartition::default()
                            .with_partition_index(0)
                            .with_timestamp(-1),
                    ]),
            ]),
    );
    assert_eq!(offsets.topics[0].partitions[0].offset, written);
}

#[test]
fn a_mutation_quota_refuses_topics_past_its_burst() {
    let broker = Broker::start(&[("http.listener", "127.0.0.1:0")]);
    let mut stream = connect(&broker);
    assert_eq!(
        alter(
            &mut stream,
            &[("user", None)],
            &[("controller_mutation_rate", Some(1.0))],
            false
        ),
        (0, None)
    );
    let create = |stream: &mut TcpStream, name: &str, partitions: i32| {
        let request = CreateTopicsRequest::default()
            .with_timeout_ms(10_000)
            .with_topics(vec![
                create_topics_request::CreatableTopic::default()
                    .with_name(TopicName(s(name)))
                    .with_num_partitions(partitions)
                    .with_replication_factor(1),
            ]);
        let response: CreateTopicsResponse = call(stream, ApiKey::CreateTopics, 7, &request);
        (response.topics[0].error_code, response.throttle_time_ms)
    };
    // A burst of 11 partitions (11 windows of 1/s) is there: 20 take it below zero.
    assert_eq!(create(&mut stream, "mutation-a", 20).0, 0);
    let (code, throttle) = create(&mut stream, "mutation-b", 1);
    assert_eq!(code, 89, "THROTTLING_QUOTA_EXCEEDED");
    assert!(
        (5_000..=9_000).contains(&throttle),
        "throttle time {throttle} ms for 9 partitions over at 1/s"
    );

    // The sensor in Kafka's quota metrics (the default-user quota applies, so the MBean is
    // `kafka.server:type=ControllerMutation,user=ANONYMOUS`), as the JMX exporter names it.
    let metrics = broker.scrape_metrics();
    let value = |name: &str| metrics.value(name);
    let family = "kafka_server_controllermutation_user_anonymous";
    assert!(value(&format!("{family}_mutation_rate")) > 0.0);
    let average_throttle = value(&format!("{family}_throttle_time"));
    assert!(
        (5_000.0..=9_000.0).contains(&average_throttle),
        "{average_throttle}"
    );
    assert!(value(&format!("{family}_tokens")) < 0.0);
    assert!(metrics.0.contains(&format!(
        "# HELP {family}_tokens Tracking remaining tokens in the token bucket per user/client-id kafka.server:name=null,type=ControllerMutation,attribute=tokens"
    )));
}

#[test]
fn connections_over_an_ip_rate_are_closed_and_a_request_time_quota_throttles() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    assert_eq!(
        alter(
            &mut stream,
            &[("ip", None)],
            &[("connection_creation_rate", Some(1.0))],
            false
        ),
        (0, None)
    );
    // 1/s over the minimum window of 10 s: about 10 connections are let in, the next ones
    // are held for their throttle time and closed.
    let mut connections: Vec<TcpStream> = (0..20)
        .map(|_| {
            let connection = TcpStream::connect(&broker.bootstrap).unwrap();
            connection
                .set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            connection
        })
        .collect();
    let mut closed = vec![false; connections.len()];
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        for (connection, closed) in connections.iter_mut().zip(closed.iter_mut()) {
            let mut byte = [0u8; 1];
            // An open connection waits for a request (the read times out); a throttled one
            // is closed by the broker (end of stream).
            if !*closed && matches!(connection.read(&mut byte), Ok(0)) {
                *closed = true;
            }
        }
    }
    let closed = closed.iter().filter(|c| **c).count();
    assert!(
        (5..=12).contains(&closed),
        "{closed} of 20 connections closed at 1 connection/s"
    );
    drop(connections);

    // A thousandth of a percent of one handler's time for the raw client: its requests are
    // soon over it (the throttle time is bounded by one window, as on Kafka).
    assert_eq!(
        alter(
            &mut stream,
            &[("client-id", Some("raw-test"))],
            &[("request_percentage", Some(0.001))],
            false
        ),
        (0, None)
    );
    let throttled = wait_until(Duration::from_secs(20), || {
        let response: MetadataResponse = call(
            &mut stream,
            ApiKey::Metadata,
            12,
            &MetadataRequest::default(),
        );
        response.throttle_time_ms > 0 && response.throttle_time_ms <= 1000
    });
    assert!(throttled, "no throttle time under a request quota");
}
