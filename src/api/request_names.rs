//! The names Kafka's request metrics go by: each API's name (`ApiKeys.name`: `Produce`,
//! `ListOffsets`, ...) at the slot of its key, and the two names Fetch is also counted under,
//! `FetchConsumer` and `FetchFollower`, at slots of their own.

use kafka_protocol::messages::ApiKey;
use std::sync::OnceLock;

/// A consumer's fetch, counted under `FetchConsumer` besides `Fetch`.
pub const FETCH_CONSUMER: usize = crate::stats::REQUEST_SLOTS - 2;
/// A follower's fetch, counted under `FetchFollower` besides `Fetch`.
pub const FETCH_FOLLOWER: usize = crate::stats::REQUEST_SLOTS - 1;

/// (slot, name) of every request name, in the order Kafka's names sort.
pub fn all() -> &'static [(usize, String)] {
    static NAMES: OnceLock<Vec<(usize, String)>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let mut names: Vec<(usize, String)> = ApiKey::iter()
            .map(|api| (api as usize, format!("{api:?}")))
            .filter(|(slot, _)| *slot < FETCH_CONSUMER)
            .chain([
                (FETCH_CONSUMER, "FetchConsumer".to_string()),
                (FETCH_FOLLOWER, "FetchFollower".to_string()),
            ])
            .collect();
        names.sort_by(|a, b| a.1.cmp(&b.1));
        names
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kafkas_and_every_api_key_has_its_own_slot() {
        let names = all();
        let name = |slot: usize| {
            names
                .iter()
                .find(|(s, _)| *s == slot)
                .map(|(_, n)| n.as_str())
        };
        assert_eq!(name(0), Some("Produce"));
        assert_eq!(name(ApiKey::ListOffsets as usize), Some("ListOffsets"));
        assert_eq!(
            name(ApiKey::DescribeTopicPartitions as usize),
            Some("DescribeTopicPartitions")
        );
        assert_eq!(name(FETCH_CONSUMER), Some("FetchConsumer"));
        assert!(ApiKey::iter().all(|api| (api as usize) < FETCH_CONSUMER));
    }
}
