//! Transactions (Kafka's transaction coordinator over `__transaction_state`), both protocols:
//! transaction version 0–1 (AddPartitionsToTxn, one producer epoch per session) and 2
//! (KIP-890 part 2: partitions added by Produce, a new epoch from every EndTxn v5), chosen by
//! the client per request as on Kafka.
//!
//! | file | owns |
//! |---|---|
//! | `records.rs` | the `__transaction_state` key/value schemas |
//! | `state.rs` | one transactional id's state machine, as pure decisions |
//! | `coordinator.rs` | the ids this broker coordinates: state written to the log, markers, completion, timeouts, reloading |
//! | `coordinator_tests.rs` | the coordinator's unit tests |
//!
//! The partition side (markers, last stable offset, aborted transactions) lives in `storage`
//! and `replica`; offsets committed in transactions in `group`; the Kafka APIs in `api`
//! (FindCoordinator, InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
//! TxnOffsetCommit, WriteTxnMarkers, DescribeProducers, DescribeTransactions,
//! ListTransactions).

pub mod coordinator;
pub mod records;
pub mod state;

/// Ends the process on the spot, as `kill -9` would, when the crash tests arm `name` (the
/// `FAILPOINTS` environment variable, fail-rs syntax, e.g. `txn-before-complete=return`).
/// Compiled to nothing unless fail-rs's `failpoints` feature is on, which only test builds
/// turn on. The steps of a transaction each have one:
///
/// | name | the process ends |
/// |---|---|
/// | `txn-after-prepare` | once PrepareCommit/PrepareAbort is in `__transaction_state`, before EndTxn is answered |
/// | `txn-marker-appended` | after a marker was appended to a partition this broker leads |
/// | `txn-before-complete` | with every marker written, before CompleteCommit/CompleteAbort |
pub fn crash_point(name: &str) {
    // Exit code 137 (128 + SIGKILL): no shutdown path runs, nothing more is written.
    fail::fail_point!(name, |_| std::process::exit(137));
    let _ = name; // unused when the feature is off
}
