//! Sluice: a Kafka wire-protocol compatible message broker.
//!
//! | module | owns |
//! |---|---|
//! | [`config`] | Kafka-named properties: parsing, definitions, validation, typed views |
//! | [`types`] | shared identifiers |
//! | [`error`] | the broker error type and the one mapping to Kafka error codes |
//! | [`record`] | v2 record batches as zero-copy views; validation and header patching |
//! | [`storage`] | segmented logs with mmapped indexes, checkpoints, recovery, retention |
//! | [`metadata`] | topic definitions and cluster identity on disk |
//! | [`replica`] | hosted partitions: append with acks, fetch with long-poll |
//! | [`broker`] | the node: wiring and topic administration |
//! | [`api`] | one file per Kafka API, wire types <-> core; the dispatch table |
//! | [`server`] | listener, connections, framing |
//! | [`net`] | the client side: the liveness probe |
//! | [`telemetry`] | logging |
//!
//! Dependencies point one way: `types <- record <- storage <- replica <- broker <- api <- server`,
//! and only `api` and `server` see `kafka-protocol` types.

pub mod api;
pub mod broker;
pub mod config;
pub mod controller;
pub mod error;
pub mod group;
pub mod metadata;
pub mod net;
pub mod record;
pub mod replica;
pub mod server;
pub mod storage;
pub mod telemetry;
pub mod types;
