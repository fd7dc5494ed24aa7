//! KIP-1251 on the wire, as Kafka 4.4's coordinator answers: a KIP-848 member's OffsetCommit
//! from an older member epoch stands for the partitions it has held since that epoch (an
//! in-flight commit racing a new epoch is not refused), is STALE_MEMBER_EPOCH for the others,
//! and the epochs survive a kill -9 in `__consumer_offsets`. A member commits with OffsetCommit
//! v9 or later.

#![allow(clippy::unwrap_used)]

mod common;

use common::raw::{call, connect};
use common::{Broker, wait_until};
use kafka_protocol::messages::consumer_group_heartbeat_request::TopicPartitions;
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::net::TcpStream;
use std::time::Duration;

const GROUP: &str = "epochs";
const UNSUPPORTED_VERSION: i16 = 35;
const STALE_MEMBER_EPOCH: i16 = 113;
const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;

fn heartbeat(
    stream: &mut TcpStream,
    member: &str,
    epoch: i32,
    owned: Option<Vec<TopicPartitions>>,
) -> ConsumerGroupHeartbeatResponse {
    let mut request = ConsumerGroupHeartbeatRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str(GROUP)))
        .with_member_id(StrBytes::from_string(member.into()))
        .with_member_epoch(epoch)
        .with_topic_partitions(owned);
    if epoch == 0 {
        request = request
            .with_rebalance_timeout_ms(30_000)
            .with_subscribed_topic_names(Some(vec![TopicName(StrBytes::from_static_str("t"))]))
            .with_topic_partitions(Some(Vec::new()));
    }
    call(stream, ApiKey::ConsumerGroupHeartbeat, 0, &request)
}

/// The partitions of an assignment, and the same as a heartbeat's owned partitions.
fn partitions(response: &ConsumerGroupHeartbeatResponse) -> (Vec<i32>, Vec<TopicPartitions>) {
    let assignment = response.assignment.clone().unwrap_or_default();
    let mut all = Vec::new();
    let owned = assignment
        .topic_partitions
        .iter()
        .map(|t| {
            all.extend(t.partitions.iter().copied());
            TopicPartitions::default()
                .with_topic_id(t.topic_id)
                .with_partitions(t.partitions.clone())
        })
        .collect();
    all.sort();
    (all, owned)
}

fn commit(stream: &mut TcpStream, version: i16, member: &str, epoch: i32, partition: i32) -> i16 {
    let request = OffsetCommitRequest::default()
        .with_group_id(GroupId(StrBytes::from_static_str(GROUP)))
        .with_generation_id_or_member_epoch(epoch)
        .with_member_id(StrBytes::from_string(member.into()))
        .with_topics(vec![
            OffsetCommitRequestTopic::default()
                .with_name(TopicName(StrBytes::from_static_str("t")))
                .with_partitions(vec![
                    OffsetCommitRequestPartition::default()
                        .with_partition_index(partition)
                        .with_committed_offset(1),
                ]),
        ]);
    let response: OffsetCommitResponse = call(stream, ApiKey::OffsetCommit, version, &request);
    response.topics[0].partitions[0].error_code
}

#[test]
fn a_commit_from_an_older_epoch_stands_for_the_partitions_held_since() {
    // Targets at once (KIP-1263's interval 0): b's join starts the epoch a is moved to.
    let mut broker = Broker::start(&[
        ("group.consumer.session.timeout.ms", "45000"),
        ("group.consumer.assignment.interval.ms", "0"),
    ]);
    let mut stream = connect(&broker);
    common::raw::create_topic(&mut stream, "t", 2, &[]);
    // The first FindCoordinator creates __consumer_offsets; heartbeats wait until it is loaded.
    let _: FindCoordinatorResponse = call(
        &mut stream,
        ApiKey::FindCoordinator,
        3,
        &FindCoordinatorRequest::default().with_key(StrBytes::from_static_str(GROUP)),
    );
    let mut a = ConsumerGroupHeartbeatResponse::default();
    assert!(wait_until(Duration::from_secs(20), || {
        a = heartbeat(&mut stream, "member-a", 0, None);
        a.error_code == 0
    }));
    let first_epoch = a.member_epoch;
    assert_eq!(partitions(&a).0, vec![0, 1], "a alone holds both");

    let b = heartbeat(&mut stream, "member-b", 0, None);
    assert_eq!(b.error_code, 0);
    assert!(b.member_epoch > first_epoch);
    // a is asked to give one partition up, confirms, and moves to b's epoch.
    let asked = heartbeat(&mut stream, "member-a", first_epoch, None);
    let (kept, owned) = partitions(&asked);
    assert_eq!(kept.len(), 1, "{asked:?}");
    let given_up = 1 - kept[0];
    let moved = heartbeat(&mut stream, "member-a", first_epoch, Some(owned));
    assert_eq!(moved.member_epoch, b.member_epoch);

    // An in-flight commit from a's first epoch: fine for what it kept, stale for the other.
    assert_eq!(commit(&mut stream, 9, "member-a", first_epoch, kept[0]), 0);
    assert_eq!(
        commit(&mut stream, 9, "member-a", first_epoch, given_up),
        STALE_MEMBER_EPOCH
    );
    assert_eq!(
        commit(&mut stream, 9, "member-a", b.member_epoch + 1, kept[0]),
        STALE_MEMBER_EPOCH,
        "an epoch newer than the member's"
    );
    assert_eq!(
        commit(&mut stream, 8, "member-a", b.member_epoch, kept[0]),
        UNSUPPORTED_VERSION,
        "a KIP-848 member commits with v9+"
    );

    // The assignment epochs are in __consumer_offsets.
    broker.kill9();
    let restarted = Broker::start_in(broker.dir(), &[]);
    let mut stream = connect(&restarted);
    let mut code = COORDINATOR_LOAD_IN_PROGRESS;
    assert!(wait_until(Duration::from_secs(20), || {
        code = commit(&mut stream, 9, "member-a", first_epoch, kept[0]);
        code != COORDINATOR_LOAD_IN_PROGRESS && code != 15 && code != 16
    }));
    assert_eq!(code, 0, "a's first-epoch commit after a restart");
    assert_eq!(
        commit(&mut stream, 9, "member-a", first_epoch, given_up),
        STALE_MEMBER_EPOCH
    );
    // The members' own records came back too: their subscriptions feed the next assignment.
    let described: ConsumerGroupDescribeResponse = call(
        &mut stream,
        ApiKey::ConsumerGroupDescribe,
        0,
        &ConsumerGroupDescribeRequest::default()
            .with_group_ids(vec![GroupId(StrBytes::from_static_str(GROUP))]),
    );
    let group = &described.groups[0];
    assert_eq!(group.members.len(), 2);
    for member in &group.members {
        let topics: Vec<&str> = member
            .subscribed_topic_names
            .iter()
            .map(|t| t.as_str())
            .collect();
        assert_eq!(topics, vec!["t"], "{}", member.member_id.as_str());
    }
}
