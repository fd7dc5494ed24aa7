//! Streams groups (KIP-1071, Kafka's `StreamsGroup` and its `CurrentAssignmentBuilder`): the
//! broker assigns a Kafka Streams application's tasks — (subtopology, partition) pairs — through
//! StreamsGroupHeartbeat, as KIP-848 assigns partitions to consumers.
//!
//! - The first member brings the **topology**; the coordinator configures it against the topics
//!   there are ([`topology`]): source topics must exist, repartition and changelog topics get
//!   their partition counts and are created by the coordinator when missing. Until the topology
//!   is ready, members are told why in the heartbeat's status and get no tasks.
//! - The **group epoch** moves when members, the topology, or the partition counts of its topics
//!   change; the target assignment of that epoch comes from the [`assignor`].
//! - Each member **reconciles** towards its target: active tasks it must give up are revoked
//!   first (it keeps its epoch meanwhile), and an active task another member still holds is
//!   withheld until released, so no task is ever processed by two members at once.
//! - A member that stops heartbeating for the session timeout, or does not revoke within its
//!   rebalance timeout, is fenced and removed.
//!
//! Synchronous and free of I/O like `consumer.rs`; the coordinator (`coordinator.rs`) runs the
//! timers, creates the internal topics and answers the APIs.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the group and its members: heartbeat, reconciliation, leaving, expiry |
//! | `topology.rs` | the topology and its configuration against the topics (`InternalTopicManager`) |
//! | `assignor.rs` | the sticky task assignor (active and standby tasks) |
//! | `validate.rs` | Kafka's checks of a heartbeat: fields, topology, member epoch, tasks |
//! | `coordinator.rs` | the group coordinator's streams groups: requests, timers, internal topics |
//! | `static_members.rs` | static membership: instance ids, temporary leaves, take-overs |
//! | `persist.rs` | the group as records in `__consumer_offsets`, and rebuilt from them |
//! | `records.rs` | Kafka's `StreamsGroup*Value` record formats |

pub mod assignor;
mod coordinator;
mod persist;
pub mod records;
mod static_members;
pub mod topology;
mod validate;

pub(crate) use coordinator::lock_streams;
pub use coordinator::{SharedStreamsGroup, StreamsHeartbeatOutcome};
pub use persist::Replayed;

use super::classic::Offsets;
use super::consumer::{Assignment, TopicsView};
use super::reconcile::{self, AssignmentEpochs, Committer, Progress, Reconciling, flatten};
use crate::error::{GroupError, StreamsError};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tokio::time::{Duration, Instant};
use topology::{ConfiguredTopology, StatusCode, TopicToCreate, Topology};
use validate::{check_epoch, check_tasks, validate};

/// subtopology id -> task partitions (the shape of a consumer assignment).
pub type Tasks = Assignment;

/// A member's tasks of each kind (Kafka's `TasksTuple`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TasksTuple {
    pub active: Tasks,
    pub standby: Tasks,
    pub warmup: Tasks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemberState {
    Stable,
    UnrevokedTasks,
    UnreleasedTasks,
}

impl MemberState {
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Stable => "STABLE",
            MemberState::UnrevokedTasks => "UNREVOKED_TASKS",
            MemberState::UnreleasedTasks => "UNRELEASED_TASKS",
        }
    }
}

/// A task's changelog offset a member reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOffset {
    pub subtopology: String,
    pub partition: i32,
    pub offset: i64,
}

#[derive(Debug, Clone)]
pub struct StreamsMember {
    pub member_id: String,
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub state: MemberState,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout_ms: i32,
    pub topology_epoch: i32,
    pub process_id: String,
    pub user_endpoint: Option<(String, u16)>,
    pub client_tags: BTreeMap<String, String>,
    pub task_offsets: Vec<TaskOffset>,
    pub task_end_offsets: Vec<TaskOffset>,
    /// What the member has been told it owns.
    pub assigned: TasksTuple,
    /// Active tasks it must give up and has not confirmed yet.
    pub pending_revocation: Tasks,
    /// The epoch each active task it holds or gives up was assigned at.
    pub assignment_epochs: AssignmentEpochs,
    last_sent: Option<TasksTuple>,
    pub session_deadline: Instant,
    pub revocation_deadline: Option<Instant>,
}

/// A heartbeat in core terms (`None`: unchanged since the last one).
#[derive(Debug, Clone, Default)]
pub struct StreamsHeartbeat {
    pub member_id: String,
    pub member_epoch: i32,
    pub endpoint_information_epoch: i32,
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub topology: Option<Topology>,
    pub active: Option<Tasks>,
    pub standby: Option<Tasks>,
    pub warmup: Option<Tasks>,
    pub process_id: Option<String>,
    pub user_endpoint: Option<(String, u16)>,
    pub client_tags: Option<BTreeMap<String, String>>,
    pub task_offsets: Option<Vec<TaskOffset>>,
    pub task_end_offsets: Option<Vec<TaskOffset>>,
    pub shutdown_application: bool,
    pub client_id: String,
    pub client_host: String,
}

/// Partitions an endpoint (Interactive Queries) serves: topic -> partitions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointPartitions {
    pub endpoint: (String, u16),
    pub active: BTreeMap<String, BTreeSet<i32>>,
    pub standby: BTreeMap<String, BTreeSet<i32>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamsHeartbeatResult {
    pub member_id: String,
    pub member_epoch: i32,
    /// `None` when unchanged since the last response.
    pub assignment: Option<TasksTuple>,
    pub status: Vec<(StatusCode, String)>,
    /// Internal topics the coordinator must create.
    pub to_create: Vec<TopicToCreate>,
    pub endpoint_information_epoch: i32,
    pub partitions_by_endpoint: Option<Vec<EndpointPartitions>>,
}

/// Settings of a streams group (Kafka's `group.streams.*` and the group's `streams.*` configs).
#[derive(Debug, Clone)]
pub struct StreamsGroupConfig {
    pub session_timeout_ms: i32,
    pub heartbeat_interval_ms: i32,
    pub num_standby_replicas: i32,
    pub initial_rebalance_delay_ms: i32,
    pub max_size: usize,
    /// The lag under which a warm-up task counts as caught up (sent to members).
    pub acceptable_recovery_lag: i64,
    /// How often members report their tasks' changelog offsets.
    pub task_offset_interval_ms: i32,
    /// `streams.rack.aware.assignment.tags`: part of the assignment's configuration (a change
    /// starts a new assignment), unused by the sticky assignor as by Kafka 4.4's.
    pub rack_aware_assignment_tags: Vec<String>,
}

impl StreamsGroupConfig {
    /// What a target assignment is computed with (Kafka's `streamsGroupAssignmentConfigs`):
    /// when it differs from the last one's, the group starts a new assignment.
    pub fn assignment_configs(&self) -> BTreeMap<String, String> {
        let mut configs = BTreeMap::from([(
            "num.standby.replicas".to_string(),
            self.num_standby_replicas.to_string(),
        )]);
        if !self.rack_aware_assignment_tags.is_empty() {
            configs.insert(
                "rack.aware.assignment.tags".to_string(),
                self.rack_aware_assignment_tags.join(","),
            );
        }
        configs
    }
}

impl Default for StreamsGroupConfig {
    fn default() -> Self {
        Self {
            session_timeout_ms: 45_000,
            heartbeat_interval_ms: 5_000,
            num_standby_replicas: 0,
            initial_rebalance_delay_ms: 3_000,
            max_size: i32::MAX as usize,
            acceptable_recovery_lag: 10_000,
            task_offset_interval_ms: 60_000,
            rack_aware_assignment_tags: Vec::new(),
        }
    }
}

pub const LEAVE_EPOCH: i32 = -1;
pub const LEAVE_STATIC_EPOCH: i32 = -2;

#[derive(Debug)]
pub struct StreamsGroup {
    pub id: String,
    pub group_epoch: i32,
    pub assignment_epoch: i32,
    pub topology: Option<Topology>,
    pub configured: Option<ConfiguredTopology>,
    /// Partition counts of the topics the topology needs, at the last configuration.
    metadata: BTreeMap<String, Option<i32>>,
    pub members: BTreeMap<String, StreamsMember>,
    pub target: HashMap<String, TasksTuple>,
    pub offsets: Offsets,
    pub state_timestamp: i64,
    pub endpoint_information_epoch: i32,
    shutdown_requested_by: Option<String>,
    /// The configuration the last target was computed with.
    last_assignment_configs: BTreeMap<String, String>,
    /// While the first members of an empty group gather (`initial_rebalance_delay_ms` from the
    /// first join), tasks wait: the target is empty until this time, then a new epoch assigns
    /// them, so that instances starting together do not shuffle tasks among themselves.
    initial_assignment_at: Option<Instant>,
    /// Members whose session the coordinator is timing.
    pub watched: BTreeSet<String>,
    /// Static members: instance id -> the member holding it.
    pub static_members: HashMap<String, String>,
    /// The group's records as last written to `__consumer_offsets`.
    persisted: BTreeMap<crate::group::records::RecordKey, bytes::Bytes>,
    /// The topology description last sent by a member (KIP-1331), as its wire bytes.
    pub topology_description: Option<(i32, bytes::Bytes)>,
    /// Internal topics whose creation was asked for, and when: asked again only after
    /// [`CREATION_RETRY`], not on every heartbeat while the first request runs.
    creation_requested: BTreeMap<String, Instant>,
}

/// How long a requested internal topic creation is given before it is asked for again.
const CREATION_RETRY: Duration = Duration::from_secs(10);

impl StreamsGroup {
    pub fn new(id: &str, offsets: Offsets, now_ms: i64) -> Self {
        Self {
            id: id.into(),
            group_epoch: 0,
            assignment_epoch: 0,
            topology: None,
            configured: None,
            metadata: BTreeMap::new(),
            members: BTreeMap::new(),
            target: HashMap::new(),
            offsets,
            state_timestamp: now_ms,
            endpoint_information_epoch: 0,
            shutdown_requested_by: None,
            last_assignment_configs: StreamsGroupConfig::default().assignment_configs(),
            initial_assignment_at: None,
            watched: BTreeSet::new(),
            static_members: HashMap::new(),
            persisted: BTreeMap::new(),
            topology_description: None,
            creation_requested: BTreeMap::new(),
        }
    }

    /// Kafka's streams group states.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else if self.configured.as_ref().is_none_or(|c| !c.is_ready()) {
            "NotReady"
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

    /// One heartbeat: join, leave, or keep alive and reconcile.
    pub fn heartbeat(
        &mut self,
        hb: StreamsHeartbeat,
        config: &StreamsGroupConfig,
        topics: &dyn TopicsView,
        now: Instant,
        now_ms: i64,
    ) -> Result<StreamsHeartbeatResult, StreamsError> {
        validate(&hb)?;
        // Everything that can refuse the heartbeat is checked before anything changes.
        if let (Some(topology), Some(current)) = (&hb.topology, &self.topology)
            && topology.epoch == current.epoch
            && topology != current
        {
            return Err(StreamsError::InvalidTopologyEpoch(format!(
                "Topology updated but topology epoch not incremented: the topology of member {} differs from the group's topology with epoch {}.",
                hb.member_id, current.epoch
            )));
        }
        if let Some(configured) = &self.configured
            && configured.is_ready()
        {
            for tasks in [&hb.active, &hb.standby, &hb.warmup].into_iter().flatten() {
                check_tasks(configured, tasks)?;
            }
        }
        let session = Duration::from_millis(config.session_timeout_ms.max(0) as u64);
        if hb.member_epoch == LEAVE_EPOCH || hb.member_epoch == LEAVE_STATIC_EPOCH {
            match &hb.instance_id {
                None if !self.members.contains_key(&hb.member_id) => {
                    return Err(StreamsError::UnknownMemberId(format!(
                        "Member {} is not a member of group {}.",
                        hb.member_id, self.id
                    )));
                }
                None => {}
                Some(instance) => {
                    self.check_static_member(instance, &hb.member_id)?;
                    if hb.member_epoch == LEAVE_STATIC_EPOCH {
                        self.leave_temporarily(&hb.member_id);
                        return Ok(StreamsHeartbeatResult {
                            member_id: hb.member_id,
                            member_epoch: LEAVE_STATIC_EPOCH,
                            assignment: None,
                            status: Vec::new(),
                            to_create: Vec::new(),
                            endpoint_information_epoch: self.endpoint_information_epoch,
                            partitions_by_endpoint: None,
                        });
                    }
                }
            }
            self.remove_member(&hb.member_id, now_ms);
            return Ok(StreamsHeartbeatResult {
                member_id: hb.member_id,
                member_epoch: hb.member_epoch,
                assignment: None,
                status: Vec::new(),
                to_create: Vec::new(),
                endpoint_information_epoch: self.endpoint_information_epoch,
                partitions_by_endpoint: None,
            });
        }
        let joining = hb.member_epoch == 0;
        let mut bump = false;
        let replaced = match (&hb.instance_id, joining) {
            (Some(instance), true) => self.replace_static_member(instance, &hb.member_id, now)?,
            (Some(instance), false) => {
                self.check_static_member(instance, &hb.member_id)?;
                false
            }
            (None, _) => false,
        };
        if joining && !replaced {
            if !self.members.contains_key(&hb.member_id) {
                if self.members.len() >= config.max_size {
                    return Err(StreamsError::GroupMaxSizeReached(format!(
                        "The streams group has reached its maximum capacity of {} members.",
                        config.max_size
                    )));
                }
                if self.members.is_empty() {
                    self.initial_assignment_at = Some(
                        now + Duration::from_millis(config.initial_rebalance_delay_ms.max(0) as u64),
                    );
                }
                self.members
                    .insert(hb.member_id.clone(), new_member(&hb, now + session));
                if let Some(instance) = &hb.instance_id {
                    self.static_members
                        .insert(instance.clone(), hb.member_id.clone());
                }
                self.state_timestamp = now_ms;
                bump = true;
            } else if let Some(existing) = self.members.get_mut(&hb.member_id) {
                // Rejoining with epoch 0 starts over from an empty assignment.
                existing.member_epoch = 0;
                existing.state = MemberState::Stable;
                existing.assigned = TasksTuple::default();
                existing.pending_revocation.clear();
                existing.assignment_epochs.clear();
                existing.revocation_deadline = None;
                existing.last_sent = None;
            }
        } else if !joining {
            let member = self.members.get(&hb.member_id).ok_or_else(|| {
                StreamsError::UnknownMemberId(format!(
                    "Member {} is not a member of group {}.",
                    hb.member_id, self.id
                ))
            })?;
            check_epoch(member, &hb)?;
        }
        let member = self
            .members
            .get_mut(&hb.member_id)
            .ok_or(GroupError::UnknownMemberId)?;
        member.session_deadline = now + session;
        member.client_id = hb.client_id.clone();
        member.client_host = hb.client_host.clone();
        bump |= update_member(member, &hb);
        let mut status = Vec::new();
        // The topology: the first member's initializes it; a newer epoch replaces it.
        if let Some(topology) = &hb.topology {
            match &self.topology {
                None => {
                    self.topology = Some(topology.clone());
                    self.configured = None;
                    bump = true;
                }
                Some(current) if topology.epoch > current.epoch => {
                    self.topology = Some(topology.clone());
                    self.configured = None;
                    bump = true;
                }
                _ => {}
            }
        }
        let group_topology_epoch = self.topology.as_ref().map_or(0, |t| t.epoch);
        if let Some(m) = self.members.get(&hb.member_id)
            && m.topology_epoch < group_topology_epoch
        {
            status.push((
                StatusCode::StaleTopology,
                format!(
                    "The member's topology epoch {} is behind the group's topology epoch {}.",
                    m.topology_epoch, group_topology_epoch
                ),
            ));
        }
        // Configure the topology when it or the topics it needs changed.
        if let Some(topology) = &self.topology {
            let metadata = topology.required_partition_counts(topics);
            if self.configured.is_none() || metadata != self.metadata {
                let was_ready = self.configured.as_ref().map(ConfiguredTopology::is_ready);
                let configured = topology.configure(topics);
                if was_ready.is_some() || configured.is_ready() {
                    bump = true;
                }
                if was_ready.is_some_and(|r| r) && !configured.is_ready() {
                    tracing::warn!(group = %self.id, problem = ?configured.problem, "streams group topology no longer ready");
                }
                self.metadata = metadata;
                self.configured = Some(configured);
            }
        }
        let assignment_configs = config.assignment_configs();
        if assignment_configs != self.last_assignment_configs {
            tracing::info!(group = %self.id, configs = ?assignment_configs, "streams group assignment configurations changed; triggering rebalance");
            bump = true;
        }
        if self.initial_assignment_at.is_some_and(|at| now >= at) {
            self.initial_assignment_at = None;
            bump = true;
        }
        if bump {
            self.group_epoch += 1;
        }
        if self.assignment_epoch < self.group_epoch {
            if self.initial_assignment_at.is_some() {
                // Members get the epoch (and no tasks) while the others gather.
                self.target.clear();
                self.assignment_epoch = self.group_epoch;
            } else {
                self.compute_target(config);
            }
        }
        self.reconcile(&hb.member_id, hb.active.as_ref(), now);
        if hb.shutdown_application {
            self.shutdown_requested_by = Some(hb.member_id.clone());
        }
        let mut to_create = Vec::new();
        if let Some(configured) = &self.configured
            && let Some((code, message)) = &configured.problem
        {
            status.push((*code, message.clone()));
            self.creation_requested
                .retain(|_, asked| now < *asked + CREATION_RETRY);
            for topic in &configured.to_create {
                if !self.creation_requested.contains_key(&topic.name) {
                    self.creation_requested.insert(topic.name.clone(), now);
                    to_create.push(topic.clone());
                }
            }
        }
        if let Some(requester) = &self.shutdown_requested_by {
            status.push((
                StatusCode::ShutdownApplication,
                format!(
                    "Streams group member {requester} encountered a fatal error and requested a shutdown for the entire application."
                ),
            ));
        }
        let member = self
            .members
            .get_mut(&hb.member_id)
            .ok_or(GroupError::UnknownMemberId)?;
        let assignment = if joining || member.last_sent.as_ref() != Some(&member.assigned) {
            member.last_sent = Some(member.assigned.clone());
            if member.user_endpoint.is_some() {
                self.endpoint_information_epoch += 1;
            }
            Some(member.assigned.clone())
        } else {
            None
        };
        let member_epoch = member.member_epoch;
        let partitions_by_endpoint = (hb.endpoint_information_epoch
            != self.endpoint_information_epoch)
            .then(|| self.endpoint_partitions());
        Ok(StreamsHeartbeatResult {
            member_id: hb.member_id,
            member_epoch,
            assignment,
            status,
            to_create,
            endpoint_information_epoch: self.endpoint_information_epoch,
            partitions_by_endpoint,
        })
    }

    /// Which input and changelog partitions each endpoint serves (Kafka's
    /// `EndpointToPartitionsManager`).
    fn endpoint_partitions(&self) -> Vec<EndpointPartitions> {
        let Some(topology) = &self.topology else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for m in self.members.values() {
            let Some(endpoint) = &m.user_endpoint else {
                continue;
            };
            let partitions_of = |tasks: &Tasks| {
                let mut map: BTreeMap<String, BTreeSet<i32>> = BTreeMap::new();
                for (subtopology, partitions) in tasks {
                    let Some(s) = topology.subtopologies.get(subtopology) else {
                        continue;
                    };
                    let topics = s
                        .source_topics
                        .iter()
                        .chain(s.repartition_source_topics.iter().map(|t| &t.name))
                        .chain(s.state_changelog_topics.iter().map(|t| &t.name));
                    for t in topics {
                        map.entry(t.clone())
                            .or_default()
                            .extend(partitions.iter().copied());
                    }
                }
                map
            };
            out.push(EndpointPartitions {
                endpoint: endpoint.clone(),
                active: partitions_of(&m.assigned.active),
                standby: partitions_of(&m.assigned.standby),
            });
        }
        out
    }

    /// Removes a member (leave, session expiry, revocation timeout); its tasks become free.
    pub fn remove_member(&mut self, member_id: &str, now_ms: i64) {
        if let Some(member) = self.members.remove(member_id) {
            if let Some(instance) = &member.instance_id
                && self.static_members.get(instance).map(String::as_str) == Some(member_id)
            {
                self.static_members.remove(instance);
            }
            self.target.remove(member_id);
            self.watched.remove(member_id);
            self.group_epoch += 1;
            if self.shutdown_requested_by.as_deref() == Some(member_id) && self.members.is_empty() {
                self.shutdown_requested_by = None;
            }
            if self.members.is_empty() {
                self.state_timestamp = now_ms;
                self.assignment_epoch = self.group_epoch;
                self.initial_assignment_at = None;
                self.shutdown_requested_by = None;
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
            tracing::info!(group = %self.id, member = %member_id, "streams group member fenced (session or rebalance timeout)");
            self.remove_member(member_id, now_ms);
        }
        expired
    }

    /// The earliest deadline of `member_id`, `None` once it is gone.
    pub fn deadline_of(&self, member_id: &str) -> Option<Instant> {
        let m = self.members.get(member_id)?;
        Some(reconcile::deadline(
            m.session_deadline,
            m.revocation_deadline,
        ))
    }

    fn compute_target(&mut self, config: &StreamsGroupConfig) {
        let tasks = self
            .configured
            .as_ref()
            .filter(|c| c.is_ready())
            .map(|c| c.tasks.clone())
            .unwrap_or_default();
        let specs: BTreeMap<String, assignor::MemberSpec> = self
            .members
            .values()
            .map(|m| {
                let previous = self.target.get(&m.member_id);
                (
                    m.member_id.clone(),
                    assignor::MemberSpec {
                        process_id: m.process_id.clone(),
                        previous_active: previous
                            .map_or_else(|| m.assigned.active.clone(), |t| t.active.clone()),
                        previous_standby: previous
                            .map_or_else(|| m.assigned.standby.clone(), |t| t.standby.clone()),
                    },
                )
            })
            .collect();
        self.target = assignor::assign(&specs, &tasks, config.num_standby_replicas)
            .into_iter()
            .map(|(m, a)| {
                (
                    m,
                    TasksTuple {
                        active: a.active,
                        standby: a.standby,
                        warmup: Tasks::new(),
                    },
                )
            })
            .collect();
        self.last_assignment_configs = config.assignment_configs();
        self.assignment_epoch = self.group_epoch;
    }

    /// Moves one member towards its target (Kafka's streams `CurrentAssignmentBuilder`).
    fn reconcile(&mut self, member_id: &str, owned_active: Option<&Tasks>, now: Instant) {
        let target = self.target.get(member_id).cloned().unwrap_or_default();
        let target_epoch = self.assignment_epoch;
        // Active tasks other members hold or are still giving up.
        let held_elsewhere: BTreeSet<(String, i32)> = self
            .members
            .values()
            .filter(|m| m.member_id != member_id)
            .flat_map(|m| {
                flatten(&m.assigned.active)
                    .into_iter()
                    .chain(flatten(&m.pending_revocation))
            })
            .collect();
        let Some(member) = self.members.get_mut(member_id) else {
            return;
        };
        let progress = match member.state {
            MemberState::Stable => Progress::Stable,
            MemberState::UnrevokedTasks => Progress::Unrevoked,
            MemberState::UnreleasedTasks => Progress::Unreleased,
        };
        let revocation_deadline =
            now + Duration::from_millis(member.rebalance_timeout_ms.max(0) as u64);
        let progress = reconcile::step(
            Reconciling {
                epoch: &mut member.member_epoch,
                previous_epoch: &mut member.previous_member_epoch,
                progress,
                assigned: &mut member.assigned.active,
                pending: &mut member.pending_revocation,
                epochs: &mut member.assignment_epochs,
                revocation_deadline: &mut member.revocation_deadline,
            },
            &target.active,
            target_epoch,
            owned_active,
            &held_elsewhere,
            revocation_deadline,
        );
        // Standby and warm-up copies are not exclusive: they follow the target at once.
        member.assigned.standby = target.standby;
        member.assigned.warmup = target.warmup;
        member.state = match progress {
            Progress::Stable => MemberState::Stable,
            Progress::Unrevoked => MemberState::UnrevokedTasks,
            Progress::Unreleased => MemberState::UnreleasedTasks,
        };
    }

    /// OffsetCommit of `partitions` (topic, partition) against a streams group (Kafka's
    /// `StreamsGroup.validateOffsetCommit`, with KIP-1251's assignment epochs): a commit from an
    /// older epoch stands for the source partitions of active tasks the member held at it.
    pub fn validate_offset_commit(
        &self,
        member_id: &str,
        member_epoch: i32,
        epoch_aware: bool,
        partitions: impl IntoIterator<Item = (String, i32)>,
    ) -> Result<(), GroupError> {
        // Source and repartition source topics -> their subtopology: task (subtopology, p)
        // reads partition p of each.
        let subtopology_of = |topic: &str| -> Option<String> {
            self.topology
                .as_ref()?
                .subtopologies
                .values()
                .find_map(|s| {
                    let reads = s.source_topics.iter().any(|t| t == topic)
                        || s.repartition_source_topics.iter().any(|t| t.name == topic);
                    reads.then(|| s.id.clone())
                })
        };
        reconcile::validate_commit(
            self.members.is_empty(),
            self.members.get(member_id).map(|m| Committer {
                epoch: m.member_epoch,
                assigned: &m.assigned.active,
                pending: &m.pending_revocation,
                epochs: &m.assignment_epochs,
            }),
            member_epoch,
            epoch_aware,
            partitions
                .into_iter()
                .map(|(topic, p)| subtopology_of(&topic).map(|s| (s, p))),
        )
    }

    /// OffsetFetch from a member: its exact epoch (Kafka's `validateOffsetFetch`).
    pub fn validate_offset_fetch(
        &self,
        member_id: &str,
        member_epoch: i32,
    ) -> Result<(), GroupError> {
        reconcile::validate_fetch_epoch(
            self.members.get(member_id).map(|m| m.member_epoch),
            member_epoch,
        )
    }
}

fn new_member(hb: &StreamsHeartbeat, session_deadline: Instant) -> StreamsMember {
    StreamsMember {
        member_id: hb.member_id.clone(),
        member_epoch: 0,
        previous_member_epoch: -1,
        state: MemberState::Stable,
        instance_id: hb.instance_id.clone(),
        rack_id: hb.rack_id.clone(),
        client_id: hb.client_id.clone(),
        client_host: hb.client_host.clone(),
        rebalance_timeout_ms: hb.rebalance_timeout_ms,
        topology_epoch: hb.topology.as_ref().map_or(0, |t| t.epoch),
        process_id: hb.process_id.clone().unwrap_or_default(),
        user_endpoint: hb.user_endpoint.clone(),
        client_tags: hb.client_tags.clone().unwrap_or_default(),
        task_offsets: Vec::new(),
        task_end_offsets: Vec::new(),
        assigned: TasksTuple::default(),
        pending_revocation: Tasks::new(),
        assignment_epochs: AssignmentEpochs::new(),
        last_sent: None,
        session_deadline,
        revocation_deadline: None,
    }
}

/// Applies what a heartbeat changed; says whether the change needs a new group epoch
/// (the member's process, rack, tags or endpoint feed the assignor).
fn update_member(member: &mut StreamsMember, hb: &StreamsHeartbeat) -> bool {
    let mut bump = false;
    if hb.rebalance_timeout_ms > 0 {
        member.rebalance_timeout_ms = hb.rebalance_timeout_ms;
    }
    if let Some(t) = &hb.topology {
        member.topology_epoch = t.epoch;
    }
    if let Some(rack) = &hb.rack_id
        && member.rack_id.as_ref() != Some(rack)
    {
        member.rack_id = Some(rack.clone());
        bump = true;
    }
    if let Some(process) = &hb.process_id
        && member.process_id != *process
    {
        member.process_id = process.clone();
        bump = true;
    }
    if let Some(tags) = &hb.client_tags
        && member.client_tags != *tags
    {
        member.client_tags = tags.clone();
        bump = true;
    }
    if hb.user_endpoint.is_some() && member.user_endpoint != hb.user_endpoint {
        member.user_endpoint = hb.user_endpoint.clone();
        bump = true;
    }
    if let Some(offsets) = &hb.task_offsets {
        member.task_offsets = offsets.clone();
    }
    if let Some(offsets) = &hb.task_end_offsets {
        member.task_end_offsets = offsets.clone();
    }
    bump
}

#[cfg(test)]
mod tests;
