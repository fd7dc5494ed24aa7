use super::*;
use crate::group::reconcile::{intersection, unflatten};

struct Topics(BTreeMap<String, i32>);
impl TopicsView for Topics {
    fn partitions_of(&self, topic: &str) -> Option<i32> {
        self.0.get(topic).copied()
    }
    fn topic_names(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }
    fn topic_id(&self, _: &str) -> Option<uuid::Uuid> {
        None
    }
    fn topic_name(&self, _: uuid::Uuid) -> Option<String> {
        None
    }
}

fn topics() -> Topics {
    Topics(
        [("t".to_string(), 4), ("other".to_string(), 2)]
            .into_iter()
            .collect(),
    )
}

fn hb(member_id: &str, epoch: i32, owned: Option<Assignment>) -> Heartbeat {
    Heartbeat {
        member_id: member_id.into(),
        member_epoch: epoch,
        subscribed_topic_names: (epoch == 0).then(|| vec!["t".to_string()]),
        rebalance_timeout_ms: 30_000,
        owned,
        ..Heartbeat::default()
    }
}

/// One heartbeat with the default config (member ids are always given in these tests).
fn beat(
    g: &mut ConsumerGroup,
    hb: Heartbeat,
    topics: &Topics,
    now: Instant,
) -> Result<HeartbeatResult, GroupError> {
    g.heartbeat(
        hb,
        &ConsumerGroupConfig::default(),
        topics,
        now,
        0,
        || unreachable!(),
    )
}

fn count(a: &Assignment) -> usize {
    a.values().map(BTreeSet::len).sum()
}

#[test]
fn two_members_split_with_revocation_before_assignment() {
    let (topics, now) = (topics(), Instant::now());
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    let a = beat(&mut g, hb("a", 0, None), &topics, now).unwrap();
    assert_eq!(
        (a.member_epoch, count(a.assignment.as_ref().unwrap())),
        (1, 4),
        "alone: all four partitions"
    );
    let b = beat(&mut g, hb("b", 0, None), &topics, now).unwrap();
    assert_eq!(b.member_epoch, 2);
    assert_eq!(
        count(b.assignment.as_ref().unwrap()),
        0,
        "b waits: a still owns everything"
    );
    assert_eq!(g.state_name(), "Reconciling");

    // a is told to give up two partitions and stays on epoch 1 until it does.
    let a2 = beat(&mut g, hb("a", 1, None), &topics, now).unwrap();
    assert_eq!(a2.member_epoch, 1);
    let kept = a2.assignment.unwrap();
    assert_eq!(count(&kept), 2);
    assert_eq!(g.members["a"].state, MemberState::UnrevokedPartitions);
    // Without confirmation nothing moves; with it, a advances and b gets the freed ones.
    let same = beat(&mut g, hb("a", 1, None), &topics, now).unwrap();
    assert_eq!(same.member_epoch, 1);
    let a3 = beat(&mut g, hb("a", 1, Some(kept.clone())), &topics, now).unwrap();
    assert_eq!(a3.member_epoch, 2);
    let b2 = beat(&mut g, hb("b", 2, None), &topics, now).unwrap();
    let b_assigned = b2.assignment.unwrap();
    assert_eq!(count(&b_assigned), 2);
    assert!(
        flatten(&b_assigned).is_disjoint(&flatten(&kept)),
        "never owned twice"
    );
    assert_eq!(g.state_name(), "Stable");

    // KIP-1251: a's commits from epoch 1 still stand for what it has held since epoch 1.
    let kept_list: Vec<(String, i32)> = flatten(&kept).into_iter().collect();
    assert_eq!(
        g.validate_offset_commit("a", 1, true, kept_list.clone()),
        Ok(())
    );
    let given_up = flatten(&b_assigned).into_iter().next().unwrap();
    assert_eq!(
        g.validate_offset_commit("a", 1, true, [given_up.clone()]),
        Err(GroupError::StaleMemberEpoch),
        "a partition a no longer holds"
    );
    assert_eq!(
        g.validate_offset_commit("b", 2, true, [given_up.clone()]),
        Ok(())
    );

    // b leaves: a gets everything back at the next epoch.
    beat(&mut g, hb("b", LEAVE_EPOCH, None), &topics, now).unwrap();
    let a4 = beat(&mut g, hb("a", 2, None), &topics, now).unwrap();
    assert_eq!(
        (a4.member_epoch, count(a4.assignment.as_ref().unwrap())),
        (3, 4)
    );
    // Kept partitions keep their epoch; the returned ones are assigned at epoch 3.
    assert_eq!(
        g.validate_offset_commit("a", 1, true, kept_list.clone()),
        Ok(())
    );
    assert_eq!(g.validate_offset_commit("a", 2, true, kept_list), Ok(()));
    assert_eq!(
        g.validate_offset_commit("a", 2, true, [given_up.clone()]),
        Err(GroupError::StaleMemberEpoch)
    );
    assert_eq!(g.validate_offset_commit("a", 3, true, [given_up]), Ok(()));
}

#[test]
fn fencing_and_expiry() {
    let (topics, now) = (topics(), Instant::now());
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    beat(&mut g, hb("a", 0, None), &topics, now).unwrap();
    assert_eq!(
        beat(&mut g, hb("a", 7, None), &topics, now),
        Err(GroupError::FencedMemberEpoch)
    );
    assert_eq!(
        beat(&mut g, hb("zz", 1, None), &topics, now),
        Err(GroupError::UnknownMemberId)
    );
    let t0 = || [("t".to_string(), 0)];
    assert_eq!(
        g.validate_offset_commit("a", 0, true, t0()),
        Err(GroupError::StaleMemberEpoch),
        "t-0 was assigned at epoch 1"
    );
    assert_eq!(
        g.validate_offset_commit("a", 2, true, t0()),
        Err(GroupError::StaleMemberEpoch),
        "newer than the member"
    );
    assert_eq!(g.validate_offset_commit("a", 1, true, t0()), Ok(()));
    assert_eq!(
        g.validate_offset_commit("a", 1, false, t0()),
        Err(GroupError::UnsupportedVersion),
        "a member commits with OffsetCommit v9+"
    );
    assert_eq!(g.validate_offset_fetch("a", 1), Ok(()));
    assert_eq!(
        g.validate_offset_fetch("a", 0),
        Err(GroupError::StaleMemberEpoch)
    );
    assert!(g.expire(now + Duration::from_secs(44), 0).is_empty());
    assert_eq!(
        g.expire(now + Duration::from_secs(46), 0),
        vec!["a".to_string()]
    );
    assert_eq!(g.state_name(), "Empty");
    assert_eq!(
        g.validate_offset_commit("", -1, true, t0()),
        Ok(()),
        "admin commits to an empty group"
    );
}

#[test]
fn static_member_takes_over_without_a_new_epoch() {
    let (topics, now) = (topics(), Instant::now());
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    let mut join = hb("a", 0, None);
    join.instance_id = Some("i".into());
    let first = beat(&mut g, join.clone(), &topics, now).unwrap();
    let epoch = g.group_epoch;
    join.member_id = "a2".into();
    let second = beat(&mut g, join, &topics, now).unwrap();
    assert_eq!(g.group_epoch, epoch, "no new epoch");
    assert_eq!(second.member_epoch, first.member_epoch);
    assert_eq!(second.assignment, first.assignment);
    let mut stale = hb("a", 1, None);
    stale.instance_id = Some("i".into());
    assert!(
        beat(&mut g, stale, &topics, now).is_err(),
        "the old incarnation is gone"
    );
}

#[test]
fn assignors() {
    let subs: BTreeMap<String, BTreeSet<String>> = ["m1", "m2", "m3"]
        .iter()
        .map(|m| (m.to_string(), ["t".to_string()].into()))
        .collect();
    let parts: BTreeMap<String, i32> = [("t".to_string(), 7)].into();
    let range = assign_range(&subs, &parts);
    assert_eq!(range["m1"]["t"], (0..3).collect());
    assert_eq!(range["m3"]["t"], (5..7).collect());
    let uniform = assign_uniform(&subs, &parts, &HashMap::new());
    let sizes: Vec<usize> = ["m1", "m2", "m3"]
        .iter()
        .map(|m| count(&uniform[*m]))
        .collect();
    assert_eq!(sizes.iter().sum::<usize>(), 7);
    assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
    // Sticky: a fourth member takes only what it needs; the others keep the rest.
    let mut more = subs.clone();
    more.insert("m4".into(), ["t".to_string()].into());
    let next = assign_uniform(&more, &parts, &uniform);
    let moved: usize = ["m1", "m2", "m3"]
        .iter()
        .map(|m| {
            flatten(&uniform[*m])
                .difference(&flatten(&next[*m]))
                .count()
        })
        .sum();
    assert!(moved <= 2, "moved {moved}");
    assert!(count(&next["m4"]) >= 1);
}

#[test]
fn regex_subscriptions_follow_new_topics() {
    let now = Instant::now();
    let mut topics = Topics([("orders-eu".to_string(), 1)].into_iter().collect());
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    let join = Heartbeat {
        member_id: "a".into(),
        member_epoch: 0,
        subscribed_topic_regex: Some("orders-.*".into()),
        rebalance_timeout_ms: 1000,
        ..Heartbeat::default()
    };
    let r = beat(&mut g, join, &topics, now).unwrap();
    assert_eq!(
        r.assignment.unwrap().keys().collect::<Vec<_>>(),
        vec!["orders-eu"]
    );
    topics.0.insert("orders-us".into(), 2);
    let r = beat(&mut g, hb("a", r.member_epoch, None), &topics, now).unwrap();
    assert_eq!(
        count(r.assignment.as_ref().unwrap()),
        3,
        "the new matching topic is assigned"
    );
}

#[test]
fn a_regex_matches_internal_topics_as_kafkas_does() {
    let now = Instant::now();
    let topics = Topics(
        [
            ("__consumer_offsets".to_string(), 2),
            ("orders".to_string(), 1),
        ]
        .into_iter()
        .collect(),
    );
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    let join = Heartbeat {
        member_id: "a".into(),
        member_epoch: 0,
        subscribed_topic_regex: Some("orders|__consumer_offsets".into()),
        rebalance_timeout_ms: 1000,
        ..Heartbeat::default()
    };
    let r = beat(&mut g, join, &topics, now).unwrap();
    assert_eq!(
        r.assignment.unwrap().keys().collect::<Vec<_>>(),
        vec!["__consumer_offsets", "orders"]
    );
}

#[test]
fn uniform_keeps_members_within_one_of_each_other_when_a_member_joins() {
    let subscriptions: BTreeMap<String, BTreeSet<String>> = ["a", "b", "c"]
        .iter()
        .map(|m| (m.to_string(), ["t".to_string()].into_iter().collect()))
        .collect();
    let partitions: BTreeMap<String, i32> = [("t".to_string(), 4)].into_iter().collect();
    let previous: HashMap<String, Assignment> = [
        (
            "a".to_string(),
            unflatten([("t".to_string(), 0), ("t".to_string(), 1)]),
        ),
        (
            "b".to_string(),
            unflatten([("t".to_string(), 2), ("t".to_string(), 3)]),
        ),
    ]
    .into_iter()
    .collect();
    let out = assign_uniform(&subscriptions, &partitions, &previous);
    let mut counts: Vec<usize> = out.values().map(count).collect();
    counts.sort();
    assert_eq!(counts, vec![1, 1, 2], "not 2, 2, 0: {out:?}");
    let owned: BTreeSet<(String, i32)> = out.values().flat_map(flatten).collect();
    assert_eq!(owned.len(), 4, "every partition once");
    // Sticky: a and b each kept partitions they had.
    for (member, had) in &previous {
        assert!(
            !intersection(&out[member], had).is_empty(),
            "{member} kept one"
        );
    }
}

#[test]
fn a_full_heartbeat_hears_its_assignment_again() {
    let (topics, now) = (topics(), Instant::now());
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    let joined = beat(&mut g, hb("a", 0, None), &topics, now).unwrap();
    assert_eq!(count(joined.assignment.as_ref().unwrap()), 4);
    let quiet = beat(&mut g, hb("a", 1, None), &topics, now).unwrap();
    assert_eq!(
        quiet.assignment, None,
        "unchanged and not asked: not repeated"
    );
    // A client that lost a response says everything again (Kafka's full request).
    let mut full = hb("a", 1, Some(Assignment::new()));
    full.subscribed_topic_names = Some(vec!["t".to_string()]);
    let again = beat(&mut g, full, &topics, now).unwrap();
    assert_eq!(
        again.assignment.as_ref().map(count),
        Some(4),
        "a full request hears the assignment"
    );
}

#[test]
fn a_join_writes_the_targets_that_changed_not_every_members() {
    let (now, topics) = (
        Instant::now(),
        Topics([("t".to_string(), 6)].into_iter().collect()),
    );
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    for member in ["a", "b", "c"] {
        beat(&mut g, hb(member, 0, None), &topics, now).unwrap();
    }
    // Settle: 2 partitions each, every member on the last epoch.
    for _ in 0..3 {
        for member in ["a", "b", "c"] {
            let epoch = g.members[member].member_epoch;
            let owned = g.members[member].assigned.clone();
            beat(&mut g, hb(member, epoch, Some(owned)), &topics, now).unwrap();
        }
    }
    assert!(
        ["a", "b", "c"]
            .iter()
            .all(|m| count(&g.members[*m].assigned) == 2)
    );
    g.changes.clear();
    beat(&mut g, hb("d", 0, None), &topics, now).unwrap();
    let targets: Vec<&Change> = g
        .changes
        .iter()
        .filter(|c| matches!(c, Change::TargetMember(_)))
        .collect();
    // 6 over 4: two keep 2, c gives one up to d. Only c's and d's targets are written.
    assert_eq!(
        targets,
        [
            &Change::TargetMember("c".into()),
            &Change::TargetMember("d".into())
        ],
        "{:?}",
        g.changes
    );
    assert!(g.changes.contains(&Change::TargetEpoch));
}

/// Kafka's `canComputeNextTargetAssignment` (KIP-1263): a member that joins within
/// `assignment.interval.ms` of the last target joins at that target's epoch with nothing; the
/// first heartbeat once the interval has passed, whoever sends it, computes the next target.
/// With an interval of 0 the join is assigned at once.
#[test]
fn a_join_within_the_assignment_interval_waits_for_the_next_target() {
    let (topics, now) = (topics(), Instant::now());
    let paced = ConsumerGroupConfig {
        assignment_interval_ms: 1_000,
        ..ConsumerGroupConfig::default()
    };
    let at = |g: &mut ConsumerGroup, hb: Heartbeat, config: &ConsumerGroupConfig, ms: i64| {
        g.heartbeat(hb, config, &topics, now, ms, || unreachable!())
            .unwrap()
    };
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    let a = at(&mut g, hb("a", 0, None), &paced, 10_000);
    assert_eq!((a.member_epoch, g.assignment_timestamp_ms), (1, 10_000));
    g.changes.clear();
    let b = at(&mut g, hb("b", 0, None), &paced, 10_500);
    assert_eq!(
        (b.member_epoch, b.assignment.map(|a| count(&a))),
        (1, Some(0)),
        "b joins at the last target's epoch, with nothing"
    );
    assert_eq!((g.group_epoch, g.assignment_epoch), (2, 1));
    assert_eq!(g.state_name(), "Assigning");
    assert!(!g.changes.contains(&Change::TargetEpoch));
    let a = at(&mut g, hb("a", 1, None), &paced, 10_999);
    assert_eq!((a.member_epoch, g.assignment_epoch), (1, 1), "still inside");
    let a = at(&mut g, hb("a", 1, None), &paced, 11_000);
    assert_eq!(g.assignment_epoch, 2, "the interval has passed");
    assert_eq!(g.assignment_timestamp_ms, 11_000);
    assert!(g.changes.contains(&Change::TargetEpoch));
    assert_eq!(
        (a.member_epoch, a.assignment.map(|a| count(&a))),
        (1, Some(2)),
        "a gives up half before the new epoch"
    );

    // Interval 0: the second join computes the next target itself.
    let at_once = ConsumerGroupConfig {
        assignment_interval_ms: 0,
        ..ConsumerGroupConfig::default()
    };
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    at(&mut g, hb("a", 0, None), &at_once, 10_000);
    let b = at(&mut g, hb("b", 0, None), &at_once, 10_001);
    assert_eq!((b.member_epoch, g.assignment_epoch), (2, 2));
}

/// librdkafka says its subscription again with an empty regex (`""`) beside the names: that
/// is no regex, and no change. It started a new group epoch on every such heartbeat, so a
/// 1,000-member group went through a thousand epochs (and targets) after it had formed.
#[test]
fn an_empty_regex_said_again_is_no_subscription_change() {
    let (topics, now) = (topics(), Instant::now());
    let mut g = ConsumerGroup::new("g", BTreeMap::new(), 0);
    let joined = beat(&mut g, hb("a", 0, None), &topics, now).unwrap();
    let epoch = g.group_epoch;
    let again = Heartbeat {
        subscribed_topic_names: Some(vec!["t".to_string()]),
        subscribed_topic_regex: Some(String::new()),
        ..hb("a", joined.member_epoch, joined.assignment)
    };
    beat(&mut g, again, &topics, now).unwrap();
    assert_eq!(g.group_epoch, epoch);
    assert_eq!(g.members["a"].subscribed_topic_regex, None);
}
