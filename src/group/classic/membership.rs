//! A classic group's members after the join: SyncGroup (the leader's assignment handed to
//! every member once written), heartbeats, LeaveGroup (batched and by instance id),
//! session expiry, and the generation and member checks of OffsetCommit.

use super::{
    ClassicGroup, Effects, GroupConfig, GroupState, JoinResult, SyncOutcome, SyncRequest,
    SyncResult,
};
use crate::error::GroupError;
use bytes::Bytes;
use std::collections::HashMap;
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};

impl ClassicGroup {
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

    pub(super) fn remove_member_quietly(&mut self, member_id: &str) {
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
}
