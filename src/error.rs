//! The broker's error type for everything the API layer can be asked to report, and the ONE
//! mapping from errors to Kafka error codes (numbers from Kafka's `Errors.java`).

use crate::config::ConfigError;
use crate::record::RecordError;
use crate::storage::StorageError;
use crate::storage::producer_state::ProducerError;
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
    /// The text says what is wrong (Kafka's ConfigException messages, from config).
    #[error("{0}")]
    InvalidConfig(String),
    /// The text is what clients show (Kafka's messages carry no prefix), and it survives
    /// being forwarded between nodes unchanged.
    #[error("{0}")]
    InvalidRequest(String),
    /// A controller mutation quota was exceeded (KIP-599).
    #[error("The throttling quota has been exceeded.")]
    ThrottlingQuotaExceeded,
    /// Refused as too large an operation (Kafka's controller: more partitions or records
    /// than one request may create).
    #[error("{0}")]
    PolicyViolation(String),
    /// Transactional records in a Produce without a transactional id (Kafka answers this
    /// before any ACL is consulted).
    #[error("transactional records without a transactional id")]
    TransactionalIdAuthorizationFailed,
    /// A codec the request's version may not use (zstd before Produce v7).
    #[error("{0}")]
    UnsupportedCompressionType(String),
    #[error("invalid required acks {0}")]
    InvalidRequiredAcks(i16),
    #[error("not enough replicas: {isr} in sync, min.insync.replicas is {required}")]
    NotEnoughReplicas { isr: i32, required: i32 },
    #[error("the request's leader epoch {0} is newer than this broker's")]
    UnknownLeaderEpoch(i32),
    #[error("topic deletion is disabled (delete.topic.enable=false)")]
    TopicDeletionDisabled,
    #[error("the partition already has the leader the election would choose")]
    ElectionNotNeeded,
    #[error("the preferred replica is not available to lead")]
    PreferredLeaderNotAvailable,
    #[error("no eligible replica is available to lead")]
    EligibleLeadersNotAvailable,
    #[error("no reassignment is in progress for the partition")]
    NoReassignmentInProgress,
    #[error("log directory '{0}' is not one of this broker's log directories")]
    LogDirNotFound(String),
    #[error("this broker hosts no replica of the partition")]
    ReplicaNotAvailable,
    #[error("this broker is not the leader of the partition")]
    NotLeaderOrFollower,
    #[error("this node is not the active controller")]
    NotController,
    #[error("the metadata snapshot asked for is not the leader's latest")]
    SnapshotNotFound,
    #[error("the request timed out")]
    RequestTimedOut,
    /// A voter change that did not complete in time, in Kafka's words (AddRaftVoter,
    /// RemoveRaftVoter).
    #[error("{0}")]
    VoterChangeTimedOut(String),
    /// A voter change a static quorum cannot make (Kafka: kraft.version 0).
    #[error("{0}")]
    VoterChangeUnsupported(String),
    #[error("{0}")]
    DuplicateVoter(String),
    #[error("{0}")]
    VoterNotFound(String),
    #[error("broker epoch {got} is not the current one ({current})")]
    StaleBrokerEpoch { got: i64, current: i64 },
    #[error("broker {0} is not registered")]
    BrokerIdNotRegistered(i32),
    #[error("Controller ID {0} is not currently registered.")]
    ControllerIdNotRegistered(i32),
    #[error("broker {0} is registered by a live process with another incarnation")]
    DuplicateBrokerRegistration(i32),
    #[error("cluster id {got} does not match this cluster's {expected}")]
    InconsistentClusterId { got: String, expected: String },
    #[error("leader epoch {got} is not the partition's current {current}")]
    FencedLeaderEpoch { got: i32, current: i32 },
    #[error("partition epoch {got} is not the current {current}")]
    InvalidUpdateVersion { got: i32, current: i32 },
    /// An UpdateFeatures the controller refused; the text is Kafka's.
    #[error("{0}")]
    FeatureUpdateRefused(String),
    #[error("replica {0} may not join the ISR: {1}")]
    IneligibleReplica(i32, String),
    #[error(
        "written to the leader but the ISR shrank below min.insync.replicas ({isr} < {required})"
    )]
    NotEnoughReplicasAfterAppend { isr: i32, required: i32 },
    #[error("the partition is not in the producer's ongoing transaction (KIP-890 verification)")]
    NotInTransaction,
    #[error("the producer's epoch is fenced by its transaction coordinator")]
    ProducerFencedByCoordinator,
    /// The coordinator could not answer the verification (moving, loading, busy): Kafka
    /// answers NOT_ENOUGH_REPLICAS, which producers retry.
    #[error("the transaction coordinator could not verify the transaction yet: {0}")]
    TransactionNotVerified(String),
    /// The coordinator is still completing the producer's previous transaction
    /// (CONCURRENT_TRANSACTIONS to a partition added by Produce); Kafka answers the producer
    /// NOT_ENOUGH_REPLICAS, which it retries.
    #[error("the producer's previous transaction is still being completed")]
    PreviousTransactionCompleting,
    /// A failure of the broker itself (a job that panicked): UNKNOWN_SERVER_ERROR.
    #[error("internal error: {0}")]
    Internal(String),
    /// An error another node answered with that has no variant of its own here.
    #[error("error code {code} from another node: {message}")]
    Remote { code: i16, message: String },
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Token(#[from] TokenError),
}

/// What the delegation-token APIs (KIP-48) answer besides success, with Kafka's messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum TokenError {
    #[error("Delegation Token feature is not enabled.")]
    AuthDisabled,
    #[error("Delegation Token is not found on server.")]
    NotFound,
    #[error("Specified Principal is not valid Owner/Renewer.")]
    OwnerMismatch,
    #[error(
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels."
    )]
    RequestNotAllowed,
    #[error("Delegation Token authorization failed.")]
    AuthorizationFailed,
    #[error("Delegation Token is expired.")]
    Expired,
    #[error("Supplied principalType is not supported.")]
    InvalidPrincipalType,
}

impl TokenError {
    const ALL: [TokenError; 7] = [
        TokenError::AuthDisabled,
        TokenError::NotFound,
        TokenError::OwnerMismatch,
        TokenError::RequestNotAllowed,
        TokenError::AuthorizationFailed,
        TokenError::Expired,
        TokenError::InvalidPrincipalType,
    ];

    pub fn code(self) -> i16 {
        match self {
            TokenError::AuthDisabled => code::DELEGATION_TOKEN_AUTH_DISABLED,
            TokenError::NotFound => code::DELEGATION_TOKEN_NOT_FOUND,
            TokenError::OwnerMismatch => code::DELEGATION_TOKEN_OWNER_MISMATCH,
            TokenError::RequestNotAllowed => code::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
            TokenError::AuthorizationFailed => code::DELEGATION_TOKEN_AUTHORIZATION_FAILED,
            TokenError::Expired => code::DELEGATION_TOKEN_EXPIRED,
            TokenError::InvalidPrincipalType => code::INVALID_PRINCIPAL_TYPE,
        }
    }

    pub fn from_code(error_code: i16) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.code() == error_code)
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::InvalidConfig(e.to_string())
    }
}

/// Errors of the group coordinator. `Copy` because one outcome is often sent to several
/// waiting members.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum GroupError {
    #[error("the coordinator is not available")]
    CoordinatorNotAvailable,
    #[error("this broker is not the group's coordinator")]
    NotCoordinator,
    #[error("the coordinator is loading")]
    CoordinatorLoadInProgress,
    #[error("invalid group id")]
    InvalidGroupId,
    #[error("unknown member id")]
    UnknownMemberId,
    #[error("session timeout outside group.min/max.session.timeout.ms")]
    InvalidSessionTimeout,
    #[error("the group is rebalancing")]
    RebalanceInProgress,
    #[error("illegal generation")]
    IllegalGeneration,
    #[error("protocol type or protocols inconsistent with the group")]
    InconsistentGroupProtocol,
    #[error("another member with this group.instance.id has joined")]
    FencedInstanceId,
    #[error("a member id is required: rejoin with the one given")]
    MemberIdRequired,
    #[error("the group is full (group.max.size)")]
    GroupMaxSizeReached,
    #[error("group not found")]
    GroupIdNotFound,
    #[error("the group is not empty")]
    NonEmptyGroup,
    #[error("offset metadata is larger than offset.metadata.max.bytes")]
    OffsetMetadataTooLarge,
    #[error("the group is subscribed to the topic")]
    GroupSubscribedToTopic,
    #[error("unknown topic or partition")]
    UnknownTopicOrPartition,
    #[error("invalid request")]
    InvalidRequest,
    #[error("unsupported assignor")]
    UnsupportedAssignor,
    #[error("the member epoch is fenced")]
    FencedMemberEpoch,
    #[error("the member epoch is stale")]
    StaleMemberEpoch,
    #[error("the static member's previous incarnation has not left yet")]
    UnreleasedInstanceId,
    #[error("the group is of another type")]
    GroupIdTypeMismatch,
    /// A transactional offset commit outside its producer's transaction (KIP-890).
    #[error("the group's partition is not in the producer's transaction")]
    InvalidTxnState,
    #[error("the group's partition is not in the producer's transaction; abort it")]
    TransactionAbortable,
    #[error("the producer's epoch is fenced by its transaction coordinator")]
    InvalidProducerEpoch,
    /// A consumer or streams group member committing with an OffsetCommit version older than 9.
    #[error(
        "OffsetCommit version 9 or above must be used by members using the consumer group protocol"
    )]
    UnsupportedVersion,
}

/// Why the transaction coordinator's state machine refuses a request (each is a Kafka error code at the API layer).
#[derive(Debug, Error, Clone, Copy, PartialEq, Eq)]
pub enum TxnError {
    /// The transaction is being completed; the client retries (CONCURRENT_TRANSACTIONS).
    #[error("a transaction of this transactional id is being completed")]
    ConcurrentTransactions,
    #[error("the producer id does not belong to this transactional id")]
    InvalidProducerIdMapping,
    /// A newer producer instance (or the coordinator) bumped the epoch (PRODUCER_FENCED;
    /// INVALID_PRODUCER_EPOCH for request versions before it existed).
    #[error("producer epoch {got} is not the current {current}")]
    ProducerFenced { got: i16, current: i16 },
    #[error("{0}")]
    InvalidTxnState(&'static str),
    #[error("transaction timeout {got} ms is not within 1..={max} ms")]
    InvalidTransactionTimeout { got: i32, max: i32 },
    /// No producer id could be allocated (the controller quorum is unreachable).
    #[error("no producer id available")]
    ProducerIdUnavailable,
}

/// Why a request could not be served by the transaction coordinator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum CoordinatorError {
    #[error(transparent)]
    Txn(#[from] TxnError),
    #[error("this broker does not coordinate the transactional id")]
    NotCoordinator,
    #[error("the transactional id's state is being loaded")]
    LoadInProgress,
    #[error("the transaction state could not be written")]
    NotAvailable,
}

impl CoordinatorError {
    /// The Kafka error code; `producer_fenced` says whether the request version knows
    /// PRODUCER_FENCED (older ones get INVALID_PRODUCER_EPOCH, as Kafka answers them).
    pub fn code(self, producer_fenced: bool) -> i16 {
        use CoordinatorError as C;
        use TxnError as T;
        match self {
            C::NotCoordinator => code::NOT_COORDINATOR,
            C::LoadInProgress => code::COORDINATOR_LOAD_IN_PROGRESS,
            C::NotAvailable | C::Txn(T::ProducerIdUnavailable) => code::COORDINATOR_NOT_AVAILABLE,
            C::Txn(T::ConcurrentTransactions) => code::CONCURRENT_TRANSACTIONS,
            C::Txn(T::InvalidProducerIdMapping) => code::INVALID_PRODUCER_ID_MAPPING,
            C::Txn(T::ProducerFenced { .. }) if producer_fenced => code::PRODUCER_FENCED,
            C::Txn(T::ProducerFenced { .. }) => code::INVALID_PRODUCER_EPOCH,
            C::Txn(T::InvalidTxnState(_)) => code::INVALID_TXN_STATE,
            C::Txn(T::InvalidTransactionTimeout { .. }) => code::INVALID_TRANSACTION_TIMEOUT,
        }
    }
}

impl GroupError {
    pub fn code(self) -> i16 {
        match self {
            GroupError::CoordinatorNotAvailable => code::COORDINATOR_NOT_AVAILABLE,
            GroupError::UnsupportedVersion => code::UNSUPPORTED_VERSION,
            GroupError::NotCoordinator => code::NOT_COORDINATOR,
            GroupError::CoordinatorLoadInProgress => code::COORDINATOR_LOAD_IN_PROGRESS,
            GroupError::InvalidGroupId => code::INVALID_GROUP_ID,
            GroupError::UnknownMemberId => code::UNKNOWN_MEMBER_ID,
            GroupError::InvalidSessionTimeout => code::INVALID_SESSION_TIMEOUT,
            GroupError::RebalanceInProgress => code::REBALANCE_IN_PROGRESS,
            GroupError::IllegalGeneration => code::ILLEGAL_GENERATION,
            GroupError::InconsistentGroupProtocol => code::INCONSISTENT_GROUP_PROTOCOL,
            GroupError::FencedInstanceId => code::FENCED_INSTANCE_ID,
            GroupError::MemberIdRequired => code::MEMBER_ID_REQUIRED,
            GroupError::GroupMaxSizeReached => code::GROUP_MAX_SIZE_REACHED,
            GroupError::GroupIdNotFound => code::GROUP_ID_NOT_FOUND,
            GroupError::NonEmptyGroup => code::NON_EMPTY_GROUP,
            GroupError::OffsetMetadataTooLarge => code::OFFSET_METADATA_TOO_LARGE,
            GroupError::GroupSubscribedToTopic => code::GROUP_SUBSCRIBED_TO_TOPIC,
            GroupError::UnknownTopicOrPartition => code::UNKNOWN_TOPIC_OR_PARTITION,
            GroupError::InvalidRequest => code::INVALID_REQUEST,
            GroupError::UnsupportedAssignor => code::UNSUPPORTED_ASSIGNOR,
            GroupError::FencedMemberEpoch => code::FENCED_MEMBER_EPOCH,
            GroupError::StaleMemberEpoch => code::STALE_MEMBER_EPOCH,
            GroupError::UnreleasedInstanceId => code::UNRELEASED_INSTANCE_ID,
            GroupError::GroupIdTypeMismatch => code::INCONSISTENT_GROUP_PROTOCOL,
            GroupError::InvalidTxnState => code::INVALID_TXN_STATE,
            GroupError::TransactionAbortable => code::TRANSACTION_ABORTABLE,
            GroupError::InvalidProducerEpoch => code::INVALID_PRODUCER_EPOCH,
        }
    }
}

/// What streams groups (KIP-1071) answer besides success: Kafka's errors with their messages.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum StreamsError {
    #[error(transparent)]
    Group(#[from] GroupError),
    #[error("{0}")]
    InvalidRequest(String),
    #[error("{0}")]
    InvalidTopology(String),
    #[error("{0}")]
    InvalidTopologyEpoch(String),
    #[error("{0}")]
    FencedMemberEpoch(String),
    #[error("{0}")]
    UnknownMemberId(String),
    #[error("{0}")]
    GroupMaxSizeReached(String),
    #[error("{0}")]
    GroupIdNotFound(String),
    #[error("{0}")]
    FencedInstanceId(String),
    #[error("{0}")]
    UnreleasedInstanceId(String),
}

impl StreamsError {
    pub fn code(&self) -> i16 {
        match self {
            StreamsError::Group(e) => e.code(),
            StreamsError::InvalidRequest(_) => code::INVALID_REQUEST,
            StreamsError::InvalidTopology(_) => code::STREAMS_INVALID_TOPOLOGY,
            StreamsError::InvalidTopologyEpoch(_) => code::STREAMS_INVALID_TOPOLOGY_EPOCH,
            StreamsError::FencedMemberEpoch(_) => code::FENCED_MEMBER_EPOCH,
            StreamsError::UnknownMemberId(_) => code::UNKNOWN_MEMBER_ID,
            StreamsError::GroupMaxSizeReached(_) => code::GROUP_MAX_SIZE_REACHED,
            StreamsError::GroupIdNotFound(_) => code::GROUP_ID_NOT_FOUND,
            StreamsError::FencedInstanceId(_) => code::FENCED_INSTANCE_ID,
            StreamsError::UnreleasedInstanceId(_) => code::UNRELEASED_INSTANCE_ID,
        }
    }

    /// The message the response carries (Kafka's exception message).
    pub fn message(&self) -> Option<String> {
        match self {
            StreamsError::Group(_) => None,
            other => Some(other.to_string()),
        }
    }
}

/// What share groups (KIP-932) answer besides success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum ShareError {
    #[error(transparent)]
    Group(#[from] GroupError),
    #[error("no share session for this member")]
    ShareSessionNotFound,
    #[error("the share session epoch is not the session's")]
    InvalidShareSessionEpoch,
    #[error("too many share sessions")]
    ShareSessionLimitReached,
    #[error("the records are not acquired by this member")]
    InvalidRecordState,
    #[error("unknown topic id")]
    UnknownTopicId,
    #[error("not the leader of the partition")]
    NotLeaderOrFollower,
    #[error("the share state could not be written")]
    Storage,
    #[error("share groups are not offered by this cluster")]
    Unsupported,
    #[error("the share-partition's leader epoch is older than its state's")]
    FencedLeaderEpoch,
    #[error("the share-partition's state was initialized again")]
    FencedStateEpoch,
}

impl ShareError {
    pub fn code(self) -> i16 {
        match self {
            ShareError::Group(e) => e.code(),
            ShareError::ShareSessionNotFound => code::SHARE_SESSION_NOT_FOUND,
            ShareError::InvalidShareSessionEpoch => code::INVALID_SHARE_SESSION_EPOCH,
            ShareError::ShareSessionLimitReached => code::SHARE_SESSION_LIMIT_REACHED,
            ShareError::InvalidRecordState => code::INVALID_RECORD_STATE,
            ShareError::UnknownTopicId => code::UNKNOWN_TOPIC_ID,
            ShareError::NotLeaderOrFollower => code::NOT_LEADER_OR_FOLLOWER,
            ShareError::Storage => code::KAFKA_STORAGE_ERROR,
            ShareError::Unsupported => code::UNSUPPORTED_VERSION,
            ShareError::FencedLeaderEpoch => code::FENCED_LEADER_EPOCH,
            ShareError::FencedStateEpoch => code::FENCED_STATE_EPOCH,
        }
    }
}

/// Kafka error codes used by this broker.
pub mod code {
    pub const NONE: i16 = 0;
    pub const UNKNOWN_SERVER_ERROR: i16 = -1;
    pub const OFFSET_OUT_OF_RANGE: i16 = 1;
    pub const CORRUPT_MESSAGE: i16 = 2;
    pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
    pub const LEADER_NOT_AVAILABLE: i16 = 5;
    pub const REPLICA_NOT_AVAILABLE: i16 = 9;
    pub const MESSAGE_TOO_LARGE: i16 = 10;
    pub const RECORD_LIST_TOO_LARGE: i16 = 18;
    pub const OFFSET_METADATA_TOO_LARGE: i16 = 12;
    pub const COORDINATOR_LOAD_IN_PROGRESS: i16 = 14;
    pub const COORDINATOR_NOT_AVAILABLE: i16 = 15;
    pub const NOT_COORDINATOR: i16 = 16;
    pub const INVALID_TOPIC_EXCEPTION: i16 = 17;
    pub const NOT_ENOUGH_REPLICAS: i16 = 19;
    pub const ILLEGAL_GENERATION: i16 = 22;
    pub const INCONSISTENT_GROUP_PROTOCOL: i16 = 23;
    pub const INVALID_GROUP_ID: i16 = 24;
    pub const UNKNOWN_MEMBER_ID: i16 = 25;
    pub const INVALID_SESSION_TIMEOUT: i16 = 26;
    pub const REBALANCE_IN_PROGRESS: i16 = 27;
    pub const INVALID_REQUIRED_ACKS: i16 = 21;
    pub const UNSUPPORTED_VERSION: i16 = 35;
    pub const TOPIC_ALREADY_EXISTS: i16 = 36;
    pub const INVALID_PARTITIONS: i16 = 37;
    pub const INVALID_REPLICATION_FACTOR: i16 = 38;
    pub const INVALID_REPLICA_ASSIGNMENT: i16 = 39;
    pub const INVALID_CONFIG: i16 = 40;
    pub const INVALID_REQUEST: i16 = 42;
    pub const POLICY_VIOLATION: i16 = 44;
    pub const INVALID_TIMESTAMP: i16 = 32;
    pub const UNSUPPORTED_FOR_MESSAGE_FORMAT: i16 = 43;
    pub const OUT_OF_ORDER_SEQUENCE_NUMBER: i16 = 45;
    pub const INVALID_PRODUCER_EPOCH: i16 = 47;
    pub const INVALID_TXN_STATE: i16 = 48;
    pub const INVALID_PRODUCER_ID_MAPPING: i16 = 49;
    pub const INVALID_TRANSACTION_TIMEOUT: i16 = 50;
    pub const CONCURRENT_TRANSACTIONS: i16 = 51;
    pub const TRANSACTION_COORDINATOR_FENCED: i16 = 52;
    pub const TRANSACTIONAL_ID_NOT_FOUND: i16 = 105;
    /// KIP-890: the producer aborts its transaction and goes on (Produce v11+, TxnOffsetCommit v4+).
    pub const TRANSACTION_ABORTABLE: i16 = 120;
    pub const INVALID_REGULAR_EXPRESSION: i16 = 128;
    pub const UNSTABLE_OFFSET_COMMIT: i16 = 88;
    pub const PRODUCER_FENCED: i16 = 90;
    pub const KAFKA_STORAGE_ERROR: i16 = 56;
    pub const LOG_DIR_NOT_FOUND: i16 = 57;
    pub const DELEGATION_TOKEN_AUTH_DISABLED: i16 = 61;
    pub const DELEGATION_TOKEN_NOT_FOUND: i16 = 62;
    pub const DELEGATION_TOKEN_OWNER_MISMATCH: i16 = 63;
    pub const DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: i16 = 64;
    pub const DELEGATION_TOKEN_AUTHORIZATION_FAILED: i16 = 65;
    pub const DELEGATION_TOKEN_EXPIRED: i16 = 66;
    pub const INVALID_PRINCIPAL_TYPE: i16 = 67;
    pub const NON_EMPTY_GROUP: i16 = 68;
    pub const GROUP_ID_NOT_FOUND: i16 = 69;
    pub const FETCH_SESSION_ID_NOT_FOUND: i16 = 70;
    pub const INVALID_FETCH_SESSION_EPOCH: i16 = 71;
    pub const TOPIC_DELETION_DISABLED: i16 = 73;
    pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
    pub const MEMBER_ID_REQUIRED: i16 = 79;
    pub const PREFERRED_LEADER_NOT_AVAILABLE: i16 = 80;
    pub const GROUP_MAX_SIZE_REACHED: i16 = 81;
    pub const FENCED_INSTANCE_ID: i16 = 82;
    pub const ELIGIBLE_LEADERS_NOT_AVAILABLE: i16 = 83;
    pub const ELECTION_NOT_NEEDED: i16 = 84;
    pub const NO_REASSIGNMENT_IN_PROGRESS: i16 = 85;
    pub const GROUP_SUBSCRIBED_TO_TOPIC: i16 = 86;
    pub const INVALID_RECORD: i16 = 87;
    pub const UNSUPPORTED_COMPRESSION_TYPE: i16 = 76;
    pub const TRANSACTIONAL_ID_AUTHORIZATION_FAILED: i16 = 53;
    pub const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
    pub const GROUP_AUTHORIZATION_FAILED: i16 = 30;
    pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
    pub const SECURITY_DISABLED: i16 = 54;
    pub const OPERATION_NOT_ATTEMPTED: i16 = 55;
    pub const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
    pub const ILLEGAL_SASL_STATE: i16 = 34;
    pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
    pub const RESOURCE_NOT_FOUND: i16 = 91;
    pub const DUPLICATE_RESOURCE: i16 = 92;
    pub const UNACCEPTABLE_CREDENTIAL: i16 = 93;
    pub const UNKNOWN_TOPIC_ID: i16 = 100;
    pub const REBOOTSTRAP_REQUIRED: i16 = 129;
    pub const STREAMS_INVALID_TOPOLOGY: i16 = 130;
    pub const STREAMS_INVALID_TOPOLOGY_EPOCH: i16 = 131;
    pub const STREAMS_TOPOLOGY_FENCED: i16 = 132;
    pub const STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED: i16 = 135;
    pub const FENCED_MEMBER_EPOCH: i16 = 110;
    pub const UNRELEASED_INSTANCE_ID: i16 = 111;
    pub const UNSUPPORTED_ASSIGNOR: i16 = 112;
    pub const STALE_MEMBER_EPOCH: i16 = 113;
    pub const UNSUPPORTED_ENDPOINT_TYPE: i16 = 115;
    pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
    pub const INVALID_RECORD_STATE: i16 = 121;
    pub const SHARE_SESSION_NOT_FOUND: i16 = 122;
    pub const INVALID_SHARE_SESSION_EPOCH: i16 = 123;
    pub const FENCED_STATE_EPOCH: i16 = 124;
    pub const SHARE_SESSION_LIMIT_REACHED: i16 = 133;
    pub const REQUEST_TIMED_OUT: i16 = 7;
    pub const NOT_ENOUGH_REPLICAS_AFTER_APPEND: i16 = 20;
    pub const NOT_CONTROLLER: i16 = 41;
    pub const FENCED_LEADER_EPOCH: i16 = 74;
    pub const STALE_BROKER_EPOCH: i16 = 77;
    pub const THROTTLING_QUOTA_EXCEEDED: i16 = 89;
    pub const INVALID_UPDATE_VERSION: i16 = 95;
    pub const SNAPSHOT_NOT_FOUND: i16 = 98;
    pub const DUPLICATE_BROKER_REGISTRATION: i16 = 101;
    pub const BROKER_ID_NOT_REGISTERED: i16 = 102;
    pub const INCONSISTENT_CLUSTER_ID: i16 = 104;
    pub const INELIGIBLE_REPLICA: i16 = 107;
    pub const DUPLICATE_VOTER: i16 = 126;
    pub const VOTER_NOT_FOUND: i16 = 127;
    pub const CONTROLLER_ID_NOT_REGISTERED: i16 = 136;
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
            Error::ThrottlingQuotaExceeded => code::THROTTLING_QUOTA_EXCEEDED,
            Error::PolicyViolation(_) => code::POLICY_VIOLATION,
            Error::UnsupportedCompressionType(_) => code::UNSUPPORTED_COMPRESSION_TYPE,
            Error::TransactionalIdAuthorizationFailed => {
                code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            }
            Error::InvalidRequiredAcks(_) => code::INVALID_REQUIRED_ACKS,
            Error::NotEnoughReplicas { .. } => code::NOT_ENOUGH_REPLICAS,
            Error::TopicDeletionDisabled => code::TOPIC_DELETION_DISABLED,
            Error::UnknownLeaderEpoch(_) => code::UNKNOWN_LEADER_EPOCH,
            Error::ElectionNotNeeded => code::ELECTION_NOT_NEEDED,
            Error::PreferredLeaderNotAvailable => code::PREFERRED_LEADER_NOT_AVAILABLE,
            Error::EligibleLeadersNotAvailable => code::ELIGIBLE_LEADERS_NOT_AVAILABLE,
            Error::NoReassignmentInProgress => code::NO_REASSIGNMENT_IN_PROGRESS,
            Error::LogDirNotFound(_) => code::LOG_DIR_NOT_FOUND,
            Error::ReplicaNotAvailable => code::REPLICA_NOT_AVAILABLE,
            Error::NotLeaderOrFollower => code::NOT_LEADER_OR_FOLLOWER,
            Error::NotInTransaction => code::INVALID_TXN_STATE,
            Error::ProducerFencedByCoordinator => code::INVALID_PRODUCER_EPOCH,
            Error::TransactionNotVerified(_) | Error::PreviousTransactionCompleting => {
                code::NOT_ENOUGH_REPLICAS
            }
            Error::NotController => code::NOT_CONTROLLER,
            Error::SnapshotNotFound => code::SNAPSHOT_NOT_FOUND,
            Error::RequestTimedOut | Error::VoterChangeTimedOut(_) => code::REQUEST_TIMED_OUT,
            Error::VoterChangeUnsupported(_) => code::UNSUPPORTED_VERSION,
            Error::DuplicateVoter(_) => code::DUPLICATE_VOTER,
            Error::VoterNotFound(_) => code::VOTER_NOT_FOUND,
            Error::StaleBrokerEpoch { .. } => code::STALE_BROKER_EPOCH,
            Error::BrokerIdNotRegistered(_) => code::BROKER_ID_NOT_REGISTERED,
            Error::ControllerIdNotRegistered(_) => code::CONTROLLER_ID_NOT_REGISTERED,
            Error::DuplicateBrokerRegistration(_) => code::DUPLICATE_BROKER_REGISTRATION,
            Error::InconsistentClusterId { .. } => code::INCONSISTENT_CLUSTER_ID,
            Error::FencedLeaderEpoch { .. } => code::FENCED_LEADER_EPOCH,
            Error::InvalidUpdateVersion { .. } | Error::FeatureUpdateRefused(_) => {
                code::INVALID_UPDATE_VERSION
            }
            Error::IneligibleReplica(..) => code::INELIGIBLE_REPLICA,
            Error::NotEnoughReplicasAfterAppend { .. } => code::NOT_ENOUGH_REPLICAS_AFTER_APPEND,
            Error::Remote { code, .. } => *code,
            Error::Internal(_) => code::UNKNOWN_SERVER_ERROR,
            Error::Storage(e) => match e {
                StorageError::OffsetOutOfRange { .. } => code::OFFSET_OUT_OF_RANGE,
                StorageError::Record(r) => record_code(r),
                StorageError::Producer(ProducerError::OutOfOrderSequence { .. }) => {
                    code::OUT_OF_ORDER_SEQUENCE_NUMBER
                }
                StorageError::Producer(ProducerError::InvalidProducerEpoch { .. }) => {
                    code::INVALID_PRODUCER_EPOCH
                }
                StorageError::Producer(ProducerError::CoordinatorFenced { .. }) => {
                    code::TRANSACTION_COORDINATOR_FENCED
                }
                StorageError::Io(_)
                | StorageError::Offline
                | StorageError::Corrupt(_)
                | StorageError::Locked(_) => code::KAFKA_STORAGE_ERROR,
                // A follower's own fetch went wrong; no client request gets this.
                StorageError::UnexpectedAppendOffset { .. } => code::UNKNOWN_SERVER_ERROR,
            },
            Error::Record(r) => record_code(r),
            Error::Token(e) => e.code(),
        }
    }

    /// The error another node answered with (the reverse of [`Error::code`]), keeping its
    /// message. `None` for NONE.
    pub fn from_code(error_code: i16, message: Option<&str>) -> Option<Self> {
        let text = message.unwrap_or_default().to_string();
        Some(match error_code {
            code::NONE => return None,
            code::NOT_CONTROLLER => Error::NotController,
            code::SNAPSHOT_NOT_FOUND => Error::SnapshotNotFound,
            code::UNKNOWN_TOPIC_OR_PARTITION => Error::UnknownTopicOrPartition,
            code::UNKNOWN_TOPIC_ID => Error::UnknownTopicId,
            code::TOPIC_ALREADY_EXISTS => Error::TopicAlreadyExists(text),
            code::INVALID_TOPIC_EXCEPTION => Error::InvalidTopic(text),
            code::INVALID_PARTITIONS => Error::InvalidPartitions(text),
            code::INVALID_REPLICATION_FACTOR => Error::InvalidReplicationFactor(text),
            code::INVALID_REPLICA_ASSIGNMENT => Error::InvalidReplicaAssignment(text),
            code::INVALID_CONFIG => Error::InvalidConfig(text),
            code::INVALID_REQUEST => Error::InvalidRequest(text),
            code::THROTTLING_QUOTA_EXCEEDED => Error::ThrottlingQuotaExceeded,
            code::POLICY_VIOLATION => Error::PolicyViolation(text),
            code::INVALID_UPDATE_VERSION => Error::FeatureUpdateRefused(text),
            code::UNSUPPORTED_COMPRESSION_TYPE => Error::UnsupportedCompressionType(text),
            code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED => {
                Error::TransactionalIdAuthorizationFailed
            }
            code::TOPIC_DELETION_DISABLED => Error::TopicDeletionDisabled,
            code::ELECTION_NOT_NEEDED => Error::ElectionNotNeeded,
            code::PREFERRED_LEADER_NOT_AVAILABLE => Error::PreferredLeaderNotAvailable,
            code::ELIGIBLE_LEADERS_NOT_AVAILABLE => Error::EligibleLeadersNotAvailable,
            // The controller's reason stays with the code (a voter change's, say).
            code::REQUEST_TIMED_OUT if !text.is_empty() => Error::Remote {
                code: code::REQUEST_TIMED_OUT,
                message: text,
            },
            code::REQUEST_TIMED_OUT => Error::RequestTimedOut,
            code::DUPLICATE_VOTER => Error::DuplicateVoter(text),
            code::VOTER_NOT_FOUND => Error::VoterNotFound(text),
            code::NOT_LEADER_OR_FOLLOWER => Error::NotLeaderOrFollower,
            code::BROKER_ID_NOT_REGISTERED => Error::BrokerIdNotRegistered(-1),
            code::DUPLICATE_BROKER_REGISTRATION => Error::DuplicateBrokerRegistration(-1),
            other => match TokenError::from_code(other) {
                Some(e) => Error::Token(e),
                None => Error::Remote {
                    code: other,
                    message: text,
                },
            },
        })
    }

    /// Text for the response's error message field, where the API has one.
    pub fn message(&self) -> String {
        match self {
            // Kafka's own words, as its controller answers them.
            Error::InvalidReplicaAssignment(text) | Error::InvalidReplicationFactor(text) => {
                text.clone()
            }
            other => other.to_string(),
        }
    }

    /// The records a rejected batch was refused for, by index (Produce's `record_errors`).
    pub fn record_issues(&self) -> &[crate::record::RecordIssue] {
        match self {
            Error::Record(r) | Error::Storage(StorageError::Record(r)) => r.record_issues(),
            _ => &[],
        }
    }
}

fn record_code(e: &RecordError) -> i16 {
    match e {
        RecordError::Corrupt(_) => code::CORRUPT_MESSAGE,
        RecordError::Invalid(_) => code::INVALID_RECORD,
        RecordError::UnsupportedMagic(_) => code::UNSUPPORTED_FOR_MESSAGE_FORMAT,
        RecordError::TooLarge { .. } => code::MESSAGE_TOO_LARGE,
        RecordError::Compression(_) => code::CORRUPT_MESSAGE,
        RecordError::CodecNotAllowed(_) => code::UNSUPPORTED_COMPRESSION_TYPE,
        RecordError::InvalidRecords { .. } => code::INVALID_RECORD,
        RecordError::InvalidTimestamps { .. } => code::INVALID_TIMESTAMP,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Our constants against the code table `kafka-protocol` generates from Kafka's sources.
    #[test]
    fn codes_survive_a_round_trip_through_another_node() {
        for error in [
            Error::NotController,
            Error::TopicAlreadyExists("t".into()),
            Error::InvalidReplicationFactor("3 > 1".into()),
            Error::ElectionNotNeeded,
            Error::StaleBrokerEpoch { got: 1, current: 2 },
            Error::FencedLeaderEpoch { got: 1, current: 2 },
        ] {
            let back = Error::from_code(error.code(), Some(&error.message())).unwrap();
            assert_eq!(back.code(), error.code(), "{error}");
        }
        assert!(Error::from_code(code::NONE, None).is_none());
    }

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
            (code::POLICY_VIOLATION, R::PolicyViolation),
            (
                code::UNSUPPORTED_COMPRESSION_TYPE,
                R::UnsupportedCompressionType,
            ),
            (
                code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                R::TransactionalIdAuthorizationFailed,
            ),
            (code::INVALID_TIMESTAMP, R::InvalidTimestamp),
            (code::LEADER_NOT_AVAILABLE, R::LeaderNotAvailable),
            (code::REPLICA_NOT_AVAILABLE, R::ReplicaNotAvailable),
            (code::LOG_DIR_NOT_FOUND, R::LogDirNotFound),
            (
                code::PREFERRED_LEADER_NOT_AVAILABLE,
                R::PreferredLeaderNotAvailable,
            ),
            (
                code::ELIGIBLE_LEADERS_NOT_AVAILABLE,
                R::EligibleLeadersNotAvailable,
            ),
            (code::ELECTION_NOT_NEEDED, R::ElectionNotNeeded),
            (code::NOT_LEADER_OR_FOLLOWER, R::NotLeaderOrFollower),
            (code::REQUEST_TIMED_OUT, R::RequestTimedOut),
            (
                code::NOT_ENOUGH_REPLICAS_AFTER_APPEND,
                R::NotEnoughReplicasAfterAppend,
            ),
            (code::NOT_CONTROLLER, R::NotController),
            (code::FENCED_LEADER_EPOCH, R::FencedLeaderEpoch),
            (code::STALE_BROKER_EPOCH, R::StaleBrokerEpoch),
            (code::INVALID_UPDATE_VERSION, R::InvalidUpdateVersion),
            (
                code::DUPLICATE_BROKER_REGISTRATION,
                R::DuplicateBrokerRegistration,
            ),
            (code::BROKER_ID_NOT_REGISTERED, R::BrokerIdNotRegistered),
            (code::INCONSISTENT_CLUSTER_ID, R::InconsistentClusterId),
            (code::INELIGIBLE_REPLICA, R::IneligibleReplica),
            (
                code::NO_REASSIGNMENT_IN_PROGRESS,
                R::NoReassignmentInProgress,
            ),
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
            (code::REBOOTSTRAP_REQUIRED, R::RebootstrapRequired),
            (code::UNSUPPORTED_ENDPOINT_TYPE, R::UnsupportedEndpointType),
            (code::OFFSET_METADATA_TOO_LARGE, R::OffsetMetadataTooLarge),
            (
                code::COORDINATOR_LOAD_IN_PROGRESS,
                R::CoordinatorLoadInProgress,
            ),
            (code::COORDINATOR_NOT_AVAILABLE, R::CoordinatorNotAvailable),
            (code::NOT_COORDINATOR, R::NotCoordinator),
            (code::ILLEGAL_GENERATION, R::IllegalGeneration),
            (
                code::INCONSISTENT_GROUP_PROTOCOL,
                R::InconsistentGroupProtocol,
            ),
            (code::INVALID_GROUP_ID, R::InvalidGroupId),
            (code::UNKNOWN_MEMBER_ID, R::UnknownMemberId),
            (code::INVALID_SESSION_TIMEOUT, R::InvalidSessionTimeout),
            (code::REBALANCE_IN_PROGRESS, R::RebalanceInProgress),
            (
                code::DELEGATION_TOKEN_AUTH_DISABLED,
                R::DelegationTokenAuthDisabled,
            ),
            (code::DELEGATION_TOKEN_NOT_FOUND, R::DelegationTokenNotFound),
            (
                code::DELEGATION_TOKEN_OWNER_MISMATCH,
                R::DelegationTokenOwnerMismatch,
            ),
            (
                code::DELEGATION_TOKEN_REQUEST_NOT_ALLOWED,
                R::DelegationTokenRequestNotAllowed,
            ),
            (
                code::DELEGATION_TOKEN_AUTHORIZATION_FAILED,
                R::DelegationTokenAuthorizationFailed,
            ),
            (code::DELEGATION_TOKEN_EXPIRED, R::DelegationTokenExpired),
            (code::INVALID_PRINCIPAL_TYPE, R::InvalidPrincipalType),
            (code::NON_EMPTY_GROUP, R::NonEmptyGroup),
            (code::GROUP_ID_NOT_FOUND, R::GroupIdNotFound),
            (code::MEMBER_ID_REQUIRED, R::MemberIdRequired),
            (code::GROUP_MAX_SIZE_REACHED, R::GroupMaxSizeReached),
            (code::FENCED_INSTANCE_ID, R::FencedInstanceId),
            (code::GROUP_SUBSCRIBED_TO_TOPIC, R::GroupSubscribedToTopic),
            (code::FENCED_MEMBER_EPOCH, R::FencedMemberEpoch),
            (code::UNRELEASED_INSTANCE_ID, R::UnreleasedInstanceId),
            (code::UNSUPPORTED_ASSIGNOR, R::UnsupportedAssignor),
            (code::STALE_MEMBER_EPOCH, R::StaleMemberEpoch),
            (
                code::OUT_OF_ORDER_SEQUENCE_NUMBER,
                R::OutOfOrderSequenceNumber,
            ),
            (code::INVALID_PRODUCER_EPOCH, R::InvalidProducerEpoch),
            (
                code::TRANSACTION_COORDINATOR_FENCED,
                R::TransactionCoordinatorFenced,
            ),
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
