//! Static membership of streams groups (Kafka's `getOrMaybeCreateStaticStreamsGroupMember`
//! and `streamsGroupStaticMemberGroupLeave`): an instance id held by one member at a time, a
//! temporary leave (epoch -2) that keeps the member's tasks, and the instance's next member id
//! taking them over without a new group epoch.

use super::{LEAVE_STATIC_EPOCH, MemberState, StreamsError, StreamsGroup};
use crate::group::reconcile::flatten;
use tokio::time::Instant;

impl StreamsGroup {
    /// A static member's heartbeat (not a join): the instance id must be known and held by
    /// this member (Kafka's `throwIfStaticMemberIsUnknown` and `throwIfInstanceIdIsFenced`).
    pub(super) fn check_static_member(
        &self,
        instance: &str,
        member_id: &str,
    ) -> Result<(), StreamsError> {
        let holder = self.static_members.get(instance).ok_or_else(|| {
            StreamsError::UnknownMemberId(format!("Instance id {instance} is unknown."))
        })?;
        if holder != member_id {
            return Err(StreamsError::FencedInstanceId(format!(
                "Static member {member_id} with instance id {instance} was fenced by member {holder}."
            )));
        }
        Ok(())
    }

    /// A static member leaving with epoch -2 (a restart to come): it stays in the group with
    /// its tasks, no one else gets them, until it comes back under a new member id or its
    /// session times out (Kafka's `streamsGroupStaticMemberGroupLeave`).
    pub(super) fn leave_temporarily(&mut self, member_id: &str) {
        if let Some(member) = self.members.get_mut(member_id) {
            member.member_epoch = LEAVE_STATIC_EPOCH;
            member.pending_revocation.clear();
            let active = flatten(&member.assigned.active);
            member
                .assignment_epochs
                .retain(|task, _| active.contains(task));
            member.revocation_deadline = None;
        }
    }

    /// A static member joining: with no member holding its instance id it joins as any new
    /// member; if the holder left temporarily (epoch -2), the joining member takes its place —
    /// its tasks, its target, no new group epoch; if the holder is still active, the instance
    /// id is not released (Kafka's `getOrMaybeCreateStaticStreamsGroupMember`). Returns
    /// whether a member was replaced.
    pub(super) fn replace_static_member(
        &mut self,
        instance: &str,
        member_id: &str,
        now: Instant,
    ) -> Result<bool, StreamsError> {
        let Some(holder_id) = self.static_members.get(instance).cloned() else {
            return Ok(false);
        };
        let Some(holder) = self.members.get(&holder_id) else {
            self.static_members.remove(instance);
            return Ok(false);
        };
        if holder.member_epoch != LEAVE_STATIC_EPOCH {
            return Err(StreamsError::UnreleasedInstanceId(format!(
                "Static member {member_id} with instance id {instance} cannot join the group because the instance id is owned by {holder_id} member."
            )));
        }
        let Some(mut member) = self.members.remove(&holder_id) else {
            return Ok(false);
        };
        member.member_id = member_id.to_string();
        member.member_epoch = 0;
        member.previous_member_epoch = 0;
        member.state = MemberState::Stable;
        member.last_sent = None;
        member.session_deadline = now;
        if let Some(target) = self.target.remove(&holder_id) {
            self.target.insert(member_id.to_string(), target);
        }
        self.watched.remove(&holder_id);
        self.members.insert(member_id.to_string(), member);
        self.static_members
            .insert(instance.to_string(), member_id.to_string());
        tracing::info!(group = %self.id, member = member_id, instance, replaced = %holder_id, "static streams member re-joined and replaced its previous member");
        Ok(true)
    }
}
