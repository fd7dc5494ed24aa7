//! Topic requests: Metadata, DescribeTopicPartitions, DescribeConfigs of a topic, CreateTopics,
//! DeleteTopics, CreatePartitions.

use super::{AdminClient, AdminError, REQUEST_TIMEOUT, kafka_error};
use kafka_protocol::messages::{
    ApiKey, CreatePartitionsRequest, CreatePartitionsResponse, CreateTopicsRequest,
    CreateTopicsResponse, DeleteTopicsRequest, DeleteTopicsResponse,
    DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, MetadataRequest,
    MetadataResponse, TopicName, create_partitions_request, create_topics_request,
    describe_topic_partitions_request,
};
use kafka_protocol::protocol::StrBytes;

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

impl AdminClient {
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
        let configs = self
            .describe_configs(super::ConfigResourceType::Topic, topic, false)
            .await?;
        Ok(configs
            .into_iter()
            .map(|c| ConfigEntry {
                name: c.name,
                value: c.value,
                source: c.source,
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
