//! Admin commands of the `sluice` binary beyond serving, with Kafka's flags and output where
//! they stand for Kafka's tools: `format` (`kafka-storage format`), `topics` (`kafka-topics`),
//! and the topics created at startup.
//!
//! | file | owns |
//! |---|---|
//! | `format.rs` | `sluice format` (Kafka's `kafka-storage format`) |
//! | `client.rs` | the admin commands' client: one connection, agreed versions, admin requests |
//! | `topics.rs` | `sluice topics` (Kafka's `kafka-topics`) |
//! | `startup_topics.rs` | `--create-topic` specs and the `KAFKA_CREATE_TOPICS` list |

pub mod client;
pub mod format;
pub mod startup_topics;
pub mod topics;
