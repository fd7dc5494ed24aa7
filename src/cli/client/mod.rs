//! The admin commands' client: a connection to a bootstrap server and, opened when first
//! needed, to the other nodes a request belongs to (a group's coordinator, a partition's
//! leader), each through this broker's own client side ([`crate::net::PeerConnection`]), with
//! the versions to use agreed from ApiVersions as Kafka's AdminClient agrees them. Answers come
//! back as plain values; errors carry the broker's error message, or Kafka's default text for
//! the code when it sent none, as Kafka's tools print them.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | connections, agreed versions, brokers, the cluster, error texts |
//! | `topics.rs` | Metadata, DescribeTopicPartitions, CreateTopics, DeleteTopics, CreatePartitions |
//! | `configs.rs` | DescribeConfigs with synonyms, IncrementalAlterConfigs |
//! | `groups.rs` | FindCoordinator, ListGroups, DescribeGroups / ConsumerGroupDescribe, OffsetFetch, OffsetCommit, OffsetDelete, DeleteGroups |
//! | `offsets.rs` | ListOffsets to each partition's leader |
//! | `quorum.rs` | DescribeQuorum, DescribeCluster of the controllers |
//! | `scram.rs` | AlterUserScramCredentials (salted here), DescribeUserScramCredentials |
//! | `quotas.rs` | DescribeClientQuotas, AlterClientQuotas |
//! | `records.rs` | Produce, Fetch (batches decoded), ConsumerGroupHeartbeat |

use crate::net::{PeerConnection, PeerSecurity, RequestError};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use std::collections::BTreeMap;
use std::time::Duration;
use thiserror::Error;

mod configs;
mod groups;
mod offsets;
mod quorum;
mod quotas;
mod records;
mod scram;
mod topics;

pub use configs::{ConfigResourceType, DescribedConfig, Synonym, source_name};
pub use groups::{CommittedOffset, GroupDescription, GroupListing, GroupMember, MemberAssignment};
pub use offsets::OffsetSpec;
pub use quorum::{QuorumEndpoint, QuorumInfo, QuorumReplica};
pub use quotas::{QuotaEntityParts, QuotaMatch};
pub use records::{FetchedPartition, FetchedRecord, Membership, TopicLayout};
pub use scram::{ScramUpsert, UserCredentials};
pub use topics::{
    ConfigEntry, DEFAULT_CONFIG_SOURCE, NewTopicRequest, PartitionInfo, TopicDescription,
    TopicListing,
};

#[derive(Debug, Error)]
pub enum AdminError {
    #[error("{0}")]
    Request(#[from] RequestError),
    #[error("no bootstrap server given")]
    NoBootstrap,
    /// A Kafka error code and its message.
    #[error("{message}")]
    Kafka { code: i16, message: String },
    #[error("The node does not support {0}")]
    Unsupported(&'static str),
    #[error("node {0} is not in the cluster's metadata")]
    UnknownNode(i32),
}

impl AdminError {
    /// The Kafka error code, when the broker answered with one.
    pub fn code(&self) -> Option<i16> {
        match self {
            AdminError::Kafka { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// How long one request may take (Kafka's `request.timeout.ms` default is 30 s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The versions of each API this client speaks: the oldest it can build, and the newest.
const OUR_VERSIONS: &[(ApiKey, i16, i16)] = &[
    (ApiKey::Metadata, 1, 12),
    (ApiKey::CreateTopics, 2, 7),
    (ApiKey::DeleteTopics, 1, 6),
    (ApiKey::CreatePartitions, 0, 3),
    (ApiKey::DescribeConfigs, 1, 4),
    (ApiKey::IncrementalAlterConfigs, 0, 1),
    (ApiKey::DescribeTopicPartitions, 0, 0),
    (ApiKey::FindCoordinator, 4, 6),
    (ApiKey::ListGroups, 4, 5),
    (ApiKey::DescribeGroups, 1, 6),
    (ApiKey::ConsumerGroupDescribe, 0, 1),
    (ApiKey::ConsumerGroupHeartbeat, 0, 1),
    (ApiKey::OffsetFetch, 8, 9),
    (ApiKey::OffsetCommit, 2, 9),
    (ApiKey::DeleteGroups, 0, 2),
    (ApiKey::OffsetDelete, 0, 0),
    (ApiKey::AlterUserScramCredentials, 0, 0),
    (ApiKey::DescribeUserScramCredentials, 0, 0),
    (ApiKey::DescribeClientQuotas, 0, 1),
    (ApiKey::AlterClientQuotas, 0, 1),
    (ApiKey::ListOffsets, 1, 8),
    (ApiKey::DescribeCluster, 0, 1),
    (ApiKey::DescribeQuorum, 0, 2),
    (ApiKey::AddRaftVoter, 0, 0),
    (ApiKey::RemoveRaftVoter, 0, 0),
    (ApiKey::Produce, 3, 11),
    (ApiKey::Fetch, 4, 12),
];

/// One connection and the versions agreed on it.
struct Connection {
    connection: PeerConnection,
    /// Per API key, the version to use.
    versions: BTreeMap<i16, i16>,
    /// What the node advertised: API key, oldest and newest version.
    advertised: Vec<(i16, i16, i16)>,
}

/// A connected admin client: the bootstrap connection, and connections to other nodes
/// (coordinators, partition leaders) opened when first needed.
pub struct AdminClient {
    bootstrap: Connection,
    security: PeerSecurity,
    /// Node id to address, from Metadata (filled when a node is first asked for).
    addresses: BTreeMap<i32, String>,
    nodes: BTreeMap<i32, Connection>,
}

/// A broker as Metadata lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerNode {
    pub id: i32,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
}

fn kafka_error(code: i16, message: Option<&StrBytes>) -> AdminError {
    let message = match message.map(|m| m.to_string()).filter(|m| !m.is_empty()) {
        Some(message) => message,
        None => default_message(code).to_string(),
    };
    AdminError::Kafka { code, message }
}

/// Kafka's default text for the error codes admin requests answer (its `Errors` enum).
pub fn default_message(code: i16) -> &'static str {
    match code {
        1 => "The requested offset is not within the range of offsets maintained by the server.",
        2 => {
            "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt."
        }
        3 => "This server does not host this topic-partition.",
        6 => {
            "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."
        }
        5 => {
            "There is no leader for this topic-partition as we are in the middle of a leadership election."
        }
        10 => {
            "The request included a message larger than the max message size the server will accept."
        }
        14 => "The coordinator is loading and hence can't process requests.",
        15 => "The coordinator is not available.",
        16 => "This is not the correct coordinator.",
        22 => "Specified group generation id is not valid.",
        24 => "The configured groupId is invalid.",
        25 => "The coordinator is not aware of this member.",
        27 => "The group is rebalancing, so a rejoin is needed.",
        30 => "Group authorization failed.",
        7 => "The request timed out.",
        17 => "The request attempted to perform an operation on an invalid topic.",
        29 => "Topic authorization failed.",
        31 => "Cluster authorization failed.",
        36 => "Topic with this name already exists.",
        37 => "Number of partitions is below 1.",
        38 => "Replication factor is below 1 or larger than the number of available brokers.",
        39 => "Replica assignment is invalid.",
        40 => "Configuration is invalid.",
        41 => "This is not the correct controller for this cluster.",
        42 => {
            "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details."
        }
        35 => "The version of API is not supported.",
        44 => "Request parameters do not satisfy the configured policy.",
        58 => "SASL Authentication failed.",
        68 => "The group is not empty.",
        69 => "The group id does not exist.",
        87 => "This record has failed the validation on broker and hence will be rejected.",
        73 => "Topic deletion is disabled.",
        86 => {
            "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."
        }
        100 => "This server does not host this topic ID.",
        _ => "An unexpected error occurred.",
    }
}

/// The cluster as Metadata describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterDescription {
    pub cluster_id: String,
    pub controller: Option<i32>,
    pub brokers: Vec<BrokerNode>,
}

impl AdminError {
    /// A failed request as Kafka's tools print it: the exception's class and message.
    pub fn tool_text(&self) -> String {
        match self {
            AdminError::Kafka { code, message } => format!("{}: {message}", java_exception(*code)),
            other => other.to_string(),
        }
    }
}

/// The exception Kafka's Java client raises for an error code (`Errors.exception()`), as its
/// tools print it in their messages.
pub fn java_exception(code: i16) -> &'static str {
    match code {
        1 => "org.apache.kafka.common.errors.OffsetOutOfRangeException",
        3 => "org.apache.kafka.common.errors.UnknownTopicOrPartitionException",
        5 => "org.apache.kafka.common.errors.LeaderNotAvailableException",
        6 => "org.apache.kafka.common.errors.NotLeaderOrFollowerException",
        7 => "org.apache.kafka.common.errors.TimeoutException",
        14 => "org.apache.kafka.common.errors.CoordinatorLoadInProgressException",
        15 => "org.apache.kafka.common.errors.CoordinatorNotAvailableException",
        16 => "org.apache.kafka.common.errors.NotCoordinatorException",
        22 => "org.apache.kafka.common.errors.IllegalGenerationException",
        24 => "org.apache.kafka.common.errors.InvalidGroupIdException",
        25 => "org.apache.kafka.common.errors.UnknownMemberIdException",
        27 => "org.apache.kafka.common.errors.RebalanceInProgressException",
        29 => "org.apache.kafka.common.errors.TopicAuthorizationException",
        30 => "org.apache.kafka.common.errors.GroupAuthorizationException",
        31 => "org.apache.kafka.common.errors.ClusterAuthorizationException",
        35 => "org.apache.kafka.common.errors.UnsupportedVersionException",
        40 => "org.apache.kafka.common.errors.InvalidConfigurationException",
        42 => "org.apache.kafka.common.errors.InvalidRequestException",
        68 => "org.apache.kafka.common.errors.GroupNotEmptyException",
        69 => "org.apache.kafka.common.errors.GroupIdNotFoundException",
        86 => "org.apache.kafka.common.errors.GroupSubscribedToTopicException",
        91 => "org.apache.kafka.common.errors.ResourceNotFoundException",
        126 => "org.apache.kafka.common.errors.DuplicateVoterException",
        127 => "org.apache.kafka.common.errors.VoterNotFoundException",
        _ => "org.apache.kafka.common.errors.UnknownServerException",
    }
}

impl AdminClient {
    /// Connects to the first of `bootstrap` (comma-separated host:port) that answers.
    pub async fn connect(bootstrap: &str, security: &PeerSecurity) -> Result<Self, AdminError> {
        let mut last = AdminError::NoBootstrap;
        for address in bootstrap
            .split(',')
            .map(str::trim)
            .filter(|a| !a.is_empty())
        {
            match Connection::open(address, security).await {
                Ok(connection) => {
                    return Ok(Self {
                        bootstrap: connection,
                        security: security.clone(),
                        addresses: BTreeMap::new(),
                        nodes: BTreeMap::new(),
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    /// The address of the bootstrap connection.
    pub fn bootstrap_address(&self) -> &str {
        self.bootstrap.connection.address()
    }

    /// What the bootstrap node advertised in ApiVersions: API key, oldest and newest version.
    pub fn advertised(&self) -> &[(i16, i16, i16)] {
        &self.bootstrap.advertised
    }

    /// Whether the bootstrap node serves `api` in a version this client speaks.
    pub fn supports(&self, api: ApiKey) -> bool {
        self.bootstrap.versions.contains_key(&(api as i16))
    }

    fn version(&self, api: ApiKey, name: &'static str) -> Result<i16, AdminError> {
        self.bootstrap.version(api, name)
    }

    /// Sends a request to the bootstrap node.
    async fn call<Req, Resp>(
        &mut self,
        api: ApiKey,
        name: &'static str,
        request: &Req,
    ) -> Result<Resp, AdminError>
    where
        Req: Encodable + HeaderVersion,
        Resp: Decodable + HeaderVersion,
    {
        self.bootstrap.call(api, name, request).await
    }

    /// Sends a request to node `node`, connecting to it first when needed.
    async fn call_node<Req, Resp>(
        &mut self,
        node: i32,
        api: ApiKey,
        name: &'static str,
        request: &Req,
    ) -> Result<Resp, AdminError>
    where
        Req: Encodable + HeaderVersion,
        Resp: Decodable + HeaderVersion,
    {
        self.node(node).await?.call(api, name, request).await
    }

    /// The version node `node` agreed for `api`.
    async fn node_version(
        &mut self,
        node: i32,
        api: ApiKey,
        name: &'static str,
    ) -> Result<i16, AdminError> {
        self.node(node).await?.version(api, name)
    }

    async fn node(&mut self, node: i32) -> Result<&mut Connection, AdminError> {
        if !self.nodes.contains_key(&node) {
            if !self.addresses.contains_key(&node) {
                self.brokers().await?;
            }
            let address = self
                .addresses
                .get(&node)
                .cloned()
                .ok_or(AdminError::UnknownNode(node))?;
            let connection = Connection::open(&address, &self.security).await?;
            self.nodes.insert(node, connection);
        }
        self.nodes
            .get_mut(&node)
            .ok_or(AdminError::UnknownNode(node))
    }

    /// The brokers Metadata lists, by id.
    pub async fn brokers(&mut self) -> Result<Vec<BrokerNode>, AdminError> {
        Ok(self.describe_cluster().await?.brokers)
    }

    /// The cluster id, the controller and the brokers (by id), from Metadata; the brokers'
    /// addresses are kept for connecting to them.
    pub async fn describe_cluster(&mut self) -> Result<ClusterDescription, AdminError> {
        let request = MetadataRequest::default()
            .with_topics(Some(Vec::new()))
            .with_allow_auto_topic_creation(false);
        let response: MetadataResponse = self.call(ApiKey::Metadata, "Metadata", &request).await?;
        let mut brokers: Vec<BrokerNode> = response
            .brokers
            .iter()
            .map(|b| BrokerNode {
                id: b.node_id.0,
                host: b.host.to_string(),
                port: b.port,
                rack: b.rack.as_ref().map(|r| r.to_string()),
            })
            .collect();
        brokers.sort_by_key(|b| b.id);
        for broker in &brokers {
            self.addresses
                .insert(broker.id, format!("{}:{}", broker.host, broker.port));
        }
        Ok(ClusterDescription {
            cluster_id: response
                .cluster_id
                .map(|c| c.to_string())
                .unwrap_or_default(),
            controller: (response.controller_id.0 >= 0).then_some(response.controller_id.0),
            brokers,
        })
    }

    /// Where node `id` is reached (from a listing other than Metadata's).
    fn remember_address(&mut self, id: i32, address: &str) {
        self.addresses.insert(id, address.to_string());
    }

    /// ApiVersions of node `node`: API key, oldest and newest version.
    pub async fn node_api_versions(
        &mut self,
        node: i32,
    ) -> Result<Vec<(i16, i16, i16)>, AdminError> {
        Ok(self.node(node).await?.advertised.clone())
    }
}

impl Connection {
    async fn open(address: &str, security: &PeerSecurity) -> Result<Self, AdminError> {
        let mut connection =
            PeerConnection::connect(address, "sluice-admin", REQUEST_TIMEOUT, security).await?;
        let response: ApiVersionsResponse = connection
            .request(
                ApiKey::ApiVersions,
                3,
                &ApiVersionsRequest::default()
                    .with_client_software_name(StrBytes::from_static_str("sluice-admin"))
                    .with_client_software_version(StrBytes::from_static_str(env!(
                        "CARGO_PKG_VERSION"
                    ))),
                REQUEST_TIMEOUT,
            )
            .await?;
        if response.error_code != 0 {
            return Err(kafka_error(response.error_code, None));
        }
        let advertised: Vec<(i16, i16, i16)> = response
            .api_keys
            .iter()
            .map(|k| (k.api_key, k.min_version, k.max_version))
            .collect();
        let versions = OUR_VERSIONS
            .iter()
            .filter_map(|(api, oldest, newest)| {
                let (_, min, max) = advertised.iter().find(|(key, ..)| *key == *api as i16)?;
                let version = (*newest).min(*max);
                (version >= *min && version >= *oldest).then_some((*api as i16, version))
            })
            .collect();
        Ok(Self {
            connection,
            versions,
            advertised,
        })
    }

    fn version(&self, api: ApiKey, name: &'static str) -> Result<i16, AdminError> {
        self.versions
            .get(&(api as i16))
            .copied()
            .ok_or(AdminError::Unsupported(name))
    }

    async fn call<Req, Resp>(
        &mut self,
        api: ApiKey,
        name: &'static str,
        request: &Req,
    ) -> Result<Resp, AdminError>
    where
        Req: Encodable + HeaderVersion,
        Resp: Decodable + HeaderVersion,
    {
        let version = self.version(api, name)?;
        Ok(self
            .connection
            .request(api, version, request, REQUEST_TIMEOUT)
            .await?)
    }
}
