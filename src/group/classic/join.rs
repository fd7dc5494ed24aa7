//! Joining a classic group and its rebalance (Kafka's `GroupMetadataManager` classic join
//! path): unknown members (MEMBER_ID_REQUIRED from v4), known and static members (KIP-345:
//! a static member's restart replaces its old incarnation without a rebalance), the
//! PreparingRebalance state with `group.initial.rebalance.delay.ms`, and completing the join
//! when every member has rejoined or the rebalance timeout passes.

use super::{
    ClassicGroup, Effects, GroupConfig, GroupState, InitialDelay, JoinOutcome, JoinRequest,
    JoinResult, Member, SyncResult,
};
use crate::error::GroupError;
use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::time::{Duration, Instant};

impl ClassicGroup {
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
    pub(super) fn maybe_complete_join_early(
        &mut self,
        effects: &mut Effects,
        now: Instant,
        now_ms: i64,
    ) {
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
}
