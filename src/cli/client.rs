//! The admin commands' client: one connection to a bootstrap server through this broker's own
//! client side ([`crate::net::PeerConnection`]), the versions to use agreed from ApiVersions as
//! Kafka's AdminClient agrees them, and the few admin requests the commands make, answered as
//! plain values. Errors carry the broker's error message, or Kafka's default text for the code
//! when it sent none, as Kafka's tools print them.

use crate::net::{PeerConnection, PeerSecurity, RequestError};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, ApiVersionsResponse, CreatePartitionsRequest,
    CreatePartitionsResponse, CreateTopicsRequest, CreateTopicsResponse, DeleteTopicsRequest,
    DeleteTopicsResponse, DescribeConfigsRequest, DescribeConfigsResponse,
    DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, MetadataRequest,
    MetadataResponse, TopicName, create_partitions_request, create_topics_request,
    describe_configs_request, describe_topic_partitions_request,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, StrBytes};
use std::collections::BTreeMap;
use std::time::Duration;
use thiserror::Error;

#[derive(Debug, Error)]
pub enum AdminError {
    #[error("{0}")]
    Request(#[from] RequestError),
    #[error("no bootstrap server given")]
    NoBootstrap,
    /// A Kafka error code and its message.
    #[error("{message}")]
    Kafka { code: i16, message: String },
    #[error("The broker does not support {0}")]
    Unsupported(&'static str),
}

/// How long one request may take (Kafka's `request.timeout.ms` default is 30 s).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The highest version of each API this client speaks.
const OUR_VERSIONS: &[(ApiKey, i16)] = &[
    (ApiKey::Metadata, 12),
    (ApiKey::CreateTopics, 7),
    (ApiKey::DeleteTopics, 6),
    (ApiKey::CreatePartitions, 3),
    (ApiKey::DescribeConfigs, 4),
    (ApiKey::DescribeTopicPartitions, 0),
];

/// A connected admin client.
pub struct AdminClient {
    connection: PeerConnection,
    versions: BTreeMap<i16, i16>,
}

/// A topic as Metadata lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicListing {
    pub name: String,
    pub id: uuid::Uuid,
    pub internal: bool,
}

/// One partition of a described topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionInfo {
    pub partition: i32,
    /// None: no leader.
    pub leader: Option<i32>,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// None: the broker did not say (Metadata has no ELR).
    pub elr: Option<Vec<i32>>,
    pub last_known_elr: Option<Vec<i32>>,
}

/// A described topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicDescription {
    pub name: String,
    pub id: uuid::Uuid,
    pub partitions: Vec<PartitionInfo>,
}

/// One config entry as DescribeConfigs gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEntry {
    pub name: String,
    pub value: Option<String>,
    /// Kafka's ConfigSource id (5: DEFAULT_CONFIG).
    pub source: i8,
}

/// Kafka's `DEFAULT_CONFIG` source.
pub const DEFAULT_CONFIG_SOURCE: i8 = 5;

/// A topic to create: `-1` counts are the broker's defaults.
#[derive(Debug, Clone, Default)]
pub struct NewTopicRequest {
    pub name: String,
    pub partitions: i32,
    pub replication_factor: i16,
    pub assignments: Vec<(i32, Vec<i32>)>,
    pub configs: Vec<(String, String)>,
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
        3 => "This server does not host this topic-partition.",
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
        44 => "Request parameters do not satisfy the configured policy.",
        73 => "Topic deletion is disabled.",
        100 => "This server does not host this topic ID.",
        _ => "An unexpected error occurred.",
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
            match Self::connect_one(address, security).await {
                Ok(client) => return Ok(client),
                Err(e) => last = e,
            }
        }
        Err(last)
    }

    async fn connect_one(address: &str, security: &PeerSecurity) -> Result<Self, AdminError> {
        let mut connection =
            PeerConnection::connect(address, "sluice-admin", REQUEST_TIMEOUT, security).await?;
        let versions: ApiVersionsResponse = connection
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
        if versions.error_code != 0 {
            return Err(kafka_error(versions.error_code, None));
        }
        let versions = OUR_VERSIONS
            .iter()
            .filter_map(|(api, ours)| {
                let theirs = versions
                    .api_keys
                    .iter()
                    .find(|k| k.api_key == *api as i16)?;
                (theirs.min_version <= *ours)
                    .then(|| (*api as i16, (*ours).min(theirs.max_version)))
            })
            .collect();
        Ok(Self {
            connection,
            versions,
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

    /// Every topic, internal ones included, sorted by name.
    pub async fn list_topics(&mut self) -> Result<Vec<TopicListing>, AdminError> {
        let response: MetadataResponse = self
            .call(
                ApiKey::Metadata,
                "Metadata",
                // No topic list: every topic.
                &MetadataRequest::default().with_topics(None),
            )
            .await?;
        let mut topics: Vec<TopicListing> = response
            .topics
            .into_iter()
            .filter(|t| t.error_code == 0)
            .filter_map(|t| {
                Some(TopicListing {
                    name: t.name?.to_string(),
                    id: t.topic_id,
                    internal: t.is_internal,
                })
            })
            .collect();
        topics.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(topics)
    }

    /// The partitions of `names`: DescribeTopicPartitions (with its cursor) where the broker
    /// has it, as Kafka's AdminClient, else Metadata.
    pub async fn describe_topics(
        &mut self,
        names: &[String],
    ) -> Result<Vec<TopicDescription>, AdminError> {
        if self.version(ApiKey::DescribeTopicPartitions, "").is_ok() {
            return self.describe_topic_partitions(names).await;
        }
        let request = MetadataRequest::default().with_topics(Some(
            names
                .iter()
                .map(|n| {
                    kafka_protocol::messages::metadata_request::MetadataRequestTopic::default()
                        .with_name(Some(TopicName(StrBytes::from_string(n.clone()))))
                })
                .collect(),
        ));
        let response: MetadataResponse = self.call(ApiKey::Metadata, "Metadata", &request).await?;
        let mut out = Vec::new();
        for topic in response.topics {
            if topic.error_code != 0 {
                return Err(kafka_error(topic.error_code, None));
            }
            out.push(TopicDescription {
                name: topic.name.map(|n| n.to_string()).unwrap_or_default(),
                id: topic.topic_id,
                partitions: topic
                    .partitions
                    .into_iter()
                    .map(|p| PartitionInfo {
                        partition: p.partition_index,
                        leader: (p.leader_id.0 >= 0).then_some(p.leader_id.0),
                        replicas: p.replica_nodes.iter().map(|b| b.0).collect(),
                        isr: p.isr_nodes.iter().map(|b| b.0).collect(),
                        elr: None,
                        last_known_elr: None,
                    })
                    .collect(),
            });
        }
        Ok(out)
    }

    async fn describe_topic_partitions(
        &mut self,
        names: &[String],
    ) -> Result<Vec<TopicDescription>, AdminError> {
        let mut out: Vec<TopicDescription> = Vec::new();
        let mut cursor = None;
        loop {
            let request = DescribeTopicPartitionsRequest::default()
                .with_topics(
                    names
                        .iter()
                        .map(|n| {
                            describe_topic_partitions_request::TopicRequest::default()
                                .with_name(TopicName(StrBytes::from_string(n.clone())))
                        })
                        .collect(),
                )
                .with_response_partition_limit(2000)
                .with_cursor(cursor.take());
            let response: DescribeTopicPartitionsResponse = self
                .call(
                    ApiKey::DescribeTopicPartitions,
                    "DescribeTopicPartitions",
                    &request,
                )
                .await?;
            for topic in response.topics {
                if topic.error_code != 0 {
                    return Err(kafka_error(topic.error_code, None));
                }
                let name = topic.name.map(|n| n.to_string()).unwrap_or_default();
                let partitions = topic.partitions.into_iter().map(|p| PartitionInfo {
                    partition: p.partition_index,
                    leader: (p.leader_id.0 >= 0).then_some(p.leader_id.0),
                    replicas: p.replica_nodes.iter().map(|b| b.0).collect(),
                    isr: p.isr_nodes.iter().map(|b| b.0).collect(),
                    elr: p
                        .eligible_leader_replicas
                        .map(|v| v.iter().map(|b| b.0).collect()),
                    last_known_elr: p.last_known_elr.map(|v| v.iter().map(|b| b.0).collect()),
                });
                match out.iter_mut().find(|t| t.name == name) {
                    Some(existing) => existing.partitions.extend(partitions),
                    None => out.push(TopicDescription {
                        name,
                        id: topic.topic_id,
                        partitions: partitions.collect(),
                    }),
                }
            }
            match response.next_cursor {
                Some(next) => cursor = Some(next_request_cursor(next)),
                None => break,
            }
        }
        Ok(out)
    }

    /// A topic's configs as DescribeConfigs gives them (no synonyms).
    pub async fn describe_topic_configs(
        &mut self,
        topic: &str,
    ) -> Result<Vec<ConfigEntry>, AdminError> {
        const TOPIC: i8 = 2;
        let request = DescribeConfigsRequest::default().with_resources(vec![
            describe_configs_request::DescribeConfigsResource::default()
                .with_resource_type(TOPIC)
                .with_resource_name(StrBytes::from_string(topic.to_string()))
                // No key list: every config.
                .with_configuration_keys(None),
        ]);
        let response: DescribeConfigsResponse = self
            .call(ApiKey::DescribeConfigs, "DescribeConfigs", &request)
            .await?;
        let Some(result) = response.results.into_iter().next() else {
            return Ok(Vec::new());
        };
        if result.error_code != 0 {
            return Err(kafka_error(
                result.error_code,
                result.error_message.as_ref(),
            ));
        }
        Ok(result
            .configs
            .into_iter()
            .map(|c| ConfigEntry {
                name: c.name.to_string(),
                value: c.value.map(|v| v.to_string()),
                source: c.config_source,
            })
            .collect())
    }

    /// Creates one topic.
    pub async fn create_topic(&mut self, topic: &NewTopicRequest) -> Result<(), AdminError> {
        let creatable = create_topics_request::CreatableTopic::default()
            .with_name(TopicName(StrBytes::from_string(topic.name.clone())))
            .with_num_partitions(topic.partitions)
            .with_replication_factor(topic.replication_factor)
            .with_assignments(
                topic
                    .assignments
                    .iter()
                    .map(|(partition, brokers)| {
                        create_topics_request::CreatableReplicaAssignment::default()
                            .with_partition_index(*partition)
                            .with_broker_ids(
                                brokers
                                    .iter()
                                    .map(|b| kafka_protocol::messages::BrokerId(*b))
                                    .collect(),
                            )
                    })
                    .collect(),
            )
            .with_configs(
                topic
                    .configs
                    .iter()
                    .map(|(name, value)| {
                        create_topics_request::CreatableTopicConfig::default()
                            .with_name(StrBytes::from_string(name.clone()))
                            .with_value(Some(StrBytes::from_string(value.clone())))
                    })
                    .collect(),
            );
        let request = CreateTopicsRequest::default()
            .with_topics(vec![creatable])
            .with_timeout_ms(REQUEST_TIMEOUT.as_millis() as i32);
        let response: CreateTopicsResponse = self
            .call(ApiKey::CreateTopics, "CreateTopics", &request)
            .await?;
        match response.topics.into_iter().next() {
            Some(result) if result.error_code != 0 => Err(kafka_error(
                result.error_code,
                result.error_message.as_ref(),
            )),
            _ => Ok(()),
        }
    }

    /// Deletes topics by name.
    pub async fn delete_topics(&mut self, names: &[String]) -> Result<(), AdminError> {
        let version = self.version(ApiKey::DeleteTopics, "DeleteTopics")?;
        let names: Vec<TopicName> = names
            .iter()
            .map(|n| TopicName(StrBytes::from_string(n.clone())))
            .collect();
        let mut request =
            DeleteTopicsRequest::default().with_timeout_ms(REQUEST_TIMEOUT.as_millis() as i32);
        if version >= 6 {
            request.topics = names
                .into_iter()
                .map(|n| {
                    kafka_protocol::messages::delete_topics_request::DeleteTopicState::default()
                        .with_name(Some(n))
                })
                .collect();
        } else {
            request.topic_names = names;
        }
        let response: DeleteTopicsResponse = self
            .call(ApiKey::DeleteTopics, "DeleteTopics", &request)
            .await?;
        match response.responses.into_iter().find(|r| r.error_code != 0) {
            Some(failed) => Err(kafka_error(
                failed.error_code,
                failed.error_message.as_ref(),
            )),
            None => Ok(()),
        }
    }

    /// Raises the partition count of each topic to `count`.
    pub async fn create_partitions(
        &mut self,
        names: &[String],
        count: i32,
    ) -> Result<(), AdminError> {
        let request = CreatePartitionsRequest::default()
            .with_topics(
                names
                    .iter()
                    .map(|n| {
                        create_partitions_request::CreatePartitionsTopic::default()
                            .with_name(TopicName(StrBytes::from_string(n.clone())))
                            .with_count(count)
                            // No assignment: the controller places the new partitions.
                            .with_assignments(None)
                    })
                    .collect(),
            )
            .with_timeout_ms(REQUEST_TIMEOUT.as_millis() as i32);
        let response: CreatePartitionsResponse = self
            .call(ApiKey::CreatePartitions, "CreatePartitions", &request)
            .await?;
        match response.results.into_iter().find(|r| r.error_code != 0) {
            Some(failed) => Err(kafka_error(
                failed.error_code,
                failed.error_message.as_ref(),
            )),
            None => Ok(()),
        }
    }
}

/// The response's cursor as the next request's.
fn next_request_cursor(
    next: kafka_protocol::messages::describe_topic_partitions_response::Cursor,
) -> describe_topic_partitions_request::Cursor {
    describe_topic_partitions_request::Cursor::default()
        .with_topic_name(next.topic_name)
        .with_partition_index(next.partition_index)
}
