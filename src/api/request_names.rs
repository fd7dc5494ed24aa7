//! The names Kafka's metrics and tools go by: each API's name (`ApiKeys.name`: `Produce`,
//! `ListOffsets`, ...) at the slot of its key, the two names Fetch is also counted under,
//! `FetchConsumer` and `FetchFollower`, at slots of their own; and each error code's name
//! (`Errors.name()`).

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

/// Kafka's name of an error code (`Errors.name()`: `NONE`, `NOT_COORDINATOR`, ...).
pub fn error_name(code: i16) -> String {
    use kafka_protocol::error::ResponseError;
    let Some(error) = ResponseError::try_from_code(code) else {
        return "NONE".into();
    };
    if let ResponseError::Unknown(code) = error {
        return format!("UNKNOWN_{code}");
    }
    let camel = error.to_string();
    let mut name = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(c.to_ascii_uppercase());
    }
    name
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

    #[test]
    fn error_names_are_kafkas() {
        assert_eq!(error_name(0), "NONE");
        assert_eq!(error_name(-1), "UNKNOWN_SERVER_ERROR");
        assert_eq!(error_name(14), "COORDINATOR_LOAD_IN_PROGRESS");
        assert_eq!(error_name(16), "NOT_COORDINATOR");
        assert_eq!(error_name(17), "INVALID_TOPIC_EXCEPTION");
        assert_eq!(error_name(56), "KAFKA_STORAGE_ERROR");
        assert_eq!(error_name(79), "MEMBER_ID_REQUIRED");
    }
}
