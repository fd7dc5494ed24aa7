//! The quorum as its leader describes it (DescribeQuorum, `kafka-metadata-quorum`): each
//! voter's log end offset, when it was last heard from and when it last caught up, kept as
//! Kafka's `LeaderState.ReplicaState` keeps them. raft-rs tracks how far each follower has
//! replicated but keeps no clock, so the times are recorded here as the followers' answers
//! reach the leader (an append or heartbeat response is our follower's fetch).
//!
//! Observers (broker-only nodes, KIP-595) fetch committed entries from the leader
//! (`controller::observer`); the leader keeps their progress the same way and forgets one it has
//! not heard from for five minutes, as Kafka's `LeaderState` does.
//!
//! Offsets are the metadata log's: entry `i` is the batch at offset `i - 1`, so a voter that
//! holds entries up to index `m` has log end offset `m`, and the high watermark is the commit
//! index.

use std::collections::BTreeMap;

/// One voter's replication as the leader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VoterProgress {
    pub node: u64,
    /// -1 while the leader has not heard from it in this term.
    pub log_end_offset: i64,
    /// Milliseconds since the epoch; -1 when unknown.
    pub last_fetch_ms: i64,
    pub last_caught_up_ms: i64,
}

/// What DescribeQuorum answers, from the leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumDescription {
    pub leader: u64,
    pub leader_epoch: u64,
    pub high_watermark: u64,
    /// Every voter, by node id.
    pub voters: Vec<VoterProgress>,
    /// The observers heard from lately, by node id.
    pub observers: Vec<VoterProgress>,
}

/// How long the leader keeps an observer it no longer hears from (Kafka's
/// `OBSERVER_SESSION_TIMEOUT_MS`).
pub const OBSERVER_SESSION_TIMEOUT_MS: i64 = 300_000;

#[derive(Debug, Clone, Copy)]
struct Contact {
    /// What the node held when last heard from.
    log_end: u64,
    last_fetch_ms: i64,
    /// The leader's log end offset when the follower was last heard from.
    leader_end_at_last_fetch: u64,
    last_caught_up_ms: i64,
}

/// When the leader of one term heard from each follower and observer.
#[derive(Debug, Default)]
pub struct FollowerClock {
    term: u64,
    contacts: BTreeMap<u64, Contact>,
    observers: BTreeMap<u64, Contact>,
}

impl Contact {
    /// Heard from at `now_ms`, holding entries up to `matched` while the leader's log ends at
    /// `leader_end`. Kafka's rule: caught up now if it holds the leader's whole log, else
    /// caught up at its previous contact if it now holds what the leader had then.
    fn heard(&mut self, matched: u64, leader_end: u64, now_ms: i64) {
        if matched >= leader_end {
            self.last_caught_up_ms = self.last_caught_up_ms.max(now_ms);
        } else if self.leader_end_at_last_fetch > 0 && matched >= self.leader_end_at_last_fetch {
            self.last_caught_up_ms = self.last_caught_up_ms.max(self.last_fetch_ms);
        }
        self.log_end = matched;
        self.leader_end_at_last_fetch = leader_end;
        self.last_fetch_ms = self.last_fetch_ms.max(now_ms);
    }
}

const UNHEARD: Contact = Contact {
    log_end: 0,
    last_fetch_ms: -1,
    leader_end_at_last_fetch: 0,
    last_caught_up_ms: -1,
};

impl FollowerClock {
    fn enter_term(&mut self, term: u64) {
        if term != self.term {
            self.term = term;
            self.contacts.clear();
            self.observers.clear();
        }
    }

    /// The follower `node` answered the leader of `term` at `now_ms`, holding entries up to
    /// `matched` while the leader's log ends at `leader_end`.
    pub fn heard_from(&mut self, term: u64, node: u64, matched: u64, leader_end: u64, now_ms: i64) {
        self.enter_term(term);
        self.contacts
            .entry(node)
            .or_insert(UNHEARD)
            .heard(matched, leader_end, now_ms);
    }

    /// The observer `node` fetched from the leader of `term` at `now_ms`, holding entries up
    /// to `log_end` while the leader's log ends at `leader_end`. Observers not heard from for
    /// [`OBSERVER_SESSION_TIMEOUT_MS`] are forgotten.
    pub fn observer_fetched(
        &mut self,
        term: u64,
        node: u64,
        log_end: u64,
        leader_end: u64,
        now_ms: i64,
    ) {
        self.enter_term(term);
        self.observers
            .retain(|_, c| now_ms - c.last_fetch_ms <= OBSERVER_SESSION_TIMEOUT_MS);
        self.observers
            .entry(node)
            .or_insert(UNHEARD)
            .heard(log_end, leader_end, now_ms);
    }

    /// The observers of `term` heard from within the session timeout, by node id.
    pub fn describe_observers(&self, term: u64, now_ms: i64) -> Vec<VoterProgress> {
        if term != self.term {
            return Vec::new();
        }
        self.observers
            .iter()
            .filter(|(_, c)| now_ms - c.last_fetch_ms <= OBSERVER_SESSION_TIMEOUT_MS)
            .map(|(node, c)| VoterProgress {
                node: *node,
                log_end_offset: c.log_end as i64,
                last_fetch_ms: c.last_fetch_ms,
                last_caught_up_ms: c.last_caught_up_ms,
            })
            .collect()
    }

    /// Each voter's progress, for the leader `leader` of `term`: `matched` gives what each
    /// follower holds (`None` for a voter Raft has no progress for), `leader_end` the leader's
    /// own log end. The leader reports itself as fetching and caught up now, as Kafka does.
    pub fn describe(
        &self,
        term: u64,
        leader: u64,
        voters: &[u64],
        matched: impl Fn(u64) -> Option<u64>,
        leader_end: u64,
        now_ms: i64,
    ) -> Vec<VoterProgress> {
        let mut voters = voters.to_vec();
        voters.sort_unstable();
        voters.dedup();
        voters
            .into_iter()
            .map(|node| {
                if node == leader {
                    return VoterProgress {
                        node,
                        log_end_offset: leader_end as i64,
                        last_fetch_ms: now_ms,
                        last_caught_up_ms: now_ms,
                    };
                }
                let contact = self.contacts.get(&node).filter(|_| self.term == term);
                VoterProgress {
                    node,
                    log_end_offset: match (contact, matched(node)) {
                        (Some(_), Some(m)) => m as i64,
                        _ => -1,
                    },
                    last_fetch_ms: contact.map_or(-1, |c| c.last_fetch_ms),
                    last_caught_up_ms: contact.map_or(-1, |c| c.last_caught_up_ms),
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_follower_that_holds_the_whole_log_is_caught_up_when_heard_from() {
        let mut clock = FollowerClock::default();
        clock.heard_from(3, 2, 10, 10, 1_000);
        let voters = clock.describe(3, 1, &[1, 2, 3], |_| Some(10), 10, 2_000);
        assert_eq!(
            voters,
            vec![
                VoterProgress {
                    node: 1,
                    log_end_offset: 10,
                    last_fetch_ms: 2_000,
                    last_caught_up_ms: 2_000
                },
                VoterProgress {
                    node: 2,
                    log_end_offset: 10,
                    last_fetch_ms: 1_000,
                    last_caught_up_ms: 1_000
                },
                // Not heard from in this term: unknown, as Kafka reports it.
                VoterProgress {
                    node: 3,
                    log_end_offset: -1,
                    last_fetch_ms: -1,
                    last_caught_up_ms: -1
                },
            ]
        );
    }

    #[test]
    fn a_lagging_follower_is_caught_up_as_of_the_contact_whose_log_end_it_reached() {
        let mut clock = FollowerClock::default();
        clock.heard_from(1, 2, 5, 8, 1_000);
        // Still short of the leader's end at the first contact: never caught up.
        clock.heard_from(1, 2, 7, 12, 2_000);
        assert_eq!(
            clock.describe(1, 1, &[1, 2], |_| Some(7), 12, 2_500)[1].last_caught_up_ms,
            -1
        );
        // Holds what the leader had at the previous contact (12): caught up as of then.
        clock.heard_from(1, 2, 12, 15, 3_000);
        let follower = clock.describe(1, 1, &[1, 2], |_| Some(12), 15, 3_500)[1];
        assert_eq!(follower.last_caught_up_ms, 2_000);
        assert_eq!(follower.last_fetch_ms, 3_000);
        assert_eq!(follower.log_end_offset, 12);
    }

    #[test]
    fn observers_are_described_until_their_session_times_out() {
        let mut clock = FollowerClock::default();
        clock.observer_fetched(2, 7, 9, 10, 1_000);
        clock.observer_fetched(2, 8, 10, 10, 2_000);
        let observers = clock.describe_observers(2, 3_000);
        assert_eq!(
            observers,
            vec![
                VoterProgress {
                    node: 7,
                    log_end_offset: 9,
                    last_fetch_ms: 1_000,
                    last_caught_up_ms: -1
                },
                VoterProgress {
                    node: 8,
                    log_end_offset: 10,
                    last_fetch_ms: 2_000,
                    last_caught_up_ms: 2_000
                },
            ]
        );
        // Observer 7 stopped fetching five minutes ago; a new term starts with none.
        let later = 2_000 + OBSERVER_SESSION_TIMEOUT_MS;
        clock.observer_fetched(2, 8, 10, 10, later);
        assert_eq!(clock.describe_observers(2, later).len(), 1);
        assert!(clock.describe_observers(3, later).is_empty());
    }

    #[test]
    fn a_new_term_forgets_the_contacts_of_the_last() {
        let mut clock = FollowerClock::default();
        clock.heard_from(1, 2, 4, 4, 1_000);
        assert_eq!(
            clock.describe(2, 1, &[1, 2], |_| Some(4), 4, 2_000)[1].last_fetch_ms,
            -1
        );
        clock.heard_from(2, 3, 4, 4, 3_000);
        let voters = clock.describe(2, 1, &[1, 2, 3], |_| Some(4), 4, 3_000);
        assert_eq!(voters[1].last_fetch_ms, -1);
        assert_eq!(voters[2].last_fetch_ms, 3_000);
    }
}
