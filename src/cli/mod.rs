//! Admin commands of the `sluice` binary beyond serving: `format` (Kafka's
//! `kafka-storage format`).

pub mod format;
