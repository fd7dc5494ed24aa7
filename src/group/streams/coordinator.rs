//! The group coordinator's streams groups: StreamsGroupHeartbeat, StreamsGroupDescribe and
//! StreamsGroupTopologyDescriptionUpdate against the group's state machine, the members'
//! session timers, and the group's dynamic `streams.*` configs.
//!
//! Each change of a group is written to `__consumer_offsets` as Kafka's `StreamsGroup*`
//! records (what differs from the last write, `persist.rs`), so a coordinator that restarts
//! or takes the partition over has the group, its topology, members and assignments, and the
//! members go on with their epochs. A write that fails is retried with the next change.

use super::{StreamsGroup, StreamsGroupConfig, StreamsHeartbeat, StreamsHeartbeatResult};
use crate::error::{GroupError, StreamsError};
use crate::group::offsets::offset_tombstones;
use crate::group::records::RecordKey;
use crate::group::{GroupCoordinator, GroupListing};
use crate::types::now_ms;
use bytes::Bytes;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::time::Instant;

pub type SharedStreamsGroup = Arc<Mutex<StreamsGroup>>;

impl crate::group::timers::SessionTimed for StreamsGroup {
    fn deadline_of(&self, member_id: &str) -> Option<Instant> {
        StreamsGroup::deadline_of(self, member_id)
    }
    fn unwatch(&mut self, member_id: &str) {
        self.watched.remove(member_id);
    }
    fn expire(&mut self, now: Instant, now_ms: i64) -> Vec<String> {
        StreamsGroup::expire(self, now, now_ms)
    }
    fn persist(&mut self, coordinator: &GroupCoordinator) {
        // An expiry that could not be written is written with the group's next change.
        let _ = coordinator.persist_streams(self);
    }
}

pub(crate) fn lock_streams(group: &SharedStreamsGroup) -> MutexGuard<'_, StreamsGroup> {
    group.lock().unwrap_or_else(|p| p.into_inner())
}

/// A heartbeat's answer with the settings the response carries.
#[derive(Debug, Clone)]
pub struct StreamsHeartbeatOutcome {
    pub result: StreamsHeartbeatResult,
    pub heartbeat_interval_ms: i32,
    /// The group has no topology description for its topology epoch yet (KIP-1331): the
    /// member is asked to send one.
    pub topology_description_required: bool,
}

impl GroupCoordinator {
    pub(crate) fn streams_groups(
        &self,
    ) -> MutexGuard<'_, std::collections::HashMap<String, SharedStreamsGroup>> {
        self.streams_groups
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn streams_group(&self, group_id: &str) -> Option<SharedStreamsGroup> {
        self.streams_groups().get(group_id).cloned()
    }

    /// The streams group settings of `group_id`: the broker's, with the group's dynamic
    /// configs (the GROUP config resource) applied.
    pub fn streams_config(&self, group_id: &str) -> StreamsGroupConfig {
        let mut config = self.config.streams.clone();
        let image = self.topics.image();
        let int = |name: &str| {
            let value = image.group_configs.get(group_id)?.get(name)?;
            value.trim().parse::<i32>().ok()
        };
        if let Some(ms) = int("streams.session.timeout.ms") {
            config.session_timeout_ms = ms;
        }
        if let Some(ms) = int("streams.heartbeat.interval.ms") {
            config.heartbeat_interval_ms = ms;
        }
        if let Some(n) = int("streams.num.standby.replicas") {
            config.num_standby_replicas = n;
        }
        if let Some(ms) = int("streams.initial.rebalance.delay.ms") {
            config.initial_rebalance_delay_ms = ms;
        }
        if let Some(tags) = image
            .group_configs
            .get(group_id)
            .and_then(|c| c.get("streams.rack.aware.assignment.tags"))
        {
            config.rack_aware_assignment_tags = crate::config::split_tags(Some(tags));
        }
        config
    }

    /// StreamsGroupHeartbeat. An empty classic group of the same id becomes a streams group
    /// (its offsets carry over); a consumer group or a classic group with members is not one.
    pub fn streams_heartbeat(
        self: &Arc<Self>,
        group_id: &str,
        heartbeat: StreamsHeartbeat,
    ) -> Result<StreamsHeartbeatOutcome, StreamsError> {
        if group_id.is_empty() {
            return Err(StreamsError::InvalidRequest(
                "GroupId can't be empty.".into(),
            ));
        }
        let not_streams =
            || StreamsError::GroupIdNotFound(format!("Group {group_id} is not a streams group."));
        let group = match self.streams_group(group_id) {
            Some(group) => group,
            None => {
                if heartbeat.member_epoch != 0 {
                    // The group lived in a coordinator's memory that is gone (a restart or a
                    // coordinator move): the member is told it is unknown, so Kafka Streams
                    // rejoins (GROUP_ID_NOT_FOUND would be fatal to it).
                    return Err(StreamsError::UnknownMemberId(format!(
                        "Member {} is not a member of group {group_id}.",
                        heartbeat.member_id
                    )));
                }
                if self.consumer_group(group_id).is_some() {
                    return Err(not_streams());
                }
                let offsets = self.take_classic_group(group_id).map_err(|e| match e {
                    GroupError::GroupIdNotFound => not_streams(),
                    other => StreamsError::Group(other),
                })?;
                self.streams_groups()
                    .entry(group_id.to_string())
                    .or_insert_with(|| {
                        Arc::new(Mutex::new(StreamsGroup::new(group_id, offsets, now_ms())))
                    })
                    .clone()
            }
        };
        let config = self.streams_config(group_id);
        let mut g = lock_streams(&group);
        let result = g.heartbeat(
            heartbeat,
            &config,
            self.topics.as_ref(),
            Instant::now(),
            now_ms(),
        )?;
        // The member hears of its new state only once it is written, as on Kafka (the state
        // stays changed in memory and goes out with the next write that succeeds).
        self.persist_streams(&mut g).map_err(StreamsError::Group)?;
        if g.members.contains_key(&result.member_id) && g.watched.insert(result.member_id.clone()) {
            tracing::info!(group = group_id, member = %result.member_id, epoch = g.group_epoch, "streams protocol member joined");
            self.watch_session(
                Self::streams_group,
                group_id.to_string(),
                result.member_id.clone(),
            );
        }
        let topology_epoch = g.topology.as_ref().map(|t| t.epoch);
        let topology_description_required = topology_epoch.is_some()
            && g.topology_description.as_ref().map(|(epoch, _)| *epoch) != topology_epoch;
        Ok(StreamsHeartbeatOutcome {
            result,
            heartbeat_interval_ms: config.heartbeat_interval_ms,
            topology_description_required,
        })
    }

    /// Runs `f` on streams group `group_id`, if there is one.
    pub fn streams_describe<T>(
        &self,
        group_id: &str,
        f: impl FnOnce(&StreamsGroup) -> T,
    ) -> Option<T> {
        let group = self.streams_group(group_id)?;
        let g = lock_streams(&group);
        Some(f(&g))
    }

    /// StreamsGroupTopologyDescriptionUpdate (KIP-1331): a member's description of the
    /// group's topology, kept for StreamsGroupDescribe.
    pub fn streams_topology_description(
        &self,
        group_id: &str,
        member_id: &str,
        topology_epoch: i32,
        description: bytes::Bytes,
    ) -> Result<(), StreamsError> {
        let group = self.streams_group(group_id).ok_or_else(|| {
            StreamsError::GroupIdNotFound(format!("Streams group {group_id} not found."))
        })?;
        let mut g = lock_streams(&group);
        if !g.members.contains_key(member_id) {
            return Err(StreamsError::UnknownMemberId(format!(
                "Member {member_id} is not a member of group {group_id}."
            )));
        }
        let current = g.topology.as_ref().map_or(-1, |t| t.epoch);
        if topology_epoch != current {
            return Err(StreamsError::InvalidTopologyEpoch(format!(
                "The topology epoch {topology_epoch} is not the group's topology epoch {current}."
            )));
        }
        g.topology_description = Some((topology_epoch, description));
        Ok(())
    }

    /// ListGroups entries of the streams groups.
    pub(crate) fn streams_listings(&self) -> Vec<GroupListing> {
        let groups: Vec<SharedStreamsGroup> = self.streams_groups().values().cloned().collect();
        groups
            .iter()
            .map(|group| {
                let g = lock_streams(group);
                GroupListing {
                    group_id: g.id.clone(),
                    protocol_type: "streams".into(),
                    state: g.state_name(),
                    group_type: "streams",
                }
            })
            .collect()
    }

    /// Writes what changed in `g` since its last write (Kafka's records); a failed write is
    /// logged, and retried with the next change.
    pub(crate) fn persist_streams(&self, g: &mut StreamsGroup) -> Result<(), GroupError> {
        let (records, entries) = g.changed_records();
        if entries.is_empty() {
            return Ok(());
        }
        match self.write(&g.id, &entries) {
            Ok(()) => {
                g.written(records);
                Ok(())
            }
            Err(e) => {
                tracing::warn!(group = %g.id, error = %e, "streams group records not written; retried with the next change");
                Err(e)
            }
        }
    }

    /// DeleteGroups of a streams group (`None`: there is none of that id): only an empty one
    /// goes, with its offsets.
    pub(crate) fn delete_streams_group(&self, group_id: &str) -> Option<Result<(), GroupError>> {
        let group = self.streams_group(group_id)?;
        let mut g = lock_streams(&group);
        if !g.is_empty() {
            return Some(Err(GroupError::NonEmptyGroup));
        }
        let mut entries: Vec<(RecordKey, Option<Bytes>)> =
            offset_tombstones(group_id, g.offsets.keys());
        entries.extend(g.tombstones());
        if let Err(e) = self.write(group_id, &entries) {
            return Some(Err(e));
        }
        g.offsets.clear();
        drop(g);
        self.streams_groups().remove(group_id);
        Some(Ok(()))
    }

    /// OffsetDelete on a streams group: refused for the source topics of a group with members.
    pub(crate) fn delete_streams_offsets(
        &self,
        group: &SharedStreamsGroup,
        partitions: &[(String, i32)],
    ) -> Result<Vec<Result<(), GroupError>>, GroupError> {
        let mut g = lock_streams(group);
        let subscribed = match (&g.topology, g.is_empty()) {
            (Some(topology), false) => topology.source_topics(self.topics.as_ref()),
            _ => Default::default(),
        };
        let mut results = Vec::with_capacity(partitions.len());
        let mut removed = Vec::new();
        for (topic, partition) in partitions {
            if subscribed.contains(topic) {
                results.push(Err(GroupError::GroupSubscribedToTopic));
            } else {
                if g.offsets.contains_key(&(topic.clone(), *partition)) {
                    removed.push((topic.clone(), *partition));
                }
                results.push(Ok(()));
            }
        }
        self.write(&g.id.clone(), &offset_tombstones(&g.id, removed.iter()))?;
        for key in &removed {
            g.offsets.remove(key);
        }
        Ok(results)
    }

    /// Offset retention for empty streams groups, as for consumer groups; an empty group
    /// whose offsets all expired is removed. Returns the number of offsets expired.
    pub(crate) fn expire_streams_offsets(&self, now: i64) -> usize {
        let groups: Vec<SharedStreamsGroup> = self.streams_groups().values().cloned().collect();
        let mut total = 0;
        for group in groups {
            let mut g = lock_streams(&group);
            if !g.is_empty() {
                continue;
            }
            let (id, since_empty) = (g.id.clone(), g.state_timestamp);
            let expired = self.expire_empty_group_offsets(&id, &mut g.offsets, since_empty, now);
            total += expired;
            if expired > 0 && g.offsets.is_empty() {
                if let Err(e) = self.write(&id, &g.tombstones()) {
                    tracing::warn!(group = %id, error = %e, "the records of an expired streams group could not be removed");
                    continue;
                }
                drop(g);
                self.streams_groups().remove(&id);
            }
        }
        total
    }
}
