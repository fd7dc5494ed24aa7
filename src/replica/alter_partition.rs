//! The leader's ISR change requests (Kafka's `AlterPartitionManager` with `Partition`'s
//! retry): at most one request per partition and partition epoch is outstanding; the image
//! that commits it brings the next epoch. A refused request (INELIGIBLE_REPLICA while the
//! follower re-registers, a controller moving, a stale epoch) is sent again after a backoff
//! that doubles per refusal, from 100 ms to 5 s, so a caught-up follower rejoins promptly
//! instead of waiting for an unrelated change of the partition.

use crate::types::TopicPartition;
use std::collections::HashMap;
use std::time::{Duration, Instant};

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

#[derive(Debug, Clone, Copy)]
struct Request {
    partition_epoch: i32,
    /// Refusals at this epoch so far.
    refusals: u32,
    /// Set after a refusal: when it may be sent again.
    retry_at: Option<Instant>,
}

#[derive(Debug, Default)]
pub struct IsrRequests {
    requests: HashMap<TopicPartition, Request>,
}

impl IsrRequests {
    /// Whether an ISR change for `tp` at `partition_epoch` should be sent now; if so it is
    /// recorded as outstanding.
    pub fn should_send(&mut self, tp: &TopicPartition, partition_epoch: i32, now: Instant) -> bool {
        let refusals = match self.requests.get(tp) {
            Some(r) if r.partition_epoch == partition_epoch => match r.retry_at {
                Some(at) if now >= at => r.refusals,
                _ => return false,
            },
            _ => 0,
        };
        self.requests.insert(
            tp.clone(),
            Request {
                partition_epoch,
                refusals,
                retry_at: None,
            },
        );
        true
    }

    /// The request for `tp` at `partition_epoch` was refused; returns the backoff before it
    /// may be sent again.
    pub fn refused(&mut self, tp: &TopicPartition, partition_epoch: i32, now: Instant) -> Duration {
        let Some(request) = self
            .requests
            .get_mut(tp)
            .filter(|r| r.partition_epoch == partition_epoch)
        else {
            return Duration::ZERO;
        };
        let backoff = FIRST_BACKOFF
            .saturating_mul(1 << request.refusals.min(16))
            .min(MAX_BACKOFF);
        request.refusals += 1;
        request.retry_at = Some(now + backoff);
        backoff
    }

    /// Whether no request is remembered.
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty()
    }

    /// Forgets partitions no longer led here.
    pub fn retain(&mut self, mut led: impl FnMut(&TopicPartition) -> bool) {
        self.requests.retain(|tp, _| led(tp));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Defect 8 of the hardening issue: after one refusal (INELIGIBLE_REPLICA during the
    /// follower's re-registration) the same change used to wait for the partition epoch to
    /// move (106 s in a run); now it is retried after a short, growing backoff.
    #[test]
    fn a_refused_change_is_retried_after_a_growing_backoff() {
        let mut requests = IsrRequests::default();
        let tp = TopicPartition::new("t", 0);
        let t0 = Instant::now();
        assert!(requests.should_send(&tp, 3, t0));
        assert!(
            !requests.should_send(&tp, 3, t0),
            "one outstanding per epoch"
        );
        assert_eq!(requests.refused(&tp, 3, t0), Duration::from_millis(100));
        assert!(!requests.should_send(&tp, 3, t0 + Duration::from_millis(50)));
        let t1 = t0 + Duration::from_millis(100);
        assert!(
            requests.should_send(&tp, 3, t1),
            "retried after the backoff"
        );
        assert_eq!(requests.refused(&tp, 3, t1), Duration::from_millis(200));
        let mut at = t1;
        for _ in 0..10 {
            at += MAX_BACKOFF;
            assert!(requests.should_send(&tp, 3, at));
            assert!(requests.refused(&tp, 3, at) <= MAX_BACKOFF);
        }
        // A new epoch (the image moved on) is sent at once.
        assert!(requests.should_send(&tp, 4, at));
        // A refusal of an epoch no longer outstanding changes nothing.
        assert_eq!(requests.refused(&tp, 3, at), Duration::ZERO);
        assert!(!requests.should_send(&tp, 4, at));
    }
}
