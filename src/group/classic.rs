//! The classic group protocol's state machine (Kafka's `ClassicGroup` and the classic paths of
//! `GroupMetadataManager`): members, generations, protocol selection, leader election, static
//! membership, and the committed offsets of the group.
//!
//! ```text
//!            join (new/changed member)            all rejoined / rebalance timeout
//!  Empty ──────────────────────────► PreparingRebalance ─────────────────────► CompletingRebalance
//!    ▲                                  ▲        │ nobody left                        │ leader's SyncGroup
//!    └──────────────────────────────────┼────────┘                                    ▼
//!                                       └──── member joins/leaves/expires ────────── Stable
//! ```
//!
//! Synchronous and free of I/O: the coordinator (`mod.rs`) holds each group under a mutex,
//! runs the timers, and writes the records this module asks for. Requests that must wait (a
//! JoinGroup until the rebalance completes, a follower's SyncGroup until the leader's) park a
//! oneshot sender in their member; completing the phase answers every parked request.

use crate::error::GroupError;
use bytes::Bytes;
use indexmap::IndexMap;
use std::collections::{BTreeMap, HashMap};
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
    Dead,
}

impl GroupState {
    /// Kafka's state names, as DescribeGroups and ListGroups report them.
    pub fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        }
    }
}

/// Settings of the coordinator that shape group behaviour (Kafka's `group.*` properties).
#[derive(Debug, Clone)]
pub struct GroupConfig {
    pub min_session_timeout_ms: i32,
    pub max_session_timeout_ms: i32,
    pub initial_rebalance_delay_ms: i32,
    pub max_size: usize,
    pub offset_metadata_max_bytes: usize,
}

impl Default for GroupConfig {
    fn default() -> Self {
        Self {
            min_session_timeout_ms: 6_000,
            max_session_timeout_ms: 1_800_000,
            initial_rebalance_delay_ms: 3_000,
            max_size: i32::MAX as usize,
            offset_metadata_max_bytes: 4096,
        }
    }
}

/// A JoinGroup request in core terms.
#[derive(Debug, Clone)]
pub struct JoinRequest {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub session_timeout_ms: i32,
    pub rebalance_timeout_ms: i32,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
    /// JoinGroup v4+: an unknown dynamic member first gets MEMBER_ID_REQUIRED.
    pub require_known_member_id: bool,
}

/// What a JoinGroup is answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JoinResult {
    pub error: Option<GroupError>,
    pub generation: i32,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub leader: String,
    pub member_id: String,
    /// Filled for the leader only: every member with its metadata for the chosen protocol.
    pub members: Vec<(String, Option<String>, Bytes)>,
    /// A static leader rejoining a stable group keeps the current assignment (KIP-814).
    pub skip_assignment: bool,
}

impl JoinResult {
    pub fn error(error: GroupError, member_id: &str) -> Self {
        Self {
            error: Some(error),
            generation: -1,
            protocol_type: None,
            protocol_name: None,
            leader: String::new(),
            member_id: member_id.to_string(),
            members: Vec::new(),
            skip_assignment: false,
        }
    }
}

/// A SyncGroup request in core terms.
#[derive(Debug, Clone)]
pub struct SyncRequest {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub generation: i32,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    /// From the leader: member id -> assignment.
    pub assignments: Vec<(String, Bytes)>,
}

/// What a SyncGroup is answered with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncResult {
    pub error: Option<GroupError>,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub assignment: Bytes,
}

impl SyncResult {
    pub fn error(error: GroupError) -> Self {
        Self {
            error: Some(error),
            protocol_type: None,
            protocol_name: None,
            assignment: Bytes::new(),
        }
    }
}

#[derive(Debug)]
pub struct Member {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub session_timeout_ms: i32,
    pub rebalance_timeout_ms: i32,
    pub protocol_type: String,
    pub protocols: Vec<(String, Bytes)>,
    pub assignment: Bytes,
    pub awaiting_join: Option<oneshot::Sender<JoinResult>>,
    pub awaiting_sync: Option<oneshot::Sender<SyncResult>>,
    /// Evicted when this passes without a heartbeat (unless it is waiting in a join or sync).
    pub session_deadline: Instant,
}

impl Member {
    /// Takes what a (re)join says about the member, and restarts its session.
    fn refresh_from(&mut self, request: &JoinRequest, now: Instant) {
        self.protocols = request.protocols.clone();
        self.protocol_type = request.protocol_type.clone();
        self.session_timeout_ms = request.session_timeout_ms;
        self.rebalance_timeout_ms = request.rebalance_timeout_ms;
        self.client_id = request.client_id.clone();
        self.client_host = request.client_host.clone();
        self.session_deadline = now + Duration::from_millis(request.session_timeout_ms as u64);
    }

    fn metadata_for(&self, protocol: &str) -> Bytes {
        self.protocols
            .iter()
            .find(|(name, _)| name == protocol)
            .map(|(_, m)| m.clone())
            .unwrap_or_default()
    }
}

/// A group's committed offsets by (topic, partition).
pub type Offsets = BTreeMap<(String, i32), CommittedOffset>;

/// A committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedOffset {
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp: i64,
    pub expire_timestamp: Option<i64>,
}

/// What the coordinator must do after a state change.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// A rebalance started or its deadline moved: arm the join timer for this rebalance.
    pub join_timer: Option<(u64, Instant)>,
    /// Members to watch for session expiry (newly added).
    pub watch_members: Vec<String>,
    /// The group's metadata changed in a way that must be persisted.
    pub persist_group: bool,
}

impl Effects {
    fn merge(&mut self, other: Effects) {
        if other.join_timer.is_some() {
            self.join_timer = other.join_timer;
        }
        self.watch_members.extend(other.watch_members);
        self.persist_group |= other.persist_group;
    }
}

/// The outcome of a JoinGroup.
#[derive(Debug)]
pub enum JoinOutcome {
    /// Answer now.
    Respond(JoinResult, Effects),
    /// Parked: the receiver gets the answer when the rebalance completes.
    Wait(oneshot::Receiver<JoinResult>, Effects),
}

/// The outcome of a SyncGroup.
#[derive(Debug)]
pub enum SyncOutcome {
    Respond(SyncResult),
    Wait(oneshot::Receiver<SyncResult>),
    /// The leader sent the assignment: persist the group, then call
    /// [`ClassicGroup::complete_sync`] (or [`ClassicGroup::fail_sync`] if the write failed).
    LeaderAssigned(oneshot::Receiver<SyncResult>, HashMap<String, Bytes>),
}

#[derive(Debug)]
pub struct ClassicGroup {
    pub id: String,
    pub state: GroupState,
    /// Wall-clock milliseconds of the last state change (current_state_timestamp).
    pub state_timestamp: i64,
    pub protocol_type: Option<String>,
    pub protocol_name: Option<String>,
    pub generation: i32,
    pub leader: Option<String>,
    pub members: IndexMap<String, Member>,
    /// Member ids handed out with MEMBER_ID_REQUIRED, not yet joined, with their deadline.
    pub pending_members: HashMap<String, Instant>,
    /// group.instance.id -> member id.
    pub static_members: HashMap<String, String>,
    pub offsets: Offsets,
    /// Increments with every rebalance; timers carry it so a stale timer does nothing.
    pub rebalance_id: u64,
    /// During the first rebalance of an empty group (`group.initial.rebalance.delay.ms`).
    initial_delay: Option<InitialDelay>,
}

#[derive(Debug, Clone, Copy)]
struct InitialDelay {
    remaining_ms: i64,
    new_member_added: bool,
}

impl ClassicGroup {
    pub fn new(id: &str, now_ms: i64) -> Self {
        Self {
            id: id.to_string(),
            state: GroupState::Empty,
            state_timestamp: now_ms,
            protocol_type: None,
            protocol_name: None,
            generation: 0,
            leader: None,
            members: IndexMap::new(),
            pending_members: HashMap::new(),
            static_members: HashMap::new(),
            offsets: BTreeMap::new(),
            rebalance_id: 0,
            initial_delay: None,
        }
    }

    fn transition(&mut self, state: GroupState, now_ms: i64) {
        self.state = state;
        self.state_timestamp = now_ms;
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Protocols every member supports.
    fn candidate_protocols(&self) -> Vec<String> {
        let Some(first) = self.members.values().next() else {
            return Vec::new();
        };
        first
            .protocols
            .iter()
            .map(|(name, _)| name.clone())
            .filter(|name| {
                self.members
                    .values()
                    .all(|m| m.protocols.iter().any(|(n, _)| n == name))
            })
            .collect()
    }

    /// Each member votes for its most preferred candidate; most votes wins (ties: the first
    /// member's preference order).
    fn select_protocol(&self) -> Option<String> {
        let candidates = self.candidate_protocols();
        let mut votes: HashMap<&str, usize> = HashMap::new();
        for member in self.members.values() {
            if let Some((name, _)) = member
                .protocols
                .iter()
                .find(|(n, _)| candidates.contains(n))
            {
                *votes.entry(name.as_str()).or_default() += 1;
            }
        }
        let best = votes.values().copied().max()?;
        candidates
            .into_iter()
            .find(|c| votes.get(c.as_str()) == Some(&best))
    }

    fn supports(&self, protocol_type: &str, protocols: &[(String, Bytes)]) -> bool {
        if protocol_type.is_empty() || protocols.is_empty() {
            return false;
        }
        if self.members.is_empty() {
            return true;
        }
        let candidates = self.candidate_protocols();
        self.protocol_type.as_deref() == Some(protocol_type)
            && protocols.iter().any(|(name, _)| candidates.contains(name))
    }

    fn max_rebalance_timeout(&self) -> Duration {
        let ms = self
            .members
            .values()
            .map(|m| m.rebalance_timeout_ms)
            .max()
            .unwrap_or(0)
            .max(0);
        Duration::from_millis(ms as u64)
    }

    fn all_members_joined(&self) -> bool {
        self.pending_members.is_empty() && self.members.values().all(|m| m.awaiting_join.is_some())
    }

    /// The current generation as a join answer for `member_id` (members listed for the leader).
    fn current_join_result(&self, member_id: &str) -> JoinResult {
        let is_leader = self.leader.as_deref() == Some(member_id);
        let protocol = self.protocol_name.clone().unwrap_or_default();
        let members = if is_leader {
            self.members
                .values()
                .map(|m| {
                    (
                        m.member_id.clone(),
                        m.group_instance_id.clone(),
                        m.metadata_for(&protocol),
                    )
                })
                .collect()
        } else {
            Vec::new()
        };
        JoinResult {
            error: None,
            generation: self.generation,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            leader: self.leader.clone().unwrap_or_default(),
            member_id: member_id.to_string(),
            members,
            skip_assignment: false,
        }
    }

    /// JoinGroup. `new_member_id` makes ids (client id + '-' + uuid in the coordinator).
    pub fn join(
        &mut self,
        request: JoinRequest,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
        new_member_id: impl FnOnce() -> String,
    ) -> JoinOutcome {
        let respond = |error, member_id: &str| {
            JoinOutcome::Respond(JoinResult::error(error, member_id), Effects::default())
        };
        if request.session_timeout_ms < config.min_session_timeout_ms
            || request.session_timeout_ms > config.max_session_timeout_ms
        {
            return respond(GroupError::InvalidSessionTimeout, &request.member_id);
        }
        if self.state == GroupState::Dead {
            return respond(GroupError::CoordinatorNotAvailable, &request.member_id);
        }
        if !self.supports(&request.protocol_type, &request.protocols) {
            return respond(GroupError::InconsistentGroupProtocol, &request.member_id);
        }
        if request.member_id.is_empty() {
            self.join_unknown_member(request, config, now, now_ms, new_member_id)
        } else {
            self.join_known_member(request, config, now, now_ms)
        }
    }

    fn join_unknown_member(
        &mut self,
        request: JoinRequest,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
        new_member_id: impl FnOnce() -> String,
    ) -> JoinOutcome {
        if let Some(instance) = request.group_instance_id.clone() {
            if let Some(old_id) = self.static_members.get(&instance).cloned() {
                return self.replace_static_member(
                    &old_id,
                    request,
                    config,
                    now,
                    now_ms,
                    new_member_id(),
                );
            }
        } else if request.require_known_member_id {
            if self.members.len() + self.pending_members.len() >= config.max_size {
                return JoinOutcome::Respond(
                    JoinResult::error(GroupError::GroupMaxSizeReached, ""),
                    Effects::default(),
                );
            }
            // KIP-394: hand out an id first, so a client that retries does not leave a ghost.
            let member_id = new_member_id();
            self.pending_members.insert(
                member_id.clone(),
                now + Duration::from_millis(request.session_timeout_ms as u64),
            );
            let effects = Effects {
                watch_members: vec![member_id.clone()],
                ..Effects::default()
            };
            return JoinOutcome::Respond(
                JoinResult::error(GroupError::MemberIdRequired, &member_id),
                effects,
            );
        }
        if self.members.len() >= config.max_size {
            return JoinOutcome::Respond(
                JoinResult::error(GroupError::GroupMaxSizeReached, ""),
                Effects::default(),
            );
        }
        let member_id = new_member_id();
        self.add_member_and_rebalance(member_id, request, config, now, now_ms)
    }

    fn join_known_member(
        &mut self,
        request: JoinRequest,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
    ) -> JoinOutcome {
        let member_id = request.member_id.clone();
        if self.pending_members.remove(&member_id).is_some() {
            if self.members.len() >= config.max_size {
                return JoinOutcome::Respond(
                    JoinResult::error(GroupError::GroupMaxSizeReached, &member_id),
                    Effects::default(),
                );
            }
            // Already watched since it was handed out.
            return match self.add_member_and_rebalance(
                member_id.clone(),
                request,
                config,
                now,
                now_ms,
            ) {
                JoinOutcome::Wait(rx, mut effects) => {
                    effects.watch_members.retain(|m| *m != member_id);
                    JoinOutcome::Wait(rx, effects)
                }
                respond => respond,
            };
        }
        if let Err(error) = self.validate_member(&member_id, request.group_instance_id.as_deref()) {
            return JoinOutcome::Respond(JoinResult::error(error, &member_id), Effects::default());
        }
        let changed = self
            .members
            .get(&member_id)
            .is_some_and(|m| m.protocols != request.protocols);
        match self.state {
            GroupState::PreparingRebalance => {
                let (tx, rx) = oneshot::channel();
                self.update_member(&member_id, &request, Some(tx), now);
                let mut effects = Effects::default();
                self.maybe_complete_join_early(&mut effects, now, now_ms);
                JoinOutcome::Wait(rx, effects)
            }
            GroupState::CompletingRebalance if !changed => {
                // A retried join of this generation: answer with it again.
                JoinOutcome::Respond(self.current_join_result(&member_id), Effects::default())
            }
            GroupState::Stable
                if !changed && self.leader.as_deref() != Some(member_id.as_str()) =>
            {
                JoinOutcome::Respond(self.current_join_result(&member_id), Effects::default())
            }
            GroupState::CompletingRebalance | GroupState::Stable => {
                let (tx, rx) = oneshot::channel();
                self.update_member(&member_id, &request, Some(tx), now);
                let effects = self.prepare_rebalance(config, now, now_ms);
                JoinOutcome::Wait(rx, effects)
            }
            GroupState::Empty | GroupState::Dead => JoinOutcome::Respond(
                JoinResult::error(GroupError::UnknownMemberId, &member_id),
                Effects::default(),
            ),
        }
    }

    fn update_member(
        &mut self,
        member_id: &str,
        request: &JoinRequest,
        awaiting: Option<oneshot::Sender<JoinResult>>,
        now: Instant,
    ) {
        if let Some(member) = self.members.get_mut(member_id) {
            member.refresh_from(request, now);
            if let Some(tx) = awaiting
                && let Some(old) = member.awaiting_join.replace(tx)
            {
                let _ = old.send(JoinResult::error(GroupError::UnknownMemberId, member_id));
            }
        }
    }

    fn add_member_and_rebalance(
        &mut self,
        member_id: String,
        request: JoinRequest,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
    ) -> JoinOutcome {
        let (tx, rx) = oneshot::channel();
        if self.members.is_empty() {
            self.protocol_type = Some(request.protocol_type.clone());
        }
        if let Some(instance) = &request.group_instance_id {
            self.static_members
                .insert(instance.clone(), member_id.clone());
        }
        self.members.insert(
            member_id.clone(),
            Member {
                member_id: member_id.clone(),
                group_instance_id: request.group_instance_id.clone(),
                client_id: request.client_id,
                client_host: request.client_host,
                session_timeout_ms: request.session_timeout_ms,
                rebalance_timeout_ms: request.rebalance_timeout_ms,
                protocol_type: request.protocol_type,
                protocols: request.protocols,
                assignment: Bytes::new(),
                awaiting_join: Some(tx),
                awaiting_sync: None,
                session_deadline: now + Duration::from_millis(request.session_timeout_ms as u64),
            },
        );
        if self.leader.is_none() {
            self.leader = Some(member_id.clone());
        }
        if let Some(delay) = &mut self.initial_delay {
            delay.new_member_added = true;
        }
        let mut effects = Effects {
            watch_members: vec![member_id],
            ..Effects::default()
        };
        match self.state {
            GroupState::PreparingRebalance => {
                self.maybe_complete_join_early(&mut effects, now, now_ms)
            }
            _ => effects.merge(self.prepare_rebalance(config, now, now_ms)),
        }
        JoinOutcome::Wait(rx, effects)
    }

    /// A static member came back with no member id: it takes over its old member's place.
    fn replace_static_member(
        &mut self,
        old_id: &str,
        request: JoinRequest,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
        new_id: String,
    ) -> JoinOutcome {
        let Some(mut member) = self.members.shift_remove(old_id) else {
            return JoinOutcome::Respond(
                JoinResult::error(GroupError::UnknownMemberId, ""),
                Effects::default(),
            );
        };
        if let Some(old) = member.awaiting_join.take() {
            let _ = old.send(JoinResult::error(GroupError::FencedInstanceId, old_id));
        }
        if let Some(old) = member.awaiting_sync.take() {
            let _ = old.send(SyncResult::error(GroupError::FencedInstanceId));
        }
        let protocols_changed = member.protocols != request.protocols;
        member.member_id = new_id.clone();
        member.refresh_from(&request, now);
        self.members.insert(new_id.clone(), member);
        if let Some(instance) = &request.group_instance_id {
            self.static_members.insert(instance.clone(), new_id.clone());
        }
        let was_leader = self.leader.as_deref() == Some(old_id);
        if was_leader {
            self.leader = Some(new_id.clone());
        }
        let watch = Effects {
            watch_members: vec![new_id.clone()],
            ..Effects::default()
        };
        match self.state {
            GroupState::Stable
                if !protocols_changed || self.select_protocol() == self.protocol_name =>
            {
                // Same generation, same assignment: no rebalance (KIP-345); persist the new id.
                let mut result = self.current_join_result(&new_id);
                result.skip_assignment = was_leader;
                JoinOutcome::Respond(
                    result,
                    Effects {
                        persist_group: true,
                        ..watch
                    },
                )
            }
            GroupState::PreparingRebalance => {
                let (tx, rx) = oneshot::channel();
                if let Some(m) = self.members.get_mut(&new_id) {
                    m.awaiting_join = Some(tx);
                }
                let mut effects = watch;
                self.maybe_complete_join_early(&mut effects, now, now_ms);
                JoinOutcome::Wait(rx, effects)
            }
            _ => {
                // CompletingRebalance (the old id may already be in the leader's hands) or a
                // changed protocol: rebalance.
                let (tx, rx) = oneshot::channel();
                if let Some(m) = self.members.get_mut(&new_id) {
                    m.awaiting_join = Some(tx);
                }
                let mut effects = watch;
                effects.merge(self.prepare_rebalance(config, now, now_ms));
                JoinOutcome::Wait(rx, effects)
            }
        }
    }

    /// Checks that `member_id` is a member, fencing a stale static incarnation.
    pub fn validate_member(
        &self,
        member_id: &str,
        instance: Option<&str>,
    ) -> Result<(), GroupError> {
        if let Some(instance) = instance
            && let Some(current) = self.static_members.get(instance)
            && current != member_id
        {
            return Err(GroupError::FencedInstanceId);
        }
        if !self.members.contains_key(member_id) {
            return Err(GroupError::UnknownMemberId);
        }
        Ok(())
    }

    /// Starts (or restarts) a rebalance. Members waiting in SyncGroup learn it at once.
    pub fn prepare_rebalance(
        &mut self,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
    ) -> Effects {
        if self.state == GroupState::CompletingRebalance {
            for member in self.members.values_mut() {
                member.assignment = Bytes::new();
                if let Some(tx) = member.awaiting_sync.take() {
                    let _ = tx.send(SyncResult::error(GroupError::RebalanceInProgress));
                }
            }
        }
        let rebalance_timeout = self.max_rebalance_timeout();
        let delay = if self.state == GroupState::Empty {
            let initial = Duration::from_millis(config.initial_rebalance_delay_ms.max(0) as u64)
                .min(rebalance_timeout);
            self.initial_delay = Some(InitialDelay {
                remaining_ms: rebalance_timeout.saturating_sub(initial).as_millis() as i64,
                new_member_added: false,
            });
            initial
        } else {
            self.initial_delay = None;
            rebalance_timeout
        };
        self.rebalance_id += 1;
        self.transition(GroupState::PreparingRebalance, now_ms);
        let mut effects = Effects {
            join_timer: Some((self.rebalance_id, now + delay)),
            ..Effects::default()
        };
        self.maybe_complete_join_early(&mut effects, now, now_ms);
        effects
    }

    /// Completes the join phase once every member has rejoined (never during the initial delay,
    /// which always runs its course, as in Kafka).
    fn maybe_complete_join_early(&mut self, effects: &mut Effects, now: Instant, now_ms: i64) {
        if self.state == GroupState::PreparingRebalance
            && self.initial_delay.is_none()
            && self.all_members_joined()
        {
            effects.merge(self.complete_join(now, now_ms));
        }
    }

    /// The join timer of rebalance `rebalance_id` fired. Returns the effects (possibly a new
    /// timer when the initial delay is extended because members kept arriving).
    pub fn on_join_timer(
        &mut self,
        rebalance_id: u64,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
    ) -> Effects {
        if self.state != GroupState::PreparingRebalance || rebalance_id != self.rebalance_id {
            return Effects::default();
        }
        if let Some(delay) = self.initial_delay
            && delay.new_member_added
            && delay.remaining_ms > 0
        {
            let next = (config.initial_rebalance_delay_ms.max(0) as i64).min(delay.remaining_ms);
            self.initial_delay = Some(InitialDelay {
                remaining_ms: delay.remaining_ms - next,
                new_member_added: false,
            });
            return Effects {
                join_timer: Some((rebalance_id, now + Duration::from_millis(next as u64))),
                ..Effects::default()
            };
        }
        self.complete_join(now, now_ms)
    }

    /// Ends the join phase: members that did not rejoin are dropped, the next generation
    /// starts with a chosen protocol and leader, and every waiting JoinGroup is answered.
    pub fn complete_join(&mut self, now: Instant, now_ms: i64) -> Effects {
        self.initial_delay = None;
        let gone: Vec<String> = self
            .members
            .values()
            .filter(|m| m.awaiting_join.is_none())
            .map(|m| m.member_id.clone())
            .collect();
        for member_id in gone {
            self.remove_member_quietly(&member_id);
        }
        self.generation += 1;
        if self.members.is_empty() {
            self.protocol_name = None;
            self.leader = None;
            self.transition(GroupState::Empty, now_ms);
            return Effects {
                persist_group: true,
                ..Effects::default()
            };
        }
        if self
            .leader
            .as_ref()
            .is_none_or(|l| !self.members.contains_key(l))
        {
            self.leader = self.members.keys().next().cloned();
        }
        self.protocol_name = self.select_protocol();
        self.transition(GroupState::CompletingRebalance, now_ms);
        let ids: Vec<String> = self.members.keys().cloned().collect();
        for member_id in ids {
            let result = self.current_join_result(&member_id);
            if let Some(member) = self.members.get_mut(&member_id) {
                member.session_deadline =
                    now + Duration::from_millis(member.session_timeout_ms as u64);
                if let Some(tx) = member.awaiting_join.take() {
                    let _ = tx.send(result);
                }
            }
        }
        Effects::default()
    }

    /// SyncGroup.
    pub fn sync(&mut self, request: SyncRequest, now: Instant) -> SyncOutcome {
        let SyncRequest {
            member_id,
            group_instance_id,
            generation,
            protocol_type,
            protocol_name,
            assignments,
        } = request;
        let (member_id, instance) = (member_id.as_str(), group_instance_id.as_deref());
        let (protocol_type, protocol_name) = (protocol_type.as_deref(), protocol_name.as_deref());
        if self.state == GroupState::Dead {
            return SyncOutcome::Respond(SyncResult::error(GroupError::CoordinatorNotAvailable));
        }
        if let Err(error) = self.validate_member(member_id, instance) {
            return SyncOutcome::Respond(SyncResult::error(error));
        }
        if generation != self.generation {
            return SyncOutcome::Respond(SyncResult::error(GroupError::IllegalGeneration));
        }
        if protocol_type.is_some_and(|t| Some(t) != self.protocol_type.as_deref())
            || protocol_name.is_some_and(|n| Some(n) != self.protocol_name.as_deref())
        {
            return SyncOutcome::Respond(SyncResult::error(GroupError::InconsistentGroupProtocol));
        }
        match self.state {
            GroupState::Empty | GroupState::Dead => {
                SyncOutcome::Respond(SyncResult::error(GroupError::UnknownMemberId))
            }
            GroupState::PreparingRebalance => {
                SyncOutcome::Respond(SyncResult::error(GroupError::RebalanceInProgress))
            }
            GroupState::Stable => {
                let assignment = self
                    .members
                    .get(member_id)
                    .map(|m| m.assignment.clone())
                    .unwrap_or_default();
                if let Some(member) = self.members.get_mut(member_id) {
                    member.session_deadline =
                        now + Duration::from_millis(member.session_timeout_ms as u64);
                }
                SyncOutcome::Respond(self.sync_result(assignment))
            }
            GroupState::CompletingRebalance => {
                let (tx, rx) = oneshot::channel();
                if let Some(member) = self.members.get_mut(member_id) {
                    member.awaiting_sync = Some(tx);
                    member.session_deadline =
                        now + Duration::from_millis(member.session_timeout_ms as u64);
                }
                if self.leader.as_deref() == Some(member_id) {
                    let map = assignments
                        .into_iter()
                        .filter(|(m, _)| self.members.contains_key(m))
                        .collect();
                    SyncOutcome::LeaderAssigned(rx, map)
                } else {
                    SyncOutcome::Wait(rx)
                }
            }
        }
    }

    fn sync_result(&self, assignment: Bytes) -> SyncResult {
        SyncResult {
            error: None,
            protocol_type: self.protocol_type.clone(),
            protocol_name: self.protocol_name.clone(),
            assignment,
        }
    }

    /// The leader's assignment is persisted: install it, answer every waiting SyncGroup and
    /// become Stable.
    pub fn complete_sync(&mut self, assignments: HashMap<String, Bytes>, now_ms: i64) {
        if self.state != GroupState::CompletingRebalance {
            return;
        }
        for member in self.members.values_mut() {
            member.assignment = assignments
                .get(&member.member_id)
                .cloned()
                .unwrap_or_default();
        }
        self.transition(GroupState::Stable, now_ms);
        let results: Vec<(String, SyncResult)> = self
            .members
            .values()
            .map(|m| (m.member_id.clone(), self.sync_result(m.assignment.clone())))
            .collect();
        for (member_id, result) in results {
            if let Some(tx) = self
                .members
                .get_mut(&member_id)
                .and_then(|m| m.awaiting_sync.take())
            {
                let _ = tx.send(result);
            }
        }
    }

    /// The group write of a leader's assignment failed: everyone waiting is told, and the
    /// group rebalances.
    pub fn fail_sync(
        &mut self,
        error: GroupError,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
    ) -> Effects {
        for member in self.members.values_mut() {
            if let Some(tx) = member.awaiting_sync.take() {
                let _ = tx.send(SyncResult::error(error));
            }
        }
        if self.state == GroupState::CompletingRebalance {
            return self.prepare_rebalance(config, now, now_ms);
        }
        Effects::default()
    }

    /// The record describing this group (GroupMetadataValue).
    pub fn snapshot(&self) -> super::records::GroupValue {
        let protocol = self.protocol_name.clone().unwrap_or_default();
        super::records::GroupValue {
            protocol_type: self.protocol_type.clone().unwrap_or_default(),
            generation: self.generation,
            protocol: self.protocol_name.clone(),
            leader: self.leader.clone(),
            current_state_timestamp: self.state_timestamp,
            members: self
                .members
                .values()
                .map(|m| super::records::MemberValue {
                    member_id: m.member_id.clone(),
                    group_instance_id: m.group_instance_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    rebalance_timeout: m.rebalance_timeout_ms,
                    session_timeout: m.session_timeout_ms,
                    subscription: m.metadata_for(&protocol),
                    assignment: m.assignment.clone(),
                })
                .collect(),
        }
    }

    /// Heartbeat: keeps the member alive and tells it whether a rebalance is under way.
    pub fn heartbeat(
        &mut self,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
        now: Instant,
    ) -> Result<(), GroupError> {
        if self.state == GroupState::Dead {
            return Err(GroupError::CoordinatorNotAvailable);
        }
        self.validate_member(member_id, instance)?;
        if generation != self.generation {
            return Err(GroupError::IllegalGeneration);
        }
        let member = self
            .members
            .get_mut(member_id)
            .ok_or(GroupError::UnknownMemberId)?;
        member.session_deadline = now + Duration::from_millis(member.session_timeout_ms as u64);
        match self.state {
            GroupState::Empty | GroupState::Dead => Err(GroupError::UnknownMemberId),
            GroupState::PreparingRebalance => Err(GroupError::RebalanceInProgress),
            GroupState::CompletingRebalance | GroupState::Stable => Ok(()),
        }
    }

    /// LeaveGroup for one member (by member id, or by instance id with an empty member id).
    pub fn leave(
        &mut self,
        member_id: &str,
        instance: Option<&str>,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
    ) -> Result<Effects, GroupError> {
        if self.state == GroupState::Dead {
            return Err(GroupError::CoordinatorNotAvailable);
        }
        let target = match instance {
            Some(instance) => {
                let current = self
                    .static_members
                    .get(instance)
                    .cloned()
                    .ok_or(GroupError::UnknownMemberId)?;
                if !member_id.is_empty() && member_id != current {
                    return Err(GroupError::FencedInstanceId);
                }
                current
            }
            None => member_id.to_string(),
        };
        if self.pending_members.remove(&target).is_some() {
            let mut effects = Effects::default();
            self.maybe_complete_join_early(&mut effects, now, now_ms);
            return Ok(effects);
        }
        if !self.members.contains_key(&target) {
            return Err(GroupError::UnknownMemberId);
        }
        Ok(self.remove_member(&target, config, now, now_ms))
    }

    /// Removes a member whose session expired, if it really did (the deadline may have moved).
    /// Members parked in a join or sync are kept alive, as in Kafka.
    pub fn expire_member(
        &mut self,
        member_id: &str,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
    ) -> Option<Effects> {
        if let Some(deadline) = self.pending_members.get(member_id) {
            if *deadline > now {
                return None;
            }
            self.pending_members.remove(member_id);
            let mut effects = Effects::default();
            self.maybe_complete_join_early(&mut effects, now, now_ms);
            return Some(effects);
        }
        let member = self.members.get(member_id)?;
        if member.session_deadline > now
            || member.awaiting_join.is_some()
            || member.awaiting_sync.is_some()
        {
            return None;
        }
        tracing::info!(group = %self.id, member = member_id, "member session expired");
        Some(self.remove_member(member_id, config, now, now_ms))
    }

    /// The session deadline of a member or pending member, `None` once it is gone.
    pub fn deadline_of(&self, member_id: &str) -> Option<Instant> {
        self.members
            .get(member_id)
            .map(|m| {
                // Parked members are kept alive: check again one session later.
                if m.awaiting_join.is_some() || m.awaiting_sync.is_some() {
                    m.session_deadline
                        .max(Instant::now() + Duration::from_millis(m.session_timeout_ms as u64))
                } else {
                    m.session_deadline
                }
            })
            .or_else(|| self.pending_members.get(member_id).copied())
    }

    fn remove_member_quietly(&mut self, member_id: &str) {
        if let Some(mut member) = self.members.shift_remove(member_id) {
            if let Some(tx) = member.awaiting_join.take() {
                let _ = tx.send(JoinResult::error(GroupError::UnknownMemberId, member_id));
            }
            if let Some(tx) = member.awaiting_sync.take() {
                let _ = tx.send(SyncResult::error(GroupError::UnknownMemberId));
            }
            if let Some(instance) = &member.group_instance_id
                && self.static_members.get(instance).map(String::as_str) == Some(member_id)
            {
                self.static_members.remove(instance);
            }
        }
        if self.leader.as_deref() == Some(member_id) {
            self.leader = self.members.keys().next().cloned();
        }
    }

    fn remove_member(
        &mut self,
        member_id: &str,
        config: &GroupConfig,
        now: Instant,
        now_ms: i64,
    ) -> Effects {
        self.remove_member_quietly(member_id);
        match self.state {
            GroupState::Stable | GroupState::CompletingRebalance => {
                self.prepare_rebalance(config, now, now_ms)
            }
            GroupState::PreparingRebalance => {
                let mut effects = Effects::default();
                self.maybe_complete_join_early(&mut effects, now, now_ms);
                effects
            }
            GroupState::Empty | GroupState::Dead => Effects::default(),
        }
    }

    /// Checks an OffsetCommit (or, `transactional`, a TxnOffsetCommit) against the group, in
    /// the order of Kafka's `validateOffsetCommit`: member and generation first, so a stale
    /// generation is ILLEGAL_GENERATION even mid-rebalance; REBALANCE_IN_PROGRESS only for a
    /// current member while the group completes its rebalance. A negative generation without
    /// a member is a commit from outside group management, allowed only while Empty.
    pub fn validate_offset_commit(
        &self,
        member_id: &str,
        instance: Option<&str>,
        generation: i32,
        transactional: bool,
    ) -> Result<(), GroupError> {
        if self.state == GroupState::Dead {
            return Err(GroupError::CoordinatorNotAvailable);
        }
        if generation < 0 && self.state == GroupState::Empty {
            return Ok(());
        }
        if generation >= 0 || !member_id.is_empty() || instance.is_some() {
            self.validate_member(member_id, instance)?;
            if generation != self.generation {
                return Err(GroupError::IllegalGeneration);
            }
        } else if !transactional && self.state != GroupState::Empty {
            return Err(GroupError::UnknownMemberId);
        }
        if !transactional && self.state == GroupState::CompletingRebalance {
            return Err(GroupError::RebalanceInProgress);
        }
        Ok(())
    }

    /// Topics the members are subscribed to, from their `consumer` protocol metadata
    /// (ConsumerProtocolSubscription: version i16, topics [string], ...).
    pub fn subscribed_topics(&self) -> Option<Vec<String>> {
        if self.protocol_type.as_deref() != Some("consumer") {
            return None;
        }
        let protocol = self.protocol_name.clone()?;
        let mut topics = Vec::new();
        for member in self.members.values() {
            let metadata = member.metadata_for(&protocol);
            topics.extend(parse_subscription_topics(&metadata)?);
        }
        Some(topics)
    }
}

/// The topic list of a ConsumerProtocolSubscription (any version: the list always comes first
/// after the version; v0-v3 are not flexible, which covers every classic client).
fn parse_subscription_topics(mut metadata: &[u8]) -> Option<Vec<String>> {
    use bytes::Buf;
    if metadata.remaining() < 6 {
        return None;
    }
    let version = metadata.get_i16();
    if !(0..=3).contains(&version) {
        return None;
    }
    let count = metadata.get_i32();
    if count < 0 || count as usize > metadata.remaining() {
        return None;
    }
    let mut topics = Vec::with_capacity(count as usize);
    for _ in 0..count {
        if metadata.remaining() < 2 {
            return None;
        }
        let len = metadata.get_i16();
        if len < 0 || len as usize > metadata.remaining() {
            return None;
        }
        topics.push(String::from_utf8_lossy(&metadata[..len as usize]).into_owned());
        metadata.advance(len as usize);
    }
    Some(topics)
}

#[cfg(test)]
mod tests {
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
}
