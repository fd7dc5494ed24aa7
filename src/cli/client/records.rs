//! Records in and out, for the console producer and consumer: Metadata of one topic (creating
//! it when the broker auto-creates topics, as Kafka's clients ask), Produce to a partition's
//! leader, Fetch from leaders (batches decoded here: decompressed within the broker's own
//! budget, control batches skipped), and a KIP-848 consumer group membership
//! (ConsumerGroupHeartbeat).

use super::{AdminClient, AdminError, REQUEST_TIMEOUT, kafka_error};
use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, BrokerId, ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse, FetchRequest,
    FetchResponse, GroupId, MetadataRequest, MetadataResponse, ProduceRequest, ProduceResponse,
    TopicName, fetch_request, metadata_request, produce_request,
};
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeMap;

/// A topic's partitions and their leaders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicLayout {
    pub id: uuid::Uuid,
    /// Partition -> leader (None: no leader now).
    pub leaders: BTreeMap<i32, Option<i32>>,
}

/// One record as fetched.
pub use crate::record::records::FullRecord as FetchedRecord;

/// What Fetch returned for one partition.
#[derive(Debug, Clone, Default)]
pub struct FetchedPartition {
    pub error_code: i16,
    pub records: Vec<FetchedRecord>,
    /// The offset to fetch next (past the last batch returned, control batches included).
    pub next_offset: Option<i64>,
}

/// A KIP-848 member's state after a heartbeat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    pub member_id: String,
    pub epoch: i32,
    pub heartbeat_interval_ms: i32,
    /// Topic id -> assigned partitions; None: unchanged since the last heartbeat.
    pub assignment: Option<BTreeMap<uuid::Uuid, Vec<i32>>>,
}

impl AdminClient {
    /// The topic's partitions and leaders; `create`: ask the broker to create it if it does
    /// not exist (Kafka's producer and consumer default). A broker creates the topic in the
    /// background and answers the first request UNKNOWN_TOPIC_OR_PARTITION, so with `create`
    /// the request is repeated, as Kafka's producer waits up to `max.block.ms` (60 s) for it.
    pub async fn topic_layout(
        &mut self,
        topic: &str,
        create: bool,
    ) -> Result<TopicLayout, AdminError> {
        const MAX_BLOCK: std::time::Duration = std::time::Duration::from_secs(60);
        const RETRY_BACKOFF: std::time::Duration = std::time::Duration::from_millis(100);
        let deadline = tokio::time::Instant::now() + MAX_BLOCK;
        loop {
            match self.topic_layout_once(topic, create).await {
                // UNKNOWN_TOPIC_OR_PARTITION while it is created, LEADER_NOT_AVAILABLE until
                // its partitions have leaders.
                Err(AdminError::Kafka { code: 3 | 5, .. })
                    if create && tokio::time::Instant::now() < deadline =>
                {
                    tokio::time::sleep(RETRY_BACKOFF).await;
                }
                other => return other,
            }
        }
    }

    async fn topic_layout_once(
        &mut self,
        topic: &str,
        create: bool,
    ) -> Result<TopicLayout, AdminError> {
        let request = MetadataRequest::default()
            .with_topics(Some(vec![
                metadata_request::MetadataRequestTopic::default()
                    .with_name(Some(TopicName(StrBytes::from_string(topic.to_string())))),
            ]))
            .with_allow_auto_topic_creation(create);
        let response: MetadataResponse = self.call(ApiKey::Metadata, "METADATA", &request).await?;
        for broker in &response.brokers {
            self.addresses
                .insert(broker.node_id.0, format!("{}:{}", broker.host, broker.port));
        }
        let found = response
            .topics
            .into_iter()
            .next()
            .ok_or_else(|| kafka_error(3, None))?;
        if found.error_code != 0 {
            return Err(kafka_error(found.error_code, None));
        }
        Ok(TopicLayout {
            id: found.topic_id,
            leaders: found
                .partitions
                .into_iter()
                .map(|p| {
                    (
                        p.partition_index,
                        (p.leader_id.0 >= 0).then_some(p.leader_id.0),
                    )
                })
                .collect(),
        })
    }

    /// Appends one batch to a partition through its leader; the batch's base offset.
    pub async fn produce(
        &mut self,
        leader: i32,
        topic: &str,
        partition: i32,
        batch: Bytes,
        acks: i16,
    ) -> Result<i64, AdminError> {
        let request = ProduceRequest::default()
            .with_acks(acks)
            .with_timeout_ms(REQUEST_TIMEOUT.as_millis() as i32)
            .with_topic_data(vec![
                produce_request::TopicProduceData::default()
                    .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                    .with_partition_data(vec![
                        produce_request::PartitionProduceData::default()
                            .with_index(partition)
                            .with_records(Some(batch)),
                    ]),
            ]);
        let response: ProduceResponse = self
            .call_node(leader, ApiKey::Produce, "PRODUCE", &request)
            .await?;
        let result = response
            .responses
            .into_iter()
            .flat_map(|t| t.partition_responses)
            .next();
        match result {
            Some(r) if r.error_code != 0 => {
                Err(kafka_error(r.error_code, r.error_message.as_ref()))
            }
            Some(r) => Ok(r.base_offset),
            // acks=0: no response body.
            None => Ok(-1),
        }
    }

    /// Fetches from `leader` the partitions of `topic` at the offsets given, waiting up to
    /// `max_wait_ms` for data.
    pub async fn fetch(
        &mut self,
        leader: i32,
        topic: &str,
        offsets: &BTreeMap<i32, i64>,
        max_wait_ms: i32,
    ) -> Result<BTreeMap<i32, FetchedPartition>, AdminError> {
        let request = FetchRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_max_wait_ms(max_wait_ms)
            .with_min_bytes(1)
            .with_max_bytes(50 * 1024 * 1024)
            .with_session_epoch(-1)
            .with_topics(vec![
                fetch_request::FetchTopic::default()
                    .with_topic(TopicName(StrBytes::from_string(topic.to_string())))
                    .with_partitions(
                        offsets
                            .iter()
                            .map(|(partition, offset)| {
                                fetch_request::FetchPartition::default()
                                    .with_partition(*partition)
                                    .with_current_leader_epoch(-1)
                                    .with_fetch_offset(*offset)
                                    .with_last_fetched_epoch(-1)
                                    .with_log_start_offset(-1)
                                    .with_partition_max_bytes(1024 * 1024)
                            })
                            .collect(),
                    ),
            ]);
        let response: FetchResponse = self
            .call_node(leader, ApiKey::Fetch, "FETCH", &request)
            .await?;
        if response.error_code != 0 {
            return Err(kafka_error(response.error_code, None));
        }
        let mut out = BTreeMap::new();
        for topic in response.responses {
            for partition in topic.partitions {
                let mut fetched = FetchedPartition {
                    error_code: partition.error_code,
                    ..Default::default()
                };
                if let Some(bytes) = &partition.records {
                    let start = offsets
                        .get(&partition.partition_index)
                        .copied()
                        .unwrap_or(0);
                    decode_batches(bytes, start, &mut fetched)?;
                }
                out.insert(partition.partition_index, fetched);
            }
        }
        Ok(out)
    }

    /// One ConsumerGroupHeartbeat to the group's coordinator: joining (epoch 0, with the
    /// topics), staying (the epoch the last answer gave) or leaving (epoch -1).
    pub async fn consumer_heartbeat(
        &mut self,
        coordinator: i32,
        group: &str,
        member_id: &str,
        epoch: i32,
        topics: Option<&[String]>,
    ) -> Result<Membership, AdminError> {
        let version = self
            .node_version(
                coordinator,
                ApiKey::ConsumerGroupHeartbeat,
                "CONSUMER_GROUP_HEARTBEAT",
            )
            .await?;
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            // Version 0 has the coordinator name new members; from 1 the member does.
            .with_member_id(StrBytes::from_string(if version == 0 && epoch == 0 {
                String::new()
            } else {
                member_id.to_string()
            }))
            .with_member_epoch(epoch)
            .with_rebalance_timeout_ms(if epoch == 0 { 300_000 } else { -1 })
            .with_subscribed_topic_names(topics.map(|names| {
                names
                    .iter()
                    .map(|n| TopicName(StrBytes::from_string(n.clone())))
                    .collect()
            }))
            .with_topic_partitions(if epoch == 0 { Some(Vec::new()) } else { None });
        let response: ConsumerGroupHeartbeatResponse = self
            .call_node(
                coordinator,
                ApiKey::ConsumerGroupHeartbeat,
                "CONSUMER_GROUP_HEARTBEAT",
                &request,
            )
            .await?;
        if response.error_code != 0 {
            return Err(kafka_error(
                response.error_code,
                response.error_message.as_ref(),
            ));
        }
        Ok(Membership {
            member_id: response
                .member_id
                .map(|m| m.to_string())
                .unwrap_or_else(|| member_id.to_string()),
            epoch: response.member_epoch,
            heartbeat_interval_ms: response.heartbeat_interval_ms,
            assignment: response.assignment.map(|a| {
                a.topic_partitions
                    .into_iter()
                    .map(|t| (t.topic_id, t.partitions))
                    .collect()
            }),
        })
    }
}

/// Decodes the batches of one fetched partition into `into` with the broker's own decoder
/// (records at or past `start`, control batches skipped, decompression within its budget).
fn decode_batches(
    bytes: &Bytes,
    start: i64,
    into: &mut FetchedPartition,
) -> Result<(), AdminError> {
    let next =
        crate::record::records::decode_batches(bytes, start, &mut into.records).map_err(|e| {
            AdminError::Kafka {
                code: 2,
                message: format!("Record batch for partition is corrupt: {e}"),
            }
        })?;
    if next.is_some() {
        into.next_offset = next;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{NewRecord, build_batch};

    #[test]
    fn built_batches_decode_from_the_offset_asked_for() {
        let records = [
            NewRecord {
                key: Some(b"k"),
                value: Some(b"one"),
                timestamp: 1_000,
            },
            NewRecord {
                key: None,
                value: Some(b"two"),
                timestamp: 1_005,
            },
        ];
        let bytes = build_batch(&records).freeze();
        let mut fetched = FetchedPartition::default();
        decode_batches(&bytes, 1, &mut fetched).unwrap();
        assert_eq!(fetched.next_offset, Some(2));
        assert_eq!(fetched.records.len(), 1);
        let record = &fetched.records[0];
        assert_eq!((record.offset, record.timestamp), (1, 1_005));
        assert_eq!(record.value.as_deref(), Some(&b"two"[..]));
        assert_eq!(record.key, None);
    }

    #[test]
    fn headers_survive_a_built_batch() {
        use crate::record::{RecordHeader, build_batch_with_headers};
        let records = [NewRecord {
            key: Some(b"k"),
            value: None,
            timestamp: 5,
        }];
        let headers = vec![vec![
            RecordHeader {
                key: "h1",
                value: Some(b"a"),
            },
            RecordHeader {
                key: "h2",
                value: None,
            },
        ]];
        let bytes = build_batch_with_headers(&records, &headers).freeze();
        let mut fetched = FetchedPartition::default();
        decode_batches(&bytes, 0, &mut fetched).unwrap();
        assert_eq!(
            fetched.records[0].headers,
            vec![
                ("h1".to_string(), Some(b"a".to_vec())),
                ("h2".to_string(), None)
            ]
        );
        assert_eq!(fetched.records[0].value, None);
    }

    #[test]
    fn corrupt_batches_are_errors_not_panics() {
        let mut bytes = build_batch(&[NewRecord {
            key: None,
            value: Some(b"v"),
            timestamp: 0,
        }])
        .to_vec();
        let last = bytes.len() - 3;
        bytes[last] = 0x7f; // a length past the record's end
        let mut fetched = FetchedPartition::default();
        let result = decode_batches(&Bytes::from(bytes), 0, &mut fetched);
        assert!(result.is_err() || fetched.records.len() <= 1);
    }
}
