//! A streams group as records in `__consumer_offsets` and back: [`StreamsGroup::records`]
//! gives the whole group as Kafka's records (its epoch, topology, each member's metadata,
//! target and current assignment); the coordinator writes what differs from what it wrote
//! last ([`StreamsGroup::changed_records`]), and a coordinator taking over the partition
//! rebuilds the group from them ([`Replayed`], [`StreamsGroup::restore`]). Sessions restart
//! on load, as Kafka's coordinator schedules them again.

use super::records::{self as values, CurrentAssignmentValue, MemberValue, TaskSets};
use super::{MemberState, StreamsGroup, StreamsMember, TasksTuple};
use crate::group::classic::Offsets;
use crate::group::consumer::TopicsView;
use crate::group::records::{RecordKey, SchemaError, StreamsRecord};
use bytes::Bytes;
use std::collections::{BTreeMap, HashMap};
use tokio::time::{Duration, Instant};

/// A group's records by key.
pub type Records = BTreeMap<RecordKey, Bytes>;

impl MemberState {
    /// Kafka's `MemberState` byte.
    fn code(self) -> i8 {
        match self {
            MemberState::Stable => 0,
            MemberState::UnrevokedTasks => 1,
            MemberState::UnreleasedTasks => 2,
        }
    }

    fn of_code(code: i8) -> Self {
        match code {
            1 => MemberState::UnrevokedTasks,
            2 => MemberState::UnreleasedTasks,
            _ => MemberState::Stable,
        }
    }
}

fn sets(tuple: &TasksTuple) -> TaskSets {
    TaskSets {
        active: tuple.active.clone(),
        standby: tuple.standby.clone(),
        warmup: tuple.warmup.clone(),
    }
}

fn tuple(sets: TaskSets) -> TasksTuple {
    TasksTuple {
        active: sets.active,
        standby: sets.standby,
        warmup: sets.warmup,
    }
}

impl StreamsGroup {
    fn key(&self, kind: StreamsRecord, member: Option<&str>) -> RecordKey {
        RecordKey::Streams {
            kind,
            group: self.id.clone(),
            member: member.map(str::to_string),
        }
    }

    /// The group as Kafka's records.
    pub fn records(&self) -> Records {
        let mut out = BTreeMap::new();
        out.insert(
            self.key(StreamsRecord::Metadata, None),
            values::GroupMetadataValue {
                epoch: self.group_epoch,
                validated_topology_epoch: self
                    .configured
                    .as_ref()
                    .filter(|c| c.problem.is_none())
                    .map_or(-1, |c| c.epoch),
                last_assignment_configs: Some(self.last_assignment_configs.clone()),
            }
            .encode(),
        );
        out.insert(
            self.key(StreamsRecord::TargetMetadata, None),
            values::encode_target_epoch(self.assignment_epoch, self.state_timestamp),
        );
        if let Some(topology) = &self.topology {
            out.insert(
                self.key(StreamsRecord::Topology, None),
                values::encode_topology(topology),
            );
        }
        for (id, m) in &self.members {
            let metadata = MemberValue {
                instance_id: m.instance_id.clone(),
                rack_id: m.rack_id.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                rebalance_timeout_ms: m.rebalance_timeout_ms,
                topology_epoch: m.topology_epoch,
                process_id: m.process_id.clone(),
                user_endpoint: m.user_endpoint.clone(),
                client_tags: m.client_tags.clone(),
            };
            out.insert(self.key(StreamsRecord::Member, Some(id)), metadata.encode());
            let current = CurrentAssignmentValue {
                member_epoch: m.member_epoch,
                previous_member_epoch: m.previous_member_epoch,
                state: m.state.code(),
                assigned: sets(&m.assigned),
                active_pending_revocation: m.pending_revocation.clone(),
                active_epochs: m.assignment_epochs.clone(),
            };
            out.insert(
                self.key(StreamsRecord::CurrentAssignment, Some(id)),
                current.encode(),
            );
            if let Some(target) = self.target.get(id) {
                out.insert(
                    self.key(StreamsRecord::TargetMember, Some(id)),
                    values::encode_target(&sets(target)),
                );
            }
        }
        out
    }

    /// What to write for the group to read as it is now: changed records, and tombstones for
    /// records it no longer has. [`StreamsGroup::written`] once they are written.
    pub fn changed_records(&self) -> (Records, Vec<(RecordKey, Option<Bytes>)>) {
        let now = self.records();
        let mut entries: Vec<(RecordKey, Option<Bytes>)> = now
            .iter()
            .filter(|(k, v)| self.persisted.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), Some(v.clone())))
            .collect();
        entries.extend(
            self.persisted
                .keys()
                .filter(|k| !now.contains_key(*k))
                .map(|k| (k.clone(), None)),
        );
        (now, entries)
    }

    /// The records last written for the group.
    pub fn written(&mut self, records: Records) {
        self.persisted = records;
    }

    /// Tombstones for every record of the group (it is deleted).
    pub fn tombstones(&self) -> Vec<(RecordKey, Option<Bytes>)> {
        self.persisted.keys().map(|k| (k.clone(), None)).collect()
    }

    /// Rebuilds a group from its replayed records, its members' sessions starting now.
    pub fn restore(
        replayed: Replayed,
        offsets: Offsets,
        assignment_configs: BTreeMap<String, String>,
        session: Duration,
        topics: &dyn TopicsView,
        now: Instant,
        now_ms: i64,
    ) -> Option<Self> {
        let metadata = replayed.metadata?;
        let mut g = StreamsGroup::new(&replayed.group, offsets, now_ms);
        g.group_epoch = metadata.epoch;
        g.assignment_epoch = replayed.assignment_epoch.unwrap_or(0);
        // What the target was computed with, from the metadata record's tagged field; a record
        // without it (an older Sluice) is taken as computed with the configuration in effect.
        g.last_assignment_configs = metadata
            .last_assignment_configs
            .unwrap_or(assignment_configs);
        g.topology = replayed.topology;
        // The topology against the topics as they are: a restart alone starts no new epoch.
        if let Some(topology) = &g.topology {
            g.metadata = topology.required_partition_counts(topics);
            g.configured = Some(topology.configure(topics));
        }
        for (id, parts) in replayed.members {
            let (Some(metadata), Some(current)) = (parts.metadata, parts.current) else {
                continue;
            };
            if let Some(target) = parts.target {
                g.target.insert(id.clone(), tuple(target));
            }
            if let Some(instance) = &metadata.instance_id {
                g.static_members.insert(instance.clone(), id.clone());
            }
            let member = StreamsMember {
                member_id: id.clone(),
                member_epoch: current.member_epoch,
                previous_member_epoch: current.previous_member_epoch,
                state: MemberState::of_code(current.state),
                instance_id: metadata.instance_id,
                rack_id: metadata.rack_id,
                client_id: metadata.client_id,
                client_host: metadata.client_host,
                rebalance_timeout_ms: metadata.rebalance_timeout_ms,
                topology_epoch: metadata.topology_epoch,
                process_id: metadata.process_id,
                user_endpoint: metadata.user_endpoint,
                client_tags: metadata.client_tags,
                task_offsets: Vec::new(),
                task_end_offsets: Vec::new(),
                assigned: tuple(current.assigned),
                pending_revocation: current.active_pending_revocation,
                assignment_epochs: current.active_epochs,
                // The member is told its assignment again at its next heartbeat.
                last_sent: None,
                session_deadline: now + session,
                revocation_deadline: None,
            };
            g.members.insert(id, member);
        }
        g.persisted = g.records();
        Some(g)
    }
}

/// One member's records as replayed.
#[derive(Debug, Default)]
pub struct ReplayedMember {
    metadata: Option<MemberValue>,
    current: Option<CurrentAssignmentValue>,
    target: Option<TaskSets>,
}

/// A streams group's records as replayed from the log, the last of each key winning.
#[derive(Debug, Default)]
pub struct Replayed {
    group: String,
    metadata: Option<values::GroupMetadataValue>,
    assignment_epoch: Option<i32>,
    topology: Option<super::topology::Topology>,
    members: HashMap<String, ReplayedMember>,
}

impl Replayed {
    pub fn new(group: &str) -> Self {
        Self {
            group: group.to_string(),
            ..Default::default()
        }
    }

    pub fn group_id(&self) -> &str {
        &self.group
    }

    /// Whether a tombstone of the group's metadata deleted it.
    pub fn is_deleted(&self) -> bool {
        self.metadata.is_none()
    }

    /// Applies one record (`None`: a tombstone).
    pub fn apply(
        &mut self,
        kind: StreamsRecord,
        member: Option<&str>,
        value: Option<&[u8]>,
    ) -> Result<(), SchemaError> {
        match (kind, member) {
            (StreamsRecord::Metadata, _) => {
                self.metadata = value.map(values::GroupMetadataValue::decode).transpose()?;
                if self.metadata.is_none() {
                    *self = Self::new(&self.group);
                }
            }
            (StreamsRecord::TargetMetadata, _) => {
                self.assignment_epoch = value.map(values::decode_target_epoch).transpose()?;
            }
            (StreamsRecord::Topology, _) => {
                self.topology = value.map(values::decode_topology).transpose()?;
            }
            (_, None) => return Err(SchemaError("member record without a member")),
            (kind, Some(member)) => {
                let parts = self.members.entry(member.to_string()).or_default();
                match kind {
                    StreamsRecord::Member => {
                        parts.metadata = value.map(MemberValue::decode).transpose()?;
                    }
                    StreamsRecord::CurrentAssignment => {
                        parts.current = value.map(CurrentAssignmentValue::decode).transpose()?;
                    }
                    _ => parts.target = value.map(values::decode_target).transpose()?,
                }
                if parts.metadata.is_none() && parts.current.is_none() && parts.target.is_none() {
                    self.members.remove(member);
                }
            }
        }
        Ok(())
    }
}
