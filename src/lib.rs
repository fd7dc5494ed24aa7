//! Sluice: a Kafka wire-protocol compatible message broker.
//!
//! Every module, in ONE dependency order: a module uses only modules on lower floors, and
//! modules on the same floor do not use each other (`tests/map.rs` checks this against the
//! code, every folder's own table against its files, and README's Layout against this table).
//!
//! | module | floor | owns |
//! |---|---|---|
//! | [`types`] | 0 | shared identifiers (`TopicPartition`) and the clock |
//! | [`config`] | 0 | Kafka-named properties: the `.properties` format and the image environment, definitions, validation, typed views, JAAS syntax |
//! | [`limits`] | 0 | process resource limits: the open-file limit raised and reported |
//! | [`telemetry`] | 0 | logging |
//! | [`record`] | 1 | v2 record batches as zero-copy views; a produced batch parsed once and checked; codecs, record walks, internal-record schemas |
//! | [`stats`] | 1 | the broker's own measurements, counted on the hot paths with atomics: per topic, per request, per listener; the rate arithmetic of quotas and throttles |
//! | [`storage`] | 2 | segmented logs with mmapped indexes, checkpoints, recovery, retention, compaction, flush; the log directory and its timers |
//! | [`error`] | 3 | the broker error types (coordinators' too) and the one mapping to Kafka error codes |
//! | [`metadata`] | 3 | metadata records, the image they build, this broker's view of it, cluster identity, features |
//! | [`offload`] | 4 | CPU-heavy work (decompression, record walks) on the blocking pool, bounded |
//! | [`auth`] | 4 | TLS, SASL mechanisms, principals and their mapping rules, ACLs and the authorizer; the client side of both |
//! | [`replica`] | 5 | hosted partitions: the one produce entry (checks, verification, append, acks), fetch with long-poll, ISR and HW, follower fetchers |
//! | [`net`] | 5 | the client side: requests to other nodes, secured as their listener requires |
//! | [`group`] | 6 | the group coordinator: classic and KIP-848 groups, committed offsets, over `__consumer_offsets` |
//! | [`txn`] | 6 | the transaction coordinator over `__transaction_state`: state machine, records, markers |
//! | [`share`] | 6 | share groups (KIP-932): membership, share-partitions, sessions, state in `__share_group_state` |
//! | [`controller`] | 6 | the controller quorum on raft-rs: decisions, metadata log, voter, event loop, transport |
//! | [`broker`] | 7 | the node: open, start, shutdown; lifecycle with the controller, applying metadata, replication, administration |
//! | [`api`] | 8 | one file per Kafka API, wire types <-> core; the dispatch table; authorization gates |
//! | [`http`] | 9 | the HTTP listener: Prometheus metrics under Kafka's names |
//! | [`cli`] | 9 | admin commands of the binary with Kafka's flags and output: `format` (kafka-storage), `topics`, `configs`, `groups`, `produce`, `consume`, `cluster`, `quorum` (kafka-topics, kafka-configs, kafka-consumer-groups, the console tools, kafka-broker-api-versions, kafka-metadata-quorum), their client, topics at startup |
//! | [`server`] | 10 | listeners, connections, framing, sessions (TLS, SASL), the controller listener |
//!
//! Only `api`, `server`, `net` (the client side of the protocol) and `cli`'s client see
//! `kafka-protocol` types;
//! the core sees raw record-batch bytes only. What the broker needs from the wire (forwarding
//! to the controller, fetching as a follower, markers and verification on other brokers) it
//! gets through traits the API layer implements.

// The OpenAPI document (`http::api::openapi`) is one `serde_json::json!` literal, deeper than
// the default limit of macro recursion.
#![recursion_limit = "256"]

pub mod api;
pub mod auth;
pub mod broker;
pub mod cli;
pub mod config;
pub mod controller;
pub mod error;
pub mod group;
pub mod http;
pub mod limits;
pub mod metadata;
pub mod net;
pub mod offload;
pub mod record;
pub mod replica;
pub mod server;
pub mod share;
pub mod stats;
pub mod storage;
pub mod telemetry;
pub mod txn;
pub mod types;
