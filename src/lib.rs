//! Sluice: a Kafka wire-protocol compatible message broker.
pub mod config;
pub mod record;
pub mod storage;
pub mod types;
