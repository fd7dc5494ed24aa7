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

fn beat(member: &str, epoch: i32, active: Option<Tasks>) -> StreamsHeartbeat {
    StreamsHeartbeat {
        member_id: member.into(),
        member_epoch: epoch,
        rebalance_timeout_ms: -1,
        active,
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
    assert_eq!(g.validate_offset_commit("", -1), Ok(()));
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
