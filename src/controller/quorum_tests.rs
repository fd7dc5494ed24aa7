//! Tests of one voter (`quorum.rs`) over a simulated network.

use super::*;
use crate::config::BrokerConfig;
use crate::controller::metadata_log::log_config;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// Voters over a simulated network: messages are delivered in rounds; an isolated
/// voter neither sends nor receives.
struct Cluster {
    dirs: BTreeMap<u64, tempfile::TempDir>,
    nodes: BTreeMap<u64, Quorum>,
    isolated: BTreeSet<u64>,
    settings: QuorumSettings,
    /// (term, leader) pairs ever observed: one leader per term, always.
    leaders_by_term: BTreeMap<u64, u64>,
}

impl Cluster {
    fn new(size: u64, snapshot_after_entries: u64) -> Self {
        let voters: Vec<u64> = (1..=size).collect();
        let settings = QuorumSettings {
            node_id: 0,
            voters: voters.clone(),
            dynamic: false,
            election_ticks: 10,
            heartbeat_ticks: 2,
            snapshot_after_entries,
            snapshot_after_bytes: u64::MAX,
        };
        let mut cluster = Self {
            dirs: BTreeMap::new(),
            nodes: BTreeMap::new(),
            isolated: BTreeSet::new(),
            settings,
            leaders_by_term: BTreeMap::new(),
        };
        for id in voters {
            cluster
                .dirs
                .insert(id, tempfile::tempdir().expect("temp dir"));
            cluster.start(id);
        }
        cluster
    }

    fn start(&mut self, id: u64) {
        let settings = QuorumSettings {
            node_id: id,
            ..self.settings.clone()
        };
        let config = log_config(&BrokerConfig::with_overrides(&[]).unwrap());
        let node = Quorum::open(self.dirs[&id].path(), &settings, config).unwrap();
        self.nodes.insert(id, node);
    }

    fn stop(&mut self, id: u64) {
        self.nodes.remove(&id);
    }

    /// Delivers messages until the network is quiet.
    fn settle(&mut self) {
        for _ in 0..1000 {
            let mut messages = Vec::new();
            for (id, node) in &mut self.nodes {
                let progress = node.handle_ready().unwrap();
                if !self.isolated.contains(id) {
                    messages.extend(progress.messages);
                }
                if node.is_leader() {
                    let previous = self.leaders_by_term.insert(node.term(), *id);
                    assert!(
                        previous.is_none_or(|p| p == *id),
                        "two leaders in term {}: {previous:?} and {id}",
                        node.term()
                    );
                }
            }
            if messages.is_empty() {
                return;
            }
            for message in messages {
                if self.isolated.contains(&node_of(message.to)) {
                    continue;
                }
                // Through the wire encoding, as the network would carry it.
                let bytes = encode_message(&message).unwrap();
                if let Some(node) = self.nodes.get_mut(&node_of(message.to)) {
                    node.step(decode_message(&bytes).unwrap(), 0).unwrap();
                }
            }
        }
        panic!("the network never went quiet");
    }

    fn tick(&mut self, ticks: usize) {
        for _ in 0..ticks {
            for node in self.nodes.values_mut() {
                node.tick();
            }
            self.settle();
        }
    }

    fn leaders(&self) -> Vec<u64> {
        self.nodes
            .iter()
            .filter(|(id, n)| n.is_leader() && !self.isolated.contains(id))
            .map(|(id, _)| *id)
            .collect()
    }

    fn elect(&mut self) -> u64 {
        for _ in 0..100 {
            self.tick(1);
            let leaders = self.leaders();
            if leaders.len() == 1 && self.nodes[&leaders[0]].is_active_leader() {
                return leaders[0];
            }
        }
        panic!("no leader elected");
    }

    fn topic(&mut self, leader: u64, name: &str) -> Result<u64, QuorumError> {
        let record = MetadataRecord::Topic {
            name: name.into(),
            topic_id: Uuid::new_v4(),
        };
        let index = self.nodes.get_mut(&leader).unwrap().propose(&[record])?;
        self.settle();
        Ok(index)
    }

    fn topics_of(&self, id: u64) -> Vec<String> {
        self.nodes[&id]
            .image()
            .topics
            .keys()
            .map(|t| t.to_string())
            .collect()
    }
}

#[test]
fn an_observer_reads_committed_entries_or_the_snapshot_in_pieces() {
    let mut cluster = Cluster::new(1, 5);
    cluster.settle();
    for i in 0..12 {
        cluster.topic(1, &format!("t{i:02}")).unwrap();
    }
    let leader = cluster.nodes.get_mut(&1).unwrap();
    let snapshot_index = leader.raw.store().latest_snapshot().get_metadata().index;
    assert!(snapshot_index >= 5);
    // Compacted: the snapshot first, read in pieces of 7 bytes.
    let read = leader.read_for_observer(9, 1, 1 << 20, 1_000).unwrap();
    let ReadContent::SnapshotNeeded { index, term } = read.content else {
        panic!("{read:?}");
    };
    assert_eq!(index, snapshot_index);
    let mut bytes = Vec::new();
    loop {
        let chunk = leader
            .read_snapshot(index, term, bytes.len() as u64, 7)
            .unwrap();
        bytes.extend_from_slice(&chunk.bytes);
        if bytes.len() as u64 >= chunk.size {
            break;
        }
    }
    let image = image_from_snapshot(&decode_snapshot(&bytes).unwrap()).unwrap();
    assert_eq!(image.offset, index);
    assert!(matches!(
        leader.read_snapshot(index - 1, term, 0, 7),
        Err(QuorumError::SnapshotNotFound { .. })
    ));
    // Then the committed entries after it, as record batches.
    let read = leader
        .read_for_observer(9, index + 1, 1 << 20, 2_000)
        .unwrap();
    let ReadContent::Entries(batches) = read.content else {
        panic!("{read:?}");
    };
    let entries =
        crate::controller::metadata_log::entries_from_batches(&batches, index + 1).unwrap();
    assert_eq!(entries.last().unwrap().index, read.high_watermark);
    // Nothing new past the end; the observer is described.
    let read = leader
        .read_for_observer(9, read.high_watermark + 1, 1 << 20, 3_000)
        .unwrap();
    assert_eq!(read.content, ReadContent::Entries(bytes::Bytes::new()));
    let described = leader.describe(3_000).unwrap();
    assert_eq!(described.observers.len(), 1);
    assert_eq!(described.observers[0].node, 9);
    assert_eq!(
        described.observers[0].log_end_offset,
        read.high_watermark as i64
    );
}

#[test]
fn a_single_voter_leads_at_once_and_commits_alone() {
    let mut cluster = Cluster::new(1, 1000);
    cluster.settle();
    assert!(cluster.nodes[&1].is_active_leader());
    let index = cluster.topic(1, "a").unwrap();
    assert_eq!(cluster.nodes[&1].image().offset, index);
    assert_eq!(cluster.topics_of(1), vec!["a"]);
}

#[test]
fn three_voters_elect_one_leader_and_agree_on_the_log() {
    let mut cluster = Cluster::new(3, 1000);
    let leader = cluster.elect();
    for name in ["a", "b", "c"] {
        cluster.topic(leader, name).unwrap();
    }
    cluster.tick(3);
    for id in 1..=3 {
        assert_eq!(cluster.topics_of(id), vec!["a", "b", "c"], "voter {id}");
    }
    // A follower cannot propose.
    let follower = (1..=3).find(|id| *id != leader).unwrap();
    assert!(matches!(
        cluster.topic(follower, "d"),
        Err(QuorumError::NotLeader)
    ));
}

#[test]
fn an_isolated_leader_steps_down_and_its_uncommitted_entries_are_dropped() {
    let mut cluster = Cluster::new(3, 1000);
    let old = cluster.elect();
    cluster.topic(old, "before").unwrap();
    cluster.tick(3);
    let old_term = cluster.nodes[&old].term();

    cluster.isolated.insert(old);
    // Proposed on the wrong side of the partition: can never commit.
    cluster.topic(old, "lost").unwrap();
    let new = cluster.elect();
    assert_ne!(new, old);
    assert!(cluster.nodes[&new].term() > old_term);
    cluster.topic(new, "after").unwrap();
    // Check-quorum: the old leader gives up within an election timeout, so it stops
    // taking proposals it could never commit.
    cluster.tick(25);
    assert!(!cluster.nodes[&old].is_leader());
    assert!(matches!(
        cluster.topic(old, "refused"),
        Err(QuorumError::NotLeader)
    ));
    assert_eq!(cluster.topics_of(old), vec!["before"]);

    cluster.isolated.clear();
    cluster.tick(10);
    assert_eq!(
        cluster.leaders(),
        vec![new],
        "pre-vote: the returning voter does not disrupt"
    );
    for id in 1..=3 {
        assert_eq!(cluster.topics_of(id), vec!["after", "before"], "voter {id}");
    }
}

#[test]
fn a_restarted_voter_rebuilds_its_image_and_a_lagging_one_catches_up_by_snapshot() {
    let mut cluster = Cluster::new(3, 5);
    let leader = cluster.elect();
    let lagging = (1..=3).find(|id| *id != leader).unwrap();
    cluster.stop(lagging);
    for i in 0..20 {
        cluster.topic(leader, &format!("t{i:02}")).unwrap();
    }
    cluster.tick(3);
    let expected = cluster.topics_of(leader);
    assert_eq!(expected.len(), 20);
    // The leader has compacted past what the lagging voter has: only a snapshot helps.
    let leader_log = cluster.nodes[&leader].raw.store();
    assert!(leader_log.latest_snapshot().get_metadata().index > 5);
    cluster.start(lagging);
    cluster.tick(10);
    assert_eq!(cluster.topics_of(lagging), expected);

    // Every voter restarted from disk, one at a time: nothing is lost.
    for id in 1..=3 {
        cluster.stop(id);
        cluster.start(id);
        cluster.tick(30);
    }
    let leader = cluster.elect();
    cluster.topic(leader, "last").unwrap();
    cluster.tick(3);
    for id in 1..=3 {
        assert_eq!(cluster.topics_of(id).len(), 21, "voter {id}");
    }
}

/// A dynamic quorum's voter, as `sluice format --standalone` (or `--no-initial-controllers`:
/// `first` empty) starts it.
fn start_dynamic(cluster: &mut Cluster, id: u64, first: &[u64]) {
    cluster
        .dirs
        .entry(id)
        .or_insert_with(|| tempfile::tempdir().expect("temp dir"));
    let settings = QuorumSettings {
        node_id: id,
        voters: first.to_vec(),
        dynamic: true,
        ..cluster.settings.clone()
    };
    let config = log_config(&BrokerConfig::with_overrides(&[]).unwrap());
    let node = Quorum::open(cluster.dirs[&id].path(), &settings, config).unwrap();
    cluster.nodes.insert(id, node);
}

fn voter_record(node: u64) -> MetadataRecord {
    MetadataRecord::QuorumVoter {
        node_id: node as i32,
        directory_id: Uuid::new_v4(),
        endpoints: Vec::new(),
    }
}

/// Adds `node` as AddRaftVoter does: a learner first, promoted once caught up.
fn add_voter(cluster: &mut Cluster, leader: u64, node: u64) {
    let quorum = cluster.nodes.get_mut(&leader).unwrap();
    quorum
        .propose_voter_change(VoterChange::AddLearner(node), &[voter_record(node)])
        .unwrap();
    cluster.tick(3);
    assert!(cluster.nodes[&leader].learners().contains(&node));
    assert!(
        cluster.nodes[&leader].is_caught_up(node),
        "the learner caught up"
    );
    let quorum = cluster.nodes.get_mut(&leader).unwrap();
    assert!(!quorum.has_pending_voter_change());
    quorum
        .propose_voter_change(VoterChange::Promote(node), &[])
        .unwrap();
    cluster.tick(3);
}

#[test]
fn a_dynamic_quorum_adds_voters_through_learners_and_its_leader_can_leave() {
    let mut cluster = Cluster::new(0, 5);
    start_dynamic(&mut cluster, 1, &[1]);
    let leader = cluster.elect();
    assert_eq!(leader, 1, "a standalone controller leads at once");
    for n in 0..7 {
        cluster.topic(1, &format!("before-{n}")).unwrap();
    }
    // Controllers formatted to join wait, knowing nobody.
    start_dynamic(&mut cluster, 2, &[]);
    start_dynamic(&mut cluster, 3, &[]);
    cluster.tick(30);
    assert_eq!(
        cluster.leaders(),
        vec![1],
        "a joining controller never campaigns"
    );
    add_voter(&mut cluster, 1, 2);
    add_voter(&mut cluster, 1, 3);
    for id in [1, 2, 3] {
        assert_eq!(cluster.nodes[&id].voters(), vec![1, 2, 3], "node {id}");
        assert_eq!(cluster.topics_of(id).len(), 7, "node {id} has the snapshot");
        let voters: Vec<i32> = cluster.nodes[&id]
            .image()
            .quorum_voters
            .keys()
            .copied()
            .collect();
        assert_eq!(
            voters,
            vec![2, 3],
            "node {id} knows the added voters' endpoints"
        );
    }
    // Another change while one is pending is refused by the check the leader makes.
    let quorum = cluster.nodes.get_mut(&1).unwrap();
    quorum
        .propose_voter_change(VoterChange::AddLearner(4), &[voter_record(4)])
        .unwrap();
    assert!(quorum.has_pending_voter_change());
    cluster.tick(3);
    // The leader removes itself: the others carry on under a new leader.
    let quorum = cluster.nodes.get_mut(&1).unwrap();
    quorum
        .propose_voter_change(
            VoterChange::Remove(1),
            &[MetadataRecord::RemoveQuorumVoter { node_id: 1 }],
        )
        .unwrap();
    cluster.tick(5);
    cluster.stop(1);
    let leader = cluster.elect();
    assert!([2, 3].contains(&leader));
    cluster.topic(leader, "after").unwrap();
    for id in [2, 3] {
        assert_eq!(cluster.nodes[&id].voters(), vec![2, 3]);
        assert!(cluster.topics_of(id).contains(&"after".to_string()));
    }
    // A restart rebuilds the configuration from the snapshot and the changes after it.
    cluster.stop(3);
    start_dynamic(&mut cluster, 3, &[]);
    cluster.tick(5);
    assert_eq!(cluster.nodes[&3].voters(), vec![2, 3]);
    assert_eq!(cluster.nodes[&3].learners(), vec![4]);
    let leader = cluster.elect();
    cluster.topic(leader, "after-restart").unwrap();
    assert!(cluster.topics_of(3).contains(&"after-restart".to_string()));
}
