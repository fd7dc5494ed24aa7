//! Share sessions (KIP-932, Kafka's `ShareSessionCache`): the partitions a member fetches from
//! one broker, kept between ShareFetch requests so each request only names what changed.
//!
//! Epoch 0 opens a session (replacing the member's previous one), -1 closes it, and every
//! other request must carry the session's current epoch, which then moves on by one — a
//! request lost or replayed is refused instead of silently acknowledging the wrong records.

use std::collections::{BTreeSet, HashMap};
use uuid::Uuid;

/// The partitions of a session: (topic id, partition).
pub type SessionPartitions = BTreeSet<(Uuid, i32)>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("no share session for this member")]
    NotFound,
    #[error("the share session epoch is not the session's")]
    InvalidEpoch,
    #[error("too many share sessions")]
    LimitReached,
}

#[derive(Debug, Clone)]
struct Session {
    epoch: i32,
    partitions: SessionPartitions,
}

/// What a request on a session means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionUse {
    /// The partitions to fetch from, after this request's additions and removals.
    Open(SessionPartitions),
    /// The session was closed; these were its partitions (to release what the member holds).
    Closed(SessionPartitions),
}

#[derive(Debug, Default)]
pub struct SessionCache {
    sessions: HashMap<(String, String), Session>,
    limit: usize,
}

impl SessionCache {
    pub fn new(limit: usize) -> Self {
        Self {
            sessions: HashMap::new(),
            limit,
        }
    }

    /// A ShareFetch: opens, continues or closes `member`'s session in `group`.
    pub fn fetch(
        &mut self,
        group: &str,
        member: &str,
        epoch: i32,
        added: &[(Uuid, i32)],
        forgotten: &[(Uuid, i32)],
    ) -> Result<SessionUse, SessionError> {
        let key = (group.to_string(), member.to_string());
        match epoch {
            0 => {
                if !self.sessions.contains_key(&key) && self.sessions.len() >= self.limit {
                    return Err(SessionError::LimitReached);
                }
                let partitions: SessionPartitions = added.iter().copied().collect();
                self.sessions.insert(
                    key,
                    Session {
                        epoch: 1,
                        partitions: partitions.clone(),
                    },
                );
                Ok(SessionUse::Open(partitions))
            }
            -1 => self
                .sessions
                .remove(&key)
                .map(|s| SessionUse::Closed(s.partitions))
                .ok_or(SessionError::NotFound),
            _ => {
                let session = self.sessions.get_mut(&key).ok_or(SessionError::NotFound)?;
                if session.epoch != epoch {
                    return Err(SessionError::InvalidEpoch);
                }
                session.epoch = session.epoch.checked_add(1).unwrap_or(1);
                session.partitions.extend(added.iter().copied());
                for partition in forgotten {
                    session.partitions.remove(partition);
                }
                Ok(SessionUse::Open(session.partitions.clone()))
            }
        }
    }

    /// A ShareAcknowledge: continues (epoch > 0) or closes (-1) the session; epoch 0 cannot
    /// acknowledge anything.
    pub fn acknowledge(
        &mut self,
        group: &str,
        member: &str,
        epoch: i32,
    ) -> Result<SessionUse, SessionError> {
        if epoch == 0 {
            return Err(SessionError::InvalidEpoch);
        }
        self.fetch(group, member, epoch, &[], &[])
    }

    /// Drops the sessions of a member that left its group; returns their partitions.
    pub fn remove_member(&mut self, group: &str, member: &str) -> Option<SessionPartitions> {
        self.sessions
            .remove(&(group.to_string(), member.to_string()))
            .map(|s| s.partitions)
    }

    /// Drops every session of a group (deleted).
    pub fn remove_group(&mut self, group: &str) {
        self.sessions.retain(|(g, _), _| g != group);
    }

    pub fn len(&self) -> usize {
        self.sessions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_must_follow_on_and_close_ends_the_session() {
        let t = Uuid::new_v4();
        let mut cache = SessionCache::new(10);
        assert_eq!(
            cache.fetch("g", "m", 0, &[(t, 0)], &[]),
            Ok(SessionUse::Open([(t, 0)].into()))
        );
        assert_eq!(
            cache.fetch("g", "m", 2, &[], &[]),
            Err(SessionError::InvalidEpoch)
        );
        assert_eq!(
            cache.fetch("g", "m", 1, &[(t, 1)], &[(t, 0)]),
            Ok(SessionUse::Open([(t, 1)].into()))
        );
        assert_eq!(
            cache.acknowledge("g", "m", 0),
            Err(SessionError::InvalidEpoch)
        );
        assert!(cache.acknowledge("g", "m", 2).is_ok());
        assert_eq!(
            cache.fetch("g", "m", -1, &[], &[]),
            Ok(SessionUse::Closed([(t, 1)].into()))
        );
        assert_eq!(
            cache.fetch("g", "m", 4, &[], &[]),
            Err(SessionError::NotFound)
        );
    }

    #[test]
    fn the_cache_is_bounded() {
        let mut cache = SessionCache::new(1);
        cache.fetch("g", "a", 0, &[], &[]).unwrap();
        assert_eq!(
            cache.fetch("g", "b", 0, &[], &[]),
            Err(SessionError::LimitReached)
        );
        // Reopening one's own session is not a new one.
        assert!(cache.fetch("g", "a", 0, &[], &[]).is_ok());
    }
}
