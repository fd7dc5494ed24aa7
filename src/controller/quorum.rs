//! One voter of the controller quorum: tikv's Raft (`raft-rs`) over the
//! [`MetadataLog`], applying committed entries to the [`MetadataImage`]. Synchronous and
//! driven from outside, as raft-rs intends: `tick` on a timer, `step` for each message from a
//! peer, `propose` for the active controller's records, then `handle_ready` to persist, learn
//! what to send and apply what committed. Tests run several voters over a simulated network
//! with no clock at all.
//!
//! Raft settings: pre-vote (a voter cut off from the others cannot disrupt them when it
//! returns) and check-quorum (a leader that cannot reach a majority steps down within an
//! election timeout, so an isolated leader stops accepting proposals).
//!
//! Voters are fixed by `controller.quorum.voters`, or, in a dynamic quorum (KIP-853), changed
//! one at a time by Raft configuration changes ([`Quorum::propose_voter_change`]): a new
//! controller is added as a learner, which the leader brings up to date with a snapshot, and
//! promoted to voter once it holds the leader's log. Each change carries the records naming the
//! voter's endpoints, so every node's image knows where the voters listen. A leader that
//! removed itself hands its leadership to the voter furthest along.

use super::metadata_log::entries_as_batches;
use super::metadata_log::{Membership, MetadataLog, MetadataLogError};
use super::ops::{MetadataRead, ReadContent, SnapshotChunk};
use super::quorum_view::{FollowerClock, QuorumDescription};
use crate::config::LogConfig;
use crate::metadata::image::{ApplyError, MetadataImage};
use crate::metadata::records::{MetadataRecord, RecordDecodeError, decode_batch, encode_batch};
use protobuf::Message as _;
use raft::prelude::{
    ConfChangeSingle, ConfChangeType, ConfChangeV2, Entry, EntryType, Message, MessageType,
    Snapshot,
};
use raft::{RawNode, StateRole};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum QuorumError {
    #[error(transparent)]
    Log(#[from] MetadataLogError),
    #[error("raft: {0}")]
    Raft(#[from] raft::Error),
    #[error("metadata log entry {index}: {source}")]
    Decode {
        index: u64,
        source: RecordDecodeError,
    },
    #[error("metadata log entry {index}: {source}")]
    Apply { index: u64, source: ApplyError },
    #[error("not the leader of the controller quorum")]
    NotLeader,
    #[error("no snapshot at index {index} of term {term}")]
    SnapshotNotFound { index: u64, term: u64 },
    #[error("metadata log entry {index}: undecodable configuration change: {reason}")]
    ConfChange { index: u64, reason: String },
}

/// raft-rs reserves id 0 (its "no node"), and Kafka node ids start at 0: a node's Raft id
/// is its node id plus one.
pub fn raft_id(node: u64) -> u64 {
    node + 1
}

/// The node id of a Raft id (see [`raft_id`]).
pub fn node_of(raft_id: u64) -> u64 {
    raft_id.saturating_sub(1)
}

#[derive(Debug, Clone)]
pub struct QuorumSettings {
    pub node_id: u64,
    /// `controller.quorum.voters`, or a dynamic quorum's first voters (see `dynamic`).
    pub voters: Vec<u64>,
    /// A dynamic quorum (KIP-853): `voters` are only where it started (none for a controller
    /// that joins one), and voters are added and removed while it runs.
    pub dynamic: bool,
    /// Ticks without hearing from a leader before a voter campaigns (raft-rs randomises
    /// it between this and twice this).
    pub election_ticks: usize,
    /// Ticks between a leader's heartbeats.
    pub heartbeat_ticks: usize,
    /// A snapshot is taken once this many entries were applied since the last one...
    pub snapshot_after_entries: u64,
    /// ... or this many bytes of records (`metadata.log.max.record.bytes.between.snapshots`).
    pub snapshot_after_bytes: u64,
}

/// What one round of [`Quorum::handle_ready`] produced.
#[derive(Debug, Default)]
pub struct Progress {
    /// Raft messages to deliver to their `to` voter.
    pub messages: Vec<Message>,
    /// Entries applied to the image, in order: (index, records). Empty entries (a new
    /// leader's first) have no records.
    pub applied: Vec<(u64, Vec<MetadataRecord>)>,
    /// The image was replaced by a snapshot from the leader.
    pub snapshot_installed: bool,
}

/// Forwards raft-rs's slog output to `tracing` (target `raft`).
struct TracingDrain;

impl slog::Drain for TracingDrain {
    type Ok = ();
    type Err = slog::Never;

    fn log(&self, record: &slog::Record, _: &slog::OwnedKVList) -> Result<(), slog::Never> {
        match record.level() {
            slog::Level::Critical | slog::Level::Error => {
                tracing::error!(target: "raft", "{}", record.msg())
            }
            slog::Level::Warning => tracing::warn!(target: "raft", "{}", record.msg()),
            slog::Level::Info => {
                // Role changes are worth an operator's attention; the rest is start-up chatter.
                let text = record.msg().to_string();
                if text.starts_with("became ") || text.starts_with("starting a new election") {
                    tracing::info!(target: "raft", "{text}")
                } else {
                    tracing::debug!(target: "raft", "{text}")
                }
            }
            slog::Level::Debug | slog::Level::Trace => {
                tracing::trace!(target: "raft", "{}", record.msg())
            }
        }
        Ok(())
    }
}

pub struct Quorum {
    raw: RawNode<MetadataLog>,
    image: MetadataImage,
    snapshot_after_entries: u64,
    snapshot_after_bytes: u64,
    /// Bytes of records applied since the last snapshot.
    bytes_since_snapshot: u64,
    /// A Ready whose persistence failed for want of space or descriptors: the next round
    /// persists it again before anything else (raft-rs hands out each Ready once).
    unpersisted: Option<Unpersisted>,
    /// A commit index not written yet (the write failed for want of space or descriptors).
    commit_to_write: Option<u64>,
    /// When, as leader, this voter last heard from each follower.
    followers: FollowerClock,
    /// The latest snapshot encoded, for observers reading it in pieces.
    encoded_snapshot: Option<(u64, u64, bytes::Bytes)>,
    /// A configuration change was applied: snapshot at once, so the snapshot a new learner
    /// is sent names it (raft-rs refuses a snapshot whose configuration lacks the node).
    snapshot_soon: bool,
}

/// One change to a dynamic quorum's voters (node ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VoterChange {
    /// A new controller follows the leader's log without voting.
    AddLearner(u64),
    /// A learner (or a new node) becomes a voter.
    Promote(u64),
    Remove(u64),
}

/// A Ready taken from raft-rs and not yet persisted, with what was done with it already.
struct Unpersisted {
    ready: raft::Ready,
    /// What handling it produced so far (messages to send, entries applied), handed out
    /// once it is persisted.
    progress: Progress,
    /// Its snapshot (if any) is installed and its committed entries applied.
    applied: bool,
}

impl QuorumError {
    /// The metadata log is out of space or descriptors for now: the round can be retried.
    pub fn is_transient(&self) -> bool {
        matches!(self, QuorumError::Log(e) if e.is_transient())
    }

    /// The metadata log's disk is full.
    pub fn is_out_of_space(&self) -> bool {
        matches!(self, QuorumError::Log(e) if e.is_out_of_space())
    }
}

impl std::fmt::Debug for Quorum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Quorum")
            .field("id", &self.raw.raft.id)
            .field("term", &self.raw.raft.term)
            .field("role", &self.raw.raft.state)
            .field("applied", &self.image.offset)
            .finish()
    }
}

/// One line per SCRAM credential a committed entry creates, changes or removes, as Kafka's
/// ScramControlManager logs when it replays them (tools wait for these lines).
fn log_credential_changes(image: &MetadataImage, records: &[MetadataRecord]) {
    let mechanism_name = |id: i8| {
        crate::auth::scram::ScramMechanism::from_type_id(id).map_or("unknown", |m| m.name())
    };
    for record in records {
        match record {
            MetadataRecord::UserScramCredential {
                name, mechanism, ..
            } => {
                let exists = image
                    .scram_credentials
                    .get(name)
                    .is_some_and(|c| c.contains_key(mechanism));
                let what = if exists {
                    "modifying existing"
                } else {
                    "creating new"
                };
                tracing::info!(
                    "Replayed UserScramCredentialRecord {what} entry for {name} with mechanism {}.",
                    mechanism_name(*mechanism)
                );
            }
            MetadataRecord::RemoveUserScramCredential { name, mechanism } => tracing::info!(
                "Replayed RemoveUserScramCredentialRecord for {name} with mechanism {}.",
                mechanism_name(*mechanism)
            ),
            _ => {}
        }
    }
}

pub(super) fn image_from_snapshot(snapshot: &Snapshot) -> Result<MetadataImage, QuorumError> {
    let mut image = MetadataImage::default();
    let index = snapshot.get_metadata().index;
    if index > 0 {
        let records =
            decode_batch(&snapshot.data).map_err(|source| QuorumError::Decode { index, source })?;
        image
            .apply(index, &records)
            .map_err(|source| QuorumError::Apply { index, source })?;
    }
    Ok(image)
}

impl Quorum {
    /// Opens this voter's metadata log and rebuilds the image from its snapshot; committed
    /// entries after it are applied again by the first rounds of `handle_ready`.
    pub fn open(
        log_dir: &Path,
        settings: &QuorumSettings,
        log_config: LogConfig,
    ) -> Result<Self, QuorumError> {
        let voters: Vec<u64> = settings.voters.iter().map(|v| raft_id(*v)).collect();
        let membership = if settings.dynamic {
            Membership::Dynamic(voters)
        } else {
            Membership::Static(voters)
        };
        let storage = MetadataLog::open(log_dir, &membership, log_config)?;
        let alone = storage.conf_state().voters == [raft_id(settings.node_id)];
        let image = image_from_snapshot(storage.latest_snapshot())?;
        let config = raft::Config {
            id: raft_id(settings.node_id),
            election_tick: settings.election_ticks,
            heartbeat_tick: settings.heartbeat_ticks,
            applied: image.offset,
            check_quorum: true,
            pre_vote: true,
            max_size_per_msg: 1 << 20,
            max_inflight_msgs: 256,
            ..Default::default()
        };
        config.validate()?;
        let logger = slog::Logger::root(TracingDrain, slog::o!());
        let mut raw = RawNode::new(&config, storage, &logger)?;
        if alone {
            // The only voter need not wait an election timeout to lead.
            raw.campaign()?;
        }
        Ok(Self {
            raw,
            image,
            snapshot_after_entries: settings.snapshot_after_entries.max(1),
            snapshot_after_bytes: settings.snapshot_after_bytes.max(1),
            bytes_since_snapshot: 0,
            unpersisted: None,
            commit_to_write: None,
            followers: FollowerClock::default(),
            encoded_snapshot: None,
            snapshot_soon: false,
        })
    }

    /// The voters (node ids) as of the entries applied.
    pub fn voters(&self) -> Vec<u64> {
        let conf = self.raw.store().conf_state();
        let mut voters: Vec<u64> = conf.voters.iter().map(|v| node_of(*v)).collect();
        voters.sort_unstable();
        voters
    }

    /// The learners (node ids): controllers being added to a dynamic quorum.
    pub fn learners(&self) -> Vec<u64> {
        let conf = self.raw.store().conf_state();
        let mut learners: Vec<u64> = conf.learners.iter().map(|v| node_of(*v)).collect();
        learners.sort_unstable();
        learners
    }

    pub fn is_dynamic(&self) -> bool {
        self.raw.store().is_dynamic()
    }

    /// A configuration change was proposed and is not applied yet (raft-rs takes one at a
    /// time and turns another into an empty entry).
    pub fn has_pending_voter_change(&self) -> bool {
        self.raw.raft.has_pending_conf()
    }

    /// As the leader: `node` holds every committed entry (a learner ready to vote).
    pub fn is_caught_up(&self, node: u64) -> bool {
        let raft = &self.raw.raft;
        self.is_leader()
            && raft
                .prs()
                .get(raft_id(node))
                .is_some_and(|p| p.matched >= raft.raft_log.committed)
    }

    /// Proposes a change to the voters, with `records` applied to the image as it commits;
    /// returns its index. Refused while another change is pending.
    pub fn propose_voter_change(
        &mut self,
        change: VoterChange,
        records: &[MetadataRecord],
    ) -> Result<u64, QuorumError> {
        if !self.is_leader() {
            return Err(QuorumError::NotLeader);
        }
        let (change_type, node) = match change {
            VoterChange::AddLearner(node) => (ConfChangeType::AddLearnerNode, node),
            VoterChange::Promote(node) => (ConfChangeType::AddNode, node),
            VoterChange::Remove(node) => (ConfChangeType::RemoveNode, node),
        };
        let mut single = ConfChangeSingle::default();
        single.set_change_type(change_type);
        single.node_id = raft_id(node);
        let mut cc = ConfChangeV2::default();
        cc.mut_changes().push(single);
        cc.context = encode_batch(records).into();
        let index = self.next_index();
        self.raw
            .propose_conf_change(Vec::new(), cc)
            .map_err(|e| match e {
                raft::Error::ProposalDropped => QuorumError::NotLeader,
                other => QuorumError::Raft(other),
            })?;
        Ok(index)
    }

    pub fn node_id(&self) -> u64 {
        node_of(self.raw.raft.id)
    }

    pub fn term(&self) -> u64 {
        self.raw.raft.term
    }

    /// The leader this voter knows of.
    pub fn leader_id(&self) -> Option<u64> {
        (self.raw.raft.leader_id != raft::INVALID_ID).then_some(node_of(self.raw.raft.leader_id))
    }

    pub fn is_leader(&self) -> bool {
        self.raw.raft.state == StateRole::Leader
    }

    /// The leader has applied an entry of its own term: its image holds everything ever
    /// committed, so it may decide as the active controller.
    pub fn is_active_leader(&self) -> bool {
        self.is_leader()
            && self.raw.raft.raft_log.term(self.image.offset).ok() == Some(self.raw.raft.term)
    }

    /// The commit index the metadata log had when opened: entries up to it are replayed
    /// by the first rounds of `handle_ready`.
    pub fn committed_on_disk(&self) -> u64 {
        self.raw.store().hard_state().commit
    }

    /// The committed metadata, applied.
    pub fn image(&self) -> &MetadataImage {
        &self.image
    }

    /// The index the next proposal will get.
    pub fn next_index(&self) -> u64 {
        self.raw.raft.raft_log.last_index() + 1
    }

    pub fn tick(&mut self) {
        self.raw.tick();
        // A leader no longer a voter keeps asking until a voter takes over: the one asked
        // first may not have applied the change yet, and refuses to campaign until it has.
        let removed = !self
            .raw
            .store()
            .conf_state()
            .voters
            .contains(&self.raw.raft.id);
        if self.is_leader()
            && removed
            && self.raw.store().is_dynamic()
            && self.raw.raft.lead_transferee.is_none()
        {
            self.hand_over_leadership();
        }
    }

    /// Takes a message from a peer, received at `now_ms`. Messages from voters this quorum
    /// does not have, or meant for another node, are dropped by raft-rs with an error.
    pub fn step(&mut self, message: Message, now_ms: i64) -> Result<(), QuorumError> {
        let from = message.from;
        let answers_leader = matches!(
            message.get_msg_type(),
            MessageType::MsgAppendResponse | MessageType::MsgHeartbeatResponse
        );
        self.raw.step(message)?;
        if answers_leader && self.is_leader() {
            let leader_end = self.raw.raft.raft_log.last_index();
            if let Some(progress) = self.raw.raft.prs().get(from) {
                let matched = progress.matched;
                let term = self.term();
                self.followers
                    .heard_from(term, node_of(from), matched, leader_end, now_ms);
            }
        }
        Ok(())
    }

    /// The quorum as DescribeQuorum reports it, when this voter leads it.
    pub fn describe(&self, now_ms: i64) -> Option<QuorumDescription> {
        if !self.is_leader() {
            return None;
        }
        let raft = &self.raw.raft;
        let (voters, learners) = (self.voters(), self.learners());
        let matched = |node: u64| raft.prs().get(raft_id(node)).map(|p| p.matched);
        let leader_end = raft.raft_log.last_index();
        // Learners (controllers being added) are observers to Kafka's tools.
        let mut observers = self.followers.describe(
            self.term(),
            self.node_id(),
            &learners,
            matched,
            leader_end,
            now_ms,
        );
        observers.extend(self.followers.describe_observers(self.term(), now_ms));
        Some(QuorumDescription {
            leader: self.node_id(),
            leader_epoch: self.term(),
            high_watermark: raft.raft_log.committed,
            voters: self.followers.describe(
                self.term(),
                self.node_id(),
                &voters,
                matched,
                leader_end,
                now_ms,
            ),
            observers,
        })
    }

    /// What observer `observer` reads from entry `from_index` on, as the leader: the
    /// committed entries (about `max_bytes` of them, at least one), or the snapshot to read
    /// first when they were compacted. Records the observer's progress for DescribeQuorum.
    pub fn read_for_observer(
        &mut self,
        observer: u64,
        from_index: u64,
        max_bytes: usize,
        now_ms: i64,
    ) -> Result<MetadataRead, QuorumError> {
        if !self.is_leader() {
            return Err(QuorumError::NotLeader);
        }
        let from_index = from_index.max(1);
        let (term, leader) = (self.term(), self.node_id());
        let high_watermark = self.raw.raft.raft_log.committed;
        let leader_end = self.raw.raft.raft_log.last_index();
        self.followers
            .observer_fetched(term, observer, from_index - 1, leader_end, now_ms);
        let store = self.raw.store();
        let snapshot = store.latest_snapshot().get_metadata();
        let content = if from_index <= snapshot.index {
            ReadContent::SnapshotNeeded {
                index: snapshot.index,
                term: snapshot.term,
            }
        } else if from_index > high_watermark {
            ReadContent::Entries(bytes::Bytes::new())
        } else {
            use raft::Storage as _;
            let entries = store.entries(
                from_index,
                high_watermark + 1,
                max_bytes as u64,
                raft::GetEntriesContext::empty(false),
            )?;
            ReadContent::Entries(entries_as_batches(&entries)?.into())
        };
        Ok(MetadataRead {
            leader,
            term,
            high_watermark,
            content,
        })
    }

    /// Bytes `position..position + max_bytes` of the latest snapshot, which must be the one
    /// at `index` of `term` (an observer reading an older one starts over).
    pub fn read_snapshot(
        &mut self,
        index: u64,
        term: u64,
        position: u64,
        max_bytes: usize,
    ) -> Result<SnapshotChunk, QuorumError> {
        let snapshot = self.raw.store().latest_snapshot();
        let metadata = snapshot.get_metadata();
        if (metadata.index, metadata.term) != (index, term) || index == 0 {
            return Err(QuorumError::SnapshotNotFound { index, term });
        }
        let cached = matches!(&self.encoded_snapshot, Some((i, t, _)) if (*i, *t) == (index, term));
        if !cached {
            let bytes = encode_snapshot(snapshot)?;
            self.encoded_snapshot = Some((index, term, bytes));
        }
        let Some((_, _, bytes)) = &self.encoded_snapshot else {
            return Err(QuorumError::SnapshotNotFound { index, term });
        };
        let size = bytes.len() as u64;
        let start = position.min(size) as usize;
        let end = start.saturating_add(max_bytes.max(1)).min(bytes.len());
        Ok(SnapshotChunk {
            size,
            position: start as u64,
            bytes: bytes.slice(start..end),
        })
    }

    /// Proposes one entry holding `records`; returns its index. It is committed when it
    /// shows up in [`Progress::applied`]; a lost leadership may drop it instead.
    pub fn propose(&mut self, records: &[MetadataRecord]) -> Result<u64, QuorumError> {
        if !self.is_leader() {
            return Err(QuorumError::NotLeader);
        }
        let index = self.next_index();
        self.raw
            .propose(Vec::new(), encode_batch(records))
            .map_err(|e| match e {
                raft::Error::ProposalDropped => QuorumError::NotLeader,
                other => QuorumError::Raft(other),
            })?;
        Ok(index)
    }

    /// Persists what Raft needs persisted, returns the messages to send, and applies what
    /// committed (Raft's ready loop). Call after every tick, step and propose.
    pub fn handle_ready(&mut self) -> Result<Progress, QuorumError> {
        let mut pending = match self.unpersisted.take() {
            Some(pending) => pending,
            None if !self.raw.has_ready() => return Ok(Progress::default()),
            None => {
                let mut ready = self.raw.ready();
                let mut progress = Progress::default();
                progress.messages.extend(ready.take_messages());
                Unpersisted {
                    ready,
                    progress,
                    applied: false,
                }
            }
        };
        if let Err(e) = self.persist(&mut pending) {
            if e.is_transient() {
                self.unpersisted = Some(pending);
            }
            return Err(e);
        }
        let (mut ready, mut progress) = (pending.ready, pending.progress);
        progress.messages.extend(ready.take_persisted_messages());
        let mut light = self.raw.advance(ready);
        progress.messages.extend(light.take_messages());
        // raft-rs hands these out once: applied before anything below can fail.
        self.apply(light.take_committed_entries(), &mut progress)?;
        self.raw.advance_apply();
        if let Some(commit) = light.commit_index() {
            self.commit_to_write = Some(commit);
        }
        // The stored commit index is a hint for restarts (Raft re-learns it): a write that
        // cannot happen now is tried again next round, as is a snapshot.
        if let Some(commit) = self.commit_to_write {
            match self.raw.mut_store().set_commit(commit) {
                Ok(()) => self.commit_to_write = None,
                Err(e) if e.is_transient() => {}
                Err(e) => return Err(e.into()),
            }
        }
        match self.maybe_snapshot() {
            Err(e) if e.is_transient() => {
                tracing::debug!(error = %e, "metadata snapshot postponed");
            }
            other => other?,
        }
        Ok(progress)
    }

    /// Installs the Ready's snapshot, applies its committed entries (once), then writes its
    /// entries and hard state; each step can be repeated after a transient failure.
    fn persist(&mut self, pending: &mut Unpersisted) -> Result<(), QuorumError> {
        let (ready, progress) = (&mut pending.ready, &mut pending.progress);
        if !pending.applied {
            if !ready.snapshot().is_empty() {
                let snapshot = ready.snapshot().clone();
                let image = image_from_snapshot(&snapshot)?;
                self.raw.mut_store().apply_snapshot(snapshot)?;
                self.image = image;
                progress.snapshot_installed = true;
            }
            let committed = ready.take_committed_entries();
            pending.applied = true;
            self.apply(committed, progress)?;
        }
        self.raw.mut_store().append(ready.entries())?;
        if let Some(hard_state) = ready.hs() {
            self.raw.mut_store().set_hard_state(hard_state)?;
        }
        Ok(())
    }

    fn apply(&mut self, entries: Vec<Entry>, progress: &mut Progress) -> Result<(), QuorumError> {
        for entry in entries {
            let index = entry.index;
            if index <= self.image.offset {
                continue;
            }
            if entry.get_entry_type() == EntryType::EntryConfChangeV2 {
                let records = self.apply_conf_change(&entry)?;
                self.image
                    .apply(index, &records)
                    .map_err(|source| QuorumError::Apply { index, source })?;
                progress.applied.push((index, records));
                continue;
            }
            if entry.data.is_empty() {
                self.image.offset = index;
                progress.applied.push((index, Vec::new()));
                continue;
            }
            let records = decode_batch(&entry.data)
                .map_err(|source| QuorumError::Decode { index, source })?;
            self.bytes_since_snapshot += entry.data.len() as u64;
            log_credential_changes(&self.image, &records);
            self.image
                .apply(index, &records)
                .map_err(|source| QuorumError::Apply { index, source })?;
            progress.applied.push((index, records));
        }
        Ok(())
    }

    /// Applies a committed configuration change to Raft and the metadata log; returns the
    /// records it carries.
    fn apply_conf_change(&mut self, entry: &Entry) -> Result<Vec<MetadataRecord>, QuorumError> {
        let index = entry.index;
        let cc = decode_conf_change(entry)?;
        let records = entry_records(entry)?;
        let was_leader = self.is_leader();
        let conf_state = self.raw.apply_conf_change(&cc)?;
        tracing::info!(index, voters = ?conf_state.voters.iter().map(|v| node_of(*v)).collect::<Vec<_>>(),
            learners = ?conf_state.learners.iter().map(|v| node_of(*v)).collect::<Vec<_>>(),
            "controller quorum configuration changed");
        let removed_self = !conf_state.voters.contains(&self.raw.raft.id);
        self.raw.mut_store().set_conf_state(conf_state);
        self.snapshot_soon = true;
        if was_leader && removed_self {
            self.hand_over_leadership();
        }
        Ok(records)
    }

    /// A leader no longer a voter asks the voter furthest along to take over at once (as
    /// Kafka's leader resigns once its removal commits).
    fn hand_over_leadership(&mut self) {
        let raft = &self.raw.raft;
        let successor = raft
            .prs()
            .conf()
            .voters()
            .ids()
            .iter()
            .filter(|id| *id != raft.id)
            .max_by_key(|id| raft.prs().get(*id).map_or(0, |p| p.matched));
        if let Some(successor) = successor {
            tracing::info!(
                successor = node_of(successor),
                "removed from the controller quorum; handing over its leadership"
            );
            self.raw.transfer_leader(successor);
        }
    }

    fn maybe_snapshot(&mut self) -> Result<(), QuorumError> {
        let applied = self.image.offset;
        let snapshot_index = self.raw.store().latest_snapshot().get_metadata().index;
        if applied > snapshot_index
            && (self.snapshot_soon
                || applied >= snapshot_index + self.snapshot_after_entries
                || self.bytes_since_snapshot >= self.snapshot_after_bytes)
        {
            let data = encode_batch(&self.image.to_records());
            self.raw.mut_store().compact(applied, data)?;
            self.snapshot_soon = false;
            self.bytes_since_snapshot = 0;
            tracing::debug!(index = applied, "metadata snapshot");
        }
        Ok(())
    }

    /// The metadata log's space reserve, given up when the disk is full; true if it was
    /// held (a retry can then succeed at once).
    pub fn release_space_reserve(&mut self) -> bool {
        self.raw.mut_store().release_reserve()
    }

    /// Takes the reserve back once there is room (looked at once a second at most).
    pub fn restore_space_reserve(&mut self) {
        self.raw.mut_store().restore_reserve();
    }

    /// Tells Raft a peer could not be reached (it then probes instead of streaming).
    pub fn report_unreachable(&mut self, peer: u64) {
        self.raw.report_unreachable(peer);
    }

    /// Flushes the metadata log for a clean stop.
    pub fn close(&mut self) -> Result<(), QuorumError> {
        Ok(self.raw.mut_store().close()?)
    }
}

fn decode_conf_change(entry: &Entry) -> Result<ConfChangeV2, QuorumError> {
    ConfChangeV2::parse_from_bytes(&entry.data).map_err(|e| QuorumError::ConfChange {
        index: entry.index,
        reason: e.to_string(),
    })
}

/// The records an entry carries: its data, or a configuration change's context (observers
/// apply them as voters do).
pub fn entry_records(entry: &Entry) -> Result<Vec<MetadataRecord>, QuorumError> {
    let index = entry.index;
    let bytes = if entry.get_entry_type() == EntryType::EntryConfChangeV2 {
        decode_conf_change(entry)?.context
    } else {
        entry.data.clone()
    };
    if bytes.is_empty() {
        return Ok(Vec::new());
    }
    decode_batch(&bytes).map_err(|source| QuorumError::Decode { index, source })
}

/// Encodes a snapshot for the wire (observers read it in pieces).
pub fn encode_snapshot(snapshot: &Snapshot) -> Result<bytes::Bytes, QuorumError> {
    snapshot
        .write_to_bytes()
        .map(bytes::Bytes::from)
        .map_err(|e| QuorumError::Raft(raft::Error::CodecError(e)))
}

/// Decodes a snapshot read from the leader.
pub fn decode_snapshot(bytes: &[u8]) -> Result<Snapshot, QuorumError> {
    Snapshot::parse_from_bytes(bytes).map_err(|e| QuorumError::Raft(raft::Error::CodecError(e)))
}

/// Encodes a Raft message for the wire.
pub fn encode_message(message: &Message) -> Result<Vec<u8>, QuorumError> {
    message
        .write_to_bytes()
        .map_err(|e| QuorumError::Raft(raft::Error::CodecError(e)))
}

/// Decodes a Raft message from a peer.
pub fn decode_message(bytes: &[u8]) -> Result<Message, QuorumError> {
    Message::parse_from_bytes(bytes).map_err(|e| QuorumError::Raft(raft::Error::CodecError(e)))
}

#[cfg(test)]
#[path = "quorum_tests.rs"]
mod tests;
