//! Admin commands of the `sluice` binary beyond serving: `format` (Kafka's
//! `kafka-storage format`).
//!
//! | file | owns |
//! |---|---|
//! | `format.rs` | `sluice format` (Kafka's `kafka-storage format`) |

pub mod format;
