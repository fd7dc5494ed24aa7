//! Admin commands of the `sluice` binary beyond serving, with Kafka's flags and output where
//! they stand for Kafka's tools: `format` (`kafka-storage format`), `topics` (`kafka-topics`),
//! `configs` (`kafka-configs`), `groups` (`kafka-consumer-groups`), `produce` and `consume`
//! (`kafka-console-producer`, `kafka-console-consumer`), `cluster`
//! (`kafka-broker-api-versions`), `quorum` (`kafka-metadata-quorum`), and the topics created
//! at startup.
//!
//! | file | owns |
//! |---|---|
//! | `format.rs` | `sluice format` (Kafka's `kafka-storage format`) |
//! | `client/` | the admin commands' client: connections, agreed versions, admin requests |
//! | `command_config.rs` | `--command-config`: Kafka client properties to connection security |
//! | `output.rs` | `--output` and the commands' runtime |
//! | `topics.rs` | `sluice topics` (Kafka's `kafka-topics`) |
//! | `console_producer.rs` | `sluice produce` (Kafka's `kafka-console-producer`) |
//! | `console_consumer.rs` | `sluice consume` (Kafka's `kafka-console-consumer`) |
//! | `configs.rs` | `sluice configs` (Kafka's `kafka-configs`) |
//! | `configs_users.rs` | `sluice configs` of users: SCRAM credentials |
//! | `configs_quotas.rs` | `sluice configs` of users, clients and ips: quota configs |
//! | `groups/` | `sluice groups` (Kafka's `kafka-consumer-groups`): list, `describe.rs`, `reset.rs` |
//! | `cluster.rs` | `sluice cluster` (Kafka's `kafka-broker-api-versions`) |
//! | `quorum.rs` | `sluice quorum` (Kafka's `kafka-metadata-quorum`) |
//! | `quorum_voters.rs` | `sluice quorum add-controller / remove-controller` (KIP-853) |
//! | `kafka_apis.rs` | the Java client's API table `kafka-broker-api-versions` prints against |
//! | `startup_topics.rs` | `--create-topic` specs and the `KAFKA_CREATE_TOPICS` list |

pub mod client;
pub mod cluster;
pub mod command_config;
pub mod configs;
pub mod configs_quotas;
pub mod configs_users;
pub mod console_consumer;
pub mod console_producer;
pub mod format;
pub mod groups;
pub mod kafka_apis;
pub mod output;
pub mod quorum;
pub mod quorum_voters;
pub mod startup_topics;
pub mod topics;
