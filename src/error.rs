//! The broker's error type for everything the API layer can be asked to report, and the ONE
//! mapping from errors to Kafka error codes (numbers from Kafka's `Errors.java`).

use crate::config::ConfigError;
use crate::record::RecordError;
use crate::storage::StorageError;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error("unknown topic or partition")]
    UnknownTopicOrPartition,
    #[error("unknown topic id")]
    UnknownTopicId,
    #[error("topic '{0}' already exists")]
    TopicAlreadyExists(String),
    #[error("invalid topic: {0}")]
    InvalidTopic(String),
    #[error("invalid partitions: {0}")]
    InvalidPartitions(String),
    #[error("invalid replication factor: {0}")]
    InvalidReplicationFactor(String),
    #[error("invalid replica assignment: {0}")]
    InvalidReplicaAssignment(String),
    #[error("invalid config: {0}")]
    InvalidConfig(String),
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    #[error("invalid required acks {0}")]
    InvalidRequiredAcks(i16),
    #[error("not enough replicas: {isr} in sync, min.insync.replicas is {required}")]
    NotEnoughReplicas { isr: i32, required: i32 },
    #[error("the request's leader epoch {0} is newer than this broker's")]
    UnknownLeaderEpoch(i32),
    #[error("topic deletion is disabled (delete.topic.enable=false)")]
    TopicDeletionDisabled,
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Record(#[from] RecordError),
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::InvalidConfig(e.to_string())
    }
}

/// Kafka error codes used by this broker.
pub mod code {
    pub const NONE: i16 = 0;
    pub const UNKNOWN_SERVER_ERROR: i16 = -1;
    pub const OFFSET_OUT_OF_RANGE: i16 = 1;
    pub const CORRUPT_MESSAGE: i16 = 2;
    pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
    pub const MESSAGE_TOO_LARGE: i16 = 10;
    pub const INVALID_TOPIC_EXCEPTION: i16 = 17;
    pub const NOT_ENOUGH_REPLICAS: i16 = 19;
    pub const INVALID_REQUIRED_ACKS: i16 = 21;
    pub const UNSUPPORTED_VERSION: i16 = 35;
    pub const TOPIC_ALREADY_EXISTS: i16 = 36;
    pub const INVALID_PARTITIONS: i16 = 37;
    pub const INVALID_REPLICATION_FACTOR: i16 = 38;
    pub const INVALID_REPLICA_ASSIGNMENT: i16 = 39;
    pub const INVALID_CONFIG: i16 = 40;
    pub const INVALID_REQUEST: i16 = 42;
    pub const UNSUPPORTED_FOR_MESSAGE_FORMAT: i16 = 43;
    pub const KAFKA_STORAGE_ERROR: i16 = 56;
    pub const FETCH_SESSION_ID_NOT_FOUND: i16 = 70;
    pub const INVALID_FETCH_SESSION_EPOCH: i16 = 71;
    pub const TOPIC_DELETION_DISABLED: i16 = 73;
    pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
    pub const INVALID_RECORD: i16 = 87;
    pub const UNKNOWN_TOPIC_ID: i16 = 100;
    pub const UNSUPPORTED_ENDPOINT_TYPE: i16 = 115;
}

impl Error {
    pub fn code(&self) -> i16 {
        match self {
            Error::UnknownTopicOrPartition => code::UNKNOWN_TOPIC_OR_PARTITION,
            Error::UnknownTopicId => code::UNKNOWN_TOPIC_ID,
            Error::TopicAlreadyExists(_) => code::TOPIC_ALREADY_EXISTS,
            Error::InvalidTopic(_) => code::INVALID_TOPIC_EXCEPTION,
            Error::InvalidPartitions(_) => code::INVALID_PARTITIONS,
            Error::InvalidReplicationFactor(_) => code::INVALID_REPLICATION_FACTOR,
            Error::InvalidReplicaAssignment(_) => code::INVALID_REPLICA_ASSIGNMENT,
            Error::InvalidConfig(_) => code::INVALID_CONFIG,
            Error::InvalidRequest(_) => code::INVALID_REQUEST,
            Error::InvalidRequiredAcks(_) => code::INVALID_REQUIRED_ACKS,
            Error::NotEnoughReplicas { .. } => code::NOT_ENOUGH_REPLICAS,
            Error::TopicDeletionDisabled => code::TOPIC_DELETION_DISABLED,
            Error::UnknownLeaderEpoch(_) => code::UNKNOWN_LEADER_EPOCH,
            Error::Storage(e) => match e {
                StorageError::OffsetOutOfRange { .. } => code::OFFSET_OUT_OF_RANGE,
                StorageError::Record(r) => record_code(r),
                StorageError::Io(_)
                | StorageError::Offline
                | StorageError::Corrupt(_)
                | StorageError::Locked(_) => code::KAFKA_STORAGE_ERROR,
            },
            Error::Record(r) => record_code(r),
        }
    }

    /// Text for the response's error message field, where the API has one.
    pub fn message(&self) -> String {
        self.to_string()
    }
}

fn record_code(e: &RecordError) -> i16 {
    match e {
        RecordError::Corrupt(_) => code::CORRUPT_MESSAGE,
        RecordError::Invalid(_) => code::INVALID_RECORD,
        RecordError::UnsupportedMagic(_) => code::UNSUPPORTED_FOR_MESSAGE_FORMAT,
        RecordError::TooLarge { .. } => code::MESSAGE_TOO_LARGE,
        RecordError::Compression(_) => code::CORRUPT_MESSAGE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our constants against the code table `kafka-protocol` generates from Kafka's sources.
    #[test]
    fn constants_match_the_protocol_table() {
        use kafka_protocol::error::ResponseError as R;
        let pairs = [
            (code::UNKNOWN_SERVER_ERROR, R::UnknownServerError),
            (code::OFFSET_OUT_OF_RANGE, R::OffsetOutOfRange),
            (code::CORRUPT_MESSAGE, R::CorruptMessage),
            (code::UNKNOWN_TOPIC_OR_PARTITION, R::UnknownTopicOrPartition),
            (code::MESSAGE_TOO_LARGE, R::MessageTooLarge),
            (code::INVALID_TOPIC_EXCEPTION, R::InvalidTopicException),
            (code::NOT_ENOUGH_REPLICAS, R::NotEnoughReplicas),
            (code::INVALID_REQUIRED_ACKS, R::InvalidRequiredAcks),
            (code::UNSUPPORTED_VERSION, R::UnsupportedVersion),
            (code::TOPIC_ALREADY_EXISTS, R::TopicAlreadyExists),
            (code::INVALID_PARTITIONS, R::InvalidPartitions),
            (
                code::INVALID_REPLICATION_FACTOR,
                R::InvalidReplicationFactor,
            ),
            (
                code::INVALID_REPLICA_ASSIGNMENT,
                R::InvalidReplicaAssignment,
            ),
            (code::INVALID_CONFIG, R::InvalidConfig),
            (code::INVALID_REQUEST, R::InvalidRequest),
            (
                code::UNSUPPORTED_FOR_MESSAGE_FORMAT,
                R::UnsupportedForMessageFormat,
            ),
            (code::KAFKA_STORAGE_ERROR, R::KafkaStorageError),
            (code::FETCH_SESSION_ID_NOT_FOUND, R::FetchSessionIdNotFound),
            (
                code::INVALID_FETCH_SESSION_EPOCH,
                R::InvalidFetchSessionEpoch,
            ),
            (code::TOPIC_DELETION_DISABLED, R::TopicDeletionDisabled),
            (code::UNKNOWN_LEADER_EPOCH, R::UnknownLeaderEpoch),
            (code::INVALID_RECORD, R::InvalidRecord),
            (code::UNKNOWN_TOPIC_ID, R::UnknownTopicId),
            (code::UNSUPPORTED_ENDPOINT_TYPE, R::UnsupportedEndpointType),
        ];
        for (ours, theirs) in pairs {
            assert_eq!(ours, theirs.code(), "{theirs:?}");
        }
    }

    #[test]
    fn codes_match_kafka() {
        assert_eq!(Error::from(RecordError::Corrupt("x")).code(), 2);
        assert_eq!(
            Error::from(RecordError::TooLarge { size: 2, limit: 1 }).code(),
            10
        );
        assert_eq!(Error::from(RecordError::Invalid("x".into())).code(), 87);
        assert_eq!(
            Error::Storage(StorageError::OffsetOutOfRange {
                offset: 5,
                start: 0,
                end: 1
            })
            .code(),
            1
        );
        assert_eq!(Error::Storage(StorageError::Offline).code(), 56);
        assert_eq!(Error::UnknownTopicOrPartition.code(), 3);
    }
}
