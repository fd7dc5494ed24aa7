//! Incremental fetch sessions (KIP-227): for each session, the partitions a client fetches
//! and what it was last told about each, so a request names only the partitions that changed
//! and a response carries only partitions with news. Partitions that returned data move to
//! the end of their session's order, as in Kafka, so a small `fetch.max.bytes` serves every
//! partition in turn instead of the first one forever.
//!
//! The cache holds `max.incremental.fetch.session.cache.slots` sessions. When it is full, the
//! least recently used session is evicted if it has been idle for Kafka's
//! `min.incremental.fetch.session.eviction.ms` (120 s); otherwise the new client gets no
//! session (id 0) and keeps sending full requests, which is always correct.

use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// Kafka's fixed minimum idle time before a session may be evicted for a new one.
const MIN_EVICTION_IDLE: Duration = Duration::from_secs(120);

/// A partition as a fetch request names it: by topic id from Fetch v13, by name before.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionKey {
    pub topic_id: Uuid,
    pub topic: Arc<str>,
    pub partition: i32,
}

/// What the client asks of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionFetch {
    pub key: SessionKey,
    pub fetch_offset: i64,
    pub partition_max_bytes: i32,
    pub current_leader_epoch: i32,
    /// A follower's latest epoch (-1: none); kept in the session like the rest, as Kafka's
    /// `CachedPartition` keeps it.
    pub last_fetched_epoch: i32,
}

/// What a response told the client about a partition besides its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reported {
    pub high_watermark: i64,
    pub last_stable_offset: i64,
    pub log_start_offset: i64,
    pub error_code: i16,
}

/// The outcome of reading one partition, for deciding what the response must carry.
#[derive(Debug, Clone, Copy)]
pub struct PartitionOutcome {
    pub reported: Reported,
    pub has_records: bool,
}

/// How a fetch request relates to sessions, from its `session_id` and `session_epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionRequest {
    /// Epoch -1: a full request outside any session; a named session is closed first.
    Sessionless { close: Option<i32> },
    /// Epoch 0: a full request that opens a new session; a named session is closed first.
    Open { close: Option<i32> },
    /// Epoch > 0: the next request of an existing session.
    Incremental { id: i32, epoch: i32 },
}

impl SessionRequest {
    pub fn of(session_id: i32, epoch: i32) -> Self {
        let close = (session_id != 0).then_some(session_id);
        match epoch {
            -1 => SessionRequest::Sessionless { close },
            0 => SessionRequest::Open { close },
            epoch => SessionRequest::Incremental {
                id: session_id,
                epoch,
            },
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    #[error("fetch session not found")]
    NotFound,
    #[error("fetch session epoch {got} is not the expected {expected}")]
    InvalidEpoch { expected: i32, got: i32 },
}

#[derive(Debug)]
struct CachedPartition {
    fetch: PartitionFetch,
    /// What the last response carrying this partition said; `None` before any.
    sent: Option<Reported>,
}

#[derive(Debug)]
struct Session {
    /// The epoch the next request must carry.
    next_epoch: i32,
    /// In fetch order; keyed for O(1) updates however many partitions the session holds.
    partitions: IndexMap<SessionKey, CachedPartition>,
    last_used: Instant,
}

#[derive(Debug)]
pub struct FetchSessionCache {
    slots: usize,
    sessions: Mutex<HashMap<i32, Session>>,
}

/// Kafka's epoch sequence: 1, 2, ... i32::MAX, then 1 again.
fn next_epoch(epoch: i32) -> i32 {
    if epoch == i32::MAX { 1 } else { epoch + 1 }
}

/// Whether a partition must appear in an incremental response (Kafka's
/// `CachedPartition.maybeUpdateResponseData`): it has records, an error, or offsets the client
/// has not been told yet.
fn must_respond(sent: Option<Reported>, outcome: &PartitionOutcome) -> bool {
    outcome.has_records
        || outcome.reported.error_code != 0
        || sent.is_none_or(|s| {
            s.high_watermark != outcome.reported.high_watermark
                || s.last_stable_offset != outcome.reported.last_stable_offset
                || s.log_start_offset != outcome.reported.log_start_offset
        })
}

impl FetchSessionCache {
    pub fn new(slots: usize) -> Self {
        Self {
            slots,
            sessions: Mutex::new(HashMap::new()),
        }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<i32, Session>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn len(&self) -> usize {
        self.sessions().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn close(&self, id: i32) {
        self.sessions().remove(&id);
    }

    /// Opens a session over the partitions of a full request and what its response reported.
    /// Returns the new session id, or 0 when the cache has no room.
    pub fn open(&self, partitions: Vec<(PartitionFetch, Reported)>) -> i32 {
        let mut sessions = self.sessions();
        if sessions.len() >= self.slots {
            let evictable = sessions
                .iter()
                .filter(|(_, s)| s.last_used.elapsed() >= MIN_EVICTION_IDLE)
                .min_by_key(|(_, s)| s.last_used)
                .map(|(&id, _)| id);
            match evictable {
                Some(id) => {
                    sessions.remove(&id);
                }
                None => return 0,
            }
        }
        let id = loop {
            // Random ids, as Kafka's, so one client cannot guess another's session.
            let candidate = (Uuid::new_v4().as_u128() as u32 & 0x7fff_ffff) as i32;
            if candidate != 0 && !sessions.contains_key(&candidate) {
                break candidate;
            }
        };
        let partitions = partitions
            .into_iter()
            .map(|(fetch, reported)| {
                let cached = CachedPartition {
                    fetch: fetch.clone(),
                    sent: Some(reported),
                };
                (fetch.key, cached)
            })
            .collect();
        sessions.insert(
            id,
            Session {
                next_epoch: 1,
                partitions,
                last_used: Instant::now(),
            },
        );
        id
    }

    /// Applies an incremental request to its session: checks the epoch and advances it,
    /// updates or adds the named partitions, drops the forgotten ones. Returns what to read,
    /// in the session's order.
    pub fn update(
        &self,
        id: i32,
        epoch: i32,
        changed: Vec<PartitionFetch>,
        forgotten: &[SessionKey],
    ) -> Result<Vec<PartitionFetch>, SessionError> {
        let mut sessions = self.sessions();
        let session = sessions.get_mut(&id).ok_or(SessionError::NotFound)?;
        if epoch != session.next_epoch {
            return Err(SessionError::InvalidEpoch {
                expected: session.next_epoch,
                got: epoch,
            });
        }
        session.next_epoch = next_epoch(epoch);
        session.last_used = Instant::now();
        if !forgotten.is_empty() {
            let forgotten: HashSet<&SessionKey> = forgotten.iter().collect();
            session.partitions.retain(|key, _| !forgotten.contains(key));
        }
        for fetch in changed {
            match session.partitions.get_mut(&fetch.key) {
                Some(cached) => cached.fetch = fetch,
                None => {
                    let key = fetch.key.clone();
                    session
                        .partitions
                        .insert(key, CachedPartition { fetch, sent: None });
                }
            }
        }
        Ok(session
            .partitions
            .values()
            .map(|p| p.fetch.clone())
            .collect())
    }

    /// Records an incremental response: returns, for each outcome (in the order `update`
    /// returned), whether the response must carry it; remembers what was sent and moves the
    /// partitions that returned records to the end of the session's order.
    pub fn complete(&self, id: i32, outcomes: &[(SessionKey, PartitionOutcome)]) -> Vec<bool> {
        let mut sessions = self.sessions();
        let Some(session) = sessions.get_mut(&id) else {
            // Closed meanwhile: answer everything, remember nothing.
            return vec![true; outcomes.len()];
        };
        let mut include = Vec::with_capacity(outcomes.len());
        let mut served = HashSet::new();
        for (key, outcome) in outcomes {
            let Some(cached) = session.partitions.get_mut(key) else {
                include.push(true);
                continue;
            };
            let respond = must_respond(cached.sent, outcome);
            if respond {
                cached.sent = Some(outcome.reported);
            }
            if outcome.has_records {
                served.insert(key);
            }
            include.push(respond);
        }
        if !served.is_empty() {
            let (moved, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut session.partitions)
                .into_iter()
                .partition(|(key, _)| served.contains(key));
            session.partitions = kept.into_iter().chain(moved).collect();
        }
        include
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(partition: i32) -> SessionKey {
        SessionKey {
            topic_id: Uuid::nil(),
            topic: Arc::from("t"),
            partition,
        }
    }
    fn fetch(partition: i32, offset: i64) -> PartitionFetch {
        PartitionFetch {
            key: key(partition),
            fetch_offset: offset,
            partition_max_bytes: 1 << 20,
            current_leader_epoch: -1,
            last_fetched_epoch: -1,
        }
    }
    fn reported(hw: i64) -> Reported {
        Reported {
            high_watermark: hw,
            last_stable_offset: hw,
            log_start_offset: 0,
            error_code: 0,
        }
    }
    fn outcome(hw: i64, has_records: bool) -> PartitionOutcome {
        PartitionOutcome {
            reported: reported(hw),
            has_records,
        }
    }

    #[test]
    fn request_kinds_follow_kip_227() {
        assert_eq!(
            SessionRequest::of(0, -1),
            SessionRequest::Sessionless { close: None }
        );
        assert_eq!(
            SessionRequest::of(7, -1),
            SessionRequest::Sessionless { close: Some(7) }
        );
        assert_eq!(
            SessionRequest::of(0, 0),
            SessionRequest::Open { close: None }
        );
        assert_eq!(
            SessionRequest::of(7, 3),
            SessionRequest::Incremental { id: 7, epoch: 3 }
        );
    }

    #[test]
    fn incremental_requests_check_epochs_and_answer_only_news() {
        let cache = FetchSessionCache::new(10);
        let id = cache.open(vec![(fetch(0, 0), reported(5)), (fetch(1, 0), reported(5))]);
        assert_ne!(id, 0);
        assert_eq!(
            cache.update(id, 2, vec![], &[]),
            Err(SessionError::InvalidEpoch {
                expected: 1,
                got: 2
            })
        );
        assert_eq!(
            cache.update(id + 1, 1, vec![], &[]),
            Err(SessionError::NotFound)
        );

        let order = cache.update(id, 1, vec![fetch(0, 3)], &[]).unwrap();
        assert_eq!(order, vec![fetch(0, 3), fetch(1, 0)]);
        // Partition 0 returned records; partition 1 has nothing new.
        let include = cache.complete(
            id,
            &[(key(0), outcome(5, true)), (key(1), outcome(5, false))],
        );
        assert_eq!(include, vec![true, false]);

        // Served partitions go to the back; a high watermark change is news.
        let order = cache.update(id, 2, vec![], &[]).unwrap();
        assert_eq!(order, vec![fetch(1, 0), fetch(0, 3)]);
        let include = cache.complete(
            id,
            &[(key(1), outcome(6, false)), (key(0), outcome(5, false))],
        );
        assert_eq!(include, vec![true, false]);

        // Forgotten partitions leave; new ones join at the end and are always answered.
        let order = cache.update(id, 3, vec![fetch(2, 0)], &[key(1)]).unwrap();
        assert_eq!(order, vec![fetch(0, 3), fetch(2, 0)]);
        let include = cache.complete(
            id,
            &[(key(0), outcome(5, false)), (key(2), outcome(0, false))],
        );
        assert_eq!(include, vec![false, true]);

        cache.close(id);
        assert_eq!(
            cache.update(id, 4, vec![], &[]),
            Err(SessionError::NotFound)
        );
    }

    #[test]
    fn a_full_cache_refuses_new_sessions_while_all_are_in_use() {
        let cache = FetchSessionCache::new(1);
        let first = cache.open(vec![(fetch(0, 0), reported(0))]);
        assert_ne!(first, 0);
        assert_eq!(
            cache.open(vec![]),
            0,
            "no slot: the client stays sessionless"
        );
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn epochs_wrap_to_one() {
        assert_eq!(next_epoch(1), 2);
        assert_eq!(next_epoch(i32::MAX), 1);
    }
}
