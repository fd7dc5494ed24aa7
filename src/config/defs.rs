//! The definition of every property this broker knows, with Kafka's names, types, defaults,
//! validation and documentation: one table per scope (topic, broker, group; security in
//! `security.rs`), kept whole so a property is found in one place, and the checks of a value
//! against its definition.

use super::{ConfigError, SECURITY_CONFIGS, invalid};

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
    /// Kafka's `Range.between`.
    Between(i64, i64),
    /// Kafka's gzip level validator: 1 to 9, or -1 (zlib's default).
    GzipLevel,
    OneOf(&'static [&'static str]),
    ListOf(&'static [&'static str]),
    Fraction,
    /// Kafka's `ThrottledReplicaListValidator`: `*` or `partition:broker` entries.
    ThrottledReplicas,
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

pub(super) const LONG_MAX: &str = "9223372036854775807";

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

/// Per-topic configs (Kafka's `TopicConfig`) and the broker property each defaults to.
#[rustfmt::skip]
pub static TOPIC_CONFIGS: &[ConfigDef] = &[
    def!("cleanup.policy", List, Some("delete"), Validator::ListOf(&["delete", "compact"]), Some("log.cleanup.policy"), "Retention policy for old segments: delete and/or compact."),
    def!("compression.type", String, Some("producer"), Validator::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]), Some("compression.type"), "Final compression type of the topic; 'producer' keeps the producer's codec."),
    def!("compression.gzip.level", Int, Some("-1"), Validator::GzipLevel, Some("compression.gzip.level"), "The gzip level batches are recompressed at when compression.type is gzip (-1: zlib's default)."),
    def!("compression.lz4.level", Int, Some("9"), Validator::Between(1, 17), Some("compression.lz4.level"), "Kafka's lz4 level for compression.type lz4; accepted: lz4_flex compresses at its one level."),
    def!("compression.zstd.level", Int, Some("3"), Validator::Between(-131072, 22), Some("compression.zstd.level"), "The zstd level batches are recompressed at when compression.type is zstd."),
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
    def!("leader.replication.throttled.replicas", List, Some(""), Validator::ThrottledReplicas, None, "Replicas (partition:broker, or * for all) whose leader throttles what it sends to followers out of the ISR to the broker's leader.replication.throttled.rate."),
    def!("follower.replication.throttled.replicas", List, Some(""), Validator::ThrottledReplicas, None, "Replicas (partition:broker, or * for all) that, out of the ISR, fetch from their leader at most at the broker's follower.replication.throttled.rate."),
];

/// Broker properties that this broker acts on, with Kafka's defaults (except `listeners` and
/// `log.dirs`, which default to a loopback listener and `./data` for a zero-setup dev broker).
#[rustfmt::skip]
pub static BROKER_CONFIGS: &[ConfigDef] = &[
    def!("node.id", Int, Some("1"), Validator::AtLeast(0), None, "This node's id."),
    def!("broker.id", Int, None, Validator::AtLeast(-1), None, "Legacy synonym of node.id."),
    def!("listeners", List, Some("PLAINTEXT://127.0.0.1:9092"), Validator::Any, None, "Listeners as NAME://host:port; port 0 binds a free port."),
    def!("advertised.listeners", List, None, Validator::Any, None, "Addresses given to clients; defaults to listeners."),
    def!("log.dirs", List, None, Validator::Any, None, "The directories holding partition logs (JBOD): new logs go to the one holding fewest; the first also holds the metadata log."),
    def!("log.dir", String, Some("./data"), Validator::Any, None, "Log directory when log.dirs is not set."),
    def!("num.partitions", Int, Some("1"), Validator::AtLeast(1), None, "Default partition count of new topics."),
    def!("default.replication.factor", Int, Some("1"), Validator::AtLeast(1), None, "Default replication factor of new topics."),
    def!("auto.create.topics.enable", Boolean, Some("true"), Validator::Any, None, "Create topics on first metadata request that allows it."),
    def!("delete.topic.enable", Boolean, Some("true"), Validator::Any, None, "Allow DeleteTopics."),
    def!("log.cleanup.policy", List, Some("delete"), Validator::ListOf(&["delete", "compact"]), None, "Default cleanup.policy."),
    def!("compression.type", String, Some("producer"), Validator::OneOf(&["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"]), None, "Default compression.type."),
    def!("compression.gzip.level", Int, Some("-1"), Validator::GzipLevel, None, "Default compression.gzip.level."),
    def!("compression.lz4.level", Int, Some("9"), Validator::Between(1, 17), None, "Default compression.lz4.level."),
    def!("compression.zstd.level", Int, Some("3"), Validator::Between(-131072, 22), None, "Default compression.zstd.level."),
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
    def!("socket.request.max.bytes", Int, Some("104857600"), Validator::AtLeast(1), None, "Largest request frame accepted; a quarter of it is what a request's arrays may take once decoded."),
    def!("max.connections", Int, Some("2147483647"), Validator::AtLeast(1), None, "Maximum simultaneous client connections."),
    def!("max.connection.creation.rate", Int, Some("2147483647"), Validator::AtLeast(0), None, "Most new connections per second across the broker's listeners (the inter-broker one exempt when there are others), and per listener as listener.name.<listener>.max.connection.creation.rate; a connection over the rate waits before it is served, and so do those after it on its listener (KIP-612)."),
    def!("max.connections.per.ip", Int, Some("2147483647"), Validator::AtLeast(0), None, "Maximum simultaneous client connections from one IP address; more are closed at once."),
    def!("max.connections.per.ip.overrides", String, Some(""), Validator::Any, None, "Per-address (IP or host name, resolved when the config is read) overrides of max.connections.per.ip, as host:count pairs separated by commas, e.g. 127.0.0.1:200,localhost:100."),
    def!("quota.window.num", Int, Some("11"), Validator::AtLeast(1), None, "Samples kept to measure client quotas' rates."),
    def!("leader.replication.throttled.rate", Long, Some(LONG_MAX), Validator::AtLeast(0), None, "Bytes per second this broker sends, as leader, to followers of throttled replicas (leader.replication.throttled.replicas) out of the ISR."),
    def!("follower.replication.throttled.rate", Long, Some(LONG_MAX), Validator::AtLeast(0), None, "Bytes per second this broker fetches, as follower, for throttled replicas (follower.replication.throttled.replicas) out of the ISR."),
    def!("replica.alter.log.dirs.io.max.bytes.per.second", Long, Some(LONG_MAX), Validator::AtLeast(1), None, "Bytes per second that moves of replicas between this broker's log directories (AlterReplicaLogDirs) copy, all together."),
    def!("replication.quota.window.num", Int, Some("11"), Validator::AtLeast(1), None, "Samples kept to measure the replication throttles' rates."),
    def!("replication.quota.window.size.seconds", Int, Some("1"), Validator::AtLeast(1), None, "The length of each replication throttle sample."),
    def!("quota.window.size.seconds", Int, Some("1"), Validator::AtLeast(1), None, "The length of each client quota sample."),
    def!("controller.quota.window.num", Int, Some("11"), Validator::AtLeast(1), None, "Samples of the controller mutation quota (its burst is this many windows of the rate)."),
    def!("controller.quota.window.size.seconds", Int, Some("1"), Validator::AtLeast(1), None, "The length of each controller mutation quota sample."),
    def!("connections.max.idle.ms", Long, Some("600000"), Validator::AtLeast(-1), None, "Connections that send no request for this long are closed (-1: never)."),
    def!("queued.max.request.bytes", Long, Some("536870912"), Validator::AtLeast(-1), None, "Memory for requests being read and queued, across all client connections; when it is used up, sockets are not read until memory returns (-1: no bound; Kafka's default is -1, ours bounds it)."),
    def!("log.segment.open.files.max", Int, Some("-1"), Validator::AtLeast(-1), None, "The most segment files (.log) open at once across all partitions; beyond it the least recently used are closed and opened again when read or written, so the partition count is not bounded by the open-file limit (-1: half the process's open-file limit)."),
    def!("log.segment.writeback.bytes", Long, Some("1048576"), Validator::AtLeast(0), None, "Bytes appended to a segment after which the kernel is asked to start writing them to disk (sync_file_range, RocksDB's bytes_per_sync), so a burst is written back while it arrives instead of all at the next flush; acknowledgements never wait on it (0: left to the kernel)."),
    def!("log.index.mapped.files.max", Int, Some("-1"), Validator::AtLeast(-1), None, "The most index files (.index, .timeindex) memory-mapped at once across all partitions; beyond it the least recently used are unmapped and mapped again on their next lookup, so the segment count is not bounded by vm.max_map_count (-1: half of vm.max_map_count)."),
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
    def!("group.consumer.min.session.timeout.ms", Int, Some("45000"), Validator::AtLeast(1), None, "Smallest consumer.session.timeout.ms a consumer group may set."),
    def!("group.consumer.max.session.timeout.ms", Int, Some("60000"), Validator::AtLeast(1), None, "Largest consumer.session.timeout.ms a consumer group may set."),
    def!("group.consumer.min.heartbeat.interval.ms", Int, Some("5000"), Validator::AtLeast(1), None, "Smallest consumer.heartbeat.interval.ms a consumer group may set."),
    def!("group.consumer.max.heartbeat.interval.ms", Int, Some("15000"), Validator::AtLeast(1), None, "Largest consumer.heartbeat.interval.ms a consumer group may set."),
    def!("group.consumer.assignors", List, Some("uniform,range"), Validator::ListOf(&["uniform", "range"]), None, "Server-side assignors; the first is the default."),
    def!("group.consumer.max.size", Int, Some("2147483647"), Validator::AtLeast(1), None, "Most members a KIP-848 consumer group may have."),
    def!("group.consumer.assignment.interval.ms", Int, Some("1000"), Validator::AtLeast(0), None, "Least time between two target assignments of a consumer group (KIP-1263): members that join or leave within it are assigned together, at the first heartbeat after it; 0 assigns at once. A group may set its own (consumer.assignment.interval.ms)."),
    def!("group.consumer.min.assignment.interval.ms", Int, Some("0"), Validator::AtLeast(0), None, "Smallest consumer.assignment.interval.ms a consumer group may set."),
    def!("group.consumer.max.assignment.interval.ms", Int, Some("15000"), Validator::AtLeast(0), None, "Largest consumer.assignment.interval.ms a consumer group may set."),
    def!("group.share.session.timeout.ms", Int, Some("45000"), Validator::AtLeast(1), None, "Session timeout of share group members (KIP-932)."),
    def!("group.share.heartbeat.interval.ms", Int, Some("5000"), Validator::AtLeast(1), None, "Heartbeat interval given to share group members."),
    def!("group.share.min.session.timeout.ms", Int, Some("45000"), Validator::AtLeast(1), None, "Smallest share.session.timeout.ms a share group may set."),
    def!("group.share.max.session.timeout.ms", Int, Some("60000"), Validator::AtLeast(1), None, "Largest share.session.timeout.ms a share group may set."),
    def!("group.share.min.heartbeat.interval.ms", Int, Some("5000"), Validator::AtLeast(1), None, "Smallest share.heartbeat.interval.ms a share group may set."),
    def!("group.share.max.heartbeat.interval.ms", Int, Some("15000"), Validator::AtLeast(1), None, "Largest share.heartbeat.interval.ms a share group may set."),
    def!("group.share.record.lock.duration.ms", Int, Some("30000"), Validator::AtLeast(1000), None, "How long a share group member holds the records it acquired before they are released to others."),
    def!("group.share.min.record.lock.duration.ms", Int, Some("15000"), Validator::AtLeast(1000), None, "Smallest share.record.lock.duration.ms a group may set."),
    def!("group.share.max.record.lock.duration.ms", Int, Some("60000"), Validator::AtLeast(1000), None, "Largest share.record.lock.duration.ms a group may set."),
    def!("group.share.delivery.count.limit", Int, Some("5"), Validator::AtLeast(2), None, "Deliveries of a record to share group members after which it is archived instead of delivered again."),
    def!("group.share.partition.max.record.locks", Int, Some("2000"), Validator::AtLeast(100), None, "Most in-flight records (between the share-partition start and end offsets) of one share-partition."),
    def!("group.share.min.delivery.count.limit", Int, Some("2"), Validator::AtLeast(2), None, "Smallest share.delivery.count.limit a share group may set."),
    def!("group.share.max.delivery.count.limit", Int, Some("10"), Validator::AtLeast(2), None, "Largest share.delivery.count.limit a share group may set."),
    def!("group.share.min.partition.max.record.locks", Int, Some("100"), Validator::AtLeast(100), None, "Smallest share.partition.max.record.locks a share group may set."),
    def!("group.share.max.partition.max.record.locks", Int, Some("4000"), Validator::AtLeast(100), None, "Largest share.partition.max.record.locks a share group may set."),
    def!("group.share.assignment.interval.ms", Int, Some("1000"), Validator::AtLeast(0), None, "Kafka's least time between two target assignments of a share group; accepted: a target is computed as soon as the group epoch moves (as with 0)."),
    def!("group.share.min.assignment.interval.ms", Int, Some("0"), Validator::AtLeast(0), None, "Smallest share.assignment.interval.ms a share group may set."),
    def!("group.share.max.assignment.interval.ms", Int, Some("15000"), Validator::AtLeast(0), None, "Largest share.assignment.interval.ms a share group may set."),
    def!("group.share.max.size", Int, Some("200"), Validator::AtLeast(1), None, "Most members a share group may have."),
    def!("group.share.max.share.sessions", Int, Some("2000"), Validator::AtLeast(1), None, "Most share sessions this broker keeps."),
    def!("group.streams.session.timeout.ms", Int, Some("45000"), Validator::AtLeast(1), None, "Default streams.session.timeout.ms of streams groups (KIP-1071)."),
    def!("group.streams.min.session.timeout.ms", Int, Some("45000"), Validator::AtLeast(1), None, "Smallest streams.session.timeout.ms a streams group may set."),
    def!("group.streams.max.session.timeout.ms", Int, Some("60000"), Validator::AtLeast(1), None, "Largest streams.session.timeout.ms a streams group may set."),
    def!("group.streams.heartbeat.interval.ms", Int, Some("5000"), Validator::AtLeast(1), None, "Default streams.heartbeat.interval.ms of streams groups."),
    def!("group.streams.min.heartbeat.interval.ms", Int, Some("5000"), Validator::AtLeast(1), None, "Smallest streams.heartbeat.interval.ms a streams group may set."),
    def!("group.streams.max.heartbeat.interval.ms", Int, Some("15000"), Validator::AtLeast(1), None, "Largest streams.heartbeat.interval.ms a streams group may set."),
    def!("group.streams.num.standby.replicas", Int, Some("0"), Validator::AtLeast(0), None, "Default streams.num.standby.replicas of streams groups."),
    def!("group.streams.max.standby.replicas", Int, Some("2"), Validator::AtLeast(0), None, "Largest streams.num.standby.replicas a streams group may set."),
    def!("group.streams.acceptable.recovery.lag", Long, Some("10000"), Validator::AtLeast(0), None, "The lag under which a streams group's warm-up task counts as caught up."),
    def!("group.streams.task.offset.interval.ms", Int, Some("60000"), Validator::AtLeast(1), None, "How often streams group members report their tasks' changelog offsets."),
    def!("group.streams.max.size", Int, Some("2147483647"), Validator::AtLeast(1), None, "Most members a streams group may have."),
    def!("group.streams.initial.rebalance.delay.ms", Int, Some("3000"), Validator::AtLeast(0), None, "Default streams.initial.rebalance.delay.ms of streams groups."),
    def!("group.streams.assignment.interval.ms", Int, Some("1000"), Validator::AtLeast(0), None, "Kafka's least time between two target assignments of a streams group; accepted: a target is computed as soon as the group epoch moves (as with 0)."),
    def!("group.streams.min.assignment.interval.ms", Int, Some("0"), Validator::AtLeast(0), None, "Smallest streams.assignment.interval.ms a streams group may set."),
    def!("group.streams.max.assignment.interval.ms", Int, Some("15000"), Validator::AtLeast(0), None, "Largest streams.assignment.interval.ms a streams group may set."),
    def!("group.streams.assignors", List, Some("sticky"), Validator::ListOf(&["sticky"]), None, "Streams groups' task assignors; the first is the default."),
    def!("group.streams.rack.aware.assignment.tags", List, Some(""), Validator::Any, None, "Default streams.rack.aware.assignment.tags of streams groups."),
    def!("share.coordinator.state.topic.num.partitions", Int, Some("50"), Validator::AtLeast(1), None, "Partitions of __share_group_state (fixed once the topic exists)."),
    def!("share.coordinator.state.topic.replication.factor", Int, None, Validator::AtLeast(1), None, "Replication factor of __share_group_state; defaults to 1 on a one-voter node and 3 in a cluster (Kafka's default)."),
    def!("share.coordinator.state.topic.min.isr", Int, Some("2"), Validator::AtLeast(1), None, "min.insync.replicas of __share_group_state (at most its replication factor)."),
    def!("share.coordinator.state.topic.segment.bytes", Int, Some("104857600"), Validator::AtLeast(14), None, "segment.bytes of __share_group_state."),
    def!("process.roles", List, Some("broker,controller"), Validator::ListOf(&["broker", "controller"]), None, "This node's roles: broker (serves clients and hosts partitions), controller (votes in the metadata quorum), or both."),
    def!("controller.quorum.voters", List, None, Validator::Any, None, "The controller quorum as id@host:port,...; unset on a single node, which is then its own one-voter quorum."),
    def!("controller.quorum.bootstrap.servers", List, None, Validator::Any, None, "host:port of controllers to contact when controller.quorum.voters is unset; a controller with it alone is in a dynamic quorum (KIP-853)."),
    def!("controller.listener.names", List, Some("CONTROLLER"), Validator::Any, None, "Listener names used by the controller quorum; the first is the one controllers bind and brokers dial."),
    def!("listener.security.protocol.map", List, Some("PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"), Validator::Any, None, "Security protocol of each listener name: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (unlisted names are PLAINTEXT)."),
    def!("inter.broker.listener.name", String, None, Validator::Any, None, "Listener brokers use to replicate from each other; defaults to PLAINTEXT, else the first broker listener."),
    def!("metadata.log.max.record.bytes.between.snapshots", Long, Some("20971520"), Validator::AtLeast(1), None, "Bytes of metadata records after which the controller quorum's log is snapshotted (also after 10,000 entries); broker-only nodes that fell behind read the snapshot (FetchSnapshot)."),
    def!("broker.rack", String, None, Validator::Any, None, "Rack of this broker; replicas of a partition are spread over racks when set."),
    def!("replica.selector.class", String, None, Validator::OneOf(&["", "org.apache.kafka.common.replica.RackAwareReplicaSelector"]), None, "How a leader picks the replica a consumer should fetch from (KIP-392): RackAwareReplicaSelector sends a consumer with client.rack to an in-sync replica in its rack; unset, consumers read from the leader."),
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
    def!("http.listener", String, Some("127.0.0.1:8090"), Validator::Any, None, "host:port of the HTTP listener serving Prometheus metrics (/metrics), the web console and its JSON API; port 0 binds a free port; empty turns it off. Sluice's own: Kafka has no such listener."),
    def!("http.listener.security.protocol", String, Some("PLAINTEXT"), Validator::Any, None, "The HTTP listener's security, as a Kafka listener's: PLAINTEXT, SSL (HTTPS with the listener's ssl.* settings; a client certificate maps to its principal), SASL_PLAINTEXT or SASL_SSL (HTTP Basic credentials checked as PLAIN and SCRAM passwords, Bearer tokens as OAUTHBEARER, by the mechanisms enabled). Its settings are those of a listener named HTTP: listener.name.http.<property>, else the broker-wide one."),
    def!("http.metrics.partition.series.enable", Boolean, Some("true"), Validator::Any, None, "Expose the per-partition series (kafka_log_log_*, kafka_cluster_partition_*, consumer group lag per partition); off keeps a broker with very many partitions to a bounded number of series."),
    def!("transaction.remove.expired.transaction.cleanup.interval.ms", Int, Some("3600000"), Validator::AtLeast(1), None, "How often expired transactional ids are looked for and removed."),
];

/// Group configs (Kafka's `GroupConfig`, the GROUP config resource): per-group overrides of the
/// broker's `group.share.*` settings. The consumer-group ones (`consumer.*`) are not built.
pub static GROUP_CONFIGS: &[ConfigDef] = &[
    def!(
        "consumer.session.timeout.ms",
        Int,
        Some("45000"),
        Validator::AtLeast(1),
        Some("group.consumer.session.timeout.ms"),
        "Session timeout of the consumer group's members (KIP-848 protocol), within group.consumer.min/max.session.timeout.ms; applied at each member's next heartbeat."
    ),
    def!(
        "consumer.heartbeat.interval.ms",
        Int,
        Some("5000"),
        Validator::AtLeast(1),
        Some("group.consumer.heartbeat.interval.ms"),
        "Heartbeat interval given to the consumer group's members, within group.consumer.min/max.heartbeat.interval.ms."
    ),
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
    def!(
        "share.delivery.count.limit",
        Int,
        Some("5"),
        Validator::AtLeast(2),
        Some("group.share.delivery.count.limit"),
        "Deliveries of a record to the share group after which it is archived, within group.share.min/max.delivery.count.limit."
    ),
    def!(
        "share.partition.max.record.locks",
        Int,
        Some("2000"),
        Validator::AtLeast(100),
        Some("group.share.partition.max.record.locks"),
        "Most in-flight records of one of the share group's share-partitions, within group.share.min/max.partition.max.record.locks."
    ),
    def!(
        "share.renew.acknowledge.enable",
        Boolean,
        Some("true"),
        Validator::Any,
        None,
        "Whether the share group's members may renew their acquisition locks (KIP-1222's RENEW acknowledgement); if not, a renewal is INVALID_RECORD_STATE."
    ),
    def!(
        "share.assignment.interval.ms",
        Int,
        Some("1000"),
        Validator::AtLeast(0),
        Some("group.share.assignment.interval.ms"),
        "Least time between two target assignments of the share group, within group.share.min/max.assignment.interval.ms; accepted: a target is computed as soon as the group epoch moves."
    ),
    def!(
        "errors.deadletterqueue.topic.name",
        String,
        Some(""),
        Validator::Any,
        None,
        "The share group's dead-letter queue topic (blank: none). Sluice writes no dead-letter queue: a name is refused."
    ),
    def!(
        "errors.deadletterqueue.copy.record.enable",
        Boolean,
        Some("false"),
        Validator::Any,
        None,
        "Whether records written to the share group's dead-letter queue are copied whole; no effect without a dead-letter queue."
    ),
    def!(
        "consumer.assignment.interval.ms",
        Int,
        Some("1000"),
        Validator::AtLeast(0),
        Some("group.consumer.assignment.interval.ms"),
        "Least time between two target assignments of the consumer group, within group.consumer.min/max.assignment.interval.ms (KIP-1263): members that join or leave within it are assigned together."
    ),
    def!(
        "streams.assignment.interval.ms",
        Int,
        Some("1000"),
        Validator::AtLeast(0),
        Some("group.streams.assignment.interval.ms"),
        "Least time between two target assignments of the streams group, within group.streams.min/max.assignment.interval.ms; accepted: a target is computed as soon as the group epoch moves."
    ),
    def!(
        "streams.assignor.name",
        String,
        Some("sticky"),
        Validator::Any,
        Some("group.streams.assignors"),
        "The streams group's task assignor, one of group.streams.assignors (the first by default)."
    ),
    def!(
        "streams.rack.aware.assignment.tags",
        List,
        Some(""),
        Validator::Any,
        Some("group.streams.rack.aware.assignment.tags"),
        "Client tag keys to spread standby tasks over; Kafka 4.4's sticky assignor, like this one, does not use them, and a change starts a new assignment."
    ),
    def!(
        "streams.session.timeout.ms",
        Int,
        Some("45000"),
        Validator::AtLeast(1),
        Some("group.streams.session.timeout.ms"),
        "Session timeout of a streams group's members, within group.streams.min/max.session.timeout.ms."
    ),
    def!(
        "streams.heartbeat.interval.ms",
        Int,
        Some("5000"),
        Validator::AtLeast(1),
        Some("group.streams.heartbeat.interval.ms"),
        "Heartbeat interval of a streams group's members, within group.streams.min/max.heartbeat.interval.ms."
    ),
    def!(
        "streams.num.standby.replicas",
        Int,
        Some("0"),
        Validator::AtLeast(0),
        Some("group.streams.num.standby.replicas"),
        "Standby replicas of each task of a streams group, at most group.streams.max.standby.replicas."
    ),
    def!(
        "streams.initial.rebalance.delay.ms",
        Int,
        Some("3000"),
        Validator::AtLeast(0),
        Some("group.streams.initial.rebalance.delay.ms"),
        "How long a new streams group waits for more members before its first assignment."
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
    // JVM-specific TLS plumbing: rustls picks its own key and trust managers and randomness.
    "ssl.keymanager.algorithm",
    "ssl.trustmanager.algorithm",
    "ssl.secure.random.implementation",
    // Kafka ignores an unprefixed one on brokers too (with a warning): a broker's JAAS configs
    // are per listener and mechanism.
    "sasl.jaas.config",
    // ZooKeeper mode (an image started "with ZooKeeper", as testcontainers-python and -node do
    // by default): this broker keeps its own metadata quorum; the ZooKeeper-era readiness line
    // is logged too.
    "zookeeper.connect",
];

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
                _ => Err(invalid(
                    name,
                    value,
                    "Expected value to be either true or false",
                )),
            };
        }
        ConfigType::Int => Some(
            value
                .parse::<i32>()
                .map_err(|_| invalid(name, value, "Not a number of type INT"))? as i64,
        ),
        ConfigType::Long => Some(
            value
                .parse::<i64>()
                .map_err(|_| invalid(name, value, "Not a number of type LONG"))?,
        ),
        ConfigType::Double => {
            let parsed = value
                .parse::<f64>()
                .map_err(|_| invalid(name, value, "Not a number of type DOUBLE"))?;
            if matches!(def.validator, Validator::Fraction) && !(0.0..=1.0).contains(&parsed) {
                return Err(invalid(
                    name,
                    value,
                    if parsed < 0.0 {
                        "Value must be no less than 0.0"
                    } else {
                        "Value must be no more than 1.0"
                    },
                ));
            }
            None
        }
        ConfigType::String | ConfigType::List | ConfigType::Password => None,
    };
    match def.validator {
        Validator::AtLeast(min) => {
            if number.is_some_and(|n| n < min) {
                return Err(invalid(
                    name,
                    value,
                    format!("Value must be at least {min}"),
                ));
            }
        }
        Validator::Between(min, max) => {
            if number.is_some_and(|n| n < min) {
                return Err(invalid(
                    name,
                    value,
                    format!("Value must be at least {min}"),
                ));
            }
            if number.is_some_and(|n| n > max) {
                return Err(invalid(
                    name,
                    value,
                    format!("Value must be no more than {max}"),
                ));
            }
        }
        Validator::GzipLevel => {
            if number.is_some_and(|n| n != -1 && !(1..=9).contains(&n)) {
                return Err(invalid(
                    name,
                    value,
                    "Value must be between 1 and 9 or equal to -1",
                ));
            }
        }
        Validator::OneOf(allowed) => {
            if !allowed.contains(&value) {
                return Err(invalid(
                    name,
                    value,
                    format!("String must be one of: {}", allowed.join(", ")),
                ));
            }
        }
        Validator::ListOf(allowed) => {
            for item in value.split(',').map(str::trim) {
                if !allowed.contains(&item) {
                    // Kafka's ValidList checks each item as a ValidString.
                    return Err(invalid(
                        name,
                        item,
                        format!("String must be one of: {}", allowed.join(", ")),
                    ));
                }
            }
        }
        Validator::ThrottledReplicas => {
            let items: Vec<&str> = value.split(',').map(str::trim).collect();
            let listed = items.iter().all(|item| {
                item.is_empty()
                    || item.split_once(':').is_some_and(|(p, b)| {
                        [p, b]
                            .iter()
                            .all(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
                    })
            });
            if !listed && items.concat() != "*" {
                return Err(invalid(
                    name,
                    value,
                    format!(
                        "{name} must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],..."
                    ),
                ));
            }
        }
        Validator::Any | Validator::Fraction => {}
    }
    Ok(())
}
