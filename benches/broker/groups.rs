//! Group scenarios, for `bench/scale.sh` (and by hand):
//! - `group-classic` / `group-consumer`: `--members` consumers (librdkafka, the classic
//!   protocol or KIP-848's `group.protocol=consumer`) subscribe one group to a topic of
//!   `--partitions` partitions (`--group-topic`, or a fresh one); every client is made
//!   first, then all subscribe; timed from the last member's subscribe until the group is
//!   stable: every member holds its share of the
//!   partitions (⌊P/N⌋ or ⌈P/N⌉), no partition twice, none left out. The broker's CPU
//!   seconds are counted from the first member's creation to that moment.
//! - `fan-out`: `--members` consumers, each in a group of its own, read everything `produce`
//!   wrote (assigned every partition from the beginning, offsets committed to their groups
//!   as librdkafka does by default); aggregate MB/s from the start until the last one is done.
//!
//! The consumers are polled by a few threads (each owning a share of them), as one process
//! hosting many consumers would.

use super::*;
use std::collections::HashSet;

/// Threads polling the consumers: enough to keep a thousand of them served, few enough not
/// to take the broker's cores.
const POLL_THREADS: usize = 4;

/// What a group scenario measured.
pub(super) struct GroupOutcome {
    pub(super) members: usize,
    pub(super) partitions: i32,
    /// From the last member's subscribe to a stable group; None if it never got there.
    pub(super) seconds_to_stable: Option<f64>,
    /// From the first member's creation to a stable group.
    pub(super) seconds_total: f64,
    pub(super) broker_cpu_seconds: Option<f64>,
}

/// The consumers one polling thread serves; the scenario adds to it as it makes members.
type Share = Arc<std::sync::Mutex<Vec<Arc<BaseConsumer>>>>;

/// Polls its share of the consumers until told to stop, then drops them (closes them), many
/// at a time.
fn poll_until(share: Share, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        for consumer in share.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            // Group scenarios' topics are empty: a poll only serves rebalance callbacks.
            let _ = consumer.poll(Duration::ZERO);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let closing = std::mem::take(&mut *share.lock().unwrap_or_else(|e| e.into_inner()));
    // A librdkafka close takes about 0.1 s even out of the group: closed 25 at a time.
    std::thread::scope(|scope| {
        for chunk in closing.chunks(25) {
            scope.spawn(move || drop(chunk.to_vec()));
        }
    });
}

/// Whether every member holds its share and every partition has exactly one owner.
fn is_stable(consumers: &[Arc<BaseConsumer>], topic: &str, partitions: i32) -> bool {
    let members = consumers.len() as i32;
    let (floor, ceil) = (partitions / members, (partitions + members - 1) / members);
    let mut owned = HashSet::new();
    for consumer in consumers {
        let Ok(assignment) = consumer.assignment() else {
            return false;
        };
        let mine: Vec<i32> = assignment
            .elements_for_topic(topic)
            .iter()
            .map(|e| e.partition())
            .collect();
        let count = mine.len() as i32;
        if count < floor || count > ceil {
            return false;
        }
        for p in mine {
            if !owned.insert(p) {
                return false;
            }
        }
    }
    owned.len() as i32 == partitions
}

/// One group of `--members` members of the given protocol ("classic" or "consumer").
pub(super) fn group(
    options: &Options,
    bootstrap: &str,
    topic: &str,
    protocol: &str,
    probe: Option<&ProcessProbe>,
) -> GroupOutcome {
    let group_id = format!("bench-group-{}-{protocol}", unix_nanos());
    let cpu_before = probe.map(ProcessProbe::cpu_seconds);
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let shares: Vec<Share> = (0..POLL_THREADS).map(|_| Share::default()).collect();
    let pollers: Vec<_> = shares
        .iter()
        .map(|share| {
            let (share, stop) = (share.clone(), stop.clone());
            std::thread::spawn(move || poll_until(share, stop))
        })
        .collect();
    let mut consumers = Vec::with_capacity(options.members);
    for i in 0..options.members {
        let consumer: BaseConsumer = client_config(bootstrap)
            .set("group.id", &group_id)
            .set("group.protocol", protocol)
            .set("enable.auto.commit", "false")
            .create()
            .expect("consumer");
        let consumer = Arc::new(consumer);
        consumers.push(consumer.clone());
        shares[i % POLL_THREADS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(consumer);
    }
    // Every client is made before any subscribes: making a librdkafka client (its threads and
    // connections) is the client's cost, and made between joins it would spread the joins
    // over however long the client machine takes, which is what the time would then measure.
    for consumer in &consumers {
        consumer.subscribe(&[topic]).expect("subscribe");
    }
    let last_joined = Instant::now();
    let deadline = last_joined + Duration::from_secs(300);
    let mut seconds_to_stable = None;
    while Instant::now() < deadline {
        if is_stable(&consumers, topic, options.partitions) {
            seconds_to_stable = Some(last_joined.elapsed().as_secs_f64());
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let seconds_total = started.elapsed().as_secs_f64();
    let broker_cpu_seconds = probe.zip(cpu_before).map(|(p, b)| p.cpu_seconds() - b);
    // Every member leaves while all are still polled, then they are closed. Closing them one
    // by one instead, a classic member waited in its close for the rebalance that the first
    // leaves started, which waited for members whose threads were busy closing others (at
    // 1,000 members, against both brokers depending on timing).
    for consumer in &consumers {
        consumer.unsubscribe();
    }
    let left_by = Instant::now() + Duration::from_secs(30);
    while Instant::now() < left_by
        && consumers
            .iter()
            .any(|c| c.assignment().is_ok_and(|a| a.count() > 0))
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "members left in {:.1} s",
        (Instant::now() + Duration::from_secs(30) - left_by).as_secs_f64()
    );
    drop(consumers);
    stop.store(true, Ordering::Relaxed);
    // The figures are taken and the members have left: closes still going after a few
    // seconds (librdkafka takes about 20 s to close a thousand, against either broker) are
    // left to the process's exit.
    let deadline = Instant::now() + Duration::from_secs(5);
    while pollers.iter().any(|p| !p.is_finished()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let hung = pollers.iter().filter(|p| !p.is_finished()).count();
    if hung > 0 {
        eprintln!("{hung} polling thread(s) still closing their consumers after 5 s: left");
    }
    GroupOutcome {
        members: options.members,
        partitions: options.partitions,
        seconds_to_stable,
        seconds_total,
        broker_cpu_seconds,
    }
}

/// `--members` consumers in a group each read the `--messages` messages of `topic`.
pub(super) fn fan_out(options: &Options, bootstrap: &str, topic: &str) -> Outcome {
    let run = unix_nanos();
    let consumers: Vec<BaseConsumer> = (0..options.members)
        .map(|i| {
            let consumer: BaseConsumer = client_config(bootstrap)
                .set("group.id", format!("bench-fan-out-{run}-{i}"))
                .create()
                .expect("consumer");
            let mut assignment = TopicPartitionList::new();
            for p in 0..options.partitions {
                assignment
                    .add_partition_offset(topic, p, Offset::Beginning)
                    .expect("assignment");
            }
            consumer.assign(&assignment).expect("assign");
            consumer
        })
        .collect();
    let wanted = options.messages;
    let started = Instant::now();
    let give_up = started + Duration::from_secs(600);
    let mut shares: Vec<Vec<BaseConsumer>> = (0..POLL_THREADS).map(|_| Vec::new()).collect();
    for (i, consumer) in consumers.into_iter().enumerate() {
        shares[i % POLL_THREADS].push(consumer);
    }
    let readers: Vec<_> = shares
        .into_iter()
        .map(|share| {
            std::thread::spawn(move || {
                let mut read = vec![0u64; share.len()];
                let (mut messages, mut bytes) = (0u64, 0u64);
                while read.iter().any(|&r| r < wanted) && Instant::now() < give_up {
                    for (consumer, count) in share.iter().zip(read.iter_mut()) {
                        // Each consumer's fetched batch is taken whole before the next one's.
                        while *count < wanted {
                            match consumer.poll(Duration::ZERO) {
                                Some(Ok(message)) => {
                                    *count += 1;
                                    messages += 1;
                                    bytes += message.payload_len() as u64;
                                }
                                Some(Err(e)) => panic!("fan-out consume failed: {e}"),
                                None => break,
                            }
                        }
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                (messages, bytes)
            })
        })
        .collect();
    let (mut messages, mut bytes) = (0, 0);
    for reader in readers {
        let (m, b) = reader.join().expect("a fan-out reader");
        messages += m;
        bytes += b;
    }
    let seconds = started.elapsed().as_secs_f64();
    Outcome {
        messages,
        bytes,
        seconds,
        failed: (wanted * options.members as u64).saturating_sub(messages),
        ..Outcome::default()
    }
}
