//! Admin commands of the `sluice` binary beyond serving: `format` (Kafka's
//! `kafka-storage format`).
//!
//! | file | owns |
//! |---|---|
//! | `format.rs` | `sluice format` (Kafka's `kafka-storage format`) |
//! | `startup_topics.rs` | `--create-topic` specs and the `KAFKA_CREATE_TOPICS` list |

pub mod format;
pub mod startup_topics;
