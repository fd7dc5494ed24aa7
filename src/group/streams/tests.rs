use super::topology::{StatusCode, Subtopology, TopicInfo, Topology};
use super::*;
use crate::group::reconcile::flatten;
use std::cell::RefCell;

struct Topics(RefCell<BTreeMap<String, i32>>);
impl TopicsView for Topics {
    fn partitions_of(&self, topic: &str) -> Option<i32> {
        self.0.borrow().get(topic).copied()
    }
    fn topic_names(&self) -> Vec<String> {
        self.0.borrow().keys().cloned().collect()
    }
    fn topic_id(&self, _: &str) -> Option<uuid::Uuid> {
        None
    }
    fn topic_name(&self, _: uuid::Uuid) -> Option<String> {
        None
    }
}

fn word_count() -> Topology {
    let mut t = Topology::default();
    t.subtopologies.insert(
        "0".into(),
        Subtopology {
            id: "0".into(),
            source_topics: vec!["in".into()],
            repartition_sink_topics: vec!["rep".into()],
            ..Default::default()
        },
    );
    t.subtopologies.insert(
        "1".into(),
        Subtopology {
            id: "1".into(),
            repartition_source_topics: vec![TopicInfo {
                name: "rep".into(),
                ..Default::default()
            }],
            state_changelog_topics: vec![TopicInfo {
                name: "log".into(),
                ..Default::default()
            }],
            ..Default::default()
        },
    );
    t
}

fn config() -> StreamsGroupConfig {
    StreamsGroupConfig {
        initial_rebalance_delay_ms: 0,
        ..Default::default()
    }
}

fn join(member: &str, process: &str) -> StreamsHeartbeat {
    StreamsHeartbeat {
        member_id: member.into(),
        member_epoch: 0,
        rebalance_timeout_ms: 30_000,
        topology: Some(word_count()),
        active: Some(Tasks::new()),
        standby: Some(Tasks::new()),
        warmup: Some(Tasks::new()),
        process_id: Some(process.into()),
        ..Default::default()
    }
}

/// A heartbeat; with `active`, the other task kinds are sent empty (all or none, as Kafka
/// requires).
fn beat(member: &str, epoch: i32, active: Option<Tasks>) -> StreamsHeartbeat {
    let others = active.as_ref().map(|_| Tasks::new());
    StreamsHeartbeat {
        member_id: member.into(),
        member_epoch: epoch,
        rebalance_timeout_ms: -1,
        active,
        standby: others.clone(),
        warmup: others,
        ..Default::default()
    }
}

fn count(t: &Tasks) -> usize {
    t.values().map(BTreeSet::len).sum()
}

#[test]
fn internal_topics_are_asked_for_before_tasks_are_assigned() {
    let topics = Topics(RefCell::new([("in".to_string(), 4)].into()));
    let mut g = StreamsGroup::new("app", Offsets::new(), 0);
    let now = Instant::now();
    let r = g
        .heartbeat(join("a", "p1"), &config(), &topics, now, 0)
        .unwrap();
    assert!(r.member_epoch > 0, "a joined member has the group's epoch");
    assert_eq!(r.status[0].0, StatusCode::MissingInternalTopics);
    let names: Vec<&str> = r.to_create.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["log", "rep"]);
    assert_eq!(count(&r.assignment.unwrap().active), 0);
    assert_eq!(g.state_name(), "NotReady");
    // Not asked for again while the creation runs.
    let r = g
        .heartbeat(beat("a", r.member_epoch, None), &config(), &topics, now, 0)
        .unwrap();
    assert!(r.to_create.is_empty());
    // Once they exist, every task goes to the one member.
    topics.0.borrow_mut().insert("rep".into(), 4);
    topics.0.borrow_mut().insert("log".into(), 4);
    let r = g
        .heartbeat(beat("a", r.member_epoch, None), &config(), &topics, now, 0)
        .unwrap();
    assert!(r.status.is_empty());
    assert_eq!(count(&r.assignment.unwrap().active), 8);
    assert_eq!(g.state_name(), "Stable");
}

#[test]
fn tasks_move_only_after_their_owner_revoked_them() {
    let topics = Topics(RefCell::new(
        [
            ("in".to_string(), 2),
            ("rep".to_string(), 2),
            ("log".to_string(), 2),
        ]
        .into(),
    ));
    let mut g = StreamsGroup::new("app", Offsets::new(), 0);
    let now = Instant::now();
    let a = g
        .heartbeat(join("a", "p1"), &config(), &topics, now, 0)
        .unwrap();
    let a_tasks = a.assignment.unwrap().active;
    assert_eq!(count(&a_tasks), 4);
    let b = g
        .heartbeat(join("b", "p2"), &config(), &topics, now, 0)
        .unwrap();
    assert_eq!(
        count(&b.assignment.unwrap().active),
        0,
        "a still holds them"
    );
    // a is told to keep half (same epoch until it confirms).
    let a2 = g
        .heartbeat(
            beat("a", a.member_epoch, Some(a_tasks.clone())),
            &config(),
            &topics,
            now,
            0,
        )
        .unwrap();
    let kept = a2.assignment.unwrap().active;
    assert_eq!(count(&kept), 2);
    assert_eq!(a2.member_epoch, a.member_epoch);
    assert_eq!(g.members["a"].state, MemberState::UnrevokedTasks);
    // b asks again: still withheld.
    let b2 = g
        .heartbeat(
            beat("b", b.member_epoch, Some(Tasks::new())),
            &config(),
            &topics,
            now,
            0,
        )
        .unwrap();
    assert_eq!(b2.assignment.map(|t| count(&t.active)).unwrap_or(0), 0);
    // a confirms; it moves to the new epoch, and b then gets the rest.
    let a3 = g
        .heartbeat(
            beat("a", a2.member_epoch, Some(kept.clone())),
            &config(),
            &topics,
            now,
            0,
        )
        .unwrap();
    assert!(a3.member_epoch > a.member_epoch);
    let b3 = g
        .heartbeat(
            beat("b", b2.member_epoch, Some(Tasks::new())),
            &config(),
            &topics,
            now,
            0,
        )
        .unwrap();
    let b_tasks = b3.assignment.unwrap().active;
    assert_eq!(count(&b_tasks), 2);
    assert!(flatten(&b_tasks).is_disjoint(&flatten(&kept)));
    assert_eq!(g.state_name(), "Stable");

    // KIP-1251: a commits from its first epoch for the source partitions of the tasks it kept
    // (task (0, p) reads in-p, task (1, p) the repartition topic's rep-p), not for b's.
    let source = |(subtopology, p): (String, i32)| {
        let topic = if subtopology == "0" { "in" } else { "rep" };
        (topic.to_string(), p)
    };
    let old_epoch = a.member_epoch;
    assert_eq!(
        g.validate_offset_commit("a", old_epoch, true, flatten(&kept).into_iter().map(source)),
        Ok(())
    );
    let of_b = source(flatten(&b_tasks).into_iter().next().unwrap());
    assert_eq!(
        g.validate_offset_commit("a", old_epoch, true, [of_b.clone()]),
        Err(GroupError::StaleMemberEpoch)
    );
    assert_eq!(
        g.validate_offset_commit("b", b3.member_epoch, true, [of_b]),
        Ok(())
    );
    assert_eq!(
        g.validate_offset_commit("a", old_epoch, true, [("log".to_string(), 0)]),
        Err(GroupError::StaleMemberEpoch),
        "not a topic the topology reads"
    );
}

#[test]
fn fencing_validation_and_expiry() {
    let topics = Topics(RefCell::new(
        [
            ("in".to_string(), 1),
            ("rep".to_string(), 1),
            ("log".to_string(), 1),
        ]
        .into(),
    ));
    let mut g = StreamsGroup::new("app", Offsets::new(), 0);
    let now = Instant::now();
    let a = g
        .heartbeat(join("a", "p1"), &config(), &topics, now, 0)
        .unwrap();
    let err = g
        .heartbeat(
            beat("a", a.member_epoch + 5, None),
            &config(),
            &topics,
            now,
            0,
        )
        .unwrap_err();
    assert!(matches!(err, StreamsError::FencedMemberEpoch(_)));
    let err = g
        .heartbeat(beat("ghost", 3, None), &config(), &topics, now, 0)
        .unwrap_err();
    assert!(matches!(err, StreamsError::UnknownMemberId(_)));
    let mut no_timeout = join("c", "p3");
    no_timeout.rebalance_timeout_ms = -1;
    assert_eq!(
        g.heartbeat(no_timeout, &config(), &topics, now, 0),
        Err(StreamsError::InvalidRequest(
            "RebalanceTimeoutMs must be provided in first request.".into()
        ))
    );
    let mut no_topology = join("c", "p3");
    no_topology.topology = None;
    assert!(matches!(
        g.heartbeat(no_topology, &config(), &topics, now, 0),
        Err(StreamsError::InvalidRequest(_))
    ));
    let mut same_epoch_other_topology = join("c", "p3");
    if let Some(t) = &mut same_epoch_other_topology.topology {
        t.subtopologies.remove("1");
        if let Some(s) = t.subtopologies.get_mut("0") {
            s.repartition_sink_topics.clear();
        }
    }
    assert!(matches!(
        g.heartbeat(same_epoch_other_topology, &config(), &topics, now, 0),
        Err(StreamsError::InvalidTopologyEpoch(_))
    ));
    // The session runs out: the member is gone and the group is empty.
    let later = now + Duration::from_millis(config().session_timeout_ms as u64 + 1);
    assert_eq!(g.expire(later, 0), vec!["a".to_string()]);
    assert_eq!(g.state_name(), "Empty");
    assert_eq!(
        g.validate_offset_commit("", -1, true, [("in".to_string(), 0)]),
        Ok(())
    );
}

#[test]
fn the_first_assignment_waits_for_the_initial_delay() {
    let topics = Topics(RefCell::new(
        [
            ("in".to_string(), 2),
            ("rep".to_string(), 2),
            ("log".to_string(), 2),
        ]
        .into(),
    ));
    let config = StreamsGroupConfig {
        initial_rebalance_delay_ms: 3_000,
        ..Default::default()
    };
    let mut g = StreamsGroup::new("app", Offsets::new(), 0);
    let now = Instant::now();
    let a = g
        .heartbeat(join("a", "p1"), &config, &topics, now, 0)
        .unwrap();
    let b = g
        .heartbeat(join("b", "p2"), &config, &topics, now, 0)
        .unwrap();
    assert_eq!(count(&a.assignment.unwrap().active), 0);
    assert_eq!(count(&b.assignment.unwrap().active), 0);
    let later = now + Duration::from_millis(3_001);
    let a2 = g
        .heartbeat(
            beat("a", a.member_epoch, Some(Tasks::new())),
            &config,
            &topics,
            later,
            0,
        )
        .unwrap();
    let b2 = g
        .heartbeat(
            beat("b", b.member_epoch, Some(Tasks::new())),
            &config,
            &topics,
            later,
            0,
        )
        .unwrap();
    assert_eq!(count(&a2.assignment.unwrap().active), 2);
    assert_eq!(count(&b2.assignment.unwrap().active), 2);
}

/// Static membership as Kafka 4.4's `getOrMaybeCreateStaticStreamsGroupMember` and
/// `streamsGroupLeave` do it: a member leaving with epoch -2 keeps its tasks; the instance's
/// next incarnation takes them over under its new member id without a new group epoch; an
/// instance id still held, or held by another member, is refused.
#[test]
fn a_static_member_comes_back_to_its_tasks_without_a_rebalance() {
    let topics = Topics(RefCell::new(
        [
            ("in".to_string(), 2),
            ("rep".to_string(), 2),
            ("log".to_string(), 2),
        ]
        .into_iter()
        .collect(),
    ));
    let mut g = StreamsGroup::new("app", Default::default(), 0);
    let now = Instant::now();
    let static_join = |member: &str| StreamsHeartbeat {
        instance_id: Some("i-1".into()),
        ..join(member, "p1")
    };
    let a = g
        .heartbeat(static_join("a"), &config(), &topics, now, 0)
        .unwrap();
    let tasks = a.assignment.unwrap().active;
    assert_eq!(count(&tasks), 4);
    let group_epoch = g.group_epoch;

    // The instance id is held: another member cannot join with it, nor heartbeat as it.
    let refused = g.heartbeat(static_join("b"), &config(), &topics, now, 0);
    assert_eq!(
        refused.unwrap_err().to_string(),
        "Static member b with instance id i-1 cannot join the group because the instance id is owned by a member."
    );
    let mut stray = beat("b", 1, None);
    stray.instance_id = Some("i-1".into());
    let fenced = g.heartbeat(stray, &config(), &topics, now, 0).unwrap_err();
    assert_eq!(fenced.code(), crate::error::code::FENCED_INSTANCE_ID);
    assert_eq!(
        fenced.to_string(),
        "Static member b with instance id i-1 was fenced by member a."
    );
    let mut unknown = beat("c", 1, None);
    unknown.instance_id = Some("i-9".into());
    assert_eq!(
        g.heartbeat(unknown, &config(), &topics, now, 0)
            .unwrap_err()
            .to_string(),
        "Instance id i-9 is unknown."
    );

    // Leaving with -2: still a member, tasks kept, nothing reassigned.
    let mut leave = beat("a", LEAVE_STATIC_EPOCH, None);
    leave.instance_id = Some("i-1".into());
    let left = g.heartbeat(leave, &config(), &topics, now, 0).unwrap();
    assert_eq!(left.member_epoch, LEAVE_STATIC_EPOCH);
    assert_eq!(g.members["a"].member_epoch, LEAVE_STATIC_EPOCH);
    assert_eq!(g.members["a"].assigned.active, tasks);
    assert_eq!(g.group_epoch, group_epoch);

    // The next incarnation (a new member id) takes the tasks over, in the same group epoch.
    let back = g
        .heartbeat(static_join("a2"), &config(), &topics, now, 0)
        .unwrap();
    assert!(!g.members.contains_key("a"));
    assert_eq!(back.assignment.unwrap().active, tasks);
    assert_eq!(back.member_epoch, g.group_epoch);
    assert_eq!(g.group_epoch, group_epoch);
    assert_eq!(g.static_members["i-1"], "a2");

    // A -2 member whose session runs out is removed, and the instance id freed.
    let mut leave = beat("a2", back.member_epoch, None);
    leave.member_epoch = LEAVE_STATIC_EPOCH;
    leave.instance_id = Some("i-1".into());
    g.heartbeat(leave, &config(), &topics, now, 0).unwrap();
    let expired = g.expire(now + Duration::from_secs(46), 0);
    assert_eq!(expired, vec!["a2".to_string()]);
    assert!(g.static_members.is_empty());
    assert!(g.group_epoch > group_epoch);
}

#[test]
fn heartbeats_are_checked_as_kafka_checks_them() {
    let mut leave = beat("a", LEAVE_STATIC_EPOCH, None);
    assert_eq!(
        validate::validate(&leave).unwrap_err().to_string(),
        "InstanceId can't be null."
    );
    leave.member_epoch = -3;
    assert_eq!(
        validate::validate(&leave).unwrap_err().to_string(),
        "MemberEpoch is -3, but must be greater than or equal to -2."
    );
    let mut partial = beat("a", 1, Some(Tasks::new()));
    partial.warmup = None;
    assert_eq!(
        validate::validate(&partial).unwrap_err().to_string(),
        "If one task-type is non-null, all must be non-null."
    );
    let mut leaving_with_topology = beat("a", -1, None);
    leaving_with_topology.topology = Some(word_count());
    assert_eq!(
        validate::validate(&leaving_with_topology)
            .unwrap_err()
            .to_string(),
        "Topology can only be provided when (re-)joining."
    );
}
