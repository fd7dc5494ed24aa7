//! The broker benchmark: drives a broker with librdkafka (the `rdkafka` crate) the way
//! `rdkafka_performance` does and prints one summary line per scenario, plus one JSON object
//! per scenario (to stdout, or to `--json FILE`).
//!
//! Scenarios:
//! - `produce`: N messages of S bytes, spread over P partitions, as fast as the client can;
//!   msgs/s and MB/s from the first send to the last delivery report.
//! - `consume`: reads those N messages back from the beginning with default consumer
//!   settings (assign, no group); msgs/s and MB/s from the first poll to the last message.
//! - `latency`: produce at a fixed rate with `linger.ms=0` while a consumer reads; end-to-end
//!   latency percentiles (send to receive, clocks of one process).
//! - `produce-fsync`: `produce` to a topic with `flush.messages=1` (fsync before every
//!   acknowledgement; Sluice group-commits them).
//! - `produce-idempotent`: `produce` with `enable.idempotence=true` (acks=all, at most 5
//!   requests in flight per connection, sequence numbers checked by the broker).
//! - `produce-transactional`: `produce` by a transactional producer, committing every
//!   `--txn-messages` messages (AddPartitionsToTxn, EndTxn and the markers each time).
//!
//! The cost of idempotence and of transactions, side by side with plain acks=all in one run:
//! `cargo bench --bench broker -- --acks all --partitions 4 --scenarios
//! produce,produce-idempotent,produce-transactional,produce,produce-idempotent,produce-transactional`.
//!
//! Security: a scenario may name the listener it runs over with `@ssl`, `@sasl_plaintext` or
//! `@sasl_ssl` (SASL PLAIN; certificates made at run time with rcgen), and the `connect`
//! scenario (`connect-scram`: SCRAM-SHA-256) opens `--connections` connections one after the
//! other — TLS handshake, SASL authentication, ApiVersions, close — and reports connections per
//! second. The cost of TLS and SASL side by side with PLAINTEXT in one run:
//! `cargo bench --bench broker -- --scenarios
//! produce,consume,produce@ssl,consume@ssl,produce@sasl_ssl,consume@sasl_ssl,connect,connect@ssl,connect@sasl_plaintext,connect-scram@sasl_plaintext,connect@sasl_ssl`.
//!
//! For a broker it started itself (the default) it reports broker CPU seconds and peak RSS per
//! scenario from /proc; with `--bootstrap HOST:PORT` it can measure another broker, and with
//! `--broker-pid PID` also that broker's CPU and memory. It is a benchmark, not a test: it
//! asserts nothing about speed, and CI does not run it.
//!
//! Two broker settings side by side in one run (`--against`, in `broker/against.rs`): the
//! cost of metrics and the console, for one.
//!
//! Groups (`broker/groups.rs`): `group-classic` and `group-consumer` time a group of
//! `--members` members to a stable assignment (classic protocol and KIP-848), and `fan-out`
//! has `--members` consumers in as many groups read what `produce` wrote.
//!
//! `cargo bench --bench broker -- --help` lists the options.

use clap::Parser;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::{DeliveryResult, Message};
use rdkafka::producer::{BaseProducer, BaseRecord, Producer, ProducerContext};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientContext, Offset, TopicPartitionList};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

#[path = "broker/against.rs"]
mod against;
#[path = "broker/groups.rs"]
mod groups;
#[path = "broker/process.rs"]
mod process;
#[path = "broker/secured.rs"]
mod secured;
use process::{OwnedBroker, ProcessProbe, disk_usage};
use secured::{Secured, connect};

#[derive(Parser, Debug, Clone)]
#[command(about = "Sluice broker benchmark (librdkafka client)")]
struct Options {
    /// Measure this broker instead of starting Sluice.
    #[arg(long)]
    bootstrap: Option<String>,
    /// With --bootstrap: the broker's process id, to report its CPU time and memory.
    #[arg(long)]
    broker_pid: Option<u32>,
    /// Scenarios to run, comma-separated: produce, consume, latency, produce-fsync,
    /// produce-idempotent, produce-transactional, group-classic, group-consumer, fan-out, and
    /// restart (fills `--restart-gb` over `--restart-partitions` partitions, then times a
    /// clean restart; only for a broker the benchmark started).
    #[arg(long, default_value = "produce,consume,latency,produce-fsync")]
    scenarios: String,
    /// Messages per throughput scenario.
    #[arg(long, default_value_t = 1_000_000)]
    messages: u64,
    /// Message value size in bytes.
    #[arg(long, default_value_t = 100)]
    size: usize,
    #[arg(long, default_value_t = 1)]
    partitions: i32,
    /// Producer acks (0, 1 or -1/all).
    #[arg(long, default_value = "1")]
    acks: String,
    /// Producer compression.type (none, gzip, snappy, lz4, zstd).
    #[arg(long, default_value = "none")]
    codec: String,
    /// Messages per transaction of the `produce-transactional` scenario.
    #[arg(long, default_value_t = 10_000)]
    txn_messages: u64,
    /// Rate of the latency scenario, messages per second.
    #[arg(long, default_value_t = 10_000)]
    rate: u64,
    /// Duration of the latency scenario, seconds.
    #[arg(long, default_value_t = 10)]
    latency_seconds: u64,
    /// Partitions of the `restart` scenario's topic.
    #[arg(long, default_value_t = 1000)]
    restart_partitions: i32,
    /// Data the `restart` scenario writes before restarting, in GB.
    #[arg(long, default_value_t = 10.0)]
    restart_gb: f64,
    /// The broker binary to start (default: this build's); another build to compare with,
    /// e.g. an older commit's (`bench/hardening.sh` runs both in one go).
    #[arg(long)]
    broker_bin: Option<PathBuf>,
    /// Extra broker overrides for a broker the benchmark starts (`key=value`, repeatable).
    #[arg(long = "override")]
    overrides: Vec<String>,
    /// Extra librdkafka producer settings (`key=value`, repeatable): `message.max.bytes`
    /// above a million for 1 MiB messages (`bench/large-messages.sh`).
    #[arg(long = "producer-config")]
    producer_config: Vec<String>,
    /// Side by side: also start a broker with these overrides on top (`key=value`,
    /// repeatable) and run produce and consume on both in turn (see `broker/against.rs`).
    #[arg(long)]
    against: Vec<String>,
    /// Rounds of the side-by-side run.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// In the side-by-side run, read each broker's HTTP listener as Prometheus (every second)
    /// and an open console (every five) would.
    #[arg(long)]
    scrape: bool,
    /// Only create this topic (with `--partitions`) on `--bootstrap` and exit: for driving
    /// the broker with other tools, such as librdkafka's `rdkafka_performance`.
    #[arg(long)]
    create_topic: Option<String>,
    /// `produce` writes to this existing topic (all its partitions, `--partitions` of them)
    /// instead of a fresh one: `bench/scale.sh` spreads it over every partition it made.
    #[arg(long)]
    produce_topic: Option<String>,
    /// Members of the `group-classic` and `group-consumer` groups; consumers of `fan-out`.
    #[arg(long, default_value_t = 100)]
    members: usize,
    /// The group scenarios subscribe to this existing topic (`--partitions` of them) instead
    /// of a fresh one.
    #[arg(long)]
    group_topic: Option<String>,
    /// Connections the `connect` scenarios open.
    #[arg(long, default_value_t = 2000)]
    connections: u64,
    /// Also write the JSON lines to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Ignored: `cargo bench` passes it to every bench target.
    #[arg(long, hide = true)]
    bench: bool,
}

#[derive(Default)]
struct DeliveryCounter {
    delivered: AtomicU64,
    failed: AtomicU64,
}

impl ClientContext for DeliveryCounter {}

impl ProducerContext for DeliveryCounter {
    type DeliveryOpaque = ();
    fn delivery(&self, result: &DeliveryResult<'_>, _: ()) {
        match result {
            Ok(_) => self.delivered.fetch_add(1, Ordering::Relaxed),
            Err(_) => self.failed.fetch_add(1, Ordering::Relaxed),
        };
    }
}

/// One scenario's figures.
#[derive(Default)]
struct Outcome {
    messages: u64,
    bytes: u64,
    seconds: f64,
    failed: u64,
    latency_ms: Option<[f64; 3]>,
    broker_cpu_seconds: Option<f64>,
    broker_peak_rss_mib: Option<f64>,
}

/// Client settings of each secured listener's address (`@ssl` scenarios and the like): every
/// client the scenarios make goes through `client_config`, which looks its address up here.
static CLIENT_SECURITY: std::sync::Mutex<Vec<(String, ClientSettings)>> =
    std::sync::Mutex::new(Vec::new());

/// librdkafka properties, in order.
type ClientSettings = Vec<(String, String)>;

fn client_config(bootstrap: &str) -> ClientConfig {
    let mut config = ClientConfig::new();
    config.set("bootstrap.servers", bootstrap);
    let secured = CLIENT_SECURITY.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, settings)) = secured.iter().find(|(address, _)| address == bootstrap) {
        for (key, value) in settings {
            config.set(key, value);
        }
    }
    config
}

fn create_topic(bootstrap: &str, name: &str, partitions: i32, configs: &[(&str, &str)]) {
    let admin: AdminClient<DefaultClientContext> =
        client_config(bootstrap).create().expect("admin client");
    let mut topic = NewTopic::new(name, partitions, TopicReplication::Fixed(1));
    for (k, v) in configs {
        topic = topic.set(k, v);
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let results = runtime
        .block_on(admin.create_topics([&topic], &AdminOptions::new()))
        .expect("create topics");
    for result in results {
        if let Err((topic, e)) = result {
            panic!("creating {topic}: {e}");
        }
    }
}

fn producer(
    options: &Options,
    bootstrap: &str,
    linger_ms: Option<&str>,
) -> BaseProducer<DeliveryCounter> {
    producer_with(options, bootstrap, linger_ms, &[])
}

fn producer_with(
    options: &Options,
    bootstrap: &str,
    linger_ms: Option<&str>,
    extra: &[(&str, &str)],
) -> BaseProducer<DeliveryCounter> {
    let mut config = client_config(bootstrap);
    config
        .set("acks", &options.acks)
        .set("compression.type", &options.codec)
        .set("queue.buffering.max.messages", "1000000")
        .set("queue.buffering.max.kbytes", "1048576");
    if let Some(linger) = linger_ms {
        config.set("linger.ms", linger);
    }
    for setting in &options.producer_config {
        let (key, value) = setting
            .split_once('=')
            .unwrap_or_else(|| panic!("--producer-config {setting}: not key=value"));
        config.set(key, value);
    }
    // Idempotent and transactional producers need acks=all whatever `--acks` says.
    for (key, value) in extra {
        config.set(*key, *value).set("acks", "all");
    }
    config
        .create_with_context(DeliveryCounter::default())
        .expect("producer")
}

/// Sends `count` copies of `payload` round-robin over the partitions and waits for every
/// delivery report.
fn send_all(
    producer: &BaseProducer<DeliveryCounter>,
    topic: &str,
    partitions: i32,
    count: u64,
    payload: &[u8],
) {
    for i in 0..count {
        let partition = (i % partitions as u64) as i32;
        let mut record = BaseRecord::to(topic).payload(payload).partition(partition);
        loop {
            match producer.send::<[u8], [u8]>(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), back)) => {
                    record = back;
                    serve_delivery_reports(producer);
                }
                Err((e, _)) => panic!("send failed: {e}"),
            }
        }
    }
    drain(producer, Duration::from_secs(600));
}

/// Waits for every delivery report. Not `flush`: the rdkafka crate's `BaseProducer::flush`
/// polls in rounds of a full 100 ms, which would add up to 100 ms to every measurement (and to
/// every transaction of `produce-transactional`).
fn drain(producer: &BaseProducer<DeliveryCounter>, patience: Duration) {
    let deadline = Instant::now() + patience;
    while producer.in_flight_count() > 0 {
        assert!(
            Instant::now() < deadline,
            "messages still in flight after {patience:?}"
        );
        serve_delivery_reports(producer);
    }
}

/// Serves the delivery reports there are, then sleeps a millisecond. Not `poll(1 ms)`: the
/// rdkafka crate's `poll` runs until its whole timeout has passed and polls librdkafka with
/// the time left rounded down to milliseconds, so its last millisecond (all of a 1 ms poll) is
/// a busy loop, which took a core from the broker measured on a small machine. A `poll` of
/// zero serves one event (one request's delivery reports, say), so it is repeated while it
/// serves some.
fn serve_delivery_reports(producer: &BaseProducer<DeliveryCounter>) {
    loop {
        let before = producer.in_flight_count();
        producer.poll(Duration::ZERO);
        if producer.in_flight_count() == before {
            break;
        }
    }
    std::thread::sleep(Duration::from_millis(1));
}

/// Sends one message; the latency scenario's queue never fills, so any error is fatal.
fn send_one(producer: &BaseProducer<DeliveryCounter>, topic: &str, partition: i32, payload: &[u8]) {
    let record = BaseRecord::to(topic).payload(payload).partition(partition);
    if let Err((e, _)) = producer.send::<[u8], [u8]>(record) {
        panic!("send failed: {e}");
    }
}

/// Produces the messages of the `produce` scenario.
fn produce(options: &Options, bootstrap: &str, topic: &str) -> Outcome {
    produce_with(options, bootstrap, topic, &[])
}

/// `produce` with extra producer settings (`produce-idempotent`).
fn produce_with(
    options: &Options,
    bootstrap: &str,
    topic: &str,
    extra: &[(&str, &str)],
) -> Outcome {
    let producer = producer_with(options, bootstrap, None, extra);
    let payload = vec![b'x'; options.size];
    let started = Instant::now();
    send_all(
        &producer,
        topic,
        options.partitions,
        options.messages,
        &payload,
    );
    outcome_of(&producer, options, started)
}

/// The messages of `produce`, in transactions of `--txn-messages` each, every one committed.
/// The clock starts before InitProducerId.
fn produce_transactional(options: &Options, bootstrap: &str, topic: &str, id: &str) -> Outcome {
    let producer = producer_with(options, bootstrap, None, &[("transactional.id", id)]);
    let payload = vec![b'x'; options.size];
    let timeout = Duration::from_secs(60);
    let started = Instant::now();
    producer
        .init_transactions(timeout)
        .expect("init_transactions");
    let mut sent = 0;
    while sent < options.messages {
        let count = options.txn_messages.min(options.messages - sent);
        producer.begin_transaction().expect("begin_transaction");
        send_all(&producer, topic, options.partitions, count, &payload);
        producer
            .commit_transaction(timeout)
            .expect("commit_transaction");
        sent += count;
    }
    outcome_of(&producer, options, started)
}

fn outcome_of(
    producer: &BaseProducer<DeliveryCounter>,
    options: &Options,
    started: Instant,
) -> Outcome {
    let seconds = started.elapsed().as_secs_f64();
    let context = producer.context();
    Outcome {
        messages: context.delivered.load(Ordering::Relaxed),
        bytes: options.messages * options.size as u64,
        seconds,
        failed: context.failed.load(Ordering::Relaxed),
        ..Outcome::default()
    }
}

/// A consumer with default settings assigned every partition of `topic` from the beginning
/// (no group membership: the group id only satisfies librdkafka).
fn assigned_consumer(bootstrap: &str, topic: &str, partitions: i32) -> BaseConsumer {
    let consumer: BaseConsumer = client_config(bootstrap)
        .set("group.id", "sluice-bench")
        .set("enable.auto.commit", "false")
        .create()
        .expect("consumer");
    let mut assignment = TopicPartitionList::new();
    for p in 0..partitions {
        assignment
            .add_partition_offset(topic, p, Offset::Beginning)
            .expect("assignment");
    }
    consumer.assign(&assignment).expect("assign");
    consumer
}

/// Reads `count` messages from the beginning of every partition with default settings.
fn consume(options: &Options, bootstrap: &str, topic: &str) -> Outcome {
    let consumer = assigned_consumer(bootstrap, topic, options.partitions);
    let (mut messages, mut bytes) = (0u64, 0u64);
    let started = Instant::now();
    let give_up = started + Duration::from_secs(600);
    while messages < options.messages && Instant::now() < give_up {
        match consumer.poll(Duration::from_millis(100)) {
            Some(Ok(message)) => {
                messages += 1;
                bytes += message.payload_len() as u64;
            }
            Some(Err(e)) => panic!("consume failed: {e}"),
            None => {}
        }
    }
    Outcome {
        messages,
        bytes,
        seconds: started.elapsed().as_secs_f64(),
        failed: options.messages.saturating_sub(messages),
        ..Outcome::default()
    }
}

fn unix_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Produces at a fixed rate with `linger.ms=0` while a consumer reads; each value carries its
/// send time, so end-to-end latency is receive time minus send time.
fn latency(options: &Options, bootstrap: &str, topic: &str) -> Outcome {
    let total = options.rate * options.latency_seconds;
    let consumer = assigned_consumer(bootstrap, topic, options.partitions);
    let done = Arc::new(AtomicBool::new(false));
    let warmed_up = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = done.clone();
        let warmed_up = warmed_up.clone();
        std::thread::spawn(move || {
            let mut latencies = Vec::with_capacity(total as usize);
            let give_up = Instant::now() + Duration::from_secs(600);
            while (latencies.len() as u64) < total && Instant::now() < give_up {
                if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
                    let received = unix_nanos();
                    match message
                        .payload()
                        .and_then(|p| p.get(..8))
                        .and_then(|b| b.try_into().ok())
                        .map(u64::from_be_bytes)
                    {
                        // The warm-up message: the consumer is connected and fetching.
                        Some(0) => warmed_up.store(true, Ordering::Relaxed),
                        Some(sent) => latencies.push(received.saturating_sub(sent)),
                        None => {}
                    }
                }
                if done.load(Ordering::Relaxed) && latencies.len() as u64 >= total {
                    break;
                }
            }
            latencies
        })
    };
    let producer = producer(options, bootstrap, Some("0"));
    let mut payload = vec![b'x'; options.size.max(8)];
    // Measure from a steady state: connections open, offsets resolved, a fetch parked.
    payload[..8].copy_from_slice(&0u64.to_be_bytes());
    for p in 0..options.partitions {
        send_one(&producer, topic, p, &payload);
    }
    producer.flush(Duration::from_secs(60)).expect("flush");
    let warm_deadline = Instant::now() + Duration::from_secs(60);
    while !warmed_up.load(Ordering::Relaxed) && Instant::now() < warm_deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let interval = Duration::from_secs_f64(1.0 / options.rate as f64);
    for i in 0..total {
        let due = started + interval.mul_f64(i as f64);
        // Sleep rather than spin: on a small machine a spinning client steals the broker's
        // CPU and shows up as broker latency. Late sends go at once, keeping the mean rate.
        producer.poll(Duration::ZERO);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        payload[..8].copy_from_slice(&unix_nanos().to_be_bytes());
        let partition = (i % options.partitions as u64) as i32;
        send_one(&producer, topic, partition, &payload);
    }
    producer.flush(Duration::from_secs(60)).expect("flush");
    done.store(true, Ordering::Relaxed);
    let mut latencies = reader.join().expect("reader thread");
    latencies.sort_unstable();
    let percentile = |q: f64| -> f64 {
        if latencies.is_empty() {
            return f64::NAN;
        }
        let i = ((latencies.len() as f64 * q).ceil() as usize).clamp(1, latencies.len()) - 1;
        latencies[i] as f64 / 1e6
    };
    Outcome {
        messages: latencies.len() as u64,
        bytes: latencies.len() as u64 * payload.len() as u64,
        seconds: started.elapsed().as_secs_f64(),
        failed: total.saturating_sub(latencies.len() as u64),
        latency_ms: Some([percentile(0.50), percentile(0.99), percentile(0.999)]),
        ..Outcome::default()
    }
}

fn json_line(scenario: &str, options: &Options, outcome: &Outcome) -> String {
    let mut value = serde_json::json!({
        "scenario": scenario,
        "messages": outcome.messages,
        "message_bytes": options.size,
        "partitions": options.partitions,
        "acks": options.acks,
        "codec": options.codec,
        "seconds": outcome.seconds,
        "msgs_per_sec": outcome.messages as f64 / outcome.seconds,
        "mb_per_sec": outcome.bytes as f64 / outcome.seconds / 1e6,
        "failed": outcome.failed,
    });
    if let Some([p50, p99, p999]) = outcome.latency_ms {
        value["rate"] = options.rate.into();
        value["latency_ms"] = serde_json::json!({"p50": p50, "p99": p99, "p99_9": p999});
    }
    if let Some(cpu) = outcome.broker_cpu_seconds {
        value["broker_cpu_seconds"] = cpu.into();
    }
    if let Some(rss) = outcome.broker_peak_rss_mib {
        value["broker_peak_rss_mib"] = rss.into();
    }
    value.to_string()
}

fn summary_line(scenario: &str, options: &Options, o: &Outcome) -> String {
    let mut line = format!(
        "{scenario:<14} {} msgs x {} B, {} partition(s), acks={}, codec={}: {:.0} msgs/s, {:.1} MB/s",
        o.messages,
        options.size,
        options.partitions,
        options.acks,
        options.codec,
        o.messages as f64 / o.seconds,
        o.bytes as f64 / o.seconds / 1e6
    );
    if let Some([p50, p99, p999]) = o.latency_ms {
        line += &format!(
            ", at {} msgs/s latency p50 {p50:.2} ms, p99 {p99:.2} ms, p99.9 {p999:.2} ms",
            options.rate
        );
    }
    if let Some(cpu) = o.broker_cpu_seconds {
        line += &format!(", broker cpu {cpu:.2} s");
    }
    if let Some(rss) = o.broker_peak_rss_mib {
        line += &format!(", broker peak rss {rss:.1} MiB");
    }
    if o.failed > 0 {
        line += &format!(", {} FAILED", o.failed);
    }
    line
}

fn main() {
    let options = Options::parse();
    if !options.against.is_empty() {
        against::run(&options);
        return;
    }
    if let (Some(topic), Some(bootstrap)) = (&options.create_topic, &options.bootstrap) {
        create_topic(bootstrap, topic, options.partitions, &[]);
        return;
    }
    // Scenarios over secured listeners (`produce@ssl`, `connect@sasl_ssl`, ...) need a broker
    // the benchmark starts with those listeners and their certificates.
    let secured =
        (options.bootstrap.is_none() && options.scenarios.contains('@')).then(Secured::new);
    let mut owned = options.bootstrap.is_none().then(|| {
        let binary = options
            .broker_bin
            .clone()
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sluice")));
        let mut overrides = secured.as_ref().map(Secured::overrides).unwrap_or_default();
        overrides.extend(options.overrides.iter().cloned());
        OwnedBroker::start(binary, &overrides)
    });
    if let (Some(secured), Some(broker)) = (&secured, &owned) {
        let mut registry = CLIENT_SECURITY.lock().unwrap_or_else(|e| e.into_inner());
        for (name, address) in &broker.endpoints {
            if name != "PLAINTEXT" {
                registry.push((address.clone(), secured.client_settings(name)));
            }
        }
        drop(registry);
        if options.scenarios.contains("connect-scram") {
            secured.create_scram_user(&broker.bootstrap);
        }
    }
    let mut bootstrap = options
        .bootstrap
        .clone()
        .or_else(|| owned.as_ref().map(|b| b.bootstrap.clone()))
        .unwrap_or_default();
    let mut probe = owned
        .as_ref()
        .map(|b| b.child.id())
        .or(options.broker_pid)
        .map(ProcessProbe::new);
    let mut json_out = options
        .json
        .as_ref()
        .map(|p| std::fs::File::create(p).expect("json file"));
    let mut emit = |line: String| {
        println!("{line}");
        if let Some(f) = json_out.as_mut() {
            let _ = writeln!(f, "{line}");
        }
    };
    if let (Some(broker), Some(probe)) = (&owned, &probe) {
        let idle = probe.rss_mib();
        println!(
            "broker: started in {:.1} ms, idle rss {idle:.1} MiB",
            broker.startup.as_secs_f64() * 1e3
        );
        emit(
            serde_json::json!({"scenario": "startup", "ms": broker.startup.as_secs_f64() * 1e3, "idle_rss_mib": idle})
                .to_string(),
        );
    }
    let run_id = unix_nanos() % 1_000_000_007;
    let mut throughput_topic = String::new();
    let mut produced = false;
    for (index, scenario) in options.scenarios.split(',').map(str::trim).enumerate() {
        if scenario == "restart" {
            let Some(broker) = owned.as_mut() else {
                eprintln!("restart needs a broker the benchmark started (no --bootstrap)");
                continue;
            };
            let topic = format!("bench-restart-{run_id}");
            create_topic(&bootstrap, &topic, options.restart_partitions, &[]);
            let value = vec![b'x'; 512 * 1024];
            let count = (options.restart_gb * 1e9 / value.len() as f64).ceil() as u64;
            let filler = producer(&options, &bootstrap, None);
            send_all(&filler, &topic, options.restart_partitions, count, &value);
            drop(filler);
            let on_disk = disk_usage(broker.dir.path());
            // The first restart follows 10 GB of writes the kernel may still be writing back;
            // the second shows a restart on a settled machine. Both are reported.
            let mut times = Vec::new();
            for _ in 0..2 {
                broker.restart();
                times.push((broker.startup.as_secs_f64() * 1e3, broker.clean_start));
            }
            bootstrap = broker.bootstrap.clone();
            probe = Some(ProcessProbe::new(broker.child.id()));
            println!(
                "restart        {} partitions, {:.2} GB on disk: clean restart to listening in {:.1} ms right after the writes, {:.1} ms the second time (clean shutdown marker found: {}, {})",
                options.restart_partitions,
                on_disk as f64 / 1e9,
                times[0].0,
                times[1].0,
                times[0].1,
                times[1].1
            );
            emit(
                serde_json::json!({"scenario": "restart", "partitions": options.restart_partitions,
                    "bytes_on_disk": on_disk, "ms_after_writes": times[0].0, "ms": times[1].0,
                    "clean": times[0].1 && times[1].1})
                .to_string(),
            );
            continue;
        }
        // `produce@ssl`: the scenario, over the listener of that security protocol.
        let (base, protocol) = match scenario.split_once('@') {
            Some((base, protocol)) => (base, protocol.to_uppercase()),
            None => (scenario, "PLAINTEXT".to_string()),
        };
        let target = owned
            .as_ref()
            .and_then(|b| b.endpoints.iter().find(|(name, _)| *name == protocol))
            .map(|(_, address)| address.clone());
        let target = match (target, protocol.as_str()) {
            (Some(address), _) => address,
            (None, "PLAINTEXT") => bootstrap.clone(),
            (None, other) => {
                eprintln!(
                    "{scenario}: no {other} listener (secured scenarios need a broker the benchmark starts)"
                );
                continue;
            }
        };
        let bootstrap = &target;
        let cpu_before = probe.as_ref().map(|p| {
            p.reset_peak();
            p.cpu_seconds()
        });
        if base == "connect" || base == "connect-scram" {
            let scram = base == "connect-scram";
            let mut outcome = connect(&options, bootstrap, &protocol, scram, secured.as_ref());
            if let (Some(p), Some(before)) = (&probe, cpu_before) {
                outcome.broker_cpu_seconds = Some(p.cpu_seconds() - before);
            }
            let rate = outcome.messages as f64 / outcome.seconds;
            println!(
                "{scenario:<24} {} connections (TLS/SASL handshake + ApiVersions): {rate:.0} connections/s{}",
                outcome.messages,
                outcome
                    .broker_cpu_seconds
                    .map(|c| format!(", broker cpu {c:.2} s"))
                    .unwrap_or_default()
            );
            emit(
                serde_json::json!({"scenario": scenario, "connections": outcome.messages,
                    "seconds": outcome.seconds, "connections_per_sec": rate,
                    "broker_cpu_seconds": outcome.broker_cpu_seconds})
                .to_string(),
            );
            continue;
        }
        if base == "group-classic" || base == "group-consumer" {
            let topic = match &options.group_topic {
                Some(topic) => topic.clone(),
                None => {
                    let topic = format!("bench-group-{run_id}-{index}");
                    create_topic(bootstrap, &topic, options.partitions, &[]);
                    topic
                }
            };
            let protocol = base.trim_start_matches("group-");
            let outcome = groups::group(&options, bootstrap, &topic, protocol, probe.as_ref());
            println!(
                "{scenario:<14} {} members, {} partitions: stable {} after the last joined ({:.2} s in all){}",
                outcome.members,
                outcome.partitions,
                outcome
                    .seconds_to_stable
                    .map(|s| format!("{:.0} ms", s * 1e3))
                    .unwrap_or_else(|| "never (300 s)".to_string()),
                outcome.seconds_total,
                outcome
                    .broker_cpu_seconds
                    .map(|c| format!(", broker cpu {c:.2} s"))
                    .unwrap_or_default()
            );
            emit(
                serde_json::json!({"scenario": scenario, "members": outcome.members,
                    "partitions": outcome.partitions,
                    "ms_to_stable": outcome.seconds_to_stable.map(|s| s * 1e3),
                    "seconds_total": outcome.seconds_total,
                    "broker_cpu_seconds": outcome.broker_cpu_seconds})
                .to_string(),
            );
            continue;
        }
        let mut outcome = match base {
            "fan-out" => {
                if !produced {
                    eprintln!("fan-out reads what `produce` wrote: list produce first");
                    continue;
                }
                groups::fan_out(&options, bootstrap, &throughput_topic)
            }
            "produce" => {
                // A fresh topic per run of the scenario; `consume` reads the latest.
                match &options.produce_topic {
                    Some(topic) => throughput_topic = topic.clone(),
                    None => {
                        throughput_topic = format!("bench-{run_id}-{index}");
                        create_topic(bootstrap, &throughput_topic, options.partitions, &[]);
                    }
                }
                produced = true;
                produce(&options, bootstrap, &throughput_topic)
            }
            "consume" => {
                if !produced {
                    eprintln!("consume reads what `produce` wrote: list produce first");
                    continue;
                }
                consume(&options, bootstrap, &throughput_topic)
            }
            "latency" => {
                let topic = format!("bench-latency-{run_id}-{index}");
                create_topic(bootstrap, &topic, options.partitions, &[]);
                latency(&options, bootstrap, &topic)
            }
            "produce-idempotent" => {
                let topic = format!("bench-idempotent-{run_id}-{index}");
                create_topic(bootstrap, &topic, options.partitions, &[]);
                produce_with(
                    &options,
                    bootstrap,
                    &topic,
                    &[("enable.idempotence", "true")],
                )
            }
            "produce-transactional" => {
                let topic = format!("bench-transactional-{run_id}-{index}");
                create_topic(bootstrap, &topic, options.partitions, &[]);
                let id = format!("bench-{run_id}-{index}");
                produce_transactional(&options, bootstrap, &topic, &id)
            }
            "produce-fsync" => {
                let topic = format!("bench-fsync-{run_id}-{index}");
                create_topic(
                    bootstrap,
                    &topic,
                    options.partitions,
                    &[("flush.messages", "1")],
                );
                produce(&options, bootstrap, &topic)
            }
            other => {
                eprintln!("unknown scenario {other}");
                continue;
            }
        };
        if let (Some(p), Some(before)) = (&probe, cpu_before) {
            outcome.broker_cpu_seconds = Some(p.cpu_seconds() - before);
            outcome.broker_peak_rss_mib = Some(p.peak_rss_mib());
        }
        println!("{}", summary_line(scenario, &options, &outcome));
        emit(json_line(scenario, &options, &outcome));
    }
}
