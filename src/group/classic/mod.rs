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
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the group, its members and states, protocol selection, the stored snapshot |
//! | `join.rs` | JoinGroup and the rebalance (unknown, known and static members, initial delay) |
//! | `membership.rs` | SyncGroup, heartbeats, LeaveGroup, session expiry, offset commit checks |

use crate::error::GroupError;
use bytes::Bytes;
use indexmap::IndexMap;
use std::collections::{BTreeMap, HashMap};
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};

mod join;
mod membership;
#[cfg(test)]
mod tests;

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
