//! ListTransactions (v0–v2; KIP-664, KIP-994 duration filter, KIP-1152 id pattern): the
//! transactional ids this broker coordinates, filtered by state, producer id, how long their
//! transaction has been open and a pattern on the id (`kafka-transactions.sh list`, and
//! `find-hanging`). The pattern is a Rust `regex` matched against the whole id, as Kafka
//! matches its Java pattern; the two syntaxes agree on everything but look-around and
//! back-references, which `regex` rejects with INVALID_REGULAR_EXPRESSION.

use super::{ApiContext, wire_str};
use crate::error::code;
use crate::txn::state::{TxnMetadata, TxnState};
use kafka_protocol::messages::list_transactions_response::TransactionState;
use kafka_protocol::messages::{ListTransactionsRequest, ListTransactionsResponse, ProducerId};
use std::collections::HashSet;
use std::time::{SystemTime, UNIX_EPOCH};

const STATES: [TxnState; 8] = [
    TxnState::Empty,
    TxnState::Ongoing,
    TxnState::PrepareCommit,
    TxnState::PrepareAbort,
    TxnState::CompleteCommit,
    TxnState::CompleteAbort,
    TxnState::Dead,
    TxnState::PrepareEpochFence,
];

pub async fn handle(
    ctx: &ApiContext,
    request: ListTransactionsRequest,
    _version: i16,
) -> Option<ListTransactionsResponse> {
    let response = ListTransactionsResponse::default();
    let pattern = match request.transactional_id_pattern.as_deref() {
        None | Some("") => None,
        Some(pattern) => match regex::Regex::new(&format!("^(?:{pattern})$")) {
            Ok(regex) => Some(regex),
            Err(_) => return Some(response.with_error_code(code::INVALID_REGULAR_EXPRESSION)),
        },
    };
    let mut states = HashSet::new();
    let mut unknown_states = Vec::new();
    for name in &request.state_filters {
        match STATES.iter().find(|s| s.name() == name.as_str()) {
            Some(state) => {
                states.insert(*state);
            }
            None => unknown_states.push(name.clone()),
        }
    }
    let producer_ids: HashSet<i64> = request.producer_id_filters.iter().map(|p| p.0).collect();
    let filter = Filter {
        states,
        producer_ids,
        min_open_ms: request.duration_filter,
        pattern,
        now_ms: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64),
    };
    let response = response.with_unknown_state_filters(unknown_states);
    match ctx.broker.transaction_coordinator().list().await {
        Err(e) => Some(response.with_error_code(e.code(true))),
        Ok(all) => Some(
            response.with_transaction_states(
                all.into_iter()
                    .filter(|meta| filter.includes(meta))
                    .map(|meta| {
                        TransactionState::default()
                            .with_transactional_id(wire_str(&meta.transactional_id).into())
                            .with_producer_id(ProducerId(meta.producer_id))
                            .with_transaction_state(wire_str(meta.state.name()))
                    })
                    .collect(),
            ),
        ),
    }
}

/// Kafka's `shouldInclude`: every given filter must hold; Dead ids are never listed.
struct Filter {
    states: HashSet<TxnState>,
    producer_ids: HashSet<i64>,
    /// Only transactions open longer than this (KIP-994); negative: no filter.
    min_open_ms: i64,
    pattern: Option<regex::Regex>,
    now_ms: i64,
}

impl Filter {
    fn includes(&self, meta: &TxnMetadata) -> bool {
        meta.state != TxnState::Dead
            && (self.states.is_empty() || self.states.contains(&meta.state))
            && (self.producer_ids.is_empty() || self.producer_ids.contains(&meta.producer_id))
            && (self.min_open_ms < 0 || self.now_ms - meta.start_ms > self.min_open_ms)
            && self
                .pattern
                .as_ref()
                .is_none_or(|p| p.is_match(&meta.transactional_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn meta(id: &str, producer_id: i64, state: TxnState, start_ms: i64) -> TxnMetadata {
        TxnMetadata {
            transactional_id: id.to_string(),
            producer_id,
            previous_producer_id: -1,
            producer_epoch: 0,
            timeout_ms: 60_000,
            state,
            partitions: BTreeMap::new(),
            start_ms,
            last_update_ms: start_ms,
            next_producer_id: -1,
            transaction_version: 0,
        }
    }

    fn filter() -> Filter {
        Filter {
            states: HashSet::new(),
            producer_ids: HashSet::new(),
            min_open_ms: -1,
            pattern: None,
            now_ms: 100_000,
        }
    }

    #[test]
    fn every_given_filter_must_hold_and_dead_ids_are_never_listed() {
        let open_long = meta("orders-1", 7, TxnState::Ongoing, 10_000);
        let open_briefly = meta("orders-2", 8, TxnState::Ongoing, 99_000);
        let done = meta("payments-1", 9, TxnState::CompleteCommit, 50_000);
        let dead = meta("orders-3", 10, TxnState::Dead, 0);
        let all = filter();
        assert!(all.includes(&open_long) && all.includes(&done) && !all.includes(&dead));

        let ongoing = Filter {
            states: HashSet::from([TxnState::Ongoing]),
            ..filter()
        };
        assert!(ongoing.includes(&open_long) && !ongoing.includes(&done));

        let hanging = Filter {
            min_open_ms: 60_000,
            ..ongoing
        };
        assert!(hanging.includes(&open_long) && !hanging.includes(&open_briefly));

        let by_producer = Filter {
            producer_ids: HashSet::from([9]),
            ..filter()
        };
        assert!(by_producer.includes(&done) && !by_producer.includes(&open_long));

        let by_pattern = Filter {
            pattern: regex::Regex::new("^(?:orders-.)$").ok(),
            ..filter()
        };
        assert!(by_pattern.includes(&open_long) && !by_pattern.includes(&done));
        let whole_id_only = Filter {
            pattern: regex::Regex::new("^(?:orders)$").ok(),
            ..filter()
        };
        assert!(!whole_id_only.includes(&open_long));
    }
}
