//! Consumer groups with real librdkafka consumers (classic protocol): splitting partitions,
//! rebalancing on join, clean leave and eviction of a SIGKILLed member, publish/subscribe,
//! committed offsets across restarts and kill -9, cooperative-sticky, static membership.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Broker, wait_until};
use rdkafka::ClientContext;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use rdkafka::{Offset, TopicPartitionList};
use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Counts the assignments (rebalances) a consumer goes through.
struct Counting {
    rebalances: Arc<AtomicUsize>,
}

impl ClientContext for Counting {}
impl ConsumerContext for Counting {
    fn post_rebalance(&self, _: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if matches!(rebalance, Rebalance::Assign(_)) {
            self.rebalances.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// What the test can see of a running group member.
#[derive(Default)]
struct Seen {
    assignment: Mutex<BTreeSet<i32>>,
    messages: Mutex<Vec<(i32, i64, String)>>,
}

/// A group member polling on its own thread until stopped.
struct Member {
    seen: Arc<Seen>,
    stop: Arc<AtomicBool>,
    rebalances: Arc<AtomicUsize>,
    thread: Option<JoinHandle<()>>,
}

impl Member {
    fn start(broker: &Broker, group: &str, topic: &str, extra: &[(&str, &str)]) -> Self {
        let mut config = ClientConfig::new();
        config
            .set("bootstrap.servers", &broker.bootstrap)
            .set("group.id", group)
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "earliest")
            .set("session.timeout.ms", "6000")
            .set("heartbeat.interval.ms", "500")
            .set("fetch.wait.max.ms", "100");
        for (k, v) in extra {
            config.set(*k, *v);
        }
        if config.get("group.protocol") == Some("consumer") {
            // KIP-848: timeouts and assignment strategy belong to the broker.
            config.remove("session.timeout.ms");
            config.remove("heartbeat.interval.ms");
        }
        let seen = Arc::new(Seen::default());
        let stop = Arc::new(AtomicBool::new(false));
        let rebalances = Arc::new(AtomicUsize::new(0));
        let (seen2, stop2, counter, topic) = (
            seen.clone(),
            stop.clone(),
            rebalances.clone(),
            topic.to_string(),
        );
        let thread = std::thread::spawn(move || {
            let consumer: BaseConsumer<Counting> = config
                .create_with_context(Counting {
                    rebalances: counter,
                })
                .unwrap();
            consumer.subscribe(&[&topic]).unwrap();
            while !stop2.load(Ordering::SeqCst) {
                if let Some(message) = consumer.poll(Duration::from_millis(100)) {
                    let message = message.unwrap();
                    let value =
                        String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned();
                    seen2.messages.lock().unwrap().push((
                        message.partition(),
                        message.offset(),
                        value,
                    ));
                    consumer.store_offset_from_message(&message).ok();
                }
                let assignment: BTreeSet<i32> = consumer
                    .assignment()
                    .map(|a| a.elements().iter().map(|e| e.partition()).collect())
                    .unwrap_or_default();
                *seen2.assignment.lock().unwrap() = assignment;
            }
            // Commit what was consumed, then leave the group (close sends LeaveGroup).
            let _ = consumer.commit_consumer_state(CommitMode::Sync);
            drop(consumer);
        });
        Self {
            seen,
            stop,
            rebalances,
            thread: Some(thread),
        }
    }

    fn assignment(&self) -> BTreeSet<i32> {
        self.seen.assignment.lock().unwrap().clone()
    }

    fn rebalances(&self) -> usize {
        self.rebalances.load(Ordering::SeqCst)
    }

    fn messages(&self) -> Vec<(i32, i64, String)> {
        self.seen.messages.lock().unwrap().clone()
    }

    /// Commits and leaves the group cleanly.
    fn stop(mut self) -> Vec<(i32, i64, String)> {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            thread.join().unwrap();
        }
        self.messages()
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A kcat balanced consumer: a real group member in a child process we can SIGKILL.
struct KcatMember(Child);

impl KcatMember {
    fn start(broker: &Broker, group: &str, topic: &str) -> Self {
        let child = Command::new("kcat")
            .args([
                "-b",
                &broker.bootstrap,
                "-G",
                group,
                "-X",
                "session.timeout.ms=6000",
                "-X",
                "heartbeat.interval.ms=500",
                "-q",
                "-f",
                "",
                topic,
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("kcat is needed for this test (apt-get install kcat)");
        Self(child)
    }

    fn kill9(&mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

impl Drop for KcatMember {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn create_topic(broker: &Broker, name: &str, partitions: i32) {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    let result = admin
        .create_topics(
            [&NewTopic::new(name, partitions, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        )
        .await
        .unwrap();
    assert!(result[0].is_ok(), "{:?}", result[0]);
}

async fn produce(broker: &Broker, topic: &str, partitions: i32, count: usize, prefix: &str) {
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("linger.ms", "5")
        .create()
        .unwrap();
    let mut pending = Vec::new();
    for i in 0..count {
        let value = format!("{prefix}-{i}");
        pending.push(
            producer
                .send_result(
                    FutureRecord::<(), str>::to(topic)
                        .partition((i % partitions as usize) as i32)
                        .payload(&value),
                )
                .map_err(|(e, _)| e)
                .unwrap(),
        );
    }
    for delivery in pending {
        delivery.await.unwrap().map_err(|(e, _)| e).unwrap();
    }
}

fn covers(members: &[&Member], partitions: i32) -> bool {
    let mut all = Vec::new();
    for m in members {
        let a = m.assignment();
        if a.is_empty() {
            return false;
        }
        all.extend(a);
    }
    all.sort();
    all == (0..partitions).collect::<Vec<_>>()
}

const FAST_GROUPS: &[(&str, &str)] = &[("group.initial.rebalance.delay.ms", "0")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_split_rebalance_leave_and_get_evicted() {
    let broker = Broker::start(FAST_GROUPS);
    create_topic(&broker, "six", 6).await;
    let members: Vec<Member> = (0..3)
        .map(|_| Member::start(&broker, "split", "six", &[]))
        .collect();
    assert!(
        wait_until(Duration::from_secs(30), || covers(
            &members.iter().collect::<Vec<_>>(),
            6
        )),
        "3 members split 6 partitions"
    );
    for m in &members {
        assert_eq!(
            m.assignment().len(),
            2,
            "range assignment gives each member two partitions"
        );
    }

    produce(&broker, "six", 6, 600, "m").await;
    assert!(wait_until(Duration::from_secs(30), || members
        .iter()
        .map(|m| m.messages().len())
        .sum::<usize>()
        >= 600));
    let mut all: Vec<String> = members
        .iter()
        .flat_map(|m| m.messages().into_iter().map(|(_, _, v)| v))
        .collect();
    all.sort();
    let mut expected: Vec<String> = (0..600).map(|i| format!("m-{i}")).collect();
    expected.sort();
    assert_eq!(all, expected, "every message exactly once across the group");
    for m in &members {
        let partitions: BTreeSet<i32> = m.messages().iter().map(|(p, _, _)| *p).collect();
        assert_eq!(
            partitions,
            m.assignment(),
            "each member reads only its own partitions"
        );
    }

    // A fourth member joins: the six partitions are spread over four.
    let fourth = Member::start(&broker, "split", "six", &[]);
    let four: Vec<&Member> = members.iter().chain(std::iter::once(&fourth)).collect();
    assert!(
        wait_until(Duration::from_secs(30), || covers(&four, 6)),
        "rebalanced over four members"
    );

    // One leaves cleanly: the remaining three take its partitions.
    fourth.stop();
    assert!(
        wait_until(Duration::from_secs(30), || covers(
            &members.iter().collect::<Vec<_>>(),
            6
        )),
        "back to three after a clean leave"
    );

    // A member in another process is SIGKILLed: evicted once its session times out.
    let mut kcat = KcatMember::start(&broker, "split", "six");
    assert!(
        wait_until(Duration::from_secs(30), || members
            .iter()
            .map(|m| m.assignment().len())
            .sum::<usize>()
            < 6),
        "the kcat member got partitions"
    );
    kcat.kill9();
    let killed_at = Instant::now();
    assert!(
        wait_until(Duration::from_secs(40), || covers(
            &members.iter().collect::<Vec<_>>(),
            6
        )),
        "the killed member is evicted and its partitions reassigned"
    );
    let eviction = killed_at.elapsed();
    eprintln!(
        "SIGKILLed member evicted and partitions reassigned after {eviction:?} (session.timeout.ms=6000)"
    );
    assert!(
        eviction >= Duration::from_secs(5),
        "evicted by its session timeout, not earlier: {eviction:?}"
    );
    assert!(broker.log_text().contains("member session expired"));
    for m in members {
        m.stop();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_groups_each_receive_every_message() {
    let broker = Broker::start(FAST_GROUPS);
    create_topic(&broker, "pubsub", 3).await;
    let a = Member::start(&broker, "group-a", "pubsub", &[]);
    let b = Member::start(&broker, "group-b", "pubsub", &[]);
    assert!(wait_until(Duration::from_secs(30), || covers(&[&a], 3)
        && covers(&[&b], 3)));
    produce(&broker, "pubsub", 3, 300, "p").await;
    assert!(wait_until(Duration::from_secs(30), || a.messages().len()
        >= 300
        && b.messages().len() >= 300));
    for m in [a, b] {
        let mut values: Vec<String> = m.stop().into_iter().map(|(_, _, v)| v).collect();
        values.sort();
        values.dedup();
        assert_eq!(values.len(), 300);
    }
}

/// Consumes up to `count` messages in `group` and commits, returning the first offset seen.
fn consume_and_commit(broker: &Broker, group: &str, topic: &str, count: usize) -> i64 {
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&[topic]).unwrap();
    let mut first = None;
    let mut last = None;
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut taken = 0;
    while taken < count {
        assert!(Instant::now() < deadline, "timed out consuming");
        if let Some(message) = consumer.poll(Duration::from_millis(200)) {
            let message = message.unwrap();
            first.get_or_insert(message.offset());
            last = Some(message.offset());
            taken += 1;
        }
    }
    let mut commit = TopicPartitionList::new();
    commit
        .add_partition_offset(topic, 0, Offset::Offset(last.unwrap() + 1))
        .unwrap();
    consumer.commit(&commit, CommitMode::Sync).unwrap();
    let committed = consumer.committed(Duration::from_secs(10)).unwrap();
    assert_eq!(
        committed.find_partition(topic, 0).unwrap().offset(),
        Offset::Offset(last.unwrap() + 1),
        "OffsetFetch returns the commit"
    );
    first.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_offsets_survive_restart_and_kill_nine() {
    let mut broker = Broker::start(FAST_GROUPS);
    create_topic(&broker, "resume", 1).await;
    produce(&broker, "resume", 1, 300, "r").await;
    let first =
        tokio::task::block_in_place(|| consume_and_commit(&broker, "resumer", "resume", 100));
    assert_eq!(first, 0);

    assert_eq!(broker.stop(), Some(0));
    let mut broker2 = Broker::start_in(broker.dir(), FAST_GROUPS);
    // The groups are loaded once the metadata is published, which may follow the listener.
    assert!(wait_until(Duration::from_secs(30), || broker2
        .log_text()
        .contains("loaded consumer groups")));
    let first =
        tokio::task::block_in_place(|| consume_and_commit(&broker2, "resumer", "resume", 100));
    assert_eq!(
        first, 100,
        "resumes exactly at the committed offset after a clean restart"
    );

    broker2.kill9();
    let broker3 = Broker::start_in(broker.dir(), FAST_GROUPS);
    let first =
        tokio::task::block_in_place(|| consume_and_commit(&broker3, "resumer", "resume", 50));
    assert_eq!(first, 200, "and after kill -9");
    drop(broker);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cooperative_sticky_rebalances_incrementally() {
    let broker = Broker::start(FAST_GROUPS);
    create_topic(&broker, "coop", 4).await;
    let sticky = [("partition.assignment.strategy", "cooperative-sticky")];
    let a = Member::start(&broker, "coop-group", "coop", &sticky);
    assert!(wait_until(Duration::from_secs(30), || covers(&[&a], 4)));
    let b = Member::start(&broker, "coop-group", "coop", &sticky);
    assert!(
        wait_until(Duration::from_secs(30), || covers(&[&a, &b], 4)
            && a.assignment().len() == 2),
        "incremental: a keeps two, b gets two"
    );
    produce(&broker, "coop", 4, 200, "c").await;
    assert!(wait_until(Duration::from_secs(30), || a.messages().len()
        + b.messages().len()
        >= 200));
    let mut values: Vec<String> = a
        .stop()
        .into_iter()
        .chain(b.stop())
        .map(|(_, _, v)| v)
        .collect();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn static_member_rejoins_without_a_rebalance() {
    let broker = Broker::start(FAST_GROUPS);
    create_topic(&broker, "static", 4).await;
    let dynamic = Member::start(&broker, "static-group", "static", &[]);
    let instance = [
        ("group.instance.id", "instance-1"),
        ("session.timeout.ms", "30000"),
    ];
    let first = Member::start(&broker, "static-group", "static", &instance);
    assert!(wait_until(Duration::from_secs(30), || covers(
        &[&dynamic, &first],
        4
    )));
    let before = first.assignment();
    let rebalances = dynamic.rebalances();
    // A static member does not send LeaveGroup when it stops; it comes back within its session.
    first.stop();
    let second = Member::start(&broker, "static-group", "static", &instance);
    assert!(
        wait_until(Duration::from_secs(30), || second.assignment() == before),
        "same partitions back: {:?} vs {before:?}",
        second.assignment()
    );
    assert_eq!(
        dynamic.rebalances(),
        rebalances,
        "the other member saw no rebalance"
    );
    drop(second);
    drop(dynamic);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip848_consumer_protocol_split_then_one_leaves() {
    let broker = Broker::start(&[("group.consumer.heartbeat.interval.ms", "500")]);
    create_topic(&broker, "kip848", 4).await;
    let protocol = [("group.protocol", "consumer")];
    let a = Member::start(&broker, "kip848-group", "kip848", &protocol);
    assert!(
        wait_until(Duration::from_secs(30), || covers(&[&a], 4)),
        "a alone owns all four: {:?}",
        a.assignment()
    );
    let b = Member::start(&broker, "kip848-group", "kip848", &protocol);
    assert!(
        wait_until(Duration::from_secs(30), || covers(&[&a, &b], 4)
            && a.assignment().len() == 2),
        "two members split four partitions: {:?} / {:?}",
        a.assignment(),
        b.assignment()
    );
    produce(&broker, "kip848", 4, 200, "k").await;
    assert!(wait_until(Duration::from_secs(30), || a.messages().len()
        + b.messages().len()
        >= 200));
    let b_messages = b.stop();
    assert!(
        wait_until(Duration::from_secs(30), || covers(&[&a], 4)),
        "after b leaves, a owns all four again"
    );
    let mut values: Vec<String> = a
        .stop()
        .into_iter()
        .chain(b_messages)
        .map(|(_, _, v)| v)
        .collect();
    values.sort();
    values.dedup();
    assert_eq!(values.len(), 200);
    assert_eq!(
        broker
            .log_text()
            .matches("consumer protocol member joined")
            .count(),
        2,
        "both used KIP-848, not the classic protocol"
    );
}

fn describe_consumer_group(
    broker: &Broker,
    group: &str,
) -> kafka_protocol::messages::consumer_group_describe_response::DescribedGroup {
    use kafka_protocol::messages::{
        ApiKey, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, GroupId,
    };
    use kafka_protocol::protocol::StrBytes;
    let request = ConsumerGroupDescribeRequest::default()
        .with_group_ids(vec![GroupId(StrBytes::from_string(group.to_string()))]);
    let response: ConsumerGroupDescribeResponse = common::raw_call(
        &broker.bootstrap,
        ApiKey::ConsumerGroupDescribe,
        0,
        &request,
    );
    response.groups.into_iter().next().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kip848_group_state_is_replayed_after_kill_nine() {
    let settings = [
        ("group.consumer.heartbeat.interval.ms", "500"),
        ("group.consumer.session.timeout.ms", "6000"),
    ];
    let mut broker = Broker::start(&settings);
    create_topic(&broker, "replayed", 2).await;
    let member = Member::start(
        &broker,
        "replayed-group",
        "replayed",
        &[("group.protocol", "consumer")],
    );
    assert!(wait_until(Duration::from_secs(30), || covers(
        &[&member],
        2
    )));
    let before = describe_consumer_group(&broker, "replayed-group");
    assert_eq!(
        (
            before.error_code,
            before.group_state.as_str(),
            before.members.len()
        ),
        (0, "Stable", 1)
    );

    broker.kill9();
    let restarted = Broker::start_in(broker.dir(), &settings);
    let after = describe_consumer_group(&restarted, "replayed-group");
    assert_eq!(
        after.error_code, 0,
        "the consumer group came back from {{__consumer_offsets}}"
    );
    assert_eq!(
        (after.group_epoch, after.assignment_epoch),
        (before.group_epoch, before.assignment_epoch)
    );
    assert_eq!(after.members.len(), 1);
    assert_eq!(after.members[0].member_id, before.members[0].member_id);
    assert_eq!(
        after.members[0].member_epoch,
        before.members[0].member_epoch
    );
    let partitions: usize = after.members[0]
        .assignment
        .topic_partitions
        .iter()
        .map(|t| t.partitions.len())
        .sum();
    assert_eq!(partitions, 2, "its assignment too");
    // The member talks to the old broker address and never comes back: its session expires.
    assert!(
        wait_until(Duration::from_secs(20), || describe_consumer_group(
            &restarted,
            "replayed-group"
        )
        .members
        .is_empty()),
        "fenced after the session timeout"
    );
    drop(member);
}

/// Defect 11 of the hardening issue (librdkafka's `0113 cooperative_rebalance`,
/// `v_commit_during_rebalance`): an OffsetCommit of a previous generation while the group is
/// completing a rebalance is ILLEGAL_GENERATION — Kafka checks member and generation before
/// answering REBALANCE_IN_PROGRESS, which is for current members only.
#[test]
fn a_stale_commit_during_a_rebalance_is_an_illegal_generation() {
    use common::raw::{call, connect};
    use kafka_protocol::messages::join_group_request::JoinGroupRequestProtocol;
    use kafka_protocol::messages::*;
    use kafka_protocol::protocol::StrBytes;
    let broker = Broker::start(&[("group.initial.rebalance.delay.ms", "0")]);
    let mut stream = connect(&broker);
    common::raw::create_topic(&mut stream, "t", 1, &[]);
    let group = GroupId(StrBytes::from_static_str("g"));
    let join_request = JoinGroupRequest::default()
        .with_group_id(group.clone())
        .with_session_timeout_ms(30_000)
        .with_rebalance_timeout_ms(30_000)
        .with_protocol_type(StrBytes::from_static_str("consumer"))
        .with_protocols(vec![
            JoinGroupRequestProtocol::default()
                .with_name(StrBytes::from_static_str("range"))
                .with_metadata(bytes::Bytes::from_static(&[0, 0, 0, 0, 0, 0])),
        ]);
    // The first FindCoordinator creates __consumer_offsets; joins wait until it is loaded.
    let _: FindCoordinatorResponse = call(
        &mut stream,
        ApiKey::FindCoordinator,
        3,
        &FindCoordinatorRequest::default().with_key(StrBytes::from_static_str("g")),
    );
    let mut join = JoinGroupResponse::default();
    assert!(wait_until(Duration::from_secs(20), || {
        join = call(&mut stream, ApiKey::JoinGroup, 3, &join_request);
        join.error_code == 0
    }));
    // No SyncGroup yet: the group is in CompletingRebalance.
    let member = join.member_id.to_string();
    let commit = |generation: i32, member: &str, stream: &mut std::net::TcpStream| {
        common::raw::offset_commit(stream, "g", generation, member, 1)
    };
    const ILLEGAL_GENERATION: i16 = 22;
    const UNKNOWN_MEMBER_ID: i16 = 25;
    const REBALANCE_IN_PROGRESS: i16 = 27;
    assert_eq!(
        commit(join.generation_id - 1, &member, &mut stream),
        ILLEGAL_GENERATION
    );
    assert_eq!(
        commit(join.generation_id, "ghost", &mut stream),
        UNKNOWN_MEMBER_ID
    );
    assert_eq!(
        commit(join.generation_id, &member, &mut stream),
        REBALANCE_IN_PROGRESS
    );
}

/// A KIP-848 regex subscription is matched against every topic, internal ones included, as
/// Kafka's coordinator does: franz-go's `Test848RegexBrokerResolves` subscribes to
/// `__consumer_offsets` by regex and waits to be assigned it (Sluice skipped topics named `__*`).
#[test]
fn a_kip848_regex_subscription_can_name_an_internal_topic() {
    use common::raw::{call, connect};
    use kafka_protocol::messages::*;
    use kafka_protocol::protocol::StrBytes;
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    common::raw::create_topic(&mut stream, "orders", 1, &[]);
    // The first FindCoordinator creates __consumer_offsets (50 partitions).
    let _: FindCoordinatorResponse = call(
        &mut stream,
        ApiKey::FindCoordinator,
        3,
        &FindCoordinatorRequest::default().with_key(StrBytes::from_static_str("regex")),
    );
    let heartbeat = |member_id: &str, epoch: i32, stream: &mut std::net::TcpStream| {
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("regex")))
            .with_member_id(StrBytes::from_string(member_id.to_string()))
            .with_member_epoch(epoch)
            .with_rebalance_timeout_ms(30_000)
            .with_subscribed_topic_regex(Some(StrBytes::from_static_str(
                "orders|__consumer_offsets",
            )));
        let response: ConsumerGroupHeartbeatResponse =
            call(stream, ApiKey::ConsumerGroupHeartbeat, 1, &request);
        response
    };
    let member = "member-of-regex";
    let mut response = ConsumerGroupHeartbeatResponse::default();
    let mut epoch = 0;
    let assigned = wait_until(Duration::from_secs(20), || {
        response = heartbeat(member, epoch, &mut stream);
        if response.error_code == 0 {
            epoch = response.member_epoch;
        }
        response
            .assignment
            .as_ref()
            .is_some_and(|a| a.topic_partitions.len() == 2)
    });
    let assignment = response.assignment.unwrap_or_default();
    assert!(
        assigned,
        "assigned {} topics, error {}",
        assignment.topic_partitions.len(),
        response.error_code
    );
    let partitions: usize = assignment
        .topic_partitions
        .iter()
        .map(|t| t.partitions.len())
        .sum();
    assert_eq!(partitions, 51, "orders' 1 and __consumer_offsets' 50");
}
