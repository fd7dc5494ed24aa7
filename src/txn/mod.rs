//! Transactions (Kafka's transaction coordinator over `__transaction_state`).
//!
//! | file | owns |
//! |---|---|
//! | `records.rs` | the `__transaction_state` key/value schemas |
//! | `state.rs` | one transactional id's state machine, as pure decisions |
//! | `coordinator.rs` | the ids this broker coordinates: state written to the log, markers, completion, timeouts, reloading |
//!
//! The partition side (markers, last stable offset, aborted transactions) lives in `storage`
//! and `replica`; offsets committed in transactions in `group`; the Kafka APIs in `api`
//! (FindCoordinator, InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
//! TxnOffsetCommit, WriteTxnMarkers, DescribeProducers).

pub mod coordinator;
pub mod records;
pub mod state;
