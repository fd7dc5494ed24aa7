//! ListOffsets, sent to each partition's leader as Kafka's AdminClient sends it.

use super::{AdminClient, AdminError, kafka_error};
use kafka_protocol::messages::{
    ApiKey, BrokerId, ListOffsetsRequest, ListOffsetsResponse, TopicName, list_offsets_request,
};
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeMap;

/// Which offset of a partition to look up (Kafka's `OffsetSpec`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetSpec {
    Earliest,
    Latest,
    /// The first offset whose timestamp is at or after this one (ms); none when no record is.
    Timestamp(i64),
}

impl OffsetSpec {
    fn wire(self) -> i64 {
        match self {
            OffsetSpec::Earliest => -2,
            OffsetSpec::Latest => -1,
            OffsetSpec::Timestamp(ms) => ms,
        }
    }
}

impl AdminClient {
    /// The offset `spec` names in each partition; a partition for which the broker found none
    /// (a timestamp after every record) maps to None.
    pub async fn list_offsets(
        &mut self,
        partitions: &[(String, i32)],
        spec: OffsetSpec,
    ) -> Result<BTreeMap<(String, i32), Option<i64>>, AdminError> {
        let mut topics: Vec<String> = partitions.iter().map(|(t, _)| t.clone()).collect();
        topics.sort();
        topics.dedup();
        let mut leaders: BTreeMap<(String, i32), i32> = BTreeMap::new();
        for topic in self.describe_topics(&topics).await? {
            for partition in topic.partitions {
                if let Some(leader) = partition.leader {
                    leaders.insert((topic.name.clone(), partition.partition), leader);
                }
            }
        }
        let mut by_leader: BTreeMap<i32, BTreeMap<&str, Vec<i32>>> = BTreeMap::new();
        for (topic, partition) in partitions {
            let leader = leaders
                .get(&(topic.clone(), *partition))
                .copied()
                .ok_or_else(|| kafka_error(5, None))?;
            by_leader
                .entry(leader)
                .or_default()
                .entry(topic.as_str())
                .or_default()
                .push(*partition);
        }
        let mut out = BTreeMap::new();
        for (leader, topics) in by_leader {
            let request = ListOffsetsRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_topics(
                    topics
                        .into_iter()
                        .map(|(name, partitions)| {
                            list_offsets_request::ListOffsetsTopic::default()
                                .with_name(TopicName(StrBytes::from_string(name.to_string())))
                                .with_partitions(
                                    partitions
                                        .into_iter()
                                        .map(|p| {
                                            list_offsets_request::ListOffsetsPartition::default()
                                                .with_partition_index(p)
                                                .with_current_leader_epoch(-1)
                                                .with_timestamp(spec.wire())
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                );
            let response: ListOffsetsResponse = self
                .call_node(leader, ApiKey::ListOffsets, "LIST_OFFSETS", &request)
                .await?;
            for topic in response.topics {
                for partition in topic.partitions {
                    if partition.error_code != 0 {
                        return Err(kafka_error(partition.error_code, None));
                    }
                    let offset = (partition.offset >= 0).then_some(partition.offset);
                    out.insert((topic.name.to_string(), partition.partition_index), offset);
                }
            }
        }
        Ok(out)
    }
}
