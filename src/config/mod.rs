//! Configuration with Kafka's names, types and defaults.
//!
//! Owns three things: the `.properties` reader (Java's format: `=`/`:`/space separators, `#`/`!`
//! comments, backslash continuations and escapes), the definitions of every broker and topic
//! property this broker knows (type, default, validation, documentation), and the typed views
//! built from them: [`BrokerConfig`] for the process and [`LogConfig`] for one topic (broker
//! defaults overlaid with the topic's overrides). An unknown or malformed property is an
//! error that names it; nothing is silently ignored.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("unknown property '{0}'")]
    Unknown(String),
    #[error("invalid value '{value}' for property '{name}': {reason}")]
    Invalid {
        name: String,
        value: String,
        reason: String,
    },
    #[error("cannot read config file {path}: {reason}")]
    Read { path: String, reason: String },
    #[error("malformed line {line} in config: '{text}'")]
    Syntax { line: usize, text: String },
}

fn invalid(name: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        name: name.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// Reads Java `.properties` text into ordered key/value pairs (later keys win).
pub fn parse_properties(text: &str) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut out = BTreeMap::new();
    let mut logical = String::new();
    let mut start_line = 0;
    for (number, raw) in text.lines().enumerate() {
        let line = if logical.is_empty() {
            start_line = number + 1;
            raw.trim_start()
        } else {
            raw.trim_start()
        };
        if logical.is_empty() && (line.is_empty() || line.starts_with('#') || line.starts_with('!'))
        {
            continue;
        }
        let trailing_backslashes = line.chars().rev().take_while(|c| *c == '\\').count();
        if trailing_backslashes % 2 == 1 {
            logical.push_str(&line[..line.len() - 1]);
            continue;
        }
        logical.push_str(line);
        let (key, value) = split_property(&logical).ok_or_else(|| ConfigError::Syntax {
            line: start_line,
            text: logical.clone(),
        })?;
        out.insert(key, value);
        logical.clear();
    }
    if !logical.is_empty() {
        let (key, value) = split_property(&logical).ok_or(ConfigError::Syntax {
            line: start_line,
            text: logical.clone(),
        })?;
        out.insert(key, value);
    }
    Ok(out)
}

fn split_property(line: &str) -> Option<(String, String)> {
    let mut key_end = line.len();
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '=' | ':' | ' ' | '\t' => {
                key_end = i;
                break;
            }
            _ => {}
        }
    }
    let key = unescape(&line[..key_end]);
    let mut rest = line[key_end..].trim_start_matches([' ', '\t']);
    if let Some(stripped) = rest.strip_prefix(['=', ':']) {
        rest = stripped.trim_start_matches([' ', '\t']);
    }
    if key.is_empty() {
        return None;
    }
    Some((key, unescape(rest)))
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(decoded) => out.push(decoded),
                    None => out.push_str(&hex),
                }
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// Kafka's config types, as DescribeConfigs reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    Boolean,
    String,
    Int,
    Long,
    Double,
    List,
    /// A secret: described as sensitive, its value never shown or logged.
    Password,
}

/// Accepted values beyond the type check.
#[derive(Debug, Clone, Copy)]
pub enum Validator {
    Any,
    AtLeast(i64),
    OneOf(&'static [&'static str]),
    ListOf(&'static [&'static str]),
    Fraction,
}

/// One known property.
#[derive(Debug)]
pub struct ConfigDef {
    pub name: &'static str,
    pub kind: ConfigType,
    /// `None` means Kafka's `null` default (falls back to another property).
    pub default: Option<&'static str>,
    pub validator: Validator,
    pub doc: &'static str,
    /// For topic configs: the broker property that supplies the default.
    pub broker_synonym: Option<&'static str>,
}

const LONG_MAX: &str = "9223372036854775807";

macro_rules! def {
    ($name:expr, $kind:ident, $default:expr, $validator:expr, $synonym:expr, $doc:expr) => {
        ConfigDef {
            name: $name,
            kind: ConfigType::$kind,
            default: $default,
            validator: $validator,
            doc: $doc,
            broker_synonym: $synonym,
        }
    };
}

pub mod jaas;
mod security;
pub use security::{
    DEFAULT_PRINCIPAL_BUILDER, ListenerOverrides, SECURITY_CONFIGS, SecurityProtocol,
    jaas_file_from_kafka_opts,
};

/// Per-topic configs (Kafka's `TopicConfig`) and the broker property each defaults to.
#[rustfmt::skip]
pub static TOPIC_CONFIGS: &[ConfigDef] = &[
    def!("cleanup.policy", List, Some("delete"), Validator::ListOf(&["delete", "compact"]), Some("log.cleanup.policy"), "Retention policy for old segments: delete and/or compact."),
    def!("compression.type", String, Some("producer"), Validator::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]), Some("compression.type"), "Final compression type of the topic; 'producer' keeps the producer's codec."),
    def!("delete.retention.ms", Long, Some("86400000"), Validator::AtLeast(0), Some("log.cleaner.delete.retention.ms"), "How long delete tombstones are retained for compacted topics."),
    def!("file.delete.delay.ms", Long, Some("60000"), Validator::AtLeast(0), Some("log.segment.delete.delay.ms"), "Time to wait before deleting a file from the filesystem."),
    def!("flush.messages", Long, Some(LONG_MAX), Validator::AtLeast(1), Some("log.flush.interval.messages"), "Force an fsync after this many messages."),
    def!("flush.ms", Long, Some(LONG_MAX), Validator::AtLeast(0), Some("log.flush.interval.ms"), "Force an fsync after this much time."),
    def!("index.interval.bytes", Int, Some("4096"), Validator::AtLeast(0), Some("log.index.interval.bytes"), "Bytes between offset index entries."),
    def!("max.compaction.lag.ms", Long, Some(LONG_MAX), Validator::AtLeast(1), Some("log.cleaner.max.compaction.lag.ms"), "Maximum time a message remains ineligible for compaction."),
    def!("max.message.bytes", Int, Some("1048588"), Validator::AtLeast(0), Some("message.max.bytes"), "Largest record batch size allowed."),
    def!("message.timestamp.after.max.ms", Long, Some("3600000"), Validator::AtLeast(0), Some("log.message.timestamp.after.max.ms"), "Allowed lead of a message timestamp over the broker time."),
    def!("message.timestamp.before.max.ms", Long, Some(LONG_MAX), Validator::AtLeast(0), Some("log.message.timestamp.before.max.ms"), "Allowed lag of a message timestamp behind the broker time."),
    def!("message.timestamp.type", String, Some("CreateTime"), Validator::OneOf(&["CreateTime", "LogAppendTime"]), Some("log.message.timestamp.type"), "Whether the timestamp is the producer's or the broker's append time."),
    def!("min.cleanable.dirty.ratio", Double, Some("0.5"), Validator::Fraction, Some("log.cleaner.min.cleanable.ratio"), "Dirty ratio above which the log is compacted."),
    def!("min.compaction.lag.ms", Long, Some("0"), Validator::AtLeast(0), Some("log.cleaner.min.compaction.lag.ms"), "Minimum time a message remains uncompacted."),
    def!("min.insync.replicas", Int, Some("1"), Validator::AtLeast(1), Some("min.insync.replicas"), "Minimum in-sync replicas for an acks=all write."),
    def!("preallocate", Boolean, Some("false"), Validator::Any, Some("log.preallocate"), "Preallocate segment files."),
    def!("retention.bytes", Long, Some("-1"), Validator::Any, Some("log.retention.bytes"), "Maximum partition size before old segments are deleted; -1 for no limit."),
    def!("retention.ms", Long, Some("604800000"), Validator::AtLeast(-1), Some("log.retention.ms"), "Maximum age of a segment before it is deleted; -1 for no limit."),
    def!("segment.bytes", Int, Some("1073741824"), Validator::AtLeast(14), Some("log.segment.bytes"), "Segment file size."),
    def!("segment.index.bytes", Int, Some("10485760"), Validator::AtLeast(4), Some("log.index.size.max.bytes"), "Maximum size of an offset or time index file."),
    def!("segment.jitter.ms", Long, Some("0"), Validator::AtLeast(0), Some("log.roll.jitter.ms"), "Maximum random jitter subtracted from segment.ms."),
    def!("segment.ms", Long, Some("604800000"), Validator::AtLeast(1), Some("log.roll.ms"), "Time after which a segment is rolled even if not full."),
    def!("unclean.leader.election.enable", Boolean, Some("false"), Validator::Any, Some("unclean.leader.election.enable"), "Allow an out-of-sync replica to become leader."),
];

/// Broker properties that this broker acts on, with Kafka's defaults (except `listeners` and
/// `log.dirs`, which default to a loopback listener and `./data` for a zero-setup dev broker).
#[rustfmt::skip]
pub static BROKER_CONFIGS: &[ConfigDef] = &[
    def!("node.id", Int, Some("1"), Validator::AtLeast(0), None, "This node's id."),
    def!("broker.id", Int, None, Validator::AtLeast(-1), None, "Legacy synonym of node.id."),
    def!("listeners", List, Some("PLAINTEXT://127.0.0.1:9092"), Validator::Any, None, "Listeners as NAME://host:port; port 0 binds a free port."),
    def!("advertised.listeners", List, None, Validator::Any, None, "Addresses given to clients; defaults to listeners."),
    def!("log.dirs", List, None, Validator::Any, None, "The directory holding partition logs (exactly one: several directories are not supported)."),
    def!("log.dir", String, Some("./data"), Validator::Any, None, "Log directory when log.dirs is not set."),
    def!("num.partitions", Int, Some("1"), Validator::AtLeast(1), None, "Default partition count of new topics."),
    def!("default.replication.factor", Int, Some("1"), Validator::AtLeast(1), None, "Default replication factor of new topics."),
    def!("auto.create.topics.enable", Boolean, Some("true"), Validator::Any, None, "Create topics on first metadata request that allows it."),
    def!("delete.topic.enable", Boolean, Some("true"), Validator::Any, None, "Allow DeleteTopics."),
    def!("log.cleanup.policy", List, Some("delete"), Validator::ListOf(&["delete", "compact"]), None, "Default cleanup.policy."),
    def!("compression.type", String, Some("producer"), Validator::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]), None, "Default compression.type."),
    def!("log.cleaner.delete.retention.ms", Long, Some("86400000"), Validator::AtLeast(0), None, "Default delete.retention.ms."),
    def!("log.segment.delete.delay.ms", Long, Some("60000"), Validator::AtLeast(0), None, "Default file.delete.delay.ms."),
    def!("log.flush.interval.messages", Long, Some(LONG_MAX), Validator::AtLeast(1), None, "Messages appended before an fsync."),
    def!("log.flush.interval.ms", Long, None, Validator::AtLeast(0), None, "Time before an fsync; defaults to log.flush.scheduler.interval.ms."),
    def!("log.flush.scheduler.interval.ms", Long, Some(LONG_MAX), Validator::AtLeast(0), None, "How often the flusher checks logs."),
    def!("log.flush.offset.checkpoint.interval.ms", Int, Some("60000"), Validator::AtLeast(0), None, "How often the recovery point checkpoint is written."),
    def!("log.flush.start.offset.checkpoint.interval.ms", Int, Some("60000"), Validator::AtLeast(0), None, "How often the log start offset checkpoint is written."),
    def!("log.index.interval.bytes", Int, Some("4096"), Validator::AtLeast(0), None, "Default index.interval.bytes."),
    def!("log.index.size.max.bytes", Int, Some("10485760"), Validator::AtLeast(4), None, "Default segment.index.bytes."),
    def!("log.cleaner.max.compaction.lag.ms", Long, Some(LONG_MAX), Validator::AtLeast(1), None, "Default max.compaction.lag.ms."),
    def!("log.cleaner.min.compaction.lag.ms", Long, Some("0"), Validator::AtLeast(0), None, "Default min.compaction.lag.ms."),
    def!("log.cleaner.min.cleanable.ratio", Double, Some("0.5"), Validator::Fraction, None, "Default min.cleanable.dirty.ratio."),
    def!("message.max.bytes", Int, Some("1048588"), Validator::AtLeast(0), None, "Default max.message.bytes."),
    def!("log.message.timestamp.after.max.ms", Long, Some("3600000"), Validator::AtLeast(0), None, "Default message.timestamp.after.max.ms (Kafka 4's default: one hour)."),
    def!("log.message.timestamp.before.max.ms", Long, Some(LONG_MAX), Validator::AtLeast(0), None, "Default message.timestamp.before.max.ms."),
    def!("log.message.timestamp.type", String, Some("CreateTime"), Validator::OneOf(&["CreateTime", "LogAppendTime"]), None, "Default message.timestamp.type."),
    def!("min.insync.replicas", Int, Some("1"), Validator::AtLeast(1), None, "Default min.insync.replicas."),
    def!("log.preallocate", Boolean, Some("false"), Validator::Any, None, "Default preallocate."),
    def!("log.retention.bytes", Long, Some("-1"), Validator::Any, None, "Default retention.bytes."),
    def!("log.retention.ms", Long, None, Validator::AtLeast(-1), None, "Default retention.ms; falls back to log.retention.minutes."),
    def!("log.retention.minutes", Int, None, Validator::AtLeast(-1), None, "Retention in minutes; falls back to log.retention.hours."),
    def!("log.retention.hours", Int, Some("168"), Validator::AtLeast(-1), None, "Retention in hours."),
    def!("log.retention.check.interval.ms", Long, Some("300000"), Validator::AtLeast(1), None, "How often retention is enforced."),
    def!("log.segment.bytes", Int, Some("1073741824"), Validator::AtLeast(14), None, "Default segment.bytes."),
    def!("log.roll.jitter.ms", Long, None, Validator::AtLeast(0), None, "Default segment.jitter.ms."),
    def!("log.roll.jitter.hours", Int, Some("0"), Validator::AtLeast(0), None, "Roll jitter in hours."),
    def!("log.roll.ms", Long, None, Validator::AtLeast(1), None, "Default segment.ms; falls back to log.roll.hours."),
    def!("log.roll.hours", Int, Some("168"), Validator::AtLeast(1), None, "Segment age in hours before a roll."),
    def!("unclean.leader.election.enable", Boolean, Some("false"), Validator::Any, None, "Default unclean.leader.election.enable."),
    def!("socket.request.max.bytes", Int, Some("104857600"), Validator::AtLeast(1), None, "Largest request frame accepted."),
    def!("max.connections", Int, Some("2147483647"), Validator::AtLeast(1), None, "Maximum simultaneous client connections."),
    def!("max.connections.per.ip", Int, Some("2147483647"), Validator::AtLeast(0), None, "Maximum simultaneous client connections from one IP address; more are closed at once."),
    def!("connections.max.idle.ms", Long, Some("600000"), Validator::AtLeast(-1), None, "Connections that send no request for this long are closed (-1: never)."),
    def!("queued.max.request.bytes", Long, Some("536870912"), Validator::AtLeast(-1), None, "Memory for requests being read and queued, across all client connections; when it is used up, sockets are not read until memory returns (-1: no bound; Kafka's default is -1, ours bounds it)."),
    def!("num.recovery.threads.per.data.dir", Int, Some("2"), Validator::AtLeast(1), None, "Threads that load (and after a crash recover) the partition logs at startup and close them at shutdown."),
    def!("max.incremental.fetch.session.cache.slots", Int, Some("1000"), Validator::AtLeast(0), None, "Incremental fetch sessions (KIP-227) kept at once."),
    def!("max.request.partition.size.limit", Int, Some("2000"), Validator::AtLeast(1), None, "Most partitions one DescribeTopicPartitions response holds."),
    def!("cluster.id", String, None, Validator::Any, None, "Cluster id; generated on first start when unset."),
    def!("offsets.topic.num.partitions", Int, Some("50"), Validator::AtLeast(1), None, "Partitions of __consumer_offsets (fixed once the topic exists)."),
    def!("offsets.topic.segment.bytes", Int, Some("104857600"), Validator::AtLeast(14), None, "segment.bytes of __consumer_offsets."),
    def!("offsets.retention.minutes", Int, Some("10080"), Validator::AtLeast(1), None, "How long offsets of an empty group are kept."),
    def!("offsets.retention.check.interval.ms", Long, Some("600000"), Validator::AtLeast(1), None, "How often expired offsets are removed."),
    def!("offset.metadata.max.bytes", Int, Some("4096"), Validator::AtLeast(0), None, "Largest metadata string of a committed offset."),
    def!("group.min.session.timeout.ms", Int, Some("6000"), Validator::AtLeast(0), None, "Smallest session timeout a member may ask for."),
    def!("group.max.session.timeout.ms", Int, Some("1800000"), Validator::AtLeast(0), None, "Largest session timeout a member may ask for."),
    def!("group.initial.rebalance.delay.ms", Int, Some("3000"), Validator::AtLeast(0), None, "How long the first rebalance of an empty group waits for more members."),
    def!("group.max.size", Int, Some("2147483647"), Validator::AtLeast(1), None, "Most members a group may have."),
    def!("group.consumer.session.timeout.ms", Int, Some("45000"), Validator::AtLeast(1), None, "Session timeout of KIP-848 consumer group members."),
    def!("group.consumer.heartbeat.interval.ms", Int, Some("5000"), Validator::AtLeast(1), None, "Heartbeat interval given to KIP-848 consumer group members."),
    def!("group.consumer.assignors", List, Some("uniform,range"), Validator::ListOf(&["uniform", "range"]), None, "Server-side assignors; the first is the default."),
    def!("group.consumer.max.size", Int, Some("2147483647"), Validator::AtLeast(1), None, "Most members a KIP-848 consumer group may have."),
    def!("group.share.session.timeout.ms", Int, Some("45000"), Validator::AtLeast(1), None, "Session timeout of share group members (KIP-932)."),
    def!("group.share.heartbeat.interval.ms", Int, Some("5000"), Validator::AtLeast(1), None, "Heartbeat interval given to share group members."),
    def!("group.share.record.lock.duration.ms", Int, Some("30000"), Validator::AtLeast(1000), None, "How long a share group member holds the records it acquired before they are released to others."),
    def!("group.share.min.record.lock.duration.ms", Int, Some("15000"), Validator::AtLeast(1000), None, "Smallest share.record.lock.duration.ms a group may set."),
    def!("group.share.max.record.lock.duration.ms", Int, Some("60000"), Validator::AtLeast(1000), None, "Largest share.record.lock.duration.ms a group may set."),
    def!("group.share.delivery.count.limit", Int, Some("5"), Validator::AtLeast(2), None, "Deliveries of a record to share group members after which it is archived instead of delivered again."),
    def!("group.share.partition.max.record.locks", Int, Some("2000"), Validator::AtLeast(100), None, "Most in-flight records (between the share-partition start and end offsets) of one share-partition."),
    def!("group.share.max.size", Int, Some("200"), Validator::AtLeast(1), None, "Most members a share group may have."),
    def!("group.share.max.share.sessions", Int, Some("2000"), Validator::AtLeast(1), None, "Most share sessions this broker keeps."),
    def!("share.coordinator.state.topic.num.partitions", Int, Some("50"), Validator::AtLeast(1), None, "Partitions of __share_group_state (fixed once the topic exists)."),
    def!("share.coordinator.state.topic.segment.bytes", Int, Some("104857600"), Validator::AtLeast(14), None, "segment.bytes of __share_group_state."),
    def!("process.roles", List, Some("broker,controller"), Validator::ListOf(&["broker", "controller"]), None, "This node's roles: broker (serves clients and hosts partitions), controller (votes in the metadata quorum), or both."),
    def!("controller.quorum.voters", List, None, Validator::Any, None, "The controller quorum as id@host:port,...; unset on a single node, which is then its own one-voter quorum."),
    def!("controller.quorum.bootstrap.servers", List, None, Validator::Any, None, "host:port of controllers a broker-only node contacts when controller.quorum.voters is unset."),
    def!("controller.listener.names", List, Some("CONTROLLER"), Validator::Any, None, "Listener names used by the controller quorum; the first is the one controllers bind and brokers dial."),
    def!("listener.security.protocol.map", List, Some("PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"), Validator::Any, None, "Security protocol of each listener name: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (unlisted names are PLAINTEXT)."),
    def!("inter.broker.listener.name", String, None, Validator::Any, None, "Listener brokers use to replicate from each other; defaults to PLAINTEXT, else the first broker listener."),
    def!("broker.rack", String, None, Validator::Any, None, "Rack of this broker; replicas of a partition are spread over racks when set."),
    def!("replica.lag.time.max.ms", Long, Some("30000"), Validator::AtLeast(1), None, "A follower that has not caught up with the leader for this long leaves the ISR."),
    def!("replica.fetch.max.bytes", Int, Some("1048576"), Validator::AtLeast(0), None, "Bytes a follower asks for per partition in one fetch."),
    def!("replica.fetch.response.max.bytes", Int, Some("10485760"), Validator::AtLeast(0), None, "Bytes a follower asks for in one fetch response."),
    def!("replica.fetch.wait.max.ms", Int, Some("500"), Validator::AtLeast(0), None, "How long a follower's fetch waits at the leader for new data."),
    def!("replica.fetch.min.bytes", Int, Some("1"), Validator::AtLeast(1), None, "Bytes a follower's fetch waits for."),
    def!("replica.fetch.backoff.ms", Int, Some("1000"), Validator::AtLeast(0), None, "Pause after a failed follower fetch."),
    def!("replica.socket.timeout.ms", Int, Some("30000"), Validator::AtLeast(1), None, "Timeout of inter-broker requests."),
    def!("broker.session.timeout.ms", Int, Some("9000"), Validator::AtLeast(1), None, "A broker without a heartbeat to the controller for this long is fenced."),
    def!("broker.heartbeat.interval.ms", Int, Some("2000"), Validator::AtLeast(1), None, "How often a broker heartbeats to the active controller."),
    def!("controller.quorum.election.timeout.ms", Int, Some("1000"), Validator::AtLeast(1), None, "A voter that hears nothing from a leader for this long (randomised up to twice it) starts an election."),
    def!("offsets.topic.replication.factor", Int, None, Validator::AtLeast(1), None, "Replication factor of __consumer_offsets; defaults to 1 on a one-voter node and 3 in a cluster (Kafka's default)."),
    def!("producer.id.expiration.ms", Int, Some("86400000"), Validator::AtLeast(1), None, "How long an idempotent producer's state is kept after its last write."),
    def!("transaction.state.log.num.partitions", Int, Some("50"), Validator::AtLeast(1), None, "Partitions of __transaction_state (fixed once the topic exists)."),
    def!("transaction.state.log.replication.factor", Int, None, Validator::AtLeast(1), None, "Replication factor of __transaction_state; defaults to 1 on a one-voter node and 3 in a cluster (Kafka's default)."),
    def!("transaction.state.log.min.isr", Int, Some("2"), Validator::AtLeast(1), None, "min.insync.replicas of __transaction_state (at most its replication factor)."),
    def!("transaction.state.log.segment.bytes", Int, Some("104857600"), Validator::AtLeast(14), None, "segment.bytes of __transaction_state."),
    def!("transaction.max.timeout.ms", Int, Some("900000"), Validator::AtLeast(1), None, "Largest transaction timeout a producer may ask for."),
    def!("transaction.abort.timed.out.transaction.cleanup.interval.ms", Int, Some("10000"), Validator::AtLeast(1), None, "How often transactions past their timeout are looked for and aborted."),
    def!("transaction.partition.verification.enable", Boolean, Some("true"), Validator::Any, None, "Verify with the transaction coordinator that a transactional write that begins a transaction on a partition is part of the producer's ongoing transaction (KIP-890)."),
    def!("transactional.id.expiration.ms", Int, Some("604800000"), Validator::AtLeast(1), None, "A transactional id whose last transaction is complete and that has not been used for this long is forgotten (its producer id with it)."),
    def!("transaction.remove.expired.transaction.cleanup.interval.ms", Int, Some("3600000"), Validator::AtLeast(1), None, "How often expired transactional ids are looked for and removed."),
];

/// Group configs (Kafka's `GroupConfig`, the GROUP config resource): per-group overrides of the
/// broker's `group.share.*` settings. The consumer-group ones (`consumer.*`) are not built.
pub static GROUP_CONFIGS: &[ConfigDef] = &[
    def!(
        "share.session.timeout.ms",
        Int,
        Some("45000"),
        Validator::AtLeast(1),
        Some("group.share.session.timeout.ms"),
        "Session timeout of the share group's members."
    ),
    def!(
        "share.heartbeat.interval.ms",
        Int,
        Some("5000"),
        Validator::AtLeast(1),
        Some("group.share.heartbeat.interval.ms"),
        "Heartbeat interval given to the share group's members."
    ),
    def!(
        "share.record.lock.duration.ms",
        Int,
        Some("30000"),
        Validator::AtLeast(1000),
        Some("group.share.record.lock.duration.ms"),
        "How long a member holds the records it acquired (within group.share.min/max.record.lock.duration.ms)."
    ),
    def!(
        "share.auto.offset.reset",
        String,
        Some("latest"),
        Validator::Any,
        None,
        "Where a share group starts on a partition it has no state for: latest, earliest or by_duration:<ISO-8601 duration>."
    ),
    def!(
        "share.isolation.level",
        String,
        Some("read_uncommitted"),
        Validator::OneOf(&["read_uncommitted", "read_committed"]),
        None,
        "Whether the share group reads records of open and aborted transactions."
    ),
];

pub fn group_config_def(name: &str) -> Option<&'static ConfigDef> {
    GROUP_CONFIGS.iter().find(|d| d.name == name)
}

/// Parses `by_duration:` durations of `share.auto.offset.reset` (ISO-8601 `PnDTnHnMn.nS`, as
/// Java's `Duration.parse`).
pub fn parse_iso_duration(text: &str) -> Option<std::time::Duration> {
    let rest = text.strip_prefix('P').or_else(|| text.strip_prefix('p'))?;
    let (days, time) = match rest.split_once(['T', 't']) {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    let mut millis: f64 = 0.0;
    let mut any = false;
    if !days.is_empty() {
        let n: f64 = days.strip_suffix(['D', 'd'])?.parse().ok()?;
        millis += n * 86_400_000.0;
        any = true;
    }
    if let Some(mut time) = time {
        if time.is_empty() {
            return None;
        }
        for (unit, scale) in [('H', 3_600_000.0), ('M', 60_000.0), ('S', 1_000.0)] {
            if let Some(at) = time.find([unit, unit.to_ascii_lowercase()]) {
                let n: f64 = time[..at].parse().ok()?;
                millis += n * scale;
                time = &time[at + 1..];
                any = true;
            }
        }
        if !time.is_empty() {
            return None;
        }
    }
    (any && millis.is_finite() && millis >= 0.0)
        .then(|| std::time::Duration::from_millis(millis as u64))
}

/// Validates a group's config overrides against the broker's limits.
pub fn validate_group_configs(
    broker: &BrokerConfig,
    configs: &BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    for (name, value) in configs {
        let def = group_config_def(name).ok_or_else(|| ConfigError::Unknown(name.clone()))?;
        validate_value(def, value)?;
        let invalid = |reason: String| ConfigError::Invalid {
            name: name.clone(),
            value: value.clone(),
            reason,
        };
        match name.as_str() {
            "share.record.lock.duration.ms" => {
                let (min, max) = (
                    broker.share.min_record_lock_duration_ms,
                    broker.share.max_record_lock_duration_ms,
                );
                let ms: i64 = value.trim().parse().unwrap_or(-1);
                if ms < min as i64 || ms > max as i64 {
                    return Err(invalid(format!(
                        "must be within group.share.min.record.lock.duration.ms ({min}) and group.share.max.record.lock.duration.ms ({max})"
                    )));
                }
            }
            "share.auto.offset.reset" => {
                let value = value.trim();
                let ok = matches!(value, "latest" | "earliest")
                    || value
                        .strip_prefix("by_duration:")
                        .and_then(parse_iso_duration)
                        .is_some();
                if !ok {
                    return Err(invalid(
                        "must be latest, earliest or by_duration:<ISO-8601 duration>".into(),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Every group config with its effective value: the group's override, else the broker's.
pub fn describe_group_configs(
    broker: &BrokerConfig,
    overrides: &BTreeMap<String, String>,
) -> Vec<DescribedConfig> {
    GROUP_CONFIGS
        .iter()
        .map(|def| {
            let mut synonyms = Vec::new();
            if let Some(v) = overrides.get(def.name) {
                synonyms.push((
                    def.name.to_string(),
                    Some(v.clone()),
                    ConfigSource::GroupOverride,
                ));
            }
            let fallback = match def.broker_synonym {
                Some(synonym) => {
                    let current = broker.values.get(synonym).cloned().unwrap_or(ConfigValue {
                        value: def.default.map(str::to_string),
                        source: ConfigSource::Default,
                    });
                    synonyms.push((synonym.to_string(), current.value.clone(), current.source));
                    current
                }
                None => ConfigValue {
                    value: def.default.map(str::to_string),
                    source: ConfigSource::Default,
                },
            };
            overridable(
                def,
                overrides,
                ConfigSource::GroupOverride,
                fallback,
                synonyms,
            )
        })
        .collect()
}

/// Properties of Kafka's stock `server.properties` that tune its JVM thread pools and socket
/// buffers, or belong to features not built yet. Accepted so existing config files load; each
/// one set is named in a warning at startup.
pub static ACCEPTED_WITHOUT_EFFECT: &[&str] = &[
    "num.network.threads",
    "num.io.threads",
    "socket.send.buffer.bytes",
    "socket.receive.buffer.bytes",
    "num.replica.fetchers",
    "log.cleaner.threads",
    "log.cleaner.enable",
    "queued.max.requests",
    "share.coordinator.state.topic.replication.factor",
    "share.coordinator.state.topic.min.isr",
    // JVM-specific TLS plumbing: rustls picks its own key and trust managers and randomness.
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "ssl.secure.random.implementation",
    // Kafka ignores an unprefixed one on brokers too (with a warning): a broker's JAAS configs
    // are per listener and mechanism.
    "sasl.jaas.config",
];

/// Environment variables of Kafka's own images that configure the JVM or the image, not the
/// broker; they are never turned into properties.
const NOT_PROPERTIES: &[&str] = &[
    "VERSION",
    "HOME",
    "OPTS",
    "HEAP_OPTS",
    "JVM_PERFORMANCE_OPTS",
    "JMX_OPTS",
    "GC_LOG_OPTS",
    "LOG4J_OPTS",
    "LOG4J_LOGGERS",
    "LOG4J_ROOT_LOGLEVEL",
    "TOOLS_LOG4J_LOGLEVEL",
    "DEBUG",
    "LOG_DIR",
];

/// Properties from environment variables, following the Kafka images' convention:
/// `KAFKA_ADVERTISED_LISTENERS` -> `advertised.listeners` (prefix dropped, lower case, `_` -> `.`,
/// `__` -> `_`, `___` -> `-`); `SLUICE_*` likewise and wins over `KAFKA_*`. `KAFKA_CLUSTER_ID`
/// (the image's format-step variable) becomes `cluster.id`.
pub fn properties_from_env(
    vars: impl IntoIterator<Item = (String, String)>,
) -> BTreeMap<String, String> {
    let mut kafka = BTreeMap::new();
    let mut sluice = BTreeMap::new();
    for (name, value) in vars {
        let (target, rest) = if let Some(rest) = name.strip_prefix("SLUICE_") {
            (&mut sluice, rest)
        } else if let Some(rest) = name.strip_prefix("KAFKA_") {
            if NOT_PROPERTIES.contains(&rest) {
                continue;
            }
            (&mut kafka, rest)
        } else {
            continue;
        };
        if rest.is_empty() {
            continue;
        }
        target.insert(env_name_to_property(rest), value);
    }
    kafka.extend(sluice);
    kafka
}

fn env_name_to_property(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    // Longest runs first, through placeholders that cannot occur in a variable name.
    lower
        .replace("___", "\u{1}")
        .replace("__", "\u{2}")
        .replace('_', ".")
        .replace("\u{1}", "-")
        .replace("\u{2}", "_")
}

pub fn topic_config_def(name: &str) -> Option<&'static ConfigDef> {
    TOPIC_CONFIGS.iter().find(|d| d.name == name)
}

pub fn broker_config_def(name: &str) -> Option<&'static ConfigDef> {
    all_broker_configs().find(|d| d.name == name)
}

/// Every broker property: the general ones and the security ones.
pub fn all_broker_configs() -> impl Iterator<Item = &'static ConfigDef> {
    BROKER_CONFIGS.iter().chain(SECURITY_CONFIGS)
}

/// Checks `value` against `def`'s type and validator.
pub fn validate_value(def: &ConfigDef, value: &str) -> Result<(), ConfigError> {
    let name = def.name;
    let value = value.trim();
    let number = match def.kind {
        ConfigType::Boolean => {
            return match value.to_ascii_lowercase().as_str() {
                "true" | "false" => Ok(()),
                _ => Err(invalid(name, value, "expected true or false")),
            };
        }
        ConfigType::Int => Some(
            value
                .parse::<i32>()
                .map_err(|_| invalid(name, value, "expected a 32-bit integer"))? as i64,
        ),
        ConfigType::Long => Some(
            value
                .parse::<i64>()
                .map_err(|_| invalid(name, value, "expected a 64-bit integer"))?,
        ),
        ConfigType::Double => {
            let parsed = value
                .parse::<f64>()
                .map_err(|_| invalid(name, value, "expected a number"))?;
            if matches!(def.validator, Validator::Fraction) && !(0.0..=1.0).contains(&parsed) {
                return Err(invalid(name, value, "must be between 0 and 1"));
            }
            None
        }
        ConfigType::String | ConfigType::List | ConfigType::Password => None,
    };
    match def.validator {
        Validator::AtLeast(min) => {
            if number.is_some_and(|n| n < min) {
                return Err(invalid(name, value, format!("must be at least {min}")));
            }
        }
        Validator::OneOf(allowed) => {
            if !allowed.contains(&value) {
                return Err(invalid(name, value, format!("must be one of {allowed:?}")));
            }
        }
        Validator::ListOf(allowed) => {
            for item in value.split(',').map(str::trim) {
                if !allowed.contains(&item) {
                    return Err(invalid(
                        name,
                        value,
                        format!("items must be in {allowed:?}"),
                    ));
                }
            }
        }
        Validator::Any | Validator::Fraction => {}
    }
    Ok(())
}

/// A client listener: name and address to bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerConfig {
    pub name: String,
    pub host: String,
    pub port: u16,
    /// From `listener.security.protocol.map` (a name it does not list is PLAINTEXT).
    pub protocol: SecurityProtocol,
}

impl ListenerConfig {
    fn parse_list(property: &str, value: &str) -> Result<Vec<Self>, ConfigError> {
        let mut out = Vec::new();
        for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, address) = item
                .split_once("://")
                .ok_or_else(|| invalid(property, item, "expected NAME://host:port"))?;
            let (host, port) = address
                .rsplit_once(':')
                .ok_or_else(|| invalid(property, item, "expected NAME://host:port"))?;
            let port = port
                .parse::<u16>()
                .map_err(|_| invalid(property, item, "port must be 0-65535"))?;
            let host = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            out.push(Self {
                name: name.to_string(),
                host,
                port,
                protocol: SecurityProtocol::Plaintext,
            });
        }
        if out.is_empty() {
            return Err(invalid(property, value, "no listener given"));
        }
        Ok(out)
    }

    /// The socket address to bind (empty host means all interfaces).
    pub fn bind_address(&self) -> Result<SocketAddr, ConfigError> {
        let host = if self.host.is_empty() {
            "0.0.0.0"
        } else {
            &self.host
        };
        let text = if host.contains(':') {
            format!("[{host}]:{}", self.port)
        } else {
            format!("{host}:{}", self.port)
        };
        text.parse::<SocketAddr>()
            .or_else(|_| {
                std::net::ToSocketAddrs::to_socket_addrs(&text)
                    .ok()
                    .and_then(|mut addrs| addrs.next())
                    .ok_or(())
            })
            .map_err(|_| invalid("listeners", &text, "cannot resolve host"))
    }
}

/// One controller quorum voter from `controller.quorum.voters`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voter {
    pub id: i32,
    pub host: String,
    pub port: u16,
}

/// This node's place in the cluster: roles, the controller quorum, inter-broker settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    pub broker_role: bool,
    pub controller_role: bool,
    /// The quorum's voters. On a single node left unconfigured: this node alone, with no
    /// address (it never talks to another voter).
    pub voters: Vec<Voter>,
    /// Controller addresses a broker-only node contacts when `voters` is empty.
    pub bootstrap_servers: Vec<(String, u16)>,
    /// The listener controllers bind for quorum traffic (the first controller listener name).
    pub controller_listener: String,
    /// The listener followers fetch from and brokers advertise to each other.
    pub inter_broker_listener: String,
    pub rack: Option<String>,
    pub replica_lag_time_max_ms: i64,
    pub replica_fetch_max_bytes: i32,
    pub replica_fetch_response_max_bytes: i32,
    pub replica_fetch_wait_max_ms: i32,
    pub replica_fetch_min_bytes: i32,
    pub replica_fetch_backoff_ms: u64,
    pub replica_socket_timeout_ms: u64,
    pub broker_session_timeout_ms: i64,
    pub broker_heartbeat_interval_ms: u64,
    pub election_timeout_ms: u64,
    pub offsets_topic_replication_factor: i32,
    pub transaction_state_replication_factor: i32,
}

impl ClusterConfig {
    /// One node that is the whole cluster: the zero-configuration default.
    pub fn is_single_node(&self) -> bool {
        self.voters.len() <= 1 && self.broker_role && self.controller_role
    }

    fn parse_voters(value: &str) -> Result<Vec<Voter>, ConfigError> {
        let name = "controller.quorum.voters";
        let mut voters: Vec<Voter> = Vec::new();
        for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let bad = || invalid(name, item, "expected id@host:port");
            let (id, address) = item.split_once('@').ok_or_else(bad)?;
            let (host, port) = address.rsplit_once(':').ok_or_else(bad)?;
            let voter = Voter {
                id: id.parse().map_err(|_| bad())?,
                host: host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string(),
                port: port.parse().map_err(|_| bad())?,
            };
            if voter.id < 0 || voters.iter().any(|v| v.id == voter.id) {
                return Err(invalid(name, item, "voter ids must be distinct and >= 0"));
            }
            voters.push(voter);
        }
        Ok(voters)
    }

    fn parse_bootstrap(value: &str) -> Result<Vec<(String, u16)>, ConfigError> {
        let name = "controller.quorum.bootstrap.servers";
        value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| {
                let (host, port) = item
                    .rsplit_once(':')
                    .ok_or_else(|| invalid(name, item, "expected host:port"))?;
                let port = port
                    .parse()
                    .map_err(|_| invalid(name, item, "expected host:port"))?;
                Ok((host.to_string(), port))
            })
            .collect()
    }

    /// Kafka's KRaft checks, in its words where it has them.
    fn from_values(
        get: &dyn Fn(&str) -> Option<String>,
        int: &dyn Fn(&str) -> i64,
        node_id: i32,
        listeners: &[ListenerConfig],
        explicit_inter_broker_protocol: bool,
    ) -> Result<Self, ConfigError> {
        let roles_text = get("process.roles").unwrap_or_default();
        let roles: Vec<&str> = roles_text.split(',').map(str::trim).collect();
        let broker_role = roles.contains(&"broker");
        let controller_role = roles.contains(&"controller");
        let controller_names: Vec<String> = get("controller.listener.names")
            .unwrap_or_default()
            .split(',')
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        let controller_listener = controller_names
            .first()
            .cloned()
            .ok_or_else(|| invalid("controller.listener.names", "", "no listener name given"))?;
        let voters = match get("controller.quorum.voters") {
            Some(text) => Self::parse_voters(&text)?,
            None => Vec::new(),
        };
        let bootstrap_servers = match get("controller.quorum.bootstrap.servers") {
            Some(text) => Self::parse_bootstrap(&text)?,
            None => Vec::new(),
        };
        let is_controller_listener = |l: &ListenerConfig| controller_names.contains(&l.name);
        let voters_text = get("controller.quorum.voters").unwrap_or_default();
        if controller_role {
            if voters.is_empty() && !bootstrap_servers.is_empty() {
                return Err(invalid(
                    "controller.quorum.bootstrap.servers",
                    &get("controller.quorum.bootstrap.servers").unwrap_or_default(),
                    "controllers need a static quorum: set controller.quorum.voters (dynamic quorums, KIP-853, are not supported)",
                ));
            }
            if !voters.is_empty() && !voters.iter().any(|v| v.id == node_id) {
                return Err(invalid(
                    "controller.quorum.voters",
                    &voters_text,
                    format!("node.id {node_id} has the controller role but is not a voter"),
                ));
            }
            if voters.len() > 1 && !listeners.iter().any(|l| l.name == controller_listener) {
                return Err(invalid(
                    "listeners",
                    "",
                    format!(
                        "a controller in a multi-voter quorum needs a {controller_listener} listener (controller.listener.names)"
                    ),
                ));
            }
        } else if voters.iter().any(|v| v.id == node_id) {
            return Err(invalid(
                "process.roles",
                &roles_text,
                format!(
                    "node.id {node_id} is a voter in controller.quorum.voters, so process.roles must include controller"
                ),
            ));
        }
        if broker_role && !controller_role && voters.is_empty() && bootstrap_servers.is_empty() {
            return Err(invalid(
                "controller.quorum.voters",
                "",
                "a broker-only node needs controller.quorum.voters or controller.quorum.bootstrap.servers",
            ));
        }
        if !broker_role && listeners.iter().any(|l| !is_controller_listener(l)) {
            return Err(invalid(
                "listeners",
                "",
                "a controller-only node may only have controller listeners",
            ));
        }
        if broker_role && listeners.iter().all(is_controller_listener) {
            return Err(invalid(
                "listeners",
                "",
                "a broker needs a listener that is not a controller listener",
            ));
        }
        let inter_broker_protocol = get("security.inter.broker.protocol")
            .filter(|_| get("inter.broker.listener.name").is_none())
            .and_then(|p| SecurityProtocol::from_name(&p));
        let inter_broker_listener = match get("inter.broker.listener.name") {
            Some(_) if explicit_inter_broker_protocol => {
                return Err(invalid(
                    "inter.broker.listener.name",
                    &get("inter.broker.listener.name").unwrap_or_default(),
                    "only one of inter.broker.listener.name and security.inter.broker.protocol may be set",
                ));
            }
            None if explicit_inter_broker_protocol => {
                let protocol = inter_broker_protocol.unwrap_or(SecurityProtocol::Plaintext);
                listeners
                    .iter()
                    .filter(|l| !is_controller_listener(l))
                    .find(|l| l.protocol == protocol)
                    .map(|l| l.name.clone())
                    .ok_or_else(|| {
                        invalid(
                            "security.inter.broker.protocol",
                            protocol.name(),
                            "no broker listener has this security protocol",
                        )
                    })?
            }
            Some(name) => {
                if !listeners.iter().any(|l| l.name == name) || controller_names.contains(&name) {
                    return Err(invalid(
                        "inter.broker.listener.name",
                        &name,
                        "must name a broker listener in listeners",
                    ));
                }
                name
            }
            None => listeners
                .iter()
                .filter(|l| !is_controller_listener(l))
                .find(|l| l.name == "PLAINTEXT")
                .or_else(|| listeners.iter().find(|l| !is_controller_listener(l)))
                .map(|l| l.name.clone())
                .unwrap_or_default(),
        };
        let cluster_of_one = voters.len() <= 1 && broker_role && controller_role;
        Ok(Self {
            broker_role,
            controller_role,
            voters,
            bootstrap_servers,
            controller_listener,
            inter_broker_listener,
            rack: get("broker.rack").filter(|r| !r.is_empty()),
            replica_lag_time_max_ms: int("replica.lag.time.max.ms"),
            replica_fetch_max_bytes: int("replica.fetch.max.bytes") as i32,
            replica_fetch_response_max_bytes: int("replica.fetch.response.max.bytes") as i32,
            replica_fetch_wait_max_ms: int("replica.fetch.wait.max.ms") as i32,
            replica_fetch_min_bytes: int("replica.fetch.min.bytes") as i32,
            replica_fetch_backoff_ms: int("replica.fetch.backoff.ms").max(0) as u64,
            replica_socket_timeout_ms: int("replica.socket.timeout.ms").max(1) as u64,
            broker_session_timeout_ms: int("broker.session.timeout.ms"),
            broker_heartbeat_interval_ms: int("broker.heartbeat.interval.ms").max(1) as u64,
            election_timeout_ms: int("controller.quorum.election.timeout.ms").max(1) as u64,
            offsets_topic_replication_factor: match get("offsets.topic.replication.factor") {
                Some(v) => v.trim().parse().unwrap_or(3),
                None if cluster_of_one => 1,
                None => 3,
            },
            transaction_state_replication_factor: match get(
                "transaction.state.log.replication.factor",
            ) {
                Some(v) => v.trim().parse().unwrap_or(3),
                None if cluster_of_one => 1,
                None => 3,
            },
        })
    }
}

/// The process-wide configuration. Every value has been validated; topic defaults are kept as
/// the effective broker-level values of each topic config's synonym.
#[derive(Debug, Clone)]
pub struct BrokerConfig {
    pub node_id: i32,
    pub listeners: Vec<ListenerConfig>,
    pub advertised_listeners: Vec<ListenerConfig>,
    /// The `listener.name.<listener>.` security properties that were set.
    pub listener_overrides: ListenerOverrides,
    /// `listener.security.protocol.map`, for listeners this node connects to without
    /// binding them (another node's controller listener).
    pub listener_protocols: BTreeMap<String, SecurityProtocol>,
    pub log_dir: PathBuf,
    pub num_partitions: i32,
    pub default_replication_factor: i32,
    pub auto_create_topics_enable: bool,
    pub delete_topic_enable: bool,
    pub transaction_partition_verification: bool,
    pub retention_check_interval_ms: u64,
    pub flush_scheduler_interval_ms: u64,
    pub checkpoint_interval_ms: u64,
    pub socket_request_max_bytes: usize,
    pub max_connections: usize,
    pub max_connections_per_ip: usize,
    /// `None`: idle connections are kept.
    pub connections_max_idle: Option<std::time::Duration>,
    /// `None`: no bound on request memory.
    pub queued_max_request_bytes: Option<usize>,
    pub max_request_partition_size_limit: i32,
    pub fetch_session_cache_slots: usize,
    pub recovery_threads: usize,
    pub cluster_id: Option<String>,
    pub offsets_topic_partitions: i32,
    pub offsets_topic_segment_bytes: i32,
    pub transaction_state_partitions: i32,
    pub transaction_state_segment_bytes: i32,
    pub transaction_state_min_isr: i32,
    pub transaction_max_timeout_ms: i32,
    pub transaction_abort_interval_ms: u64,
    pub transactional_id_expiration_ms: i64,
    pub transaction_remove_expired_interval_ms: u64,
    pub offsets_retention_ms: i64,
    pub offsets_retention_check_interval_ms: u64,
    pub offset_metadata_max_bytes: usize,
    pub group_min_session_timeout_ms: i32,
    pub group_max_session_timeout_ms: i32,
    pub group_initial_rebalance_delay_ms: i32,
    pub group_max_size: usize,
    pub consumer_session_timeout_ms: i32,
    pub consumer_heartbeat_interval_ms: i32,
    pub consumer_assignors: Vec<String>,
    pub consumer_max_size: usize,
    pub share: ShareGroupDefaults,
    pub producer_id_expiration_ms: i64,
    pub cluster: ClusterConfig,
    /// Every known broker property with its effective value and whether it was set explicitly.
    pub values: BTreeMap<&'static str, ConfigValue>,
    /// Effective default of each topic config, keyed by the topic config name.
    pub topic_defaults: BTreeMap<&'static str, ConfigValue>,
    /// Properties from [`ACCEPTED_WITHOUT_EFFECT`] that were set.
    pub without_effect: Vec<String>,
}

/// The broker's `group.share.*` settings: the defaults of every share group (KIP-932).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareGroupDefaults {
    pub session_timeout_ms: i32,
    pub heartbeat_interval_ms: i32,
    pub record_lock_duration_ms: i32,
    pub min_record_lock_duration_ms: i32,
    pub max_record_lock_duration_ms: i32,
    pub delivery_count_limit: i16,
    pub max_record_locks: usize,
    pub max_size: usize,
    pub max_sessions: usize,
    pub state_topic_partitions: i32,
    pub state_topic_segment_bytes: i32,
}

/// An effective value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigValue {
    pub value: Option<String>,
    pub source: ConfigSource,
}

/// Where a config value comes from, in Kafka's DescribeConfigs terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    TopicOverride,
    /// A dynamic group config (Kafka's DYNAMIC_GROUP_CONFIG).
    GroupOverride,
    StaticBroker,
    Default,
}

impl BrokerConfig {
    /// A security property as one listener sees it: its `listener.name.<listener>.` value,
    /// else the broker-wide value or default.
    pub fn listener_value(&self, listener: &str, property: &str) -> Option<String> {
        self.listener_overrides
            .get(listener, property)
            .map(str::to_string)
            .or_else(|| self.values.get(property).and_then(|v| v.value.clone()))
    }

    /// The security protocol of the listener named `name` (a name the map does not list is
    /// PLAINTEXT), whether or not this node binds it.
    pub fn protocol_of(&self, name: &str) -> SecurityProtocol {
        self.listener_protocols
            .get(name)
            .copied()
            .unwrap_or(SecurityProtocol::Plaintext)
    }

    /// The listener configured under `name`.
    pub fn listener(&self, name: &str) -> Option<&ListenerConfig> {
        self.listeners.iter().find(|l| l.name == name)
    }

    /// Builds the configuration from file properties overlaid with `--override`s.
    pub fn from_properties(props: &BTreeMap<String, String>) -> Result<Self, ConfigError> {
        let mut props = props.clone();
        let mut listener_overrides = ListenerOverrides::take_from(&mut props)?;
        let props = &props;
        let mut without_effect = Vec::new();
        for (name, value) in props {
            if ACCEPTED_WITHOUT_EFFECT.contains(&name.as_str()) {
                without_effect.push(name.clone());
                continue;
            }
            let def = broker_config_def(name).ok_or_else(|| ConfigError::Unknown(name.clone()))?;
            validate_value(def, value)?;
        }
        let values: BTreeMap<&'static str, ConfigValue> = all_broker_configs()
            .map(|def| {
                let value = match props.get(def.name) {
                    Some(v) => ConfigValue {
                        value: Some(v.trim().to_string()),
                        source: ConfigSource::StaticBroker,
                    },
                    None => ConfigValue {
                        value: def.default.map(str::to_string),
                        source: ConfigSource::Default,
                    },
                };
                (def.name, value)
            })
            .collect();
        let get = |name: &str| values.get(name).and_then(|v| v.value.clone());
        let explicit = |name: &str| props.get(name).map(|v| v.trim().to_string());
        let int = |name: &str| -> i64 { get(name).and_then(|v| v.parse().ok()).unwrap_or(0) };

        let node_id = match explicit("node.id").or_else(|| explicit("broker.id")) {
            Some(v) => v
                .parse::<i32>()
                .map_err(|_| invalid("node.id", &v, "not an integer"))?,
            None => 1,
        };
        let listeners_text = get("listeners").unwrap_or_default();
        let mut listeners = ListenerConfig::parse_list("listeners", &listeners_text)?;
        for listener in &listeners {
            listener.bind_address()?;
        }
        let protocols = security::parse_protocol_map(
            &get("listener.security.protocol.map").unwrap_or_default(),
        )?;
        let protocol_of = |name: &str| {
            protocols
                .get(name)
                .copied()
                .unwrap_or(SecurityProtocol::Plaintext)
        };
        for listener in &mut listeners {
            listener.protocol = protocol_of(&listener.name);
        }
        if let Some(path) = explicit("java.security.auth.login.config").filter(|p| !p.is_empty()) {
            let text = std::fs::read_to_string(&path).map_err(|e| {
                invalid(
                    "java.security.auth.login.config",
                    &path,
                    format!("cannot read the JAAS file: {e}"),
                )
            })?;
            let sections = crate::config::jaas::parse_file(&text)
                .map_err(|e| invalid("java.security.auth.login.config", &path, e.to_string()))?;
            let names = listeners
                .iter()
                .map(|l| l.name.as_str())
                .chain(protocols.keys().map(String::as_str));
            listener_overrides.add_static_jaas(&sections, names);
        }
        let cluster = ClusterConfig::from_values(
            &get,
            &int,
            node_id,
            &listeners,
            explicit("security.inter.broker.protocol").is_some(),
        )?;
        let mut advertised_listeners = match explicit("advertised.listeners") {
            Some(text) => ListenerConfig::parse_list("advertised.listeners", &text)?,
            None => listeners.clone(),
        };
        for listener in &mut advertised_listeners {
            listener.protocol = protocol_of(&listener.name);
        }
        let log_dir = match explicit("log.dirs") {
            Some(dirs) => {
                let listed: Vec<&str> = dirs
                    .split(',')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .collect();
                match listed.as_slice() {
                    [one] => PathBuf::from(one),
                    [] => return Err(invalid("log.dirs", &dirs, "no directory given")),
                    // JBOD (several log directories) is not built: ignoring all but one would
                    // hide the others' data.
                    _ => {
                        return Err(invalid(
                            "log.dirs",
                            &dirs,
                            "Sluice keeps its logs in one directory; give exactly one",
                        ));
                    }
                }
            }
            None => PathBuf::from(get("log.dir").unwrap_or_else(|| "./data".into())),
        };

        // Kafka's fallbacks: ms, else minutes, else hours.
        let retention_ms = explicit("log.retention.ms")
            .or_else(|| explicit("log.retention.minutes").map(|m| scaled_or_unlimited(&m, 60_000)))
            .unwrap_or_else(|| {
                scaled_or_unlimited(&get("log.retention.hours").unwrap_or_default(), 3_600_000)
            });
        let roll_ms = explicit("log.roll.ms").unwrap_or_else(|| {
            scaled_or_unlimited(&get("log.roll.hours").unwrap_or_default(), 3_600_000)
        });
        let roll_jitter_ms = explicit("log.roll.jitter.ms").unwrap_or_else(|| {
            scaled_or_unlimited(&get("log.roll.jitter.hours").unwrap_or_default(), 3_600_000)
        });
        let flush_ms = explicit("log.flush.interval.ms")
            .or_else(|| get("log.flush.scheduler.interval.ms"))
            .unwrap_or_else(|| LONG_MAX.into());

        let mut topic_defaults = BTreeMap::new();
        for def in TOPIC_CONFIGS {
            let synonym = def.broker_synonym.unwrap_or(def.name);
            let derived = match synonym {
                "log.retention.ms" => Some(retention_ms.clone()),
                "log.roll.ms" => Some(roll_ms.clone()),
                "log.roll.jitter.ms" => Some(roll_jitter_ms.clone()),
                "log.flush.interval.ms" => Some(flush_ms.clone()),
                _ => None,
            };
            let derived_is_explicit = match synonym {
                "log.retention.ms" => [
                    "log.retention.ms",
                    "log.retention.minutes",
                    "log.retention.hours",
                ]
                .iter()
                .any(|n| props.contains_key(*n)),
                "log.roll.ms" => {
                    props.contains_key("log.roll.ms") || props.contains_key("log.roll.hours")
                }
                "log.roll.jitter.ms" => {
                    props.contains_key("log.roll.jitter.ms")
                        || props.contains_key("log.roll.jitter.hours")
                }
                "log.flush.interval.ms" => {
                    props.contains_key("log.flush.interval.ms")
                        || props.contains_key("log.flush.scheduler.interval.ms")
                }
                other => props.contains_key(other),
            };
            let value = derived
                .or_else(|| get(synonym))
                .or_else(|| def.default.map(str::to_string));
            topic_defaults.insert(
                def.name,
                ConfigValue {
                    value,
                    source: if derived_is_explicit {
                        ConfigSource::StaticBroker
                    } else {
                        ConfigSource::Default
                    },
                },
            );
        }

        Ok(Self {
            node_id,
            listeners,
            advertised_listeners,
            listener_overrides,
            listener_protocols: protocols,
            log_dir,
            num_partitions: int("num.partitions") as i32,
            default_replication_factor: int("default.replication.factor") as i32,
            auto_create_topics_enable: get("auto.create.topics.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            delete_topic_enable: get("delete.topic.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            transaction_partition_verification: get("transaction.partition.verification.enable")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            retention_check_interval_ms: int("log.retention.check.interval.ms").max(1) as u64,
            flush_scheduler_interval_ms: int("log.flush.scheduler.interval.ms").max(0) as u64,
            checkpoint_interval_ms: int("log.flush.offset.checkpoint.interval.ms").max(1) as u64,
            socket_request_max_bytes: int("socket.request.max.bytes") as usize,
            max_connections: int("max.connections") as usize,
            max_connections_per_ip: int("max.connections.per.ip").max(0) as usize,
            connections_max_idle: u64::try_from(int("connections.max.idle.ms"))
                .ok()
                .map(std::time::Duration::from_millis),
            queued_max_request_bytes: usize::try_from(int("queued.max.request.bytes")).ok(),
            max_request_partition_size_limit: int("max.request.partition.size.limit") as i32,
            fetch_session_cache_slots: int("max.incremental.fetch.session.cache.slots").max(0)
                as usize,
            recovery_threads: int("num.recovery.threads.per.data.dir").max(1) as usize,
            cluster_id: explicit("cluster.id"),
            offsets_topic_partitions: int("offsets.topic.num.partitions") as i32,
            offsets_topic_segment_bytes: int("offsets.topic.segment.bytes") as i32,
            transaction_state_partitions: int("transaction.state.log.num.partitions") as i32,
            transaction_state_segment_bytes: int("transaction.state.log.segment.bytes") as i32,
            transaction_state_min_isr: int("transaction.state.log.min.isr") as i32,
            transaction_max_timeout_ms: int("transaction.max.timeout.ms") as i32,
            transaction_abort_interval_ms: int(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            )
            .max(1) as u64,
            transactional_id_expiration_ms: int("transactional.id.expiration.ms"),
            transaction_remove_expired_interval_ms: int(
                "transaction.remove.expired.transaction.cleanup.interval.ms",
            )
            .max(1) as u64,
            offsets_retention_ms: int("offsets.retention.minutes").saturating_mul(60_000),
            offsets_retention_check_interval_ms: int("offsets.retention.check.interval.ms").max(1)
                as u64,
            offset_metadata_max_bytes: int("offset.metadata.max.bytes").max(0) as usize,
            group_min_session_timeout_ms: int("group.min.session.timeout.ms") as i32,
            group_max_session_timeout_ms: int("group.max.session.timeout.ms") as i32,
            group_initial_rebalance_delay_ms: int("group.initial.rebalance.delay.ms") as i32,
            group_max_size: int("group.max.size").max(1) as usize,
            consumer_session_timeout_ms: int("group.consumer.session.timeout.ms") as i32,
            consumer_heartbeat_interval_ms: int("group.consumer.heartbeat.interval.ms") as i32,
            consumer_assignors: get("group.consumer.assignors")
                .unwrap_or_default()
                .split(',')
                .map(|a| a.trim().to_string())
                .filter(|a| !a.is_empty())
                .collect(),
            consumer_max_size: int("group.consumer.max.size").max(1) as usize,
            share: ShareGroupDefaults {
                session_timeout_ms: int("group.share.session.timeout.ms") as i32,
                heartbeat_interval_ms: int("group.share.heartbeat.interval.ms") as i32,
                record_lock_duration_ms: int("group.share.record.lock.duration.ms") as i32,
                min_record_lock_duration_ms: int("group.share.min.record.lock.duration.ms") as i32,
                max_record_lock_duration_ms: int("group.share.max.record.lock.duration.ms") as i32,
                delivery_count_limit: int("group.share.delivery.count.limit").clamp(2, 10) as i16,
                max_record_locks: int("group.share.partition.max.record.locks").max(100) as usize,
                max_size: int("group.share.max.size").max(1) as usize,
                max_sessions: int("group.share.max.share.sessions").max(1) as usize,
                state_topic_partitions: int("share.coordinator.state.topic.num.partitions").max(1)
                    as i32,
                state_topic_segment_bytes: int("share.coordinator.state.topic.segment.bytes")
                    as i32,
            },
            producer_id_expiration_ms: int("producer.id.expiration.ms").max(1),
            cluster,
            values,
            topic_defaults,
            without_effect,
        })
    }

    /// Kafka's default configuration with the given overrides (used by tests).
    pub fn with_overrides(pairs: &[(&str, &str)]) -> Result<Self, ConfigError> {
        let props = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Self::from_properties(&props)
    }
}

fn scaled_or_unlimited(value: &str, factor: i64) -> String {
    match value.trim().parse::<i64>() {
        Ok(n) if n < 0 => "-1".into(),
        Ok(n) => n.saturating_mul(factor).to_string(),
        Err(_) => LONG_MAX.into(),
    }
}

/// The typed settings of one partition log: broker defaults overlaid with topic overrides.
#[derive(Debug, Clone, PartialEq)]
pub struct LogConfig {
    pub segment_bytes: u64,
    pub segment_ms: i64,
    pub segment_jitter_ms: i64,
    pub segment_index_bytes: u64,
    pub index_interval_bytes: u64,
    pub retention_ms: i64,
    pub retention_bytes: i64,
    pub flush_messages: i64,
    pub flush_ms: i64,
    pub max_message_bytes: usize,
    pub log_append_time: bool,
    pub timestamp_before_max_ms: i64,
    pub timestamp_after_max_ms: i64,
    pub min_insync_replicas: i32,
    pub cleanup_delete: bool,
    pub cleanup_compact: bool,
    pub delete_retention_ms: i64,
    pub min_compaction_lag_ms: i64,
}

impl LogConfig {
    /// Resolves the effective value of every topic config. `overrides` must already be valid.
    pub fn resolve(
        defaults: &BTreeMap<&'static str, ConfigValue>,
        overrides: &BTreeMap<String, String>,
    ) -> Self {
        let get = |name: &str| -> String {
            overrides
                .get(name)
                .cloned()
                .or_else(|| defaults.get(name).and_then(|v| v.value.clone()))
                .unwrap_or_default()
        };
        let long = |name: &str| get(name).trim().parse::<i64>().unwrap_or(i64::MAX);
        Self {
            segment_bytes: long("segment.bytes").max(14) as u64,
            segment_ms: long("segment.ms"),
            segment_jitter_ms: long("segment.jitter.ms"),
            segment_index_bytes: long("segment.index.bytes").max(8) as u64,
            index_interval_bytes: long("index.interval.bytes").max(0) as u64,
            retention_ms: long("retention.ms"),
            retention_bytes: long("retention.bytes"),
            flush_messages: long("flush.messages"),
            flush_ms: long("flush.ms"),
            max_message_bytes: long("max.message.bytes").clamp(0, i32::MAX as i64) as usize,
            log_append_time: get("message.timestamp.type") == "LogAppendTime",
            timestamp_before_max_ms: long("message.timestamp.before.max.ms").max(0),
            timestamp_after_max_ms: long("message.timestamp.after.max.ms").max(0),
            min_insync_replicas: long("min.insync.replicas").clamp(1, i32::MAX as i64) as i32,
            cleanup_delete: get("cleanup.policy")
                .split(',')
                .any(|p| p.trim() == "delete"),
            cleanup_compact: get("cleanup.policy")
                .split(',')
                .any(|p| p.trim() == "compact"),
            delete_retention_ms: long("delete.retention.ms"),
            min_compaction_lag_ms: long("min.compaction.lag.ms"),
        }
    }
}

/// One config as DescribeConfigs reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct DescribedConfig {
    pub name: &'static str,
    pub value: Option<String>,
    pub source: ConfigSource,
    pub kind: ConfigType,
    pub read_only: bool,
    pub doc: &'static str,
    /// Where the value could come from, most specific first: (name, value, source).
    pub synonyms: Vec<(String, Option<String>, ConfigSource)>,
}

/// A config a resource may override: its override (of `source`), else `fallback`.
fn overridable(
    def: &ConfigDef,
    overrides: &BTreeMap<String, String>,
    source: ConfigSource,
    fallback: ConfigValue,
    synonyms: Vec<(String, Option<String>, ConfigSource)>,
) -> DescribedConfig {
    let (value, source) = match overrides.get(def.name) {
        Some(v) => (Some(v.clone()), source),
        None => (fallback.value, fallback.source),
    };
    DescribedConfig {
        name: def.name,
        value,
        source,
        kind: def.kind,
        read_only: false,
        doc: def.doc,
        synonyms,
    }
}

/// Every topic config with its effective value: the override, else the broker's value.
pub fn describe_topic_configs(
    defaults: &BTreeMap<&'static str, ConfigValue>,
    overrides: &BTreeMap<String, String>,
) -> Vec<DescribedConfig> {
    TOPIC_CONFIGS
        .iter()
        .map(|def| {
            let broker_value = defaults.get(def.name).cloned().unwrap_or(ConfigValue {
                value: None,
                source: ConfigSource::Default,
            });
            let mut synonyms = Vec::new();
            if let Some(v) = overrides.get(def.name) {
                synonyms.push((
                    def.name.to_string(),
                    Some(v.clone()),
                    ConfigSource::TopicOverride,
                ));
            }
            if let Some(synonym) = def.broker_synonym {
                if broker_value.source == ConfigSource::StaticBroker {
                    synonyms.push((
                        synonym.to_string(),
                        broker_value.value.clone(),
                        ConfigSource::StaticBroker,
                    ));
                }
                synonyms.push((
                    synonym.to_string(),
                    broker_value.value.clone(),
                    ConfigSource::Default,
                ));
            }
            overridable(
                def,
                overrides,
                ConfigSource::TopicOverride,
                broker_value,
                synonyms,
            )
        })
        .collect()
}

impl BrokerConfig {
    /// Every broker property with its effective value. Broker configs are static here (no
    /// dynamic broker config yet), so all are read-only.
    pub fn describe(&self) -> Vec<DescribedConfig> {
        all_broker_configs()
            .map(|def| {
                let current = self.values.get(def.name).cloned().unwrap_or(ConfigValue {
                    value: None,
                    source: ConfigSource::Default,
                });
                let mut synonyms =
                    vec![(def.name.to_string(), current.value.clone(), current.source)];
                if current.source != ConfigSource::Default && def.default.is_some() {
                    synonyms.push((
                        def.name.to_string(),
                        def.default.map(str::to_string),
                        ConfigSource::Default,
                    ));
                }
                DescribedConfig {
                    name: def.name,
                    value: current.value,
                    source: current.source,
                    kind: def.kind,
                    read_only: true,
                    doc: def.doc,
                    synonyms,
                }
            })
            .collect()
    }
}

/// Validates a set of topic config overrides (name known, value well-formed).
pub fn validate_topic_overrides(overrides: &BTreeMap<String, String>) -> Result<(), ConfigError> {
    for (name, value) in overrides {
        let def = topic_config_def(name).ok_or_else(|| ConfigError::Unknown(name.clone()))?;
        validate_value(def, value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_format() {
        let text = "# comment\n! also\nkey1=value1\nkey2 : value two\nkey3 value3\n\
                    long=a,\\\n   b\nesc=tab\\there\\u0041\n  \nempty=\n";
        let props = parse_properties(text).unwrap();
        assert_eq!(props["key1"], "value1");
        assert_eq!(props["key2"], "value two");
        assert_eq!(props["key3"], "value3");
        assert_eq!(props["long"], "a,b");
        assert_eq!(props["esc"], "tab\thereA");
        assert_eq!(props["empty"], "");
    }

    #[test]
    fn defaults_are_kafkas() {
        let config = BrokerConfig::with_overrides(&[]).unwrap();
        assert_eq!(config.node_id, 1);
        assert_eq!(config.listeners[0].port, 9092);
        assert_eq!(config.log_dir, PathBuf::from("./data"));
        assert_eq!(config.socket_request_max_bytes, 104_857_600);
        let log = LogConfig::resolve(&config.topic_defaults, &BTreeMap::new());
        assert_eq!(log.segment_bytes, 1 << 30);
        assert_eq!(log.retention_ms, 168 * 3_600_000);
        assert_eq!(log.segment_ms, 168 * 3_600_000);
        assert_eq!(log.max_message_bytes, 1_048_588);
        assert_eq!(log.flush_messages, i64::MAX);
        assert!(log.cleanup_delete);
    }

    #[test]
    fn retention_fallbacks_and_overrides() {
        let config = BrokerConfig::with_overrides(&[("log.retention.minutes", "2")]).unwrap();
        assert_eq!(
            config.topic_defaults["retention.ms"].value.as_deref(),
            Some("120000")
        );
        assert_eq!(
            config.topic_defaults["retention.ms"].source,
            ConfigSource::StaticBroker
        );
        let config = BrokerConfig::with_overrides(&[
            ("log.retention.ms", "5"),
            ("log.retention.hours", "1"),
        ])
        .unwrap();
        let mut overrides = BTreeMap::new();
        assert_eq!(
            LogConfig::resolve(&config.topic_defaults, &overrides).retention_ms,
            5
        );
        overrides.insert("retention.ms".to_string(), "77".to_string());
        assert_eq!(
            LogConfig::resolve(&config.topic_defaults, &overrides).retention_ms,
            77
        );
    }

    #[test]
    fn unknown_and_malformed_properties_are_named() {
        assert_eq!(
            BrokerConfig::with_overrides(&[("log.segmnt.bytes", "1")]).unwrap_err(),
            ConfigError::Unknown("log.segmnt.bytes".into())
        );
        let err = BrokerConfig::with_overrides(&[("num.partitions", "many")]).unwrap_err();
        assert!(err.to_string().contains("num.partitions"), "{err}");
        let err = BrokerConfig::with_overrides(&[("listeners", "127.0.0.1:9092")]).unwrap_err();
        assert!(err.to_string().contains("listeners"), "{err}");
        let err =
            BrokerConfig::with_overrides(&[("auto.create.topics.enable", "yes")]).unwrap_err();
        assert!(
            err.to_string().contains("auto.create.topics.enable"),
            "{err}"
        );
        assert!(BrokerConfig::with_overrides(&[("num.io.threads", "8")]).is_ok());
        let err = BrokerConfig::with_overrides(&[("log.dirs", "/a,/b")]).unwrap_err();
        assert!(err.to_string().contains("one directory"), "{err}");
        let one = BrokerConfig::with_overrides(&[("log.dirs", " /a, ")]).unwrap();
        assert_eq!(one.log_dir, PathBuf::from("/a"));
    }

    #[test]
    fn topic_overrides_are_validated() {
        let mut overrides = BTreeMap::new();
        overrides.insert("cleanup.policy".to_string(), "compact,delete".to_string());
        overrides.insert("segment.bytes".to_string(), "1024".to_string());
        assert!(validate_topic_overrides(&overrides).is_ok());
        overrides.insert("segment.bytes".to_string(), "10".to_string());
        assert!(validate_topic_overrides(&overrides).is_err());
        overrides.remove("segment.bytes");
        overrides.insert("retention.mss".to_string(), "1".to_string());
        assert_eq!(
            validate_topic_overrides(&overrides),
            Err(ConfigError::Unknown("retention.mss".into()))
        );
        let mut bad_enum = BTreeMap::new();
        bad_enum.insert("message.timestamp.type".to_string(), "Now".to_string());
        assert!(validate_topic_overrides(&bad_enum).is_err());
    }

    #[test]
    fn environment_variables_follow_the_kafka_image_convention() {
        let vars = [
            ("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://broker:9092"),
            ("KAFKA_LOG_RETENTION_HOURS", "1"),
            ("KAFKA_SOME__WEIRD___NAME", "x"),
            ("KAFKA_HEAP_OPTS", "-Xmx1G"),
            ("KAFKA_NUM_PARTITIONS", "3"),
            ("SLUICE_NUM_PARTITIONS", "6"),
            ("KAFKA_PROCESS_ROLES", "broker,controller"),
            ("PATH", "/usr/bin"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let mut props = properties_from_env(vars);
        assert_eq!(props["advertised.listeners"], "PLAINTEXT://broker:9092");
        assert_eq!(props["log.retention.hours"], "1");
        assert_eq!(props["some_weird-name"], "x");
        assert_eq!(props["num.partitions"], "6", "SLUICE_* wins");
        assert!(
            !props.contains_key("heap.opts"),
            "JVM settings are not properties"
        );
        assert!(!props.contains_key("path"));
        props.remove("some_weird-name");
        let config = BrokerConfig::from_properties(&props).unwrap();
        assert_eq!(config.num_partitions, 6);
        assert!(config.without_effect.is_empty());
        assert!(config.cluster.broker_role && config.cluster.controller_role);
    }

    #[test]
    fn kraft_settings_follow_kafkas_rules() {
        let single = BrokerConfig::with_overrides(&[]).unwrap();
        assert!(single.cluster.is_single_node());
        assert_eq!(single.cluster.offsets_topic_replication_factor, 1);
        assert_eq!(single.cluster.inter_broker_listener, "PLAINTEXT");

        let node = |extra: &[(&str, &str)]| {
            let mut pairs = vec![
                ("node.id", "2"),
                ("process.roles", "broker,controller"),
                (
                    "controller.quorum.voters",
                    "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103",
                ),
                (
                    "listeners",
                    "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9102",
                ),
            ];
            pairs.extend_from_slice(extra);
            BrokerConfig::with_overrides(&pairs)
        };
        let config = node(&[("broker.rack", "r1")]).unwrap();
        assert!(!config.cluster.is_single_node());
        assert_eq!(config.cluster.voters.len(), 3);
        assert_eq!(config.cluster.voters[1].port, 9102);
        assert_eq!(config.cluster.offsets_topic_replication_factor, 3);
        assert_eq!(config.cluster.rack.as_deref(), Some("r1"));
        assert_eq!(config.cluster.controller_listener, "CONTROLLER");

        for bad in [
            vec![("node.id", "4")],
            vec![("process.roles", "broker")],
            vec![("listeners", "PLAINTEXT://127.0.0.1:9092")],
            vec![("inter.broker.listener.name", "CONTROLLER")],
            vec![("controller.quorum.voters", "1@h:1,1@h:2")],
            vec![("controller.quorum.voters", "one@h:1")],
        ] {
            assert!(node(&bad).is_err(), "{bad:?}");
        }
        // A broker-only node needs to know where the controllers are.
        let broker_only = [
            ("node.id", "4"),
            ("process.roles", "broker"),
            ("listeners", "PLAINTEXT://127.0.0.1:9092"),
        ];
        assert!(BrokerConfig::with_overrides(&broker_only).is_err());
        let mut with_bootstrap = broker_only.to_vec();
        with_bootstrap.push(("controller.quorum.bootstrap.servers", "127.0.0.1:9101"));
        let config = BrokerConfig::with_overrides(&with_bootstrap).unwrap();
        assert_eq!(
            config.cluster.bootstrap_servers,
            vec![("127.0.0.1".to_string(), 9101)]
        );
        // A controller-only node serves no clients.
        assert!(
            BrokerConfig::with_overrides(&[
                ("node.id", "1"),
                ("process.roles", "controller"),
                ("controller.quorum.voters", "1@127.0.0.1:9101"),
                ("listeners", "PLAINTEXT://127.0.0.1:9092"),
            ])
            .is_err()
        );
    }

    #[test]
    fn listeners_parse() {
        let config = BrokerConfig::with_overrides(&[
            ("listeners", "PLAINTEXT://127.0.0.1:0"),
            ("advertised.listeners", "PLAINTEXT://broker.example:19092"),
        ])
        .unwrap();
        assert_eq!(config.listeners[0].port, 0);
        assert_eq!(config.advertised_listeners[0].host, "broker.example");
        let tls = BrokerConfig::with_overrides(&[
            (
                "listeners",
                "SSL://127.0.0.1:9093,INTERNAL://127.0.0.1:9094",
            ),
            (
                "listener.security.protocol.map",
                "SSL:SSL,INTERNAL:SASL_PLAINTEXT",
            ),
        ])
        .unwrap();
        assert_eq!(tls.listeners[0].protocol, SecurityProtocol::Ssl);
        assert_eq!(tls.listeners[1].protocol, SecurityProtocol::SaslPlaintext);
        assert_eq!(
            tls.advertised_listeners[1].protocol,
            SecurityProtocol::SaslPlaintext
        );
        let chosen = BrokerConfig::with_overrides(&[
            ("listeners", "A://127.0.0.1:0,B://127.0.0.1:0"),
            ("listener.security.protocol.map", "A:SSL,B:SASL_SSL"),
            ("security.inter.broker.protocol", "SASL_SSL"),
        ])
        .unwrap();
        assert_eq!(chosen.cluster.inter_broker_listener, "B");
        for both in [
            vec![("security.inter.broker.protocol", "SSL")],
            vec![
                ("security.inter.broker.protocol", "PLAINTEXT"),
                ("inter.broker.listener.name", "PLAINTEXT"),
            ],
        ] {
            assert!(BrokerConfig::with_overrides(&both).is_err(), "{both:?}");
        }
    }
}

#[cfg(test)]
mod readme_tests {
    /// The README's configuration reference must list every property this broker knows.
    #[test]
    fn readme_lists_every_property() {
        let readme = include_str!("../../README.md");
        let all = super::all_broker_configs().chain(super::TOPIC_CONFIGS);
        for def in all.chain(super::GROUP_CONFIGS) {
            assert!(
                readme.contains(&format!("| `{}` |", def.name)),
                "README is missing {}",
                def.name
            );
        }
    }
}
