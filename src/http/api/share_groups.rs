//! Share groups (KIP-932) this broker coordinates: `GET /api/v1/share-groups` (state, members,
//! lag), `GET /api/v1/share-groups/{group}` (members with subscriptions and assignments, the
//! start offset and lag of each share-partition), `DELETE` (delete an empty group). As
//! ShareGroupDescribe and DescribeShareGroupOffsets show them: a principal sees the groups it
//! may describe, and in them the topics it may describe.

use super::{ApiError, ApiResult};
use crate::auth::acl::AclOperation;
use crate::broker::Broker;
use crate::http::access::Access;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Serialize)]
pub struct ShareGroupSummary {
    pub group_id: String,
    pub state: &'static str,
    pub members: usize,
    /// Records not yet delivered completely, over the share-partitions of topics it may see.
    pub lag: i64,
}

#[derive(Debug, Serialize)]
pub struct ShareGroupDetail {
    pub group_id: String,
    pub state: &'static str,
    pub group_epoch: i32,
    pub assignment_epoch: i32,
    pub members: Vec<ShareMemberView>,
    pub offsets: Vec<ShareOffsetView>,
}

#[derive(Debug, Serialize)]
pub struct ShareMemberView {
    pub member_id: String,
    pub client_id: String,
    pub client_host: String,
    pub member_epoch: i32,
    pub subscribed_topics: Vec<String>,
    /// Partitions by topic.
    pub assignment: BTreeMap<String, Vec<i32>>,
}

#[derive(Debug, Serialize)]
pub struct ShareOffsetView {
    pub topic: String,
    pub partition: i32,
    /// The share-partition's start offset: records before it are done with.
    pub start_offset: i64,
    /// -1 when unknown (the partition is not hosted here).
    pub lag: i64,
}

async fn offsets(broker: &Broker, access: &Access, group_id: &str) -> Vec<ShareOffsetView> {
    let image = broker.metadata().image();
    broker
        .share_coordinator()
        .start_offsets(group_id, None)
        .await
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(topic_id, partition, start_offset, lag)| {
            let topic = image.topic_names.get(&topic_id)?.to_string();
            access.sees_topic(&topic).then_some(ShareOffsetView {
                topic,
                partition,
                start_offset,
                lag,
            })
        })
        .collect()
}

fn unknown_group(group_id: &str) -> ApiError {
    ApiError::not_found("GROUP_ID_NOT_FOUND", format!("no share group {group_id}"))
}

pub async fn list(
    State(broker): State<Arc<Broker>>,
    access: Access,
) -> ApiResult<Vec<ShareGroupSummary>> {
    let every_group = access.cluster(AclOperation::Describe);
    let coordinator = broker.share_coordinator();
    let mut groups: Vec<ShareGroupSummary> = Vec::new();
    for (group_id, state) in coordinator.list_groups() {
        if !every_group && !access.group(AclOperation::Describe, &group_id) {
            continue;
        }
        groups.push(ShareGroupSummary {
            members: coordinator
                .describe(&group_id)
                .map_or(0, |g| g.members.len()),
            lag: offsets(&broker, &access, &group_id)
                .await
                .iter()
                .map(|o| o.lag.max(0))
                .sum(),
            state,
            group_id,
        });
    }
    groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
    Ok(Json(groups))
}

pub async fn describe(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(group_id): Path<String>,
) -> ApiResult<ShareGroupDetail> {
    access.require_group(AclOperation::Describe, &group_id)?;
    let view = broker
        .share_coordinator()
        .describe(&group_id)
        .ok_or_else(|| unknown_group(&group_id))?;
    let image = broker.metadata().image();
    let members = view
        .members
        .iter()
        .map(|m| ShareMemberView {
            member_id: m.member_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            member_epoch: m.member_epoch,
            subscribed_topics: m
                .subscribed_topic_names
                .iter()
                .filter(|t| access.sees_topic(t))
                .cloned()
                .collect(),
            assignment: m
                .assignment
                .iter()
                .filter_map(|(topic_id, partitions)| {
                    let topic = image.topic_names.get(topic_id)?.to_string();
                    access
                        .sees_topic(&topic)
                        .then(|| (topic, partitions.iter().copied().collect()))
                })
                .collect(),
        })
        .collect();
    Ok(Json(ShareGroupDetail {
        offsets: offsets(&broker, &access, &group_id).await,
        group_id: view.group_id,
        state: view.state,
        group_epoch: view.group_epoch,
        assignment_epoch: view.assignment_epoch,
        members,
    }))
}

pub async fn delete(
    State(broker): State<Arc<Broker>>,
    access: Access,
    Path(group_id): Path<String>,
) -> Result<StatusCode, ApiError> {
    access.require_group(AclOperation::Delete, &group_id)?;
    let coordinator = broker.shares().await?;
    if !coordinator.is_share_group(&group_id) {
        return Err(unknown_group(&group_id));
    }
    coordinator.delete_group(&group_id).await?;
    Ok(StatusCode::NO_CONTENT)
}
