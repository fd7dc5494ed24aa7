//! The KRaft-style controller: the decisions of the active controller over the metadata
//! image ([`control`]) and the `__cluster_metadata` log that the Raft quorum replicates
//! ([`metadata_log`]) through one voter ([`quorum`]), run by an event loop thread
//! ([`service`]).

pub mod control;
pub mod metadata_log;
pub mod quorum;
pub mod service;
pub mod transport;
