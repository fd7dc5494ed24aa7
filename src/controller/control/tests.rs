//! Unit tests of the active controller's decisions, driven with ticks.
use super::*;
use crate::metadata::image::PartitionRegistration;
use crate::metadata::records::NO_LEADER;

const SESSION_MS: i64 = 9_000;

/// Broker `id`'s two log directories.
fn dirs_of(id: i32) -> [Uuid; 2] {
    [1, 2].map(|d| Uuid::from_u128(id as u128 * 10 + d))
}

/// A controller with a log offset counter: each operation is the next entry.
struct Harness {
    control: ClusterControl,
    offset: u64,
    epochs: BTreeMap<i32, i64>,
    now: i64,
}

impl Harness {
    fn new(unclean: bool) -> Self {
        let config = ControlConfig {
            own_node: 100,
            broker_session_timeout_ms: SESSION_MS,
            default_partitions: 1,
            default_replication_factor: 1,
            unclean_leader_election: unclean,
            tokens: crate::auth::delegation_token::TokenSettings::default(),
        };
        let mut control = ClusterControl::activate(config, MetadataImage::default(), 0);
        control.bootstrap(1, "cluster-a", &[]).unwrap();
        Self {
            control,
            offset: 1,
            epochs: BTreeMap::new(),
            now: 0,
        }
    }

    fn next(&mut self) -> u64 {
        self.offset += 1;
        self.offset
    }

    fn register_as(&mut self, id: i32, rack: Option<&str>) -> Result<i64, Error> {
        let offset = self.next();
        let request = BrokerRegistrationRequest {
            broker_id: id,
            cluster_id: "cluster-a".into(),
            incarnation_id: Uuid::new_v4(),
            endpoints: vec![Endpoint {
                name: "PLAINTEXT".into(),
                host: "127.0.0.1".into(),
                port: 9000 + id as u16,
                security_protocol: 0,
            }],
            rack: rack.map(str::to_string),
            log_dirs: dirs_of(id).to_vec(),
        };
        let epoch = self
            .control
            .register_broker(offset, request, self.now)?
            .reply;
        self.epochs.insert(id, epoch);
        Ok(epoch)
    }

    fn heartbeat(&mut self, id: i32, shutdown: bool) -> Result<HeartbeatReply, Error> {
        self.heartbeat_offline(id, shutdown, &[])
    }

    fn heartbeat_offline(
        &mut self,
        id: i32,
        shutdown: bool,
        offline: &[Uuid],
    ) -> Result<HeartbeatReply, Error> {
        let offset = self.next();
        let request = HeartbeatRequest {
            broker_id: id,
            broker_epoch: self.epochs[&id],
            metadata_offset: offset,
            want_fence: false,
            want_shutdown: shutdown,
            offline_log_dirs: offline.to_vec(),
        };
        Ok(self.control.heartbeat(offset, request, self.now)?.reply)
    }

    fn start(&mut self, ids: &[i32]) {
        for id in ids {
            self.register_as(*id, None).unwrap();
            assert!(!self.heartbeat(*id, false).unwrap().is_fenced);
        }
    }

    /// Time passes; only `alive` keep heartbeating (every 2 s, as brokers do).
    fn advance(&mut self, ms: i64, alive: &[i32]) -> Vec<i32> {
        let mut fenced = Vec::new();
        let end = self.now + ms;
        while self.now < end {
            self.now = (self.now + 2_000).min(end);
            for id in alive {
                self.heartbeat(*id, false).unwrap();
            }
            let offset = self.next();
            fenced.extend(self.control.tick(offset, self.now).unwrap().reply);
        }
        fenced
    }

    fn create(&mut self, name: &str, partitions: i32, rf: i16, configs: &[(&str, &str)]) -> Uuid {
        let offset = self.next();
        let request = TopicRequest {
            name: name.into(),
            partitions,
            replication_factor: rf,
            assignments: Vec::new(),
            configs: configs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        };
        self.control
            .create_topic(offset, request, false)
            .unwrap()
            .reply
            .0
    }

    fn partition(&self, topic: &str, p: i32) -> PartitionRegistration {
        self.control.image().partition(topic, p).unwrap().clone()
    }

    fn alter_isr(
        &mut self,
        topic_id: Uuid,
        p: i32,
        by: i32,
        isr: &[i32],
    ) -> Result<PartitionRegistration, Error> {
        let name = self
            .control
            .image()
            .topic_by_id(topic_id)
            .unwrap()
            .name
            .clone();
        let current = self.partition(&name, p);
        let offset = self.next();
        let request = IsrChange {
            broker_id: by,
            broker_epoch: self.epochs[&by],
            topic_id,
            partition: p,
            leader_epoch: current.leader_epoch,
            partition_epoch: current.partition_epoch,
            new_isr: isr.to_vec(),
        };
        Ok(self.control.alter_partition(offset, &request)?.reply)
    }
}

#[test]
fn replicas_are_placed_round_robin_and_the_first_replica_leads() {
    let mut h = Harness::new(false);
    h.start(&[1, 2, 3]);
    h.create("t", 4, 3, &[]);
    let placed: Vec<(Vec<i32>, i32)> = (0..4)
        .map(|p| {
            let r = h.partition("t", p);
            (r.replicas, r.leader)
        })
        .collect();
    assert_eq!(
        placed,
        vec![
            (vec![1, 2, 3], 1),
            (vec![2, 3, 1], 2),
            (vec![3, 1, 2], 3),
            (vec![1, 2, 3], 1)
        ]
    );
    let offset = h.next();
    let too_many = TopicRequest {
        name: "u".into(),
        partitions: 1,
        replication_factor: 4,
        assignments: Vec::new(),
        configs: BTreeMap::new(),
    };
    assert!(matches!(
        h.control.create_topic(offset, too_many, false),
        Err(Error::InvalidReplicationFactor(_))
    ));
    // Brokers not yet unfenced are not placed on.
    h.register_as(4, None).unwrap();
    h.create("v", 4, 3, &[]);
    assert!((0..4).all(|p| !h.partition("v", p).replicas.contains(&4)));
}

/// A partition count from the wire must not size the records unchecked (a request for
/// 2^31 - 1 partitions aborted the process): over Kafka's cap the request is refused
/// before anything is placed, with or without `validate_only`.
#[test]
fn too_many_partitions_are_a_policy_violation() {
    let mut h = Harness::new(false);
    h.start(&[1]);
    for (partitions, validate_only) in [(i32::MAX, false), (i32::MAX, true), (10_001, false)] {
        let offset = h.next();
        let request = TopicRequest {
            name: "huge".into(),
            partitions,
            replication_factor: 1,
            assignments: Vec::new(),
            configs: BTreeMap::new(),
        };
        match h.control.create_topic(offset, request, validate_only) {
            Err(Error::PolicyViolation(message)) => assert_eq!(message, TOO_MANY_PARTITIONS),
            other => panic!("{partitions} partitions: {other:?}"),
        }
    }
    h.create("t", 1, 1, &[]);
    let offset = h.next();
    assert!(matches!(
        h.control
            .create_partitions(offset, "t", i32::MAX, None, false),
        Err(Error::PolicyViolation(_))
    ));
    let offset = h.next();
    h.control
        .create_partitions(offset, "t", 10_001, None, true)
        .unwrap();
}

#[test]
fn placement_alternates_racks() {
    let mut h = Harness::new(false);
    for (id, rack) in [(1, "a"), (2, "a"), (3, "b"), (4, "b")] {
        h.register_as(id, Some(rack)).unwrap();
        h.heartbeat(id, false).unwrap();
    }
    h.create("t", 4, 2, &[]);
    let rack = |id: i32| if id <= 2 { "a" } else { "b" };
    for p in 0..4 {
        let replicas = h.partition("t", p).replicas;
        assert_ne!(
            rack(replicas[0]),
            rack(replicas[1]),
            "partition {p}: {replicas:?}"
        );
    }
}

#[test]
fn a_silent_leader_is_fenced_and_a_new_leader_is_elected_from_the_isr() {
    let mut h = Harness::new(false);
    h.start(&[1, 2, 3]);
    let id = h.create("t", 3, 3, &[]);
    let before = h.partition("t", 0);
    assert_eq!(before.leader, 1);
    // Sessions survive as long as heartbeats come.
    assert!(h.advance(SESSION_MS * 3, &[1, 2, 3]).is_empty());
    // Broker 1 goes quiet: fenced once its session runs out, not before.
    assert!(h.advance(SESSION_MS - 1_000, &[2, 3]).is_empty());
    assert_eq!(h.advance(2_000, &[2, 3]), vec![1]);
    let after = h.partition("t", 0);
    assert_eq!(after.leader, 2);
    assert_eq!(after.leader_epoch, before.leader_epoch + 1);
    assert_eq!(after.isr, vec![2, 3]);
    for p in 1..3 {
        assert!(!h.partition("t", p).isr.contains(&1));
    }
    // The deposed leader cannot change the ISR with its old epoch: no split brain.
    let offset = h.next();
    let stale = IsrChange {
        broker_id: 1,
        broker_epoch: h.epochs[&1],
        topic_id: id,
        partition: 0,
        leader_epoch: before.leader_epoch,
        partition_epoch: before.partition_epoch,
        new_isr: vec![1],
    };
    assert!(matches!(
        h.control.alter_partition(offset, &stale),
        Err(Error::FencedLeaderEpoch { .. })
    ));
    // Nor may the new leader add the fenced broker back.
    assert!(matches!(
        h.alter_isr(id, 0, 2, &[1, 2, 3]),
        Err(Error::IneligibleReplica(1, _))
    ));
    // Broker 1 heartbeats again (a healed network partition): unfenced, but still out
    // of the ISR and not leading until the leader takes it back.
    assert!(!h.heartbeat(1, false).unwrap().is_fenced);
    let healed = h.partition("t", 0);
    assert_eq!((healed.leader, healed.isr), (2, vec![2, 3]));
    let rejoined = h.alter_isr(id, 0, 2, &[1, 2, 3]).unwrap();
    assert_eq!(rejoined.isr, vec![1, 2, 3], "ISR kept in replica order");
    assert_eq!(
        rejoined.leader, 2,
        "no automatic move back to the preferred leader"
    );
    // ElectLeaders moves it back.
    let offset = h.next();
    h.control
        .elect_leader(offset, "t", 0, Election::Preferred)
        .unwrap();
    assert_eq!(h.partition("t", 0).leader, 1);
    let offset = h.next();
    assert!(matches!(
        h.control.elect_leader(offset, "t", 0, Election::Preferred),
        Err(Error::ElectionNotNeeded)
    ));
}

#[test]
fn the_last_in_sync_replica_keeps_the_partition_until_it_returns() {
    let mut h = Harness::new(false);
    h.start(&[1, 2, 3]);
    h.create("t", 1, 3, &[]);
    assert_eq!(h.advance(SESSION_MS + 2_000, &[1, 2]), vec![3]);
    assert_eq!(h.advance(SESSION_MS + 2_000, &[1]), vec![2]);
    let one_left = h.partition("t", 0);
    assert_eq!((one_left.leader, one_left.isr.clone()), (1, vec![1]));
    assert_eq!(h.advance(SESSION_MS + 2_000, &[]), vec![1]);
    let none_left = h.partition("t", 0);
    assert_eq!(none_left.leader, NO_LEADER);
    assert_eq!(none_left.isr, vec![1], "the ISR is never empty");
    // Broker 3 returns first: not in sync, so without unclean election nobody leads.
    h.register_as(3, None).unwrap();
    h.heartbeat(3, false).unwrap();
    assert_eq!(h.partition("t", 0).leader, NO_LEADER);
    let offset = h.next();
    assert!(matches!(
        h.control.elect_leader(offset, "t", 0, Election::Preferred),
        Err(Error::PreferredLeaderNotAvailable)
    ));
    // The last in-sync replica comes back and leads again.
    h.register_as(1, None).unwrap();
    h.heartbeat(1, false).unwrap();
    let back = h.partition("t", 0);
    assert_eq!((back.leader, back.isr), (1, vec![1]));
}

#[test]
fn unclean_election_takes_any_live_replica_when_allowed() {
    let mut h = Harness::new(false);
    h.start(&[1, 2]);
    h.create("safe", 1, 2, &[]);
    h.create("lossy", 1, 2, &[("unclean.leader.election.enable", "true")]);
    // 2 drops out of the ISRs, then 1 (the last in sync) dies while 2 is back.
    assert_eq!(h.advance(SESSION_MS + 2_000, &[1]), vec![2]);
    h.register_as(2, None).unwrap();
    h.heartbeat(2, false).unwrap();
    assert_eq!(h.advance(SESSION_MS + 2_000, &[2]), vec![1]);
    assert_eq!(h.partition("safe", 0).leader, NO_LEADER);
    let lossy = h.partition("lossy", 0);
    assert_eq!((lossy.leader, lossy.isr), (2, vec![2]));
    // An operator may force it for the other topic.
    let offset = h.next();
    h.control
        .elect_leader(offset, "safe", 0, Election::Unclean)
        .unwrap();
    assert_eq!(h.partition("safe", 0).leader, 2);
}

#[test]
fn controlled_shutdown_moves_leadership_before_the_broker_may_stop() {
    let mut h = Harness::new(false);
    h.start(&[1, 2, 3]);
    h.create("t", 3, 2, &[]);
    // Broker 1 leads partition 0 and is a follower of partition 2.
    let reply = h.heartbeat(1, true).unwrap();
    assert!(reply.should_shutdown);
    assert!(reply.is_fenced);
    for p in 0..3 {
        let r = h.partition("t", p);
        assert_ne!(r.leader, 1);
        assert!(!r.isr.contains(&1));
    }
    assert_eq!(h.partition("t", 0).leader, 2);
    // New topics avoid it.
    h.create("u", 3, 2, &[]);
    assert!((0..3).all(|p| !h.partition("u", p).replicas.contains(&1)));
}

#[test]
fn registration_rules() {
    let mut h = Harness::new(false);
    h.start(&[1]);
    let epoch = h.epochs[&1];
    // A live broker's id cannot be taken by another process...
    assert!(matches!(
        h.register_as(1, None),
        Err(Error::DuplicateBrokerRegistration(1))
    ));
    h.epochs.insert(1, epoch);
    // ... until its session ends.
    h.advance(SESSION_MS + 2_000, &[]);
    let new_epoch = h.register_as(1, None).unwrap();
    assert!(new_epoch > epoch);
    h.epochs.insert(1, epoch);
    assert!(matches!(
        h.heartbeat(1, false),
        Err(Error::StaleBrokerEpoch { .. })
    ));
    let offset = h.next();
    let wrong_cluster = BrokerRegistrationRequest {
        broker_id: 5,
        cluster_id: "other".into(),
        incarnation_id: Uuid::new_v4(),
        endpoints: Vec::new(),
        rack: None,
        log_dirs: Vec::new(),
    };
    assert!(matches!(
        h.control.register_broker(offset, wrong_cluster, 0),
        Err(Error::InconsistentClusterId { .. })
    ));
    // A registered broker stays fenced until it has caught up with its registration.
    let offset = h.next();
    let request = HeartbeatRequest {
        broker_id: 1,
        broker_epoch: new_epoch,
        metadata_offset: new_epoch as u64 - 1,
        want_fence: false,
        want_shutdown: false,
        offline_log_dirs: Vec::new(),
    };
    let reply = h.control.heartbeat(offset, request, h.now).unwrap().reply;
    assert!(reply.is_fenced && !reply.is_caught_up);
}

#[test]
fn alter_partition_checks_the_partition_epoch_and_membership() {
    let mut h = Harness::new(false);
    h.start(&[1, 2, 3]);
    let id = h.create("t", 1, 3, &[]);
    let shrunk = h.alter_isr(id, 0, 1, &[1, 2]).unwrap();
    assert_eq!(shrunk.isr, vec![1, 2]);
    assert_eq!(shrunk.partition_epoch, 1);
    assert_eq!(shrunk.leader_epoch, 0, "ISR changes keep the leader epoch");
    let offset = h.next();
    let outdated = IsrChange {
        broker_id: 1,
        broker_epoch: h.epochs[&1],
        topic_id: id,
        partition: 0,
        leader_epoch: 0,
        partition_epoch: 0,
        new_isr: vec![1],
    };
    assert!(matches!(
        h.control.alter_partition(offset, &outdated),
        Err(Error::InvalidUpdateVersion { .. })
    ));
    assert!(matches!(
        h.alter_isr(id, 0, 2, &[2]),
        Err(Error::InvalidRequest(_))
    ));
    assert!(matches!(
        h.alter_isr(id, 0, 1, &[2, 3]),
        Err(Error::InvalidRequest(_))
    ));
    assert!(matches!(
        h.alter_isr(id, 0, 1, &[1, 7]),
        Err(Error::InvalidRequest(_))
    ));
}

/// A leader rejoined by a follower asks for all its partitions in one AlterPartition: one
/// decision, one entry, each partition answered on its own (a stale one refused, the others
/// changed), and a partition named twice sees the first change.
#[test]
fn an_alter_partition_of_many_partitions_is_decided_at_once_and_answered_each() {
    let mut h = Harness::new(false);
    h.start(&[1, 2, 3]);
    let id = h.create("t", 6, 3, &[]);
    let led: Vec<i32> = (0..6)
        .filter(|p| h.partition("t", *p).leader == 1)
        .collect();
    assert!(
        led.len() >= 2,
        "round robin gives broker 1 two of six: {led:?}"
    );
    let change = |p: i32, partition_epoch: i32, isr: Vec<i32>| IsrChange {
        broker_id: 1,
        broker_epoch: h.epochs[&1],
        topic_id: id,
        partition: p,
        leader_epoch: 0,
        partition_epoch,
        new_isr: isr,
    };
    let requests = vec![
        change(led[0], 0, vec![1, 2]),
        change(led[1], 7, vec![1]),
        change(led[0], 0, vec![1]),
    ];
    let offset = h.next();
    let outcome = h.control.alter_partitions(offset, &requests).unwrap();
    assert_eq!(
        outcome.records.len(),
        1,
        "one record for the one change made"
    );
    let [first, stale, twice] = &outcome.reply[..] else {
        panic!("one answer per change: {:?}", outcome.reply);
    };
    assert_eq!(first.as_ref().unwrap().isr, vec![1, 2]);
    assert!(matches!(
        stale,
        Err(Error::InvalidUpdateVersion { got: 7, .. })
    ));
    assert!(
        matches!(
            twice,
            Err(Error::InvalidUpdateVersion { got: 0, current: 1 })
        ),
        "{twice:?}"
    );
    assert_eq!(h.control.image().offset, offset);
    assert_eq!(h.partition("t", led[0]).isr, vec![1, 2]);
    assert_eq!(h.partition("t", led[1]).isr.len(), 3);
}

#[test]
fn topic_admin_and_producer_id_blocks() {
    let mut h = Harness::new(false);
    h.start(&[1, 2]);
    h.create("t", 2, 2, &[("retention.ms", "1000")]);
    let offset = h.next();
    h.control
        .create_partitions(offset, "t", 5, None, false)
        .unwrap();
    assert_eq!(h.partition("t", 4).replicas, vec![1, 2]);
    let offset = h.next();
    let configs = [("cleanup.policy".to_string(), "compact".to_string())].into();
    h.control
        .set_topic_configs(offset, "t", configs, false)
        .unwrap();
    let topic = h.control.image().topic("t").unwrap().clone();
    assert_eq!(topic.configs.len(), 1);
    assert_eq!(topic.configs["cleanup.policy"], "compact");
    let offset = h.next();
    let first = h
        .control
        .allocate_producer_ids(offset, 1, h.epochs[&1])
        .unwrap()
        .reply;
    let offset = h.next();
    let second = h
        .control
        .allocate_producer_ids(offset, 2, h.epochs[&2])
        .unwrap()
        .reply;
    assert_eq!(second.0, first.0 + first.1);
    let offset = h.next();
    h.control.delete_topic(offset, "t").unwrap();
    assert!(h.control.image().topic("t").is_none());
}

#[test]
fn a_failed_log_directory_moves_exactly_its_replicas_leadership_and_isr() {
    let mut h = Harness::new(false);
    h.start(&[1, 2, 3]);
    let topic = h.create("t", 3, 3, &[]);
    let led_by_1: Vec<i32> = (0..3)
        .filter(|p| h.partition("t", *p).leader == 1)
        .collect();
    assert!(!led_by_1.is_empty());
    // Broker 1 places partition 0 in its first directory, the others in its second.
    let [first, second] = dirs_of(1);
    let assignments: Vec<DirectoryAssignment> = (0..3)
        .map(|p| DirectoryAssignment {
            topic_id: topic,
            partition: p,
            directory_id: if p == 0 { first } else { second },
        })
        .chain([DirectoryAssignment {
            topic_id: Uuid::new_v4(),
            partition: 0,
            directory_id: first,
        }])
        .collect();
    let offset = h.next();
    let outcomes = h
        .control
        .assign_replicas_to_dirs(offset, 1, h.epochs[&1], assignments)
        .unwrap()
        .reply;
    assert_eq!(outcomes.iter().filter(|o| o.is_none()).count(), 3);
    assert!(matches!(outcomes[3], Some(Error::UnknownTopicId)));
    assert_eq!(h.partition("t", 1).directories.get(&1), Some(&second));

    // The second directory fails: partitions 1 and 2 lose broker 1, partition 0 keeps it.
    h.heartbeat_offline(1, false, &[second]).unwrap();
    assert_eq!(h.partition("t", 0).isr.len(), 3);
    for p in [1, 2] {
        let partition = h.partition("t", p);
        assert!(!partition.isr.contains(&1), "{partition:?}");
        assert_ne!(partition.leader, 1);
    }
    assert_eq!(h.control.image().brokers[&1].log_dirs, vec![first]);
    // It cannot come back into the ISR from the failed directory.
    let refused = h.alter_isr(topic, 1, h.partition("t", 1).leader, &[1, 2, 3]);
    assert!(
        matches!(refused, Err(Error::IneligibleReplica(1, _))),
        "{refused:?}"
    );
    // Recreated in the first directory, it may.
    let offset = h.next();
    h.control
        .assign_replicas_to_dirs(
            offset,
            1,
            h.epochs[&1],
            vec![DirectoryAssignment {
                topic_id: topic,
                partition: 1,
                directory_id: first,
            }],
        )
        .unwrap();
    let leader = h.partition("t", 1).leader;
    let mut isr = h.partition("t", 1).isr.clone();
    isr.push(1);
    assert!(h.alter_isr(topic, 1, leader, &isr).is_ok());
}

#[test]
fn controllers_register_and_a_stopped_one_is_unregistered_with_kafkas_errors() {
    let mut h = Harness::new(false);
    let endpoint = |port| Endpoint {
        name: "CONTROLLER".into(),
        host: "127.0.0.1".into(),
        port,
        security_protocol: 0,
    };
    let registration = |id, incarnation_id, port| ControllerRegistrationRequest {
        controller_id: id,
        incarnation_id,
        endpoints: vec![endpoint(port)],
    };
    let first = Uuid::new_v4();
    let offset = h.next();
    let outcome = h
        .control
        .register_controller(offset, registration(7, first, 9097))
        .unwrap();
    assert_eq!(outcome.records.len(), 1);
    // A retry of the same incarnation writes nothing; a restart (new incarnation, new port)
    // replaces the registration.
    let offset = h.next();
    let retry = h
        .control
        .register_controller(offset, registration(7, first, 9097))
        .unwrap();
    assert!(retry.records.is_empty());
    let second = Uuid::new_v4();
    let offset = h.next();
    h.control
        .register_controller(offset, registration(7, second, 9197))
        .unwrap();
    let registered = &h.control.image().controllers[&7];
    assert_eq!(
        (registered.incarnation_id, registered.endpoints[0].port),
        (second, 9197)
    );

    // Kafka's refusals: an id not registered, and the active controller itself.
    let offset = h.next();
    let unknown = h.control.unregister_controller(offset, 8).unwrap_err();
    assert_eq!(
        unknown.code(),
        crate::error::code::CONTROLLER_ID_NOT_REGISTERED
    );
    assert_eq!(
        unknown.message(),
        "Controller ID 8 is not currently registered."
    );
    let offset = h.next();
    h.control
        .register_controller(offset, registration(100, Uuid::new_v4(), 9100))
        .unwrap();
    let offset = h.next();
    let itself = h.control.unregister_controller(offset, 100).unwrap_err();
    assert_eq!(itself.code(), crate::error::code::INVALID_REQUEST);
    assert_eq!(
        itself.message(),
        "Controller cannot unregister itself while it is active."
    );

    let offset = h.next();
    let outcome = h.control.unregister_controller(offset, 7).unwrap();
    assert_eq!(
        outcome.records,
        vec![MetadataRecord::UnregisterController { controller_id: 7 }]
    );
    assert!(!h.control.image().controllers.contains_key(&7));
    assert!(h.control.image().controllers.contains_key(&100));
    let offset = h.next();
    let again = h.control.unregister_controller(offset, 7).unwrap_err();
    assert_eq!(
        again.code(),
        crate::error::code::CONTROLLER_ID_NOT_REGISTERED
    );
}
