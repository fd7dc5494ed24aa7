//! The quorum as its leader describes it (DescribeQuorum, `kafka-metadata-quorum`): each
//! voter's log end offset, when it was last heard from and when it last caught up, kept as
//! Kafka's `LeaderState.ReplicaState` keeps them. raft-rs tracks how far each follower has
//! replicated but keeps no clock, so the times are recorded here as the followers' answers
//! reach the leader (an append or heartbeat response is our follower's fetch).
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
}

#[derive(Debug, Clone, Copy)]
struct Contact {
    last_fetch_ms: i64,
    /// The leader's log end offset when the follower was last heard from.
    leader_end_at_last_fetch: u64,
    last_caught_up_ms: i64,
}

/// When the leader of one term heard from each follower.
#[derive(Debug, Default)]
pub struct FollowerClock {
    term: u64,
    contacts: BTreeMap<u64, Contact>,
}

impl FollowerClock {
    /// The follower `node` answered the leader of `term` at `now_ms`, holding entries up to
    /// `matched` while the leader's log ends at `leader_end`. Kafka's rule: caught up now if it
    /// holds the leader's whole log, else caught up at its previous contact if it now holds
    /// what the leader had then.
    pub fn heard_from(&mut self, term: u64, node: u64, matched: u64, leader_end: u64, now_ms: i64) {
        if term != self.term {
            self.term = term;
            self.contacts.clear();
        }
        let contact = self.contacts.entry(node).or_insert(Contact {
            last_fetch_ms: -1,
            leader_end_at_last_fetch: 0,
            last_caught_up_ms: -1,
        });
        if matched >= leader_end {
            contact.last_caught_up_ms = contact.last_caught_up_ms.max(now_ms);
        } else if contact.leader_end_at_last_fetch > 0
            && matched >= contact.leader_end_at_last_fetch
        {
            contact.last_caught_up_ms = contact.last_caught_up_ms.max(contact.last_fetch_ms);
        }
        contact.leader_end_at_last_fetch = leader_end;
        contact.last_fetch_ms = contact.last_fetch_ms.max(now_ms);
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
