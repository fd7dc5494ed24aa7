//! Share group membership (KIP-932, Kafka's `ShareGroup` with the `simple` assignor): members
//! join, heartbeat and leave through ShareGroupHeartbeat; the coordinator assigns partitions.
//!
//! Unlike a consumer group, a partition may be assigned to several members at once — records,
//! not partitions, are what members hold exclusively (see [`super::partition`]) — so an
//! assignment takes effect at once: there is no revocation to wait for, and a member's epoch
//! is the group's epoch as soon as it heartbeats.
//!
//! Synchronous and free of I/O; the coordinator runs the clock.

use std::collections::{BTreeMap, BTreeSet};
use tokio::time::{Duration, Instant};
use uuid::Uuid;

/// topic id -> partitions.
pub type Assignment = BTreeMap<Uuid, BTreeSet<i32>>;

#[derive(Debug, Clone)]
pub struct ShareMember {
    pub member_id: String,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub subscribed_topic_names: Vec<String>,
    pub member_epoch: i32,
    pub assignment: Assignment,
    /// The assignment last sent, to send it again only when it changes.
    sent: Option<Assignment>,
    pub session_deadline: Instant,
}

/// One ShareGroupHeartbeat, as the coordinator needs it.
#[derive(Debug, Clone)]
pub struct Heartbeat {
    pub member_id: String,
    pub member_epoch: i32,
    pub rack_id: Option<String>,
    /// `None`: unchanged since the last heartbeat.
    pub subscribed_topic_names: Option<Vec<String>>,
    pub client_id: String,
    pub client_host: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatReply {
    pub member_id: String,
    pub member_epoch: i32,
    /// `None`: unchanged since the last reply.
    pub assignment: Option<Assignment>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MembershipError {
    #[error("unknown member id")]
    UnknownMemberId,
    #[error("the member epoch is fenced")]
    FencedMemberEpoch,
    #[error("invalid heartbeat")]
    InvalidRequest,
    #[error("the share group is full (group.share.max.size)")]
    GroupMaxSizeReached,
}

/// The partitions of each topic the group may see, by name.
pub trait Topics {
    fn topic(&self, name: &str) -> Option<(Uuid, i32)>;
}

#[derive(Debug, Clone)]
pub struct ShareGroup {
    pub id: String,
    pub group_epoch: i32,
    pub assignment_epoch: i32,
    pub members: BTreeMap<String, ShareMember>,
    /// Partition counts of the subscribed topics when the assignment was computed.
    assigned_topics: BTreeMap<String, (Uuid, i32)>,
    /// Every share-partition ever assigned in the group, or given a start offset: those whose
    /// state the share coordinator may hold (Kafka's initialized topics).
    pub initialized: BTreeSet<(Uuid, i32)>,
}

impl ShareGroup {
    pub fn new(id: &str) -> Self {
        Self {
            id: id.to_string(),
            group_epoch: 0,
            assignment_epoch: 0,
            members: BTreeMap::new(),
            assigned_topics: BTreeMap::new(),
            initialized: BTreeSet::new(),
        }
    }

    /// Records the partitions the members are assigned now as initialized.
    pub fn note_assigned(&mut self) {
        for member in self.members.values() {
            for (topic_id, partitions) in &member.assignment {
                self.initialized
                    .extend(partitions.iter().map(|p| (*topic_id, *p)));
            }
        }
    }

    /// Kafka's share group states.
    pub fn state_name(&self) -> &'static str {
        if self.members.is_empty() {
            "Empty"
        } else {
            "Stable"
        }
    }

    pub fn subscribed_topics(&self) -> BTreeSet<String> {
        self.members
            .values()
            .flat_map(|m| m.subscribed_topic_names.iter().cloned())
            .collect()
    }

    pub fn heartbeat(
        &mut self,
        request: Heartbeat,
        topics: &dyn Topics,
        session_timeout: Duration,
        max_size: usize,
        now: Instant,
    ) -> Result<HeartbeatReply, MembershipError> {
        if request.member_id.is_empty() {
            return Err(MembershipError::InvalidRequest);
        }
        if request.member_epoch == -1 {
            self.remove(&request.member_id);
            return Ok(HeartbeatReply {
                member_id: request.member_id,
                member_epoch: -1,
                assignment: None,
            });
        }
        if request.member_epoch == 0 {
            let Some(subscribed) = request.subscribed_topic_names.clone() else {
                return Err(MembershipError::InvalidRequest);
            };
            if !self.members.contains_key(&request.member_id) {
                if self.members.len() >= max_size {
                    return Err(MembershipError::GroupMaxSizeReached);
                }
                self.members.insert(
                    request.member_id.clone(),
                    ShareMember {
                        member_id: request.member_id.clone(),
                        rack_id: None,
                        client_id: String::new(),
                        client_host: String::new(),
                        subscribed_topic_names: Vec::new(),
                        member_epoch: 0,
                        assignment: Assignment::new(),
                        sent: None,
                        session_deadline: now + session_timeout,
                    },
                );
                self.group_epoch += 1;
            }
            // A rejoin (epoch 0 again) is sent the assignment anew.
            if let Some(member) = self.members.get_mut(&request.member_id) {
                member.sent = None;
                if member.subscribed_topic_names != subscribed {
                    member.subscribed_topic_names = subscribed;
                    self.group_epoch += 1;
                }
            }
        } else {
            let member = self
                .members
                .get_mut(&request.member_id)
                .ok_or(MembershipError::UnknownMemberId)?;
            if request.member_epoch != member.member_epoch {
                return Err(MembershipError::FencedMemberEpoch);
            }
            if let Some(subscribed) = request.subscribed_topic_names.clone()
                && member.subscribed_topic_names != subscribed
            {
                member.subscribed_topic_names = subscribed;
                self.group_epoch += 1;
            }
        }
        let member = self
            .members
            .get_mut(&request.member_id)
            .ok_or(MembershipError::UnknownMemberId)?;
        member.session_deadline = now + session_timeout;
        member.rack_id = request.rack_id.or(member.rack_id.take());
        member.client_id = request.client_id;
        member.client_host = request.client_host;
        self.refresh_assignment(topics);
        let member = self
            .members
            .get_mut(&request.member_id)
            .ok_or(MembershipError::UnknownMemberId)?;
        member.member_epoch = self.assignment_epoch;
        let assignment = (member.sent.as_ref() != Some(&member.assignment)).then(|| {
            member.sent = Some(member.assignment.clone());
            member.assignment.clone()
        });
        Ok(HeartbeatReply {
            member_id: member.member_id.clone(),
            member_epoch: member.member_epoch,
            assignment,
        })
    }

    /// Removes a member (it left, or its session expired); returns whether it was there.
    pub fn remove(&mut self, member_id: &str) -> bool {
        if self.members.remove(member_id).is_some() {
            self.group_epoch += 1;
            true
        } else {
            false
        }
    }

    /// Members whose session ran out, removed.
    pub fn expire(&mut self, now: Instant) -> Vec<String> {
        let expired: Vec<String> = self
            .members
            .values()
            .filter(|m| m.session_deadline <= now)
            .map(|m| m.member_id.clone())
            .collect();
        for member in &expired {
            self.remove(member);
        }
        expired
    }

    /// Recomputes the assignment when membership, subscriptions or the subscribed topics'
    /// partitions changed.
    fn refresh_assignment(&mut self, topics: &dyn Topics) {
        let current: BTreeMap<String, (Uuid, i32)> = self
            .subscribed_topics()
            .into_iter()
            .filter_map(|name| topics.topic(&name).map(|t| (name, t)))
            .collect();
        if current != self.assigned_topics {
            self.assigned_topics = current;
            self.group_epoch += 1;
        }
        if self.assignment_epoch == self.group_epoch {
            return;
        }
        let assignment = assign_simple(&self.members, &self.assigned_topics);
        for (member_id, member) in &mut self.members {
            member.assignment = assignment.get(member_id).cloned().unwrap_or_default();
        }
        self.assignment_epoch = self.group_epoch;
    }
}

/// Kafka's `SimpleAssignor` in its plain form: each topic's partitions are spread over the
/// members subscribed to it round-robin; with more members than partitions, partitions are
/// shared so that every member gets one.
pub fn assign_simple(
    members: &BTreeMap<String, ShareMember>,
    topics: &BTreeMap<String, (Uuid, i32)>,
) -> BTreeMap<String, Assignment> {
    let mut out: BTreeMap<String, Assignment> = BTreeMap::new();
    for (name, &(topic_id, partitions)) in topics {
        let subscribers: Vec<&String> = members
            .values()
            .filter(|m| m.subscribed_topic_names.iter().any(|t| t == name))
            .map(|m| &m.member_id)
            .collect();
        if subscribers.is_empty() || partitions <= 0 {
            continue;
        }
        let slots = (partitions as usize).max(subscribers.len());
        for slot in 0..slots {
            let member = subscribers[slot % subscribers.len()];
            let partition = (slot % partitions as usize) as i32;
            out.entry(member.clone())
                .or_default()
                .entry(topic_id)
                .or_default()
                .insert(partition);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Vec<(&'static str, Uuid, i32)>);
    impl Topics for Fixed {
        fn topic(&self, name: &str) -> Option<(Uuid, i32)> {
            self.0
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, id, p)| (*id, *p))
        }
    }

    fn join(member: &str, topics: &[&str]) -> Heartbeat {
        Heartbeat {
            member_id: member.into(),
            member_epoch: 0,
            rack_id: None,
            subscribed_topic_names: Some(topics.iter().map(|t| t.to_string()).collect()),
            client_id: "c".into(),
            client_host: "/127.0.0.1".into(),
        }
    }

    #[test]
    fn members_share_partitions_and_every_member_gets_one() {
        let id = Uuid::new_v4();
        let topics = Fixed(vec![("t", id, 2)]);
        let now = Instant::now();
        let timeout = Duration::from_secs(45);
        let mut group = ShareGroup::new("g");
        let a = group
            .heartbeat(join("a", &["t"]), &topics, timeout, 10, now)
            .unwrap();
        assert_eq!(a.assignment.unwrap()[&id], BTreeSet::from([0, 1]));
        for m in ["b", "c"] {
            group
                .heartbeat(join(m, &["t"]), &topics, timeout, 10, now)
                .unwrap();
        }
        let mut all = BTreeSet::new();
        for member in group.members.values() {
            assert!(
                !member.assignment[&id].is_empty(),
                "{} got none",
                member.member_id
            );
            all.extend(member.assignment[&id].iter().copied());
        }
        assert_eq!(all, BTreeSet::from([0, 1]));
    }

    #[test]
    fn a_stale_epoch_is_fenced_and_an_unknown_member_refused() {
        let topics = Fixed(vec![("t", Uuid::new_v4(), 1)]);
        let now = Instant::now();
        let timeout = Duration::from_secs(45);
        let mut group = ShareGroup::new("g");
        let joined = group
            .heartbeat(join("a", &["t"]), &topics, timeout, 10, now)
            .unwrap();
        let beat = |epoch: i32, member: &str| Heartbeat {
            member_epoch: epoch,
            subscribed_topic_names: None,
            ..join(member, &[])
        };
        let again = group
            .heartbeat(beat(joined.member_epoch, "a"), &topics, timeout, 10, now)
            .unwrap();
        assert_eq!(
            again.assignment, None,
            "unchanged assignments are not resent"
        );
        assert_eq!(
            group.heartbeat(
                beat(joined.member_epoch + 7, "a"),
                &topics,
                timeout,
                10,
                now
            ),
            Err(MembershipError::FencedMemberEpoch)
        );
        assert_eq!(
            group.heartbeat(beat(3, "zz"), &topics, timeout, 10, now),
            Err(MembershipError::UnknownMemberId)
        );
        assert_eq!(
            group.heartbeat(join("b", &["t"]), &topics, timeout, 1, now),
            Err(MembershipError::GroupMaxSizeReached)
        );
        assert_eq!(group.expire(now + timeout), vec!["a".to_string()]);
        assert_eq!(group.state_name(), "Empty");
    }
}
