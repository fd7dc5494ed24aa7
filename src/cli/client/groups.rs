//! Group requests, each sent where Kafka's AdminClient sends it: FindCoordinator, ListGroups
//! (to every broker), DescribeGroups / ConsumerGroupDescribe, OffsetFetch, OffsetCommit and
//! DeleteGroups (to the group's coordinator).

use super::{AdminClient, AdminError, BrokerNode, kafka_error};
use kafka_protocol::messages::{
    ApiKey, ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, DeleteGroupsRequest,
    DeleteGroupsResponse, DescribeGroupsRequest, DescribeGroupsResponse, FindCoordinatorRequest,
    FindCoordinatorResponse, GroupId, ListGroupsRequest, ListGroupsResponse, OffsetCommitRequest,
    OffsetCommitResponse, OffsetDeleteRequest, OffsetDeleteResponse, OffsetFetchRequest,
    OffsetFetchResponse, TopicName, offset_commit_request, offset_delete_request,
    offset_fetch_request,
};
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeMap;

/// A group as ListGroups lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupListing {
    pub group_id: String,
    pub protocol_type: String,
    pub state: String,
    /// `classic`, `consumer`, `share`, ... (empty from brokers before ListGroups v5).
    pub group_type: String,
}

/// A member's assigned partitions, by topic.
pub type MemberAssignment = BTreeMap<String, Vec<i32>>;

/// One member of a described group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMember {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub host: String,
    pub assignment: MemberAssignment,
    /// KIP-848 groups: the member's epoch and its target assignment.
    pub member_epoch: Option<i32>,
    pub target_assignment: Option<MemberAssignment>,
}

/// A described consumer group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupDescription {
    pub group_id: String,
    /// Kafka's `GroupState` text: `Stable`, `Empty`, `Dead`, `PreparingRebalance`, ...
    pub state: String,
    /// The assignor (classic: the protocol the members agreed).
    pub assignor: String,
    pub protocol_type: String,
    pub coordinator: BrokerNode,
    pub members: Vec<GroupMember>,
    /// KIP-848 groups: the group's epoch and the target assignment's.
    pub group_epoch: Option<i32>,
    pub assignment_epoch: Option<i32>,
}

/// A committed offset of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommittedOffset {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Option<String>,
}

/// Kafka's text for a group state from ListGroups/DescribeGroups (`GroupState.parse`):
/// `Stable`, `PreparingRebalance`, ..., case as the broker sent it for the rest.
fn state_text(state: &str) -> String {
    match state.to_ascii_lowercase().as_str() {
        "stable" => "Stable",
        "preparingrebalance" => "PreparingRebalance",
        "completingrebalance" => "CompletingRebalance",
        "empty" => "Empty",
        "dead" => "Dead",
        "assigning" => "Assigning",
        "reconciling" => "Reconciling",
        "notready" => "NotReady",
        _ => "Unknown",
    }
    .to_string()
}

impl AdminClient {
    /// The coordinator of `group`.
    pub async fn find_coordinator(&mut self, group: &str) -> Result<BrokerNode, AdminError> {
        const GROUP: i8 = 0;
        let request = FindCoordinatorRequest::default()
            .with_key_type(GROUP)
            .with_coordinator_keys(vec![StrBytes::from_string(group.to_string())]);
        let response: FindCoordinatorResponse = self
            .call(ApiKey::FindCoordinator, "FIND_COORDINATOR", &request)
            .await?;
        let coordinator = response
            .coordinators
            .into_iter()
            .next()
            .ok_or_else(|| kafka_error(15, None))?;
        if coordinator.error_code != 0 {
            return Err(kafka_error(
                coordinator.error_code,
                coordinator.error_message.as_ref(),
            ));
        }
        let node = BrokerNode {
            id: coordinator.node_id.0,
            host: coordinator.host.to_string(),
            port: coordinator.port,
            rack: None,
        };
        self.addresses
            .insert(node.id, format!("{}:{}", node.host, node.port));
        Ok(node)
    }

    /// Every group of every broker, in the order they answer; `types` filters by group type (ListGroups v5).
    pub async fn list_groups(&mut self, types: &[&str]) -> Result<Vec<GroupListing>, AdminError> {
        let brokers = self.brokers().await?;
        let mut out = Vec::new();
        for broker in brokers {
            let version = self
                .node_version(broker.id, ApiKey::ListGroups, "LIST_GROUPS")
                .await?;
            let request = ListGroupsRequest::default().with_types_filter(if version >= 5 {
                types
                    .iter()
                    .map(|t| StrBytes::from_string(t.to_string()))
                    .collect()
            } else {
                Vec::new()
            });
            let response: ListGroupsResponse = self
                .call_node(broker.id, ApiKey::ListGroups, "LIST_GROUPS", &request)
                .await?;
            if response.error_code != 0 {
                return Err(kafka_error(response.error_code, None));
            }
            out.extend(response.groups.into_iter().map(|g| GroupListing {
                group_id: g.group_id.to_string(),
                protocol_type: g.protocol_type.to_string(),
                state: state_text(&g.group_state),
                group_type: g.group_type.to_string(),
            }));
        }
        // In the brokers' order, as Kafka's AdminClient gives them; a group once.
        let mut seen = std::collections::BTreeSet::new();
        out.retain(|g| seen.insert(g.group_id.clone()));
        Ok(out)
    }

    /// Describes a consumer group as Kafka's `describeConsumerGroups`: ConsumerGroupDescribe
    /// first (KIP-848 groups), DescribeGroups when the group is a classic one. A group that
    /// does not exist is described as `Dead` with no members.
    pub async fn describe_group(&mut self, group: &str) -> Result<GroupDescription, AdminError> {
        let coordinator = self.find_coordinator(group).await?;
        let consumer_describe = self
            .node_version(coordinator.id, ApiKey::ConsumerGroupDescribe, "")
            .await
            .is_ok();
        // The message ConsumerGroupDescribe gave for a group it does not hold, which Kafka's
        // AdminClient reports if DescribeGroups finds no group either.
        let mut not_found_message = None;
        if consumer_describe {
            let request = ConsumerGroupDescribeRequest::default()
                .with_group_ids(vec![GroupId(StrBytes::from_string(group.to_string()))]);
            let response: ConsumerGroupDescribeResponse = self
                .call_node(
                    coordinator.id,
                    ApiKey::ConsumerGroupDescribe,
                    "CONSUMER_GROUP_DESCRIBE",
                    &request,
                )
                .await?;
            if let Some(described) = response.groups.into_iter().next() {
                const GROUP_ID_NOT_FOUND: i16 = 69;
                match described.error_code {
                    0 => {
                        let names = |a: kafka_protocol::messages::consumer_group_describe_response::Assignment| {
                            a.topic_partitions
                                .into_iter()
                                .map(|t| {
                                    let mut partitions = t.partitions;
                                    partitions.sort_unstable();
                                    (t.topic_name.to_string(), partitions)
                                })
                                .collect::<MemberAssignment>()
                        };
                        return Ok(GroupDescription {
                            group_id: group.to_string(),
                            state: state_text(&described.group_state),
                            assignor: described.assignor_name.to_string(),
                            protocol_type: "consumer".into(),
                            coordinator,
                            members: described
                                .members
                                .into_iter()
                                .map(|m| GroupMember {
                                    member_id: m.member_id.to_string(),
                                    instance_id: m.instance_id.map(|i| i.to_string()),
                                    client_id: m.client_id.to_string(),
                                    host: m.client_host.to_string(),
                                    member_epoch: Some(m.member_epoch),
                                    assignment: names(m.assignment),
                                    target_assignment: Some(names(m.target_assignment)),
                                })
                                .collect(),
                            group_epoch: Some(described.group_epoch),
                            assignment_epoch: Some(described.assignment_epoch),
                        });
                    }
                    // Not a KIP-848 group (or none): DescribeGroups says which.
                    GROUP_ID_NOT_FOUND => not_found_message = described.error_message,
                    code => return Err(kafka_error(code, described.error_message.as_ref())),
                }
            }
        }
        let request = DescribeGroupsRequest::default()
            .with_groups(vec![GroupId(StrBytes::from_string(group.to_string()))]);
        let response: DescribeGroupsResponse = self
            .call_node(
                coordinator.id,
                ApiKey::DescribeGroups,
                "DESCRIBE_GROUPS",
                &request,
            )
            .await?;
        let described = response
            .groups
            .into_iter()
            .next()
            .ok_or_else(|| kafka_error(15, None))?;
        if described.error_code != 0 {
            let message = match described.error_code {
                69 => not_found_message.or(described.error_message),
                _ => described.error_message,
            };
            return Err(kafka_error(described.error_code, message.as_ref()));
        }
        let consumer =
            described.protocol_type.is_empty() || &*described.protocol_type == "consumer";
        let members = described
            .members
            .into_iter()
            .map(|m| GroupMember {
                member_id: m.member_id.to_string(),
                instance_id: m.group_instance_id.map(|i| i.to_string()),
                client_id: m.client_id.to_string(),
                host: m.client_host.to_string(),
                assignment: if consumer {
                    crate::api::describe_groups::consumer_assignment(&m.member_assignment)
                } else {
                    MemberAssignment::new()
                },
                member_epoch: None,
                target_assignment: None,
            })
            .collect();
        Ok(GroupDescription {
            group_id: group.to_string(),
            state: state_text(&described.group_state),
            assignor: described.protocol_data.to_string(),
            protocol_type: described.protocol_type.to_string(),
            coordinator,
            members,
            group_epoch: None,
            assignment_epoch: None,
        })
    }

    /// The group's committed offsets, sorted by topic and partition (partitions without one
    /// left out).
    pub async fn committed_offsets(
        &mut self,
        group: &str,
    ) -> Result<Vec<CommittedOffset>, AdminError> {
        let coordinator = self.find_coordinator(group).await?;
        let request = OffsetFetchRequest::default().with_groups(vec![
            offset_fetch_request::OffsetFetchRequestGroup::default()
                .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
                .with_topics(None),
        ]);
        let response: OffsetFetchResponse = self
            .call_node(
                coordinator.id,
                ApiKey::OffsetFetch,
                "OFFSET_FETCH",
                &request,
            )
            .await?;
        let mut out = Vec::new();
        for fetched in response.groups {
            if fetched.error_code != 0 {
                return Err(kafka_error(fetched.error_code, None));
            }
            for topic in fetched.topics {
                for partition in topic.partitions {
                    if partition.error_code != 0 {
                        return Err(kafka_error(partition.error_code, None));
                    }
                    if partition.committed_offset < 0 {
                        continue;
                    }
                    out.push(CommittedOffset {
                        topic: topic.name.to_string(),
                        partition: partition.partition_index,
                        offset: partition.committed_offset,
                        leader_epoch: partition.committed_leader_epoch,
                        metadata: partition.metadata.map(|m| m.to_string()),
                    });
                }
            }
        }
        out.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        Ok(out)
    }

    /// Commits offsets for `group` as an admin does (no member, generation -1): the group must
    /// have no active members.
    pub async fn commit_offsets(
        &mut self,
        group: &str,
        offsets: &[(String, i32, i64)],
    ) -> Result<(), AdminError> {
        self.commit_offsets_as(group, None, offsets).await
    }

    /// Commits offsets for `group`, as `member` (its id and epoch) when given, else as an
    /// admin.
    pub async fn commit_offsets_as(
        &mut self,
        group: &str,
        member: Option<(&str, i32)>,
        offsets: &[(String, i32, i64)],
    ) -> Result<(), AdminError> {
        let (member_id, epoch) = member.unwrap_or(("", -1));
        let coordinator = self.find_coordinator(group).await?;
        let mut topics: BTreeMap<&str, Vec<offset_commit_request::OffsetCommitRequestPartition>> =
            BTreeMap::new();
        for (topic, partition, offset) in offsets {
            topics.entry(topic.as_str()).or_default().push(
                offset_commit_request::OffsetCommitRequestPartition::default()
                    .with_partition_index(*partition)
                    .with_committed_offset(*offset)
                    .with_committed_leader_epoch(-1)
                    .with_committed_metadata(Some(StrBytes::default())),
            );
        }
        let request = OffsetCommitRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_generation_id_or_member_epoch(epoch)
            .with_member_id(StrBytes::from_string(member_id.to_string()))
            .with_retention_time_ms(-1)
            .with_topics(
                topics
                    .into_iter()
                    .map(|(name, partitions)| {
                        offset_commit_request::OffsetCommitRequestTopic::default()
                            .with_name(TopicName(StrBytes::from_string(name.to_string())))
                            .with_partitions(partitions)
                    })
                    .collect(),
            );
        let response: OffsetCommitResponse = self
            .call_node(
                coordinator.id,
                ApiKey::OffsetCommit,
                "OFFSET_COMMIT",
                &request,
            )
            .await?;
        for topic in response.topics {
            if let Some(failed) = topic.partitions.iter().find(|p| p.error_code != 0) {
                return Err(kafka_error(failed.error_code, None));
            }
        }
        Ok(())
    }

    /// Deletes groups; each group's error code (0: deleted).
    pub async fn delete_groups(
        &mut self,
        groups: &[String],
    ) -> Result<Vec<(String, i16)>, AdminError> {
        let mut out = Vec::new();
        for group in groups {
            let coordinator = match self.find_coordinator(group).await {
                Ok(coordinator) => coordinator,
                Err(AdminError::Kafka { code, .. }) => {
                    out.push((group.clone(), code));
                    continue;
                }
                Err(e) => return Err(e),
            };
            let request = DeleteGroupsRequest::default()
                .with_groups_names(vec![GroupId(StrBytes::from_string(group.clone()))]);
            let response: DeleteGroupsResponse = self
                .call_node(
                    coordinator.id,
                    ApiKey::DeleteGroups,
                    "DELETE_GROUPS",
                    &request,
                )
                .await?;
            let code = response
                .results
                .into_iter()
                .next()
                .map_or(15, |r| r.error_code);
            out.push((group.clone(), code));
        }
        Ok(out)
    }
}

impl AdminClient {
    /// Deletes `group`'s committed offsets of `partitions` (OffsetDelete to its coordinator):
    /// the group's error code, and each partition's (those of a refused group are the group's).
    pub async fn delete_offsets(
        &mut self,
        group: &str,
        partitions: &[(String, i32)],
    ) -> Result<(i16, Vec<((String, i32), i16)>), AdminError> {
        let group_wide = |code: i16| {
            let each = partitions.iter().map(|p| (p.clone(), code)).collect();
            (code, each)
        };
        let coordinator = match self.find_coordinator(group).await {
            Ok(coordinator) => coordinator,
            Err(AdminError::Kafka { code, .. }) => return Ok(group_wide(code)),
            Err(e) => return Err(e),
        };
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (topic, partition) in partitions {
            by_topic.entry(topic).or_default().push(*partition);
        }
        let request = OffsetDeleteRequest::default()
            .with_group_id(GroupId(StrBytes::from_string(group.to_string())))
            .with_topics(
                by_topic
                    .iter()
                    .map(|(topic, indexes)| {
                        offset_delete_request::OffsetDeleteRequestTopic::default()
                            .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                            .with_partitions(
                                indexes
                                    .iter()
                                    .map(|i| {
                                        offset_delete_request::OffsetDeleteRequestPartition::default()
                                            .with_partition_index(*i)
                                    })
                                    .collect(),
                            )
                    })
                    .collect(),
            );
        let response: OffsetDeleteResponse = self
            .call_node(
                coordinator.id,
                ApiKey::OffsetDelete,
                "OFFSET_DELETE",
                &request,
            )
            .await?;
        if response.error_code != 0 {
            return Ok(group_wide(response.error_code));
        }
        let mut codes = BTreeMap::new();
        for topic in &response.topics {
            for partition in &topic.partitions {
                codes.insert(
                    (topic.name.to_string(), partition.partition_index),
                    partition.error_code,
                );
            }
        }
        // A partition the answer leaves out: Kafka's AdminClient fails it as unknown.
        let each = partitions
            .iter()
            .map(|p| (p.clone(), codes.get(p).copied().unwrap_or(3)))
            .collect();
        Ok((0, each))
    }
}
