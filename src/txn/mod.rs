//! Transactions (Kafka's transaction coordinator over `__transaction_state`). Built so far:
//! the record schemas of `__transaction_state` (`records.rs`) and the per-transactional-id
//! state machine (`state.rs`); the partition side (markers, last stable offset, aborted
//! transactions) lives in `storage` and `replica`. The coordinator service that runs the
//! state machine over the log and sends the markers is next.

pub mod records;
pub mod state;
