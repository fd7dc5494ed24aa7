//! The KRaft-style controller: the decisions of the active controller over the metadata
//! image ([`control`]) and the `__cluster_metadata` log that the Raft quorum replicates
//! ([`metadata_log`]) through one voter ([`quorum`]), run by an event loop thread
//! ([`service`]); a broker-only node follows it as an [`observer`].
//!
//! | file | owns |
//! |---|---|
//! | `control/` | the active controller's decisions |
//! | `metadata_log.rs` | the `__cluster_metadata` log as raft-rs storage |
//! | `observer.rs` | a broker-only node following the quorum without voting |
//! | `ops.rs` | the commands for the active controller and their answers |
//! | `quorum.rs` | one voter: raft-rs over the metadata log |
//! | `quorum_tests.rs` | voters over a simulated network: elections, snapshots, voter changes |
//! | `quorum_view.rs` | the quorum as its leader describes it (DescribeQuorum) |
//! | `service.rs` | the controller's event loop and its handle |
//! | `service_tests.rs` | the event loop's voters routed in memory |
//! | `voters.rs` | a dynamic quorum's voter changes, as its leader runs them |
//! | `transport.rs` | Raft messages between voters |

pub mod control;
pub mod metadata_log;
pub mod observer;
pub mod ops;
pub mod quorum;
pub mod quorum_view;
pub mod service;
pub mod transport;
pub mod voters;
