//! Unit tests of the classic group state machine.
use super::*;

const MS: i64 = 1_000_000;

fn config() -> GroupConfig {
    GroupConfig {
        initial_rebalance_delay_ms: 0,
        ..GroupConfig::default()
    }
}

fn request(member_id: &str, instance: Option<&str>, protocols: &[&str]) -> JoinRequest {
    JoinRequest {
        member_id: member_id.into(),
        group_instance_id: instance.map(str::to_string),
        client_id: "client".into(),
        client_host: "/127.0.0.1".into(),
        session_timeout_ms: 10_000,
        rebalance_timeout_ms: 30_000,
        protocol_type: "consumer".into(),
        protocols: protocols
            .iter()
            .map(|p| (p.to_string(), Bytes::from(format!("meta-{p}"))))
            .collect(),
        require_known_member_id: true,
    }
}

fn ids() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("member-{n}")
    }
}

/// Joins a new dynamic member the v4+ way (MEMBER_ID_REQUIRED, then rejoin); returns its id
/// and the parked join.
fn join_new(
    g: &mut ClassicGroup,
    next_id: &mut impl FnMut() -> String,
    protocols: &[&str],
    now: Instant,
) -> (String, oneshot::Receiver<JoinResult>, Effects) {
    let JoinOutcome::Respond(result, _) = g.join(
        request("", None, protocols),
        &config(),
        now,
        MS,
        &mut *next_id,
    ) else {
        panic!("expected MEMBER_ID_REQUIRED")
    };
    assert_eq!(result.error, Some(GroupError::MemberIdRequired));
    let member_id = result.member_id;
    match g.join(
        request(&member_id, None, protocols),
        &config(),
        now,
        MS,
        &mut *next_id,
    ) {
        JoinOutcome::Wait(rx, effects) => (member_id, rx, effects),
        JoinOutcome::Respond(r, _) => panic!("unexpected immediate answer {r:?}"),
    }
}

/// Fires the join timer of the current rebalance (the initial delay is always a timer,
/// even at 0 ms, as in Kafka).
fn fire(g: &mut ClassicGroup, now: Instant) -> Effects {
    g.on_join_timer(g.rebalance_id, &config(), now, MS)
}

fn sync_all(
    g: &mut ClassicGroup,
    members: &[&str],
    now: Instant,
) -> Vec<oneshot::Receiver<SyncResult>> {
    let mut waiting = Vec::new();
    let leader = g.leader.clone().unwrap();
    for m in members.iter().filter(|m| **m != leader) {
        match g.sync(
            SyncRequest {
                member_id: m.to_string(),
                group_instance_id: None,
                generation: g.generation,
                protocol_type: None,
                protocol_name: None,
                assignments: vec![],
            },
            now,
        ) {
            SyncOutcome::Wait(rx) => waiting.push(rx),
            other => panic!("follower should wait: {other:?}"),
        }
    }
    let assignments = members
        .iter()
        .map(|m| (m.to_string(), Bytes::from(format!("for-{m}"))))
        .collect();
    match g.sync(
        SyncRequest {
            member_id: leader,
            group_instance_id: None,
            generation: g.generation,
            protocol_type: Some("consumer".into()),
            protocol_name: g.protocol_name.clone(),
            assignments,
        },
        now,
    ) {
        SyncOutcome::LeaderAssigned(rx, map) => {
            g.complete_sync(map, MS);
            waiting.push(rx);
        }
        other => panic!("leader should assign: {other:?}"),
    }
    waiting
}

#[test]
fn two_members_join_sync_and_become_stable() {
    let now = Instant::now();
    let mut g = ClassicGroup::new("g", MS);
    let mut next = ids();
    let (a, mut rx_a, effects) = join_new(&mut g, &mut next, &["range", "roundrobin"], now);
    assert_eq!(
        effects.join_timer.map(|(_, at)| at),
        Some(now),
        "initial delay of 0 ms"
    );
    fire(&mut g, now);
    assert_eq!(g.state, GroupState::CompletingRebalance);
    let first = rx_a.try_recv().unwrap();
    assert_eq!(
        (
            first.generation,
            first.leader.as_str(),
            first.protocol_name.as_deref()
        ),
        (1, a.as_str(), Some("range"))
    );
    assert_eq!(first.members.len(), 1, "the leader gets the member list");

    // A second member triggers a rebalance; the first must rejoin within it.
    sync_all(&mut g, &[&a], now);
    let (b, mut rx_b, _) = join_new(&mut g, &mut next, &["roundrobin", "range"], now);
    assert_eq!(g.state, GroupState::PreparingRebalance);
    assert!(rx_b.try_recv().is_err(), "parked until everyone rejoined");
    let JoinOutcome::Wait(mut rx_a, _) = g.join(
        request(&a, None, &["range", "roundrobin"]),
        &config(),
        now,
        MS,
        &mut next,
    ) else {
        panic!()
    };
    assert_eq!(g.state, GroupState::CompletingRebalance);
    let (ja, jb) = (rx_a.try_recv().unwrap(), rx_b.try_recv().unwrap());
    assert_eq!((ja.generation, jb.generation), (2, 2));
    assert_eq!(ja.members.len(), 2);
    assert!(jb.members.is_empty(), "followers get no member list");
    assert_eq!(
        ja.protocol_name.as_deref(),
        Some("range"),
        "tie broken by the first member's preference"
    );

    let mut answers = sync_all(&mut g, &[&a, &b], now);
    assert_eq!(g.state, GroupState::Stable);
    for rx in &mut answers {
        assert!(rx.try_recv().unwrap().error.is_none());
    }
    assert_eq!(g.members[&b].assignment, Bytes::from(format!("for-{b}")));
    assert_eq!(g.heartbeat(&b, None, 2, now), Ok(()));
    assert_eq!(
        g.heartbeat(&b, None, 1, now),
        Err(GroupError::IllegalGeneration)
    );
    assert_eq!(
        g.heartbeat("ghost", None, 2, now),
        Err(GroupError::UnknownMemberId)
    );
}

#[test]
fn leave_and_session_expiry_trigger_rebalances() {
    let now = Instant::now();
    let mut g = ClassicGroup::new("g", MS);
    let mut next = ids();
    let (a, _, _) = join_new(&mut g, &mut next, &["range"], now);
    let (b, _, _) = join_new(&mut g, &mut next, &["range"], now);
    assert!(
        fire(&mut g, now).join_timer.is_some(),
        "b arrived during the initial delay: extended"
    );
    fire(&mut g, now);
    sync_all(&mut g, &[&a, &b], now);
    assert_eq!((g.state, g.generation), (GroupState::Stable, 1));

    // b leaves: a must rejoin; until then heartbeats say REBALANCE_IN_PROGRESS.
    g.leave(&b, None, &config(), now, MS).unwrap();
    assert_eq!(g.state, GroupState::PreparingRebalance);
    assert_eq!(
        g.heartbeat(&a, None, 1, now),
        Err(GroupError::RebalanceInProgress)
    );
    assert_eq!(
        g.leave(&b, None, &config(), now, MS).unwrap_err(),
        GroupError::UnknownMemberId
    );
    let JoinOutcome::Wait(mut rx, _) =
        g.join(request(&a, None, &["range"]), &config(), now, MS, &mut next)
    else {
        panic!()
    };
    assert_eq!(
        rx.try_recv().unwrap().generation,
        2,
        "completed as soon as the only member rejoined"
    );
    sync_all(&mut g, &[&a], now);

    // a stops heartbeating: nothing happens before the deadline, eviction after it.
    assert!(
        g.expire_member(&a, &config(), now + Duration::from_secs(5), MS)
            .is_none()
    );
    let effects = g
        .expire_member(&a, &config(), now + Duration::from_secs(11), MS)
        .expect("expired");
    assert!(effects.persist_group, "the now empty group is persisted");
    assert_eq!(
        g.state,
        GroupState::Empty,
        "the last member gone: the rebalance completes into Empty"
    );
    assert!(g.members.is_empty());
    assert_eq!(g.generation, 3);
}

#[test]
fn members_that_miss_the_rebalance_are_dropped() {
    let now = Instant::now();
    let mut g = ClassicGroup::new("g", MS);
    let mut next = ids();
    let (a, _, _) = join_new(&mut g, &mut next, &["range"], now);
    fire(&mut g, now);
    sync_all(&mut g, &[&a], now);
    let (b, _, _) = join_new(&mut g, &mut next, &["range"], now);
    // a never rejoins the rebalance b started; the rebalance timeout completes it without a.
    assert_eq!(g.state, GroupState::PreparingRebalance);
    g.on_join_timer(g.rebalance_id, &config(), now + Duration::from_secs(31), MS);
    assert_eq!(g.state, GroupState::CompletingRebalance);
    assert_eq!(g.members.keys().collect::<Vec<_>>(), vec![&b]);
    assert_eq!(
        g.leader.as_deref(),
        Some(b.as_str()),
        "the leader left: a new one is chosen"
    );
    assert!(!g.members.contains_key(&a));
    // A stale timer of an older rebalance does nothing.
    assert_eq!(
        g.on_join_timer(g.rebalance_id - 1, &config(), now, MS),
        Effects::default()
    );
}

#[test]
fn static_member_rejoins_stable_group_without_rebalance_and_fences_the_old_one() {
    let now = Instant::now();
    let mut g = ClassicGroup::new("g", MS);
    let mut next = ids();
    let JoinOutcome::Wait(_, _) = g.join(
        request("", Some("i1"), &["range"]),
        &config(),
        now,
        MS,
        &mut next,
    ) else {
        panic!("static members skip MEMBER_ID_REQUIRED")
    };
    fire(&mut g, now);
    let old = g.static_members["i1"].clone();
    sync_all(&mut g, &[&old], now);
    let generation = g.generation;

    let JoinOutcome::Respond(result, effects) = g.join(
        request("", Some("i1"), &["range"]),
        &config(),
        now,
        MS,
        &mut next,
    ) else {
        panic!("no rebalance expected")
    };
    assert!(result.error.is_none());
    assert_eq!(result.generation, generation);
    assert!(
        result.skip_assignment,
        "the static leader keeps the current assignment"
    );
    assert!(effects.persist_group, "the new member id is persisted");
    assert_eq!(g.state, GroupState::Stable);
    let new = result.member_id;
    assert_ne!(new, old);
    assert_eq!(
        g.heartbeat(&old, Some("i1"), generation, now),
        Err(GroupError::FencedInstanceId)
    );
    assert_eq!(g.heartbeat(&new, Some("i1"), generation, now), Ok(()));
    let SyncOutcome::Respond(sync) = g.sync(
        SyncRequest {
            member_id: new.clone(),
            group_instance_id: Some("i1".into()),
            generation,
            protocol_type: None,
            protocol_name: None,
            assignments: vec![],
        },
        now,
    ) else {
        panic!()
    };
    assert_eq!(
        sync.assignment,
        Bytes::from(format!("for-{old}")),
        "the assignment follows the instance"
    );
    // Leaving by instance id.
    g.leave("", Some("i1"), &config(), now, MS).unwrap();
    assert!(g.static_members.is_empty());
}

#[test]
fn inconsistent_protocols_and_bad_session_timeouts_are_refused() {
    let now = Instant::now();
    let mut g = ClassicGroup::new("g", MS);
    let mut next = ids();
    join_new(&mut g, &mut next, &["range"], now);
    let JoinOutcome::Respond(r, _) = g.join(
        request("", None, &["sticky"]),
        &config(),
        now,
        MS,
        &mut next,
    ) else {
        panic!()
    };
    assert_eq!(r.error, Some(GroupError::InconsistentGroupProtocol));
    let mut short = request("", None, &["range"]);
    short.session_timeout_ms = 10;
    let JoinOutcome::Respond(r, _) = g.join(short, &config(), now, MS, &mut next) else {
        panic!()
    };
    assert_eq!(r.error, Some(GroupError::InvalidSessionTimeout));
}

#[test]
fn initial_delay_waits_and_extends_while_members_arrive() {
    let now = Instant::now();
    let delayed = GroupConfig {
        initial_rebalance_delay_ms: 3_000,
        ..GroupConfig::default()
    };
    let mut g = ClassicGroup::new("g", MS);
    let mut next = ids();
    let JoinOutcome::Respond(r, _) =
        g.join(request("", None, &["range"]), &delayed, now, MS, &mut next)
    else {
        panic!()
    };
    let JoinOutcome::Wait(_, effects) = g.join(
        request(&r.member_id, None, &["range"]),
        &delayed,
        now,
        MS,
        &mut next,
    ) else {
        panic!()
    };
    let (id, deadline) = effects.join_timer.unwrap();
    assert_eq!(deadline, now + Duration::from_millis(3_000));
    assert_eq!(
        g.state,
        GroupState::PreparingRebalance,
        "not completed early during the initial delay"
    );
    let JoinOutcome::Respond(r2, _) =
        g.join(request("", None, &["range"]), &delayed, now, MS, &mut next)
    else {
        panic!()
    };
    g.join(
        request(&r2.member_id, None, &["range"]),
        &delayed,
        now,
        MS,
        &mut next,
    );
    let extended = g.on_join_timer(id, &delayed, now + Duration::from_millis(3_000), MS);
    assert!(
        extended.join_timer.is_some(),
        "a member arrived during the delay: wait once more"
    );
    assert_eq!(g.state, GroupState::PreparingRebalance);
    g.on_join_timer(id, &delayed, now + Duration::from_millis(6_000), MS);
    assert_eq!(
        (g.state, g.members.len()),
        (GroupState::CompletingRebalance, 2)
    );
}

#[test]
fn offset_commit_validation() {
    let now = Instant::now();
    let mut g = ClassicGroup::new("g", MS);
    assert_eq!(
        g.validate_offset_commit("", None, -1, false),
        Ok(()),
        "simple commits to an empty group"
    );
    let mut next = ids();
    let (a, _, _) = join_new(&mut g, &mut next, &["range"], now);
    fire(&mut g, now);
    assert_eq!(
        g.validate_offset_commit(&a, None, 1, false),
        Err(GroupError::RebalanceInProgress),
        "CompletingRebalance"
    );
    // librdkafka's 0113 v_commit_during_rebalance: a commit of the previous generation
    // during CompletingRebalance is ILLEGAL_GENERATION (checked first), an unknown member
    // UNKNOWN_MEMBER_ID; a transactional commit is not held back by the rebalance.
    assert_eq!(
        g.validate_offset_commit(&a, None, 0, false),
        Err(GroupError::IllegalGeneration),
        "stale generation during CompletingRebalance"
    );
    assert_eq!(
        g.validate_offset_commit("ghost", None, 1, false),
        Err(GroupError::UnknownMemberId)
    );
    assert_eq!(g.validate_offset_commit(&a, None, 1, true), Ok(()));
    sync_all(&mut g, &[&a], now);
    assert_eq!(g.validate_offset_commit(&a, None, 1, false), Ok(()));
    assert_eq!(
        g.validate_offset_commit(&a, None, 0, false),
        Err(GroupError::IllegalGeneration)
    );
    assert_eq!(
        g.validate_offset_commit("ghost", None, 1, false),
        Err(GroupError::UnknownMemberId)
    );
    assert_eq!(
        g.validate_offset_commit("", None, -1, false),
        Err(GroupError::UnknownMemberId),
        "not while the group has members"
    );
}

#[test]
fn subscription_topics_are_read_from_consumer_metadata() {
    // ConsumerProtocolSubscription v0: version, [topics], user data.
    let metadata = Bytes::from_static(&[
        0, 0, 0, 0, 0, 2, 0, 1, b'a', 0, 2, b'b', b'c', 0xff, 0xff, 0xff, 0xff,
    ]);
    assert_eq!(
        parse_subscription_topics(&metadata),
        Some(vec!["a".to_string(), "bc".to_string()])
    );
    assert_eq!(
        parse_subscription_topics(&[0, 0, 0x7f, 0xff, 0xff, 0xff]),
        None,
        "a lying count is rejected"
    );
}
