//! The KIP-848 consumer group protocol (Kafka's `ConsumerGroup` + `CurrentAssignmentBuilder`):
//! the broker computes assignments and hands them to members through their heartbeats.
//!
//! - The **group epoch** increments whenever membership, subscriptions or the metadata of
//!   subscribed topics change; the **target assignment** is recomputed for that epoch by a
//!   server-side assignor (`uniform`, sticky and balanced, or `range`).
//! - Each member converges on its target in its own time (**reconciliation**): partitions it must
//!   give up are revoked first (the member keeps its epoch, `UnrevokedPartitions`) and only once
//!   it reports them gone does it move to the new epoch; partitions another member still holds
//!   are withheld (`UnreleasedPartitions`) until released. No partition is ever owned by two
//!   members at once.
//! - A member that stops heartbeating for the session timeout, or does not revoke within its
//!   rebalance timeout, is fenced and removed.
//!
//! Synchronous and free of I/O, like `classic.rs`; the coordinator runs the timers.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the group, its members, reconciliation, the offset commit checks |
//! | `assignors.rs` | the server-side assignors, `uniform` and `range` |

use super::classic::Offsets;
use crate::error::GroupError;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tokio::time::{Duration, Instant};

mod assignors;
pub use assignors::{assign_range, assign_uniform};

/// topic name -> partitions.
pub use super::reconcile::Assignment;
use super::reconcile::{AssignmentEpochs, Committer, Progress, Reconciling, flatten, is_subset};

/// The topics a coordinator can see.
pub trait TopicsView {
    /// Partition count of a topic.
    fn partitions_of(&self, topic: &str) -> Option<i32>;
    /// Every topic name (for regex subscriptions).
    fn topic_names(&self) -> Vec<String>;
    fn topic_id(&self, topic: &str) -> Option<uuid::Uuid>;
    fn topic_name(&self, id: uuid::Uuid) -> Option<String>;
}

/// What changed in a group and must be written to `__consumer_offsets` (ordered so that
/// removals are written last).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Change {
    GroupEpoch,
    /// A member's target assignment changed (only those are written, as Kafka's
    /// `TargetAssignmentBuilder` does: a new member's join does not rewrite a thousand).
    TargetMember(String),
    /// The target's epoch (written after its members').
    TargetEpoch,
    Member(String),
    Assignment(String),
    Removed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    Stable,
    UnrevokedPartitions,
    UnreleasedPartitions,
}

#[derive(Debug, Clone)]
pub struct ConsumerMember {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub subscribed_topic_names: Vec<String>,
    pub subscribed_topic_regex: Option<String>,
    pub server_assignor: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub state: MemberState,
    /// What the member owns now (as far as the coordinator has told it).
    pub assigned: Assignment,
    /// What it has been told to give up and has not confirmed yet.
    pub pending_revocation: Assignment,
    /// The epoch each partition of `assigned` and `pending_revocation` was assigned at.
    pub assignment_epochs: AssignmentEpochs,
    /// The assignment last sent, to send it again only when it changes.
    last_sent: Option<Assignment>,
    pub session_deadline: Instant,
    /// Set while partitions are awaiting revocation.
    pub revocation_deadline: Option<Instant>,
}

impl ConsumerMember {
    /// A member restored from `__consumer_offsets`; fields come from its records.
    pub fn restored(member_id: &str, now: Instant) -> Self {
        Self {
            member_id: member_id.to_string(),
            instance_id: None,
            rack_id: None,
            client_id: String::new(),
            client_host: String::new(),
            subscribed_topic_names: Vec::new(),
            subscribed_topic_regex: None,
            server_assignor: None,
            rebalance_timeout_ms: -1,
            member_epoch: 0,
            previous_member_epoch: -1,
            state: MemberState::Stable,
            assigned: Assignment::new(),
            pending_revocation: Assignment::new(),
            assignment_epochs: AssignmentEpochs::new(),
            last_sent: None,
            session_deadline: now,
            revocation_deadline: None,
        }
    }

    /// What the member metadata record holds.
    pub fn metadata(&self) -> super::records::ConsumerMemberValue {
        super::records::ConsumerMemberValue {
            instance_id: self.instance_id.clone(),
            rack_id: self.rack_id.clone(),
            client_id: self.client_id.clone(),
            client_host: self.client_host.clone(),
            subscribed_topic_names: self.subscribed_topic_names.clone(),
            subscribed_topic_regex: self.subscribed_topic_regex.clone(),
            rebalance_timeout_ms: self.rebalance_timeout_ms,
            server_assignor: self.server_assignor.clone(),
        }
    }

    /// What the current assignment record holds.
    pub fn assignment_state(
        &self,
    ) -> (
        i32,
        i32,
        MemberState,
        Assignment,
        Assignment,
        AssignmentEpochs,
    ) {
        (
            self.member_epoch,
            self.previous_member_epoch,
            self.state,
            self.assigned.clone(),
            self.pending_revocation.clone(),
            self.assignment_epochs.clone(),
        )
    }

    /// Kafka's MemberState byte.
    pub fn state_code(&self) -> i8 {
        match self.state {
            MemberState::Stable => 0,
            MemberState::UnrevokedPartitions => 1,
            MemberState::UnreleasedPartitions => 2,
        }
    }

    pub fn set_state_code(&mut self, code: i8) {
        self.state = match code {
            1 => MemberState::UnrevokedPartitions,
            2 => MemberState::UnreleasedPartitions,
            _ => MemberState::Stable,
        };
    }
}

/// A heartbeat in core terms.
#[derive(Debug, Clone, Default)]
pub struct Heartbeat {
    pub member_id: String,
    pub member_epoch: i32,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub subscribed_topic_names: Option<Vec<String>>,
    pub subscribed_topic_regex: Option<String>,
    pub server_assignor: Option<String>,
    /// Partitions the member reports owning; `None` when unchanged since the last heartbeat.
    pub owned: Option<Assignment>,
    pub client_id: String,
    pub client_host: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatResult {
    pub member_id: String,
    pub member_epoch: i32,
    /// `None` when unchanged since the last response.
    pub assignment: Option<Assignment>,
}

/// Settings of consumer groups (Kafka's `group.consumer.*`).
#[derive(Debug, Clone)]
pub struct ConsumerGroupConfig {
    pub session_timeout_ms: i32,
    pub heartbeat_interval_ms: i32,
    pub assignors: Vec<String>,
    pub max_size: usize,
    /// Kafka's `group.consumer.assignment.interval.ms` (KIP-1263): the least time between two
    /// target assignments. Joins and leaves within it are assigned together, at the first
    /// heartbeat after it (0: at once).
    pub assignment_interval_ms: i32,
}

impl Default for ConsumerGroupConfig {
    fn default() -> Self {
        Self {
            session_timeout_ms: 45_000,
            heartbeat_interval_ms: 5_000,
            assignors: vec!["uniform".into(), "range".into()],
            max_size: i32::MAX as usize,
            assignment_interval_ms: 1_000,
        }
    }
}

pub const LEAVE_EPOCH: i32 = -1;
pub const LEAVE_STATIC_EPOCH: i32 = -2;

#[derive(Debug)]
pub struct ConsumerGroup {
    pub id: String,
    pub group_epoch: i32,
    pub assignment_epoch: i32,
    pub members: BTreeMap<String, ConsumerMember>,
    pub target: HashMap<String, Assignment>,
    pub static_members: HashMap<String, String>,
    pub offsets: Offsets,
    pub state_timestamp: i64,
    /// Wall-clock ms at which the current target was computed, 0 when not known (Kafka's
    /// `assignmentTimestamp`, kept in the target metadata record so that a new coordinator
    /// keeps the interval).
    pub assignment_timestamp_ms: i64,
    /// Partition counts of the subscribed topics at the last epoch bump.
    metadata: BTreeMap<String, i32>,
    /// Members whose session the coordinator is timing.
    pub watched: BTreeSet<String>,
    /// Changes not yet written; the coordinator drains them after each operation.
    pub changes: BTreeSet<Change>,
}

impl ConsumerGroup {
    pub fn new(id: &str, offsets: Offsets, now_ms: i64) -> Self {
        Self {
            id: id.into(),
            group_epoch: 0,
            assignment_epoch: 0,
            members: BTreeMap::new(),
            target: HashMap::new(),
            static_members: HashMap::new(),
            offsets,
            state_timestamp: now_ms,
            assignment_timestamp_ms: 0,
            metadata: BTreeMap::new(),
            watched: BTreeSet::new(),
            changes: BTreeSet::new(),
        }
    }

    /// Kafka's consumer group states.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self.assignment_epoch < self.group_epoch {
            "Assigning"
        } else if self
            .members
            .values()
            .any(|m| m.member_epoch != self.assignment_epoch || m.state != MemberState::Stable)
        {
            "Reconciling"
        } else {
            "Stable"
        }
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// The assignor the group uses: the one most members asked for, else the first configured.
    pub fn assignor(&self, config: &ConsumerGroupConfig) -> String {
        let mut votes: BTreeMap<&str, usize> = BTreeMap::new();
        for m in self.members.values() {
            if let Some(a) = &m.server_assignor {
                *votes.entry(a.as_str()).or_default() += 1;
            }
        }
        votes
            .into_iter()
            .max_by_key(|(_, n)| *n)
            .map(|(a, _)| a.to_string())
            .unwrap_or_else(|| {
                config
                    .assignors
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "uniform".into())
            })
    }

    fn subscribed_topics(member: &ConsumerMember, topics: &dyn TopicsView) -> BTreeSet<String> {
        let mut out: BTreeSet<String> = member
            .subscribed_topic_names
            .iter()
            .filter(|t| topics.partitions_of(t).is_some())
            .cloned()
            .collect();
        // Kafka matches a regex against every topic in the image, internal ones included
        // (GroupMetadataManager.refreshRegularExpressions; franz-go's tests rely on it).
        if let Some(pattern) = &member.subscribed_topic_regex
            && let Ok(re) = regex::Regex::new(&format!("^(?:{pattern})$"))
        {
            out.extend(topics.topic_names().into_iter().filter(|t| re.is_match(t)));
        }
        out
    }

    /// The partition count of every topic some member subscribes to. Run on every heartbeat:
    /// the names are gathered by reference and each looked up once (a thousand members
    /// naming one topic cost a thousand comparisons, not a thousand lookups and sets).
    fn current_metadata(&self, topics: &dyn TopicsView) -> BTreeMap<String, i32> {
        let mut names: BTreeSet<&str> = BTreeSet::new();
        let mut out = BTreeMap::new();
        for m in self.members.values() {
            names.extend(m.subscribed_topic_names.iter().map(String::as_str));
            if m.subscribed_topic_regex.is_some() {
                for t in Self::subscribed_topics(m, topics) {
                    if let Some(n) = topics.partitions_of(&t) {
                        out.insert(t, n);
                    }
                }
            }
        }
        for name in names {
            if !out.contains_key(name)
                && let Some(n) = topics.partitions_of(name)
            {
                out.insert(name.to_string(), n);
            }
        }
        out
    }

    /// One heartbeat: join, leave, or keep alive and reconcile.
    pub fn heartbeat(
        &mut self,
        hb: Heartbeat,
        config: &ConsumerGroupConfig,
        topics: &dyn TopicsView,
        now: Instant,
        now_ms: i64,
        new_member_id: impl FnOnce() -> String,
    ) -> Result<HeartbeatResult, GroupError> {
        if let Some(assignor) = &hb.server_assignor
            && !config.assignors.contains(assignor)
        {
            return Err(GroupError::UnsupportedAssignor);
        }
        let session = Duration::from_millis(config.session_timeout_ms.max(0) as u64);
        let mut joined = false;
        let member_id = match hb.member_epoch {
            LEAVE_EPOCH | LEAVE_STATIC_EPOCH => {
                let member_id = self.resolve_leaving(&hb)?;
                self.remove_member(&member_id, now_ms);
                return Ok(HeartbeatResult {
                    member_id,
                    member_epoch: hb.member_epoch,
                    assignment: None,
                });
            }
            0 => {
                let (member_id, new_member) =
                    self.join(&hb, config, now, now_ms, session, new_member_id)?;
                joined = new_member;
                member_id
            }
            epoch => {
                let member = self
                    .members
                    .get(&hb.member_id)
                    .ok_or(GroupError::UnknownMemberId)?;
                if let Some(instance) = &hb.instance_id
                    && self.static_members.get(instance) != Some(&hb.member_id)
                {
                    return Err(GroupError::FencedInstanceId);
                }
                if epoch != member.member_epoch {
                    // A lost response: the member may still be on its previous epoch as long as
                    // it does not claim partitions it no longer has.
                    let owned_ok = hb
                        .owned
                        .as_ref()
                        .is_none_or(|owned| is_subset(owned, &member.assigned));
                    if !(epoch == member.previous_member_epoch && owned_ok) {
                        return Err(GroupError::FencedMemberEpoch);
                    }
                }
                hb.member_id.clone()
            }
        };
        let mut bump = joined;
        let metadata_before = self.members.get(&member_id).map(ConsumerMember::metadata);
        if let Some(member) = self.members.get_mut(&member_id) {
            member.session_deadline = now + session;
            member.client_id = hb.client_id.clone();
            member.client_host = hb.client_host.clone();
            if hb.rebalance_timeout_ms > 0 {
                member.rebalance_timeout_ms = hb.rebalance_timeout_ms;
            }
            if let Some(names) = &hb.subscribed_topic_names
                && *names != member.subscribed_topic_names
            {
                member.subscribed_topic_names = names.clone();
                bump = true;
            }
            // An empty regex is none (librdkafka sends "" with its subscribed names): it must
            // compare as none too, or every such heartbeat would start a new group epoch.
            if let Some(regex) = &hb.subscribed_topic_regex {
                let regex = Some(regex).filter(|r| !r.is_empty());
                if regex != member.subscribed_topic_regex.as_ref() {
                    member.subscribed_topic_regex = regex.cloned();
                    bump = true;
                }
            }
            if hb.server_assignor.is_some() && hb.server_assignor != member.server_assignor {
                member.server_assignor = hb.server_assignor.clone();
                bump = true;
            }
            if hb.member_epoch == 0 {
                member.last_sent = None;
            }
        }
        // A joining member's record is written whatever it says: `join` already filled its
        // metadata in, so comparing would find nothing new.
        if hb.member_epoch == 0
            || self.members.get(&member_id).map(ConsumerMember::metadata) != metadata_before
        {
            self.changes.insert(Change::Member(member_id.clone()));
        }
        let metadata = self.current_metadata(topics);
        if bump || metadata != self.metadata {
            self.metadata = metadata;
            self.group_epoch += 1;
            self.changes.insert(Change::GroupEpoch);
        }
        if self.assignment_epoch < self.group_epoch
            && can_compute_next_target(
                self.assignment_timestamp_ms,
                config.assignment_interval_ms,
                now_ms,
            )
        {
            self.compute_target(config, topics, now_ms);
        }
        let assignment_before = self
            .members
            .get(&member_id)
            .map(ConsumerMember::assignment_state);
        self.reconcile(&member_id, hb.owned.as_ref(), now);
        if self
            .members
            .get(&member_id)
            .map(ConsumerMember::assignment_state)
            != assignment_before
        {
            self.changes.insert(Change::Assignment(member_id.clone()));
        }
        let member = self
            .members
            .get_mut(&member_id)
            .ok_or(GroupError::UnknownMemberId)?;
        // Kafka sends the assignment on a full request too (rebalance timeout, subscription
        // and owned partitions all set): a client that lost a response, or timed one out,
        // says everything again, and must hear its assignment even if it was sent before.
        let full_request = hb.rebalance_timeout_ms != -1
            && (hb.subscribed_topic_names.is_some() || hb.subscribed_topic_regex.is_some())
            && hb.owned.is_some();
        let assignment = if full_request || member.last_sent.as_ref() != Some(&member.assigned) {
            member.last_sent = Some(member.assigned.clone());
            Some(member.assigned.clone())
        } else {
            None
        };
        Ok(HeartbeatResult {
            member_id,
            member_epoch: member.member_epoch,
            assignment,
        })
    }

    fn resolve_leaving(&self, hb: &Heartbeat) -> Result<String, GroupError> {
        if let Some(instance) = &hb.instance_id {
            let current = self
                .static_members
                .get(instance)
                .ok_or(GroupError::UnknownMemberId)?;
            if !hb.member_id.is_empty() && *current != hb.member_id {
                return Err(GroupError::FencedInstanceId);
            }
            return Ok(current.clone());
        }
        if self.members.contains_key(&hb.member_id) {
            Ok(hb.member_id.clone())
        } else {
            Err(GroupError::UnknownMemberId)
        }
    }

    /// Adds (or restarts) a member; the flag says whether membership changed (a static member
    /// taking over its previous incarnation does not change it).
    fn join(
        &mut self,
        hb: &Heartbeat,
        config: &ConsumerGroupConfig,
        now: Instant,
        now_ms: i64,
        session: Duration,
        new_member_id: impl FnOnce() -> String,
    ) -> Result<(String, bool), GroupError> {
        if hb.subscribed_topic_names.is_none() && hb.subscribed_topic_regex.is_none() {
            return Err(GroupError::InvalidRequest);
        }
        let member_id = if hb.member_id.is_empty() {
            new_member_id()
        } else {
            hb.member_id.clone()
        };
        // A static member coming back takes over its previous incarnation's assignment.
        let previous = hb
            .instance_id
            .as_ref()
            .and_then(|i| self.static_members.get(i).cloned())
            .filter(|old| *old != member_id)
            .and_then(|old| self.members.remove(&old).map(|m| (old, m)));
        if let Some(existing) = self.members.get_mut(&member_id) {
            // A member rejoining with epoch 0 restarts from scratch.
            existing.member_epoch = 0;
            existing.state = MemberState::Stable;
            existing.assigned.clear();
            existing.pending_revocation.clear();
            existing.assignment_epochs.clear();
            existing.last_sent = None;
            return Ok((member_id, false));
        }
        if previous.is_none() && self.members.len() >= config.max_size {
            return Err(GroupError::GroupMaxSizeReached);
        }
        let taking_over = previous.is_some();
        let mut member = ConsumerMember {
            member_id: member_id.clone(),
            instance_id: hb.instance_id.clone(),
            rack_id: hb.rack_id.clone(),
            client_id: hb.client_id.clone(),
            client_host: hb.client_host.clone(),
            subscribed_topic_names: hb.subscribed_topic_names.clone().unwrap_or_default(),
            subscribed_topic_regex: hb.subscribed_topic_regex.clone().filter(|r| !r.is_empty()),
            server_assignor: hb.server_assignor.clone(),
            rebalance_timeout_ms: hb.rebalance_timeout_ms,
            member_epoch: 0,
            previous_member_epoch: -1,
            state: MemberState::Stable,
            assigned: Assignment::new(),
            pending_revocation: Assignment::new(),
            assignment_epochs: AssignmentEpochs::new(),
            last_sent: None,
            session_deadline: now + session,
            revocation_deadline: None,
        };
        if let Some((old_id, old)) = previous {
            // Same partitions, same epoch: no rebalance for the rest of the group (KIP-345).
            member.member_epoch = old.member_epoch;
            member.previous_member_epoch = old.previous_member_epoch;
            member.assigned = old.assigned;
            member.pending_revocation = old.pending_revocation;
            member.assignment_epochs = old.assignment_epochs;
            member.state = old.state;
            if let Some(target) = self.target.remove(&old_id) {
                self.target.insert(member_id.clone(), target);
            }
            self.changes.insert(Change::Removed(old_id));
            self.changes.insert(Change::TargetMember(member_id.clone()));
            self.changes.insert(Change::TargetEpoch);
            self.changes.insert(Change::Assignment(member_id.clone()));
        }
        if let Some(instance) = &hb.instance_id {
            self.static_members
                .insert(instance.clone(), member_id.clone());
        }
        self.members.insert(member_id.clone(), member);
        self.state_timestamp = now_ms;
        Ok((member_id, !taking_over))
    }

    /// Takes the current topic metadata as the group's baseline (after replay, so that a restart
    /// alone does not start a new epoch).
    pub fn refresh_metadata_snapshot(&mut self, topics: &dyn TopicsView) {
        self.metadata = self.current_metadata(topics);
    }

    /// The group epoch from a replayed record (the topic metadata is re-read at the next
    /// heartbeat).
    pub fn restore_group_epoch(&mut self, epoch: i32) {
        self.group_epoch = epoch;
    }

    /// The assignment epoch and the time it was computed (0: not known) from a replayed
    /// target metadata record.
    pub fn restore_assignment(&mut self, epoch: i32, timestamp_ms: i64) {
        self.assignment_epoch = epoch;
        self.assignment_timestamp_ms = timestamp_ms;
    }

    /// Removes a member (leave, session expiry, revocation timeout); its partitions become
    /// free and the group epoch moves on.
    pub fn remove_member(&mut self, member_id: &str, now_ms: i64) {
        if let Some(member) = self.members.remove(member_id) {
            if let Some(instance) = &member.instance_id
                && self.static_members.get(instance).map(String::as_str) == Some(member_id)
            {
                self.static_members.remove(instance);
            }
            self.target.remove(member_id);
            self.group_epoch += 1;
            self.changes.insert(Change::GroupEpoch);
            self.changes.insert(Change::Removed(member_id.to_string()));
            if self.members.is_empty() {
                self.state_timestamp = now_ms;
                // Nobody to assign to: the target of the new epoch is empty.
                self.assignment_epoch = self.group_epoch;
                self.changes.insert(Change::TargetEpoch);
            }
        }
    }

    /// Fences members whose session or revocation deadline passed. Returns those removed.
    pub fn expire(&mut self, now: Instant, now_ms: i64) -> Vec<String> {
        let expired: Vec<String> = self
            .members
            .values()
            .filter(|m| {
                m.session_deadline <= now || m.revocation_deadline.is_some_and(|d| d <= now)
            })
            .map(|m| m.member_id.clone())
            .collect();
        for member_id in &expired {
            tracing::info!(group = %self.id, member = %member_id, "consumer group member fenced (session or rebalance timeout)");
            self.remove_member(member_id, now_ms);
        }
        expired
    }

    /// The earliest deadline of `member_id`, `None` once it is gone.
    pub fn deadline_of(&self, member_id: &str) -> Option<Instant> {
        let m = self.members.get(member_id)?;
        Some(super::reconcile::deadline(
            m.session_deadline,
            m.revocation_deadline,
        ))
    }

    fn compute_target(
        &mut self,
        config: &ConsumerGroupConfig,
        topics: &dyn TopicsView,
        now_ms: i64,
    ) {
        let subscriptions: BTreeMap<String, BTreeSet<String>> = self
            .members
            .values()
            .map(|m| (m.member_id.clone(), Self::subscribed_topics(m, topics)))
            .collect();
        let partitions: BTreeMap<String, i32> = subscriptions
            .values()
            .flatten()
            .filter_map(|t| topics.partitions_of(t).map(|n| (t.clone(), n)))
            .collect();
        let target = match self.assignor(config).as_str() {
            "range" => assign_range(&subscriptions, &partitions),
            _ => assign_uniform(&subscriptions, &partitions, &self.target),
        };
        for (member, assignment) in &target {
            if self.target.get(member) != Some(assignment) {
                self.changes.insert(Change::TargetMember(member.clone()));
            }
        }
        self.target = target;
        self.assignment_epoch = self.group_epoch;
        self.assignment_timestamp_ms = now_ms;
        self.changes.insert(Change::TargetEpoch);
        tracing::debug!(group = %self.id, epoch = self.group_epoch, members = self.members.len(), "computed a new target assignment");
    }

    /// Moves one member towards its target (Kafka's CurrentAssignmentBuilder).
    fn reconcile(&mut self, member_id: &str, owned: Option<&Assignment>, now: Instant) {
        let target = self.target.get(member_id).cloned().unwrap_or_default();
        let target_epoch = self.assignment_epoch;
        // A member at the target already needs nothing of the others (most heartbeats).
        let settled = self
            .members
            .get(member_id)
            .is_none_or(|m| m.state == MemberState::Stable && m.member_epoch == target_epoch);
        // Partitions other members hold or are still giving up.
        let held_elsewhere: BTreeSet<(String, i32)> = if settled {
            BTreeSet::new()
        } else {
            self.members
                .values()
                .filter(|m| m.member_id != member_id)
                .flat_map(|m| {
                    flatten(&m.assigned)
                        .into_iter()
                        .chain(flatten(&m.pending_revocation))
                })
                .collect()
        };
        let Some(member) = self.members.get_mut(member_id) else {
            return;
        };
        let progress = match member.state {
            MemberState::Stable => Progress::Stable,
            MemberState::UnrevokedPartitions => Progress::Unrevoked,
            MemberState::UnreleasedPartitions => Progress::Unreleased,
        };
        let revocation_deadline =
            now + Duration::from_millis(member.rebalance_timeout_ms.max(0) as u64);
        let progress = super::reconcile::step(
            Reconciling {
                epoch: &mut member.member_epoch,
                previous_epoch: &mut member.previous_member_epoch,
                progress,
                assigned: &mut member.assigned,
                pending: &mut member.pending_revocation,
                epochs: &mut member.assignment_epochs,
                revocation_deadline: &mut member.revocation_deadline,
            },
            &target,
            target_epoch,
            owned,
            &held_elsewhere,
            revocation_deadline,
        );
        member.state = match progress {
            Progress::Stable => MemberState::Stable,
            Progress::Unrevoked => MemberState::UnrevokedPartitions,
            Progress::Unreleased => MemberState::UnreleasedPartitions,
        };
    }

    /// OffsetCommit of `partitions` (topic, partition) against a consumer group (Kafka's
    /// `ConsumerGroup.validateOffsetCommit`, with KIP-1251's assignment epochs).
    pub fn validate_offset_commit(
        &self,
        member_id: &str,
        member_epoch: i32,
        epoch_aware: bool,
        partitions: impl IntoIterator<Item = (String, i32)>,
    ) -> Result<(), GroupError> {
        super::reconcile::validate_commit(
            self.members.is_empty(),
            self.members.get(member_id).map(|m| Committer {
                epoch: m.member_epoch,
                assigned: &m.assigned,
                pending: &m.pending_revocation,
                epochs: &m.assignment_epochs,
            }),
            member_epoch,
            epoch_aware,
            partitions.into_iter().map(Some),
        )
    }

    /// OffsetFetch from a member: its exact epoch (Kafka's `validateOffsetFetch`).
    pub fn validate_offset_fetch(
        &self,
        member_id: &str,
        member_epoch: i32,
    ) -> Result<(), GroupError> {
        super::reconcile::validate_fetch_epoch(
            self.members.get(member_id).map(|m| m.member_epoch),
            member_epoch,
        )
    }
}

/// Kafka's `canComputeNextTargetAssignment`: a group computes its next target when it never
/// did (time 0), when the interval is 0, or once the interval has passed since the last one.
fn can_compute_next_target(last_ms: i64, interval_ms: i32, now_ms: i64) -> bool {
    last_ms == 0 || interval_ms <= 0 || now_ms >= last_ms.saturating_add(i64::from(interval_ms))
}

#[cfg(test)]
mod tests;
