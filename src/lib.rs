//! Sluice: a Kafka wire-protocol compatible message broker.
//!
//! | module | owns |
//! |---|---|
//! | [`config`] | Kafka-named properties: parsing, definitions, validation, typed views |
//! | [`types`] | shared identifiers |
//! | [`error`] | the broker error type and the one mapping to Kafka error codes |
//! | [`record`] | v2 record batches as zero-copy views; validation and header patching |
//! | [`storage`] | segmented logs with mmapped indexes, checkpoints, recovery, retention |
//! | [`metadata`] | metadata records, the image they build, this broker's view of it |
//! | [`controller`] | the controller quorum: decisions, metadata log, Raft voter, transport |
//! | [`replica`] | hosted partitions: append with acks, fetch with long-poll, follower fetchers |
//! | [`broker`] | the node: lifecycle with the controller, applying metadata, topic administration |
//! | [`auth`] | TLS, SASL mechanisms (PLAIN, SCRAM, OAUTHBEARER), principals and their mapping rules, ACLs and the authorizer; the client side of both for the broker's own connections |
//! | [`share`] | share groups (KIP-932): membership, share-partitions, sessions, their state |
//! | [`api`] | one file per Kafka API, wire types <-> core; the dispatch table |
//! | [`server`] | listener, connections, framing |
//! | [`net`] | the client side: requests to other nodes (secured as their listener requires), the liveness probe |
//! | [`cli`] | admin commands of the binary: `format` |
//! | [`limits`] | process resource limits: the open-file limit raised and checked |
//! | [`offload`] | CPU-heavy work (decompression, record walks) on the blocking pool, bounded |
//! | [`telemetry`] | logging |
//!
//! Dependencies point one way: `types <- record <- storage <- {metadata, replica} <- controller
//! <- broker <- api <- server`, and only `api`, `server` and `net` (the client side of the
//! protocol) see `kafka-protocol` types. What the broker needs from the wire (forwarding to the
//! controller, fetching as a follower) it gets through traits the API layer implements.

pub mod api;
pub mod auth;
pub mod broker;
pub mod cli;
pub mod config;
pub mod controller;
pub mod error;
pub mod group;
pub mod limits;
pub mod metadata;
pub mod net;
pub mod offload;
pub mod record;
pub mod replica;
pub mod server;
pub mod share;
pub mod storage;
pub mod telemetry;
pub mod txn;
pub mod types;
