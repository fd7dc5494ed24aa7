//! The partition-tolerance harness, in the spirit of Jepsen's Kafka workload: a cluster of
//! combined nodes behind the fault proxy (`tests/common/proxy.rs`; no network namespaces on the
//! build machines), clients running an idempotent `acks=all` producer, a transactional producer
//! that commits or aborts, and a read_committed consumer group, while a seeded schedule injects
//! one fault at a time: a majority/minority partition, a bridge (one node on both sides), a
//! partition's leader or the active controller cut off from the other nodes (clients still
//! reach it), kill -9 and restart, a SIGSTOP pause, a node restarted on a slow disk (each
//! segment write waits 50 ms), and a node's wall clock jumping 1-15 minutes forward or back
//! (libfaketime; the monotonic clock, which timeouts use, stays true). After the last fault
//! heals, the logs are read back and the checker (`partition_tolerance/checker.rs`) compares
//! them with everything the clients were told.
//!
//! Short in CI; a long run by hand:
//! `NEMESIS_SECONDS=1800 NEMESIS_SEED=7 cargo test --test partition_tolerance -- --nocapture`.
//! `NEMESIS_NODES` (3 to 5), `NEMESIS_FAULTS` (a comma list of the kinds below) narrow it; the
//! seed is printed, and the same seed gives the same schedule. `NEMESIS_ACKS=1` runs the plain
//! producer with `acks=1` and no idempotence, to see the checker find what a cut-off leader
//! took alone (lost records) — the run is then expected to fail. `NEMESIS_AGAINST=kafka` runs
//! the same workloads and checker against three Apache Kafka 4.4 nodes (`compat/kafka-peer`,
//! behind the same fault proxy) as a reference, with every fault but the two that need
//! Sluice's processes (the slow disk, the clock jumps).

#![allow(clippy::unwrap_used)]

#[path = "partition_tolerance/checker.rs"]
mod checker;
mod common;
#[path = "partition_tolerance/kafka.rs"]
mod kafka;

use checker::{History, Polled, SendOutcome, Txn, TxnOutcome};
use common::Cluster;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext, Rebalance};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::{ClientContext, Message, Offset, TopicPartitionList};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const LOG_TOPIC: &str = "nemesis-log";
const TXN_TOPIC: &str = "nemesis-txn";
const PARTITIONS: i32 = 3;
const TRANSACTIONAL_ID: &str = "nemesis-txn-producer";
/// A slow disk: every write to a segment waits this long first.
const SLOW_DISK: &str = "segment-write=sleep(50)";

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    MajorityMinority,
    Bridge,
    IsolateLeader,
    IsolateController,
    Kill,
    Pause,
    SlowDisk,
    ClockJump,
}

impl Fault {
    const ALL: [Fault; 8] = [
        Fault::MajorityMinority,
        Fault::Bridge,
        Fault::IsolateLeader,
        Fault::IsolateController,
        Fault::Kill,
        Fault::Pause,
        Fault::SlowDisk,
        Fault::ClockJump,
    ];

    fn name(self) -> &'static str {
        match self {
            Fault::MajorityMinority => "majority-minority",
            Fault::Bridge => "bridge",
            Fault::IsolateLeader => "isolate-leader",
            Fault::IsolateController => "isolate-controller",
            Fault::Kill => "kill",
            Fault::Pause => "pause",
            Fault::SlowDisk => "slow-disk",
            Fault::ClockJump => "clock-jump",
        }
    }
}

struct Settings {
    seconds: u64,
    seed: u64,
    nodes: usize,
    faults: Vec<Fault>,
    /// `acks` of the plain producer: `all` (idempotent) unless NEMESIS_ACKS says otherwise.
    acks: String,
    /// Apache Kafka instead of Sluice (`NEMESIS_AGAINST=kafka`).
    against_kafka: bool,
}

/// The faults a run against Kafka can inject (see `partition_tolerance/kafka.rs`).
const KAFKA_FAULTS: [Fault; 6] = [
    Fault::MajorityMinority,
    Fault::Bridge,
    Fault::IsolateLeader,
    Fault::IsolateController,
    Fault::Kill,
    Fault::Pause,
];

impl Settings {
    fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let seed = var("NEMESIS_SEED")
            .map(|s| s.parse().expect("NEMESIS_SEED"))
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_secs())
                    .unwrap_or(1)
            });
        let against_kafka = match var("NEMESIS_AGAINST").as_deref() {
            None | Some("sluice") => false,
            Some("kafka") => true,
            Some(other) => panic!("NEMESIS_AGAINST is sluice or kafka, not {other}"),
        };
        let every = if against_kafka {
            KAFKA_FAULTS.to_vec()
        } else {
            Fault::ALL.to_vec()
        };
        let faults = var("NEMESIS_FAULTS").map_or(every, |list| {
            list.split(',')
                .map(|name| {
                    *Fault::ALL
                        .iter()
                        .find(|f| f.name() == name.trim())
                        .unwrap_or_else(|| panic!("unknown fault {name}"))
                })
                .collect()
        });
        Settings {
            seconds: var("NEMESIS_SECONDS").map_or(40, |s| s.parse().expect("NEMESIS_SECONDS")),
            seed,
            nodes: var("NEMESIS_NODES")
                .map_or(3, |s| s.parse().expect("NEMESIS_NODES"))
                .clamp(3, 5),
            faults,
            acks: var("NEMESIS_ACKS").unwrap_or_else(|| "all".into()),
            against_kafka,
        }
    }
}

/// Counts a consumer's assignments: positions may go back only across one.
struct Generations(Arc<AtomicU64>);

impl ClientContext for Generations {}
impl ConsumerContext for Generations {
    fn post_rebalance(&self, _: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if matches!(rebalance, Rebalance::Assign(_)) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// The idempotent producer: values `w1`, `w2`, ... round-robin over the partitions, ten in
/// flight at a time.
fn idempotent_producer(
    bootstrap: String,
    stop: Arc<AtomicBool>,
    acks: String,
) -> JoinHandle<Vec<(String, SendOutcome)>> {
    std::thread::spawn(move || {
        let runtime = runtime();
        let producer: FutureProducer = ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .set("enable.idempotence", (acks == "all").to_string())
            .set("acks", &acks)
            .set("message.timeout.ms", "20000")
            .set("request.timeout.ms", "5000")
            .set("linger.ms", "2")
            .create()
            .unwrap();
        let mut sends = Vec::new();
        let mut sequence = 0u64;
        while !stop.load(Ordering::SeqCst) {
            let mut pending = Vec::new();
            for _ in 0..10 {
                sequence += 1;
                let value = format!("w{sequence}");
                let partition = (sequence % PARTITIONS as u64) as i32;
                let record = FutureRecord::to(LOG_TOPIC)
                    .partition(partition)
                    .key(&value)
                    .payload(&value);
                pending.push((value.clone(), producer.send_result(record).ok()));
            }
            for (value, delivery) in pending {
                let outcome = match delivery.map(|d| runtime.block_on(d)) {
                    Some(Ok(Ok(delivered))) => SendOutcome::Acked((
                        LOG_TOPIC.to_string(),
                        delivered.partition,
                        delivered.offset,
                    )),
                    _ => SendOutcome::Unknown,
                };
                sends.push((value, outcome));
            }
        }
        sends
    })
}

fn transactional(bootstrap: &str) -> FutureProducer {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("transactional.id", TRANSACTIONAL_ID)
        .set("transaction.timeout.ms", "15000")
        .set("message.timeout.ms", "15000")
        .set("request.timeout.ms", "5000")
        .create()
        .unwrap();
    producer
}

/// Starts a transactional producer, retrying while the cluster cannot (a fault under way).
fn ready_transactional(bootstrap: &str, stop: &AtomicBool) -> Option<FutureProducer> {
    while !stop.load(Ordering::SeqCst) {
        let producer = transactional(bootstrap);
        if producer.init_transactions(Duration::from_secs(10)).is_ok() {
            return Some(producer);
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    None
}

/// The transactional producer: transactions of one value per partition, one in five aborted
/// on purpose. A commit or abort that fails leaves the outcome unknown, and a new producer
/// with the same transactional id fences the old one.
fn transactional_producer(
    bootstrap: String,
    stop: Arc<AtomicBool>,
    seed: u64,
) -> JoinHandle<Vec<Txn>> {
    std::thread::spawn(move || {
        let runtime = runtime();
        let mut rng = fastrand::Rng::with_seed(seed ^ 0x7478);
        let mut txns = Vec::new();
        let mut producer = ready_transactional(&bootstrap, &stop);
        let mut number = 0u64;
        while let Some(current) = producer.as_ref() {
            if stop.load(Ordering::SeqCst) {
                break;
            }
            number += 1;
            let values: Vec<String> = (0..PARTITIONS).map(|p| format!("t{number}-{p}")).collect();
            let timeout = Duration::from_secs(10);
            let outcome = (|| {
                if current.begin_transaction().is_err() {
                    return None;
                }
                let mut deliveries = Vec::new();
                for (partition, value) in values.iter().enumerate() {
                    let record = FutureRecord::to(TXN_TOPIC)
                        .partition(partition as i32)
                        .key(value)
                        .payload(value);
                    deliveries.push(current.send_result(record).ok());
                }
                let sent = deliveries
                    .into_iter()
                    .all(|d| matches!(d.map(|d| runtime.block_on(d)), Some(Ok(Ok(_)))));
                if sent && rng.u8(..5) != 0 {
                    for _ in 0..3 {
                        match current.commit_transaction(timeout) {
                            Ok(()) => return Some(TxnOutcome::Committed),
                            Err(rdkafka::error::KafkaError::Transaction(e)) if e.is_retriable() => {
                            }
                            Err(_) => break,
                        }
                    }
                }
                current
                    .abort_transaction(timeout)
                    .ok()
                    .map(|()| TxnOutcome::Aborted)
            })();
            txns.push(Txn {
                values,
                outcome: outcome.unwrap_or(TxnOutcome::Unknown),
            });
            if outcome.is_none() {
                producer = ready_transactional(&bootstrap, &stop);
            }
        }
        txns
    })
}

/// A read_committed group member over both topics, recording every record it polls.
fn group_consumer(
    bootstrap: String,
    stop: Arc<AtomicBool>,
    consumer_number: usize,
) -> JoinHandle<Vec<Polled>> {
    std::thread::spawn(move || {
        let generation = Arc::new(AtomicU64::new(0));
        let consumer: BaseConsumer<Generations> = ClientConfig::new()
            .set("bootstrap.servers", &bootstrap)
            .set("group.id", "nemesis-group")
            .set("isolation.level", "read_committed")
            .set("auto.offset.reset", "earliest")
            .set("enable.auto.commit", "true")
            .set("auto.commit.interval.ms", "500")
            .set("session.timeout.ms", "10000")
            .create_with_context(Generations(generation.clone()))
            .unwrap();
        consumer.subscribe(&[LOG_TOPIC, TXN_TOPIC]).unwrap();
        let mut polled = Vec::new();
        while !stop.load(Ordering::SeqCst) {
            if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
                polled.push(Polled {
                    consumer: consumer_number,
                    generation: generation.load(Ordering::SeqCst),
                    place: (
                        message.topic().to_string(),
                        message.partition(),
                        message.offset(),
                    ),
                    value: String::from_utf8_lossy(message.payload().unwrap_or_default())
                        .into_owned(),
                });
            }
        }
        polled
    })
}

/// Every record of `topic` up to its end, by partition, in offset order.
fn read_back(
    bootstrap: &str,
    topic: &str,
    isolation: &str,
) -> BTreeMap<(String, i32), Vec<(i64, String)>> {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("nemesis-check-{topic}"))
        .set("isolation.level", isolation)
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut assignment = TopicPartitionList::new();
    let mut ends = BTreeMap::new();
    for partition in 0..PARTITIONS {
        assignment
            .add_partition_offset(topic, partition, Offset::Beginning)
            .unwrap();
        let (_, high) = consumer
            .fetch_watermarks(topic, partition, Duration::from_secs(30))
            .unwrap();
        ends.insert(partition, high);
    }
    consumer.assign(&assignment).unwrap();
    let mut records: BTreeMap<(String, i32), Vec<(i64, String)>> = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) {
            records
                .entry((topic.to_string(), message.partition()))
                .or_default()
                .push((
                    message.offset(),
                    String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned(),
                ));
        }
        let position = consumer.position().unwrap();
        let done = ends.iter().all(|(partition, end)| {
            *end == 0
                || position
                    .find_partition(topic, *partition)
                    .and_then(|p| p.offset().to_raw())
                    .is_some_and(|at| at >= *end)
        });
        if done {
            return records;
        }
        assert!(
            Instant::now() < deadline,
            "{topic} not read to its end {ends:?}: at {position:?}"
        );
    }
}

/// One fault in force, and how it is undone.
enum Active {
    Network,
    Killed(usize),
    /// Restarted on a slow disk: killed and restarted on a normal one at the end.
    SlowDisk(usize),
    /// A wall clock moved: set back to the true time at the end.
    ClockMoved(usize),
    Paused(usize),
    Nothing,
}

fn leader_of(client: &BaseConsumer, partition: i32) -> Option<i32> {
    let metadata = client
        .fetch_metadata(Some(LOG_TOPIC), Duration::from_secs(5))
        .ok()?;
    let topic = metadata.topics().iter().find(|t| t.name() == LOG_TOPIC)?;
    let leader = topic
        .partitions()
        .iter()
        .find(|p| p.id() == partition)?
        .leader();
    (leader > 0).then_some(leader)
}

/// The cluster under test.
enum Target {
    Sluice(Box<Cluster>),
    Kafka(kafka::KafkaPeer),
}

impl Target {
    fn bootstrap(&self) -> String {
        match self {
            Target::Sluice(cluster) => cluster.bootstrap(),
            Target::Kafka(peer) => peer.bootstrap.clone(),
        }
    }

    fn size(&self) -> usize {
        match self {
            Target::Sluice(cluster) => cluster.nodes.len(),
            Target::Kafka(_) => 3,
        }
    }

    fn network(&self) -> &common::proxy::Network {
        match self {
            Target::Sluice(cluster) => cluster.network(),
            Target::Kafka(peer) => peer.network(),
        }
    }

    fn active_controller(&mut self) -> Option<usize> {
        match self {
            Target::Sluice(cluster) => cluster.active_controller(),
            Target::Kafka(peer) => peer.active_controller(),
        }
    }

    fn kill9(&mut self, i: usize) {
        match self {
            Target::Sluice(cluster) => cluster.nodes[i].kill9(),
            Target::Kafka(peer) => peer.kill9(i),
        }
    }

    fn restart(&mut self, i: usize) {
        match self {
            Target::Sluice(cluster) => cluster.restart(i),
            Target::Kafka(peer) => peer.restart(i),
        }
    }

    fn pause(&self, i: usize) {
        match self {
            Target::Sluice(cluster) => cluster.nodes[i].pause(),
            Target::Kafka(peer) => peer.pause(i),
        }
    }

    fn resume(&self, i: usize) {
        match self {
            Target::Sluice(cluster) => cluster.nodes[i].resume(),
            Target::Kafka(peer) => peer.resume(i),
        }
    }

    /// Sluice's own cluster, for the faults only it can take.
    fn sluice(&mut self, fault: Fault) -> &mut Cluster {
        match self {
            Target::Sluice(cluster) => cluster,
            Target::Kafka(_) => panic!("{} is not run against Kafka", fault.name()),
        }
    }
}

fn inject(
    target: &mut Target,
    client: &BaseConsumer,
    rng: &mut fastrand::Rng,
    fault: Fault,
) -> (Active, String) {
    let size = target.size();
    // Drawn the same way against either, so that one seed gives one schedule.
    let mut ids: Vec<u32> = (1..=size as u32).collect();
    rng.shuffle(&mut ids);
    let first = ids[0] as usize - 1;
    match fault {
        Fault::MajorityMinority => {
            let (minority, majority) = ids.split_at(size / 2);
            target
                .network()
                .partition(&ids, &[minority.to_vec(), majority.to_vec()]);
            (Active::Network, format!("{minority:?} | {majority:?}"))
        }
        Fault::Bridge => {
            let bridge = ids[0];
            let (left, right) = ids[1..].split_at((size - 1) / 2);
            let mut left = left.to_vec();
            let mut right = right.to_vec();
            left.push(bridge);
            right.push(bridge);
            target
                .network()
                .partition(&ids, &[left.clone(), right.clone()]);
            (
                Active::Network,
                format!("{left:?} | {right:?} (bridge {bridge})"),
            )
        }
        Fault::IsolateLeader => {
            let partition = rng.i32(0..PARTITIONS);
            match leader_of(client, partition) {
                Some(leader) => {
                    isolate_from_nodes(target.network(), &ids, leader as u32);
                    (
                        Active::Network,
                        format!("node {leader}, leader of {LOG_TOPIC}-{partition}"),
                    )
                }
                None => (Active::Nothing, "no leader known: skipped".into()),
            }
        }
        Fault::IsolateController => match target.active_controller() {
            Some(i) => {
                isolate_from_nodes(target.network(), &ids, i as u32 + 1);
                (Active::Network, format!("node {}", i + 1))
            }
            None => (
                Active::Nothing,
                "no active controller known: skipped".into(),
            ),
        },
        Fault::Kill => {
            target.kill9(first);
            (Active::Killed(first), format!("node {}", first + 1))
        }
        Fault::Pause => {
            target.pause(first);
            (Active::Paused(first), format!("node {}", first + 1))
        }
        Fault::ClockJump => {
            let offset = ["+120", "-60", "+900", "-600"][rng.usize(..4)];
            target.sluice(fault).shift_clock(first, offset);
            (
                Active::ClockMoved(first),
                format!("node {} {offset} s", first + 1),
            )
        }
        Fault::SlowDisk => {
            let cluster = target.sluice(fault);
            cluster.nodes[first].kill9();
            cluster.restart_with_failpoints(first, SLOW_DISK);
            (
                Active::SlowDisk(first),
                format!("node {} ({SLOW_DISK})", first + 1),
            )
        }
    }
}

/// Cuts `node` off the other nodes; clients still reach it (and it them), as in Jepsen's
/// partitions, so a leader cut off from its followers can still be written to.
fn isolate_from_nodes(network: &common::proxy::Network, ids: &[u32], node: u32) {
    let others: Vec<u32> = ids.iter().copied().filter(|id| *id != node).collect();
    network.partition(ids, &[vec![node], others]);
}

fn undo(target: &mut Target, active: Active) {
    match active {
        Active::Network => target.network().heal(),
        Active::Killed(i) => target.restart(i),
        Active::Paused(i) => target.resume(i),
        Active::ClockMoved(i) => target.sluice(Fault::ClockJump).shift_clock(i, "+0"),
        Active::SlowDisk(i) => {
            let cluster = target.sluice(Fault::SlowDisk);
            cluster.nodes[i].kill9();
            cluster.restart(i);
        }
        Active::Nothing => {}
    }
}

#[test]
fn no_acknowledged_record_is_lost_under_partitions_kills_and_pauses() {
    let settings = Settings::from_env();
    eprintln!(
        "nemesis: seed {} ({} s, {} nodes, faults {:?})",
        settings.seed,
        settings.seconds,
        settings.nodes,
        settings.faults.iter().map(|f| f.name()).collect::<Vec<_>>()
    );
    let cluster_settings = [
        ("default.replication.factor", "3"),
        ("min.insync.replicas", "2"),
        ("offsets.topic.replication.factor", "3"),
        ("transaction.state.log.replication.factor", "3"),
        ("transaction.state.log.min.isr", "2"),
        ("group.initial.rebalance.delay.ms", "0"),
        ("replica.lag.time.max.ms", "5000"),
    ];
    let mut target = if settings.against_kafka {
        assert_eq!(
            settings.nodes, 3,
            "against Kafka the harness runs three nodes"
        );
        if let Some(fault) = settings.faults.iter().find(|f| !KAFKA_FAULTS.contains(f)) {
            panic!(
                "{} is not run against Kafka: not the slow disk nor clock jumps",
                fault.name()
            );
        }
        Target::Kafka(kafka::KafkaPeer::start(&cluster_settings))
    } else if settings.faults.contains(&Fault::ClockJump) {
        // Clocks are moved through libfaketime, loaded only when the schedule jumps them.
        Target::Sluice(Box::new(Cluster::start_partitionable_with_fake_clocks(
            settings.nodes,
            &cluster_settings,
        )))
    } else {
        Target::Sluice(Box::new(Cluster::start_partitionable(
            settings.nodes,
            &cluster_settings,
        )))
    };
    let bootstrap = target.bootstrap();
    let runtime = runtime();
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .unwrap();
    let topics = [LOG_TOPIC, TXN_TOPIC]
        .map(|name| NewTopic::new(name, PARTITIONS, TopicReplication::Fixed(3)));
    let created = runtime
        .block_on(admin.create_topics(&topics, &AdminOptions::new()))
        .unwrap();
    assert!(created.iter().all(Result::is_ok), "{created:?}");
    drop(admin);

    let stop = Arc::new(AtomicBool::new(false));
    let producing = idempotent_producer(bootstrap.clone(), stop.clone(), settings.acks.clone());
    let transacting = transactional_producer(bootstrap.clone(), stop.clone(), settings.seed);
    let consuming: Vec<_> = (0..2)
        .map(|n| group_consumer(bootstrap.clone(), stop.clone(), n))
        .collect();

    // The schedule: healthy 2-4 s, then one fault for 3-12 s (some outlast the broker session
    // timeout, so a cut-off broker is fenced and its leaderships move), until the time is up.
    let client: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .create()
        .unwrap();
    let mut rng = fastrand::Rng::with_seed(settings.seed);
    let started = Instant::now();
    let mut injected: Vec<(Fault, String)> = Vec::new();
    while started.elapsed() < Duration::from_secs(settings.seconds) {
        std::thread::sleep(Duration::from_millis(rng.u64(2_000..4_000)));
        let fault = settings.faults[rng.usize(..settings.faults.len())];
        let (active, what) = inject(&mut target, &client, &mut rng, fault);
        eprintln!(
            "nemesis: {:>6.1} s {} {what}",
            started.elapsed().as_secs_f64(),
            fault.name()
        );
        std::thread::sleep(Duration::from_millis(rng.u64(3_000..12_000)));
        undo(&mut target, active);
        injected.push((fault, what));
    }
    // Healthy for a while, so that what was in flight settles, then the clients stop.
    std::thread::sleep(Duration::from_secs(5));
    stop.store(true, Ordering::SeqCst);
    let mut history = History {
        sends: producing.join().unwrap(),
        txns: transacting.join().unwrap(),
        ..History::default()
    };
    for consumer in consuming {
        history.polled.extend(consumer.join().unwrap());
    }
    // A transaction left open by a failed producer is ended by its successor's fencing.
    let fencing = transactional(&bootstrap);
    fencing.init_transactions(Duration::from_secs(60)).unwrap();
    drop(fencing);
    history.final_log = read_back(&bootstrap, LOG_TOPIC, "read_uncommitted");
    history.final_committed = read_back(&bootstrap, TXN_TOPIC, "read_committed");

    let anomalies = checker::check(&history);
    let mut by_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for (fault, _) in &injected {
        *by_kind.entry(fault.name()).or_default() += 1;
    }
    let acked = history
        .sends
        .iter()
        .filter(|(_, o)| matches!(o, SendOutcome::Acked(_)))
        .count();
    let count = |outcome| history.txns.iter().filter(|t| t.outcome == outcome).count();
    eprintln!(
        "nemesis report ({}): seed {}, {:.0} s, history {} operations: {} sends ({acked} acknowledged), \
         {} transactions ({} committed, {} aborted, {} unknown), {} records polled; \
         faults {by_kind:?}; anomalies {}: {}",
        if settings.against_kafka {
            "Apache Kafka"
        } else {
            "Sluice"
        },
        settings.seed,
        started.elapsed().as_secs_f64(),
        history.len(),
        history.sends.len(),
        history.txns.len(),
        count(TxnOutcome::Committed),
        count(TxnOutcome::Aborted),
        count(TxnOutcome::Unknown),
        history.polled.len(),
        anomalies.total(),
        anomalies.summary(),
    );
    assert!(acked > 0, "nothing was acknowledged");
    assert!(count(TxnOutcome::Committed) > 0, "no transaction committed");
    assert_eq!(anomalies.total(), 0, "{}", anomalies.summary());
    drop(client);
    if let Target::Sluice(cluster) = &target {
        cluster.assert_one_active_controller_per_term();
    }
}
