//! Consumer groups this broker coordinates (classic and KIP-848): `GET /api/v1/groups` (state,
//! members, lag), `GET /api/v1/groups/{group}` (members with their assignments, committed
//! offsets with the lag of each partition), `POST .../offsets` (reset the offsets of an empty
//! group, as `kafka-consumer-groups --reset-offsets --execute` does), `DELETE` (delete an
//! empty group). Lag is measured against the high watermark of partitions hosted here.

use super::{ApiError, ApiResult};
use crate::auth::acl::AclOperation;
use crate::broker::Broker;
use crate::group::OffsetCommit;
use crate::http::access::Access;
use crate::types::TopicPartition;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Serialize)]
pub struct GroupSummary {
    pub group_id: String,
    /// `classic` or `consumer` (KIP-848).
    pub group_type: &'static str,
    pub protocol_type: String,
    pub state: &'static str,
    pub members: usize,
    /// Records behind over every partition the group committed on that is hosted here.
    pub lag: i64,
}

#[derive(Debug, Serialize)]
pub struct GroupDetail {
    pub group_id: String,
    pub group_type: &'static str,
    pub state: &'static str,
    pub members: Vec<MemberView>,
    pub offsets: Vec<OffsetView>,
}

#[derive(Debug, Serialize)]
pub struct MemberView {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    /// Partitions by topic.
    pub assignment: BTreeMap<String, Vec<i32>>,
}

#[derive(Debug, Serialize)]
pub struct OffsetView {
    pub topic: String,
    pub partition: i32,
    pub committed: i64,
    /// `null` when the partition is not hosted here.
    pub high_watermark: Option<i64>,
    pub lag: Option<i64>,
}

fn high_watermark(broker: &Broker, topic: &str, partition: i32) -> Option<i64> {
    let partition = broker
        .replicas()
        .get(&TopicPartition::new(topic, partition))
        .ok()?;
    Some(partition.offsets().high_watermark)
}

/// The group's committed offsets on topics the principal may describe (as OffsetFetch shows).
fn offsets(broker: &Broker, access: &Access, group_id: &str) -> Vec<OffsetView> {
    let committed = broker
        .group_coordinator()
        .fetch_offsets(group_id, None, None)
        .unwrap_or_default();
    let mut views: Vec<OffsetView> = committed
        .into_iter()
        .filter(|(topic, _, _)| access.sees_topic(topic))
        .filter_map(|(topic, partition, offset)| {
            let committed = offset?.offset;
            let high_watermark = high_watermark(broker, &topic, partition);
            Some(OffsetView {
                lag: high_watermark.map(|hw| (hw - committed).max(0)),
                topic,
                partition,
                committed,
                high_watermark,
            })
        })
        .collect();
    views.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
    views
}

/// Members of a group, from its classic or KIP-848 state, with the assigned topics the
/// principal may describe; `None` when no such group.
fn members(broker: &Broker, access: &Access, group_id: &str) -> Option<Vec<MemberView>> {
    let mut members = all_members(broker, group_id)?;
    for member in &mut members {
        member
            .assignment
            .retain(|topic, _| access.sees_topic(topic));
    }
    Some(members)
}

fn all_members(broker: &Broker, group_id: &str) -> Option<Vec<MemberView>> {
    let coordinator = broker.group_coordinator();
    if let Some(members) = coordinator.consumer_describe(group_id, |group, _| {
        group
            .members
            .values()
            .map(|m| MemberView {
                member_id: m.member_id.clone(),
                instance_id: m.instance_id.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                assignment: m
                    .assigned
                    .iter()
                    .map(|(topic, partitions)| {
                        (topic.clone(), partitions.iter().copied().collect())
                    })
                    .collect(),
            })
            .collect::<Vec<_>>()
    }) {
        return Some(members);
    }
    let described = coordinator.describe_group(group_id)?;
    Some(
        described
            .members
            .iter()
            .map(|m| MemberView {
                member_id: m.member_id.clone(),
                instance_id: m.group_instance_id.clone(),
                client_id: m.client_id.clone(),
                client_host: m.client_host.clone(),
                assignment: if described.protocol_type == "consumer" {
                    crate::api::describe_groups::consumer_assignment(&m.assignment)
                } else {
                    BTreeMap::new()
                },
            })
            .collect(),
    )
}

pub async fn list(
    State(broker): State<Arc<Broker>>,
    access: Access,
) -> ApiResult<Vec<GroupSummary>> {
    // ListGroups: every group with DESCRIBE on the cluster, else those it may describe.
    let every_group = access.cluster(AclOperation::Describe);
    let groups = broker
        .group_coordinator()
        .list_groups()
        .into_iter()
        .filter(|g| every_group || access.group(AclOperation::Describe, &g.group_id))
        .map(|g| GroupSummary {
            members: all_members(&broker, &g.group_id).map_or(0, |m| m.len()),
            lag: offsets(&broker, &access, &g.group_id)
                .iter()
                .filter_map(|o| o.lag)
                .sum(),
            group_type: g.group_type,
            protocol_type: g.protocol_type,
            state: g.state,
            group_id: g.group_id,
        })
        .collect();
    Ok(Json(groups))
}

fn unknown_group(group_id: &str) -> ApiError {
    ApiError::not_found("GROUP_ID_NOT_FOUND", format!("no group {group_id}"))
}

pub async fn describe(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(group_id): Path<String>,
) -> ApiResult<GroupDetail> {
    access.require_group(AclOperation::Describe, &group_id)?;
    detail(&broker, &access, group_id)
}

fn detail(broker: &Broker, access: &Access, group_id: String) -> ApiResult<GroupDetail> {
    let listing = broker
        .group_coordinator()
        .list_groups()
        .into_iter()
        .find(|g| g.group_id == group_id)
        .ok_or_else(|| unknown_group(&group_id))?;
    Ok(Json(GroupDetail {
        members: members(broker, access, &group_id).unwrap_or_default(),
        offsets: offsets(broker, access, &group_id),
        group_type: listing.group_type,
        state: listing.state,
        group_id,
    }))
}

#[derive(Debug, Deserialize)]
pub struct ResetOffsets {
    pub topic: String,
    /// The partitions to reset; absent: every partition of the topic.
    pub partitions: Option<Vec<i32>>,
    /// `earliest`, `latest`, `offset` (with `offset`) or `timestamp` (with `timestamp`, ms).
    pub to: String,
    pub offset: Option<i64>,
    pub timestamp: Option<i64>,
}

pub async fn reset_offsets(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(group_id): Path<String>,
    super::Body(request): super::Body<ResetOffsets>,
) -> ApiResult<GroupDetail> {
    // OffsetCommit: READ on the group and on the topic.
    access.require_group(AclOperation::Read, &group_id)?;
    access.require_topic(AclOperation::Read, &request.topic)?;
    if all_members(&broker, &group_id).is_some_and(|m| !m.is_empty()) {
        // Kafka's tool refuses too: members would overwrite the reset with their own commits.
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "NON_EMPTY_GROUP",
            format!(
                "group {group_id} has active members; offsets can be reset only when it is empty"
            ),
        ));
    }
    let topic = broker.topic(&request.topic).ok_or_else(|| {
        ApiError::not_found(
            "UNKNOWN_TOPIC_OR_PARTITION",
            format!("no topic named {}", request.topic),
        )
    })?;
    let partitions = request
        .partitions
        .clone()
        .unwrap_or_else(|| (0..topic.partitions).collect());
    let mut commits = Vec::with_capacity(partitions.len());
    for partition in partitions {
        let tp = TopicPartition::new(&request.topic, partition);
        // ListOffsets' special timestamps: -2 earliest, -1 latest.
        let offset = match (request.to.as_str(), request.offset, request.timestamp) {
            ("earliest", _, _) => broker.list_offset(&tp, -2, -1, false).await?.0,
            ("latest", _, _) => broker.list_offset(&tp, -1, -1, false).await?.0,
            ("offset", Some(offset), _) if offset >= 0 => offset,
            ("timestamp", _, Some(timestamp)) if timestamp >= 0 => {
                broker.list_offset(&tp, timestamp, -1, false).await?.0
            }
            _ => {
                return Err(ApiError::bad_request(
                    "to is earliest, latest, offset (with a non-negative offset) or timestamp (with a timestamp)",
                ));
            }
        };
        commits.push(OffsetCommit {
            topic: request.topic.clone(),
            partition,
            offset,
            leader_epoch: -1,
            metadata: String::new(),
        });
    }
    // Made on first use, as FindCoordinator makes it.
    let results = broker
        .groups()
        .await?
        .commit_offsets(&group_id, &crate::group::CommitBy::ADMIN, None, &commits)
        .map_err(ApiError::from)?;
    for result in results {
        result.map_err(ApiError::from)?;
    }
    detail(&broker, &access, group_id)
}

pub async fn delete(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(group_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    access.require_group(AclOperation::Delete, &group_id)?;
    let coordinator = broker.groups().await?;
    if !coordinator.has_group(&group_id) {
        return Err(unknown_group(&group_id));
    }
    coordinator
        .delete_group(&group_id)
        .map_err(ApiError::from)?;
    Ok(StatusCode::NO_CONTENT)
}
