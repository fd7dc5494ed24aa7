//! ConsumerGroupHeartbeat (KIP-848): join (epoch 0), stay (current epoch, with owned
//! partitions when they changed), leave (-1, or -2 for a static member). The broker computes
//! assignments; v0 lets the broker pick the member id, v1 has the client send its own.

use super::{ApiContext, wire_str};
use crate::error::{GroupError, code};
use crate::group::consumer::{Assignment, Heartbeat};
use crate::metadata::features::GROUP_VERSION;
use kafka_protocol::messages::consumer_group_heartbeat_response::{
    Assignment as WireAssignment, TopicPartitions,
};
use kafka_protocol::messages::{ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse};
use kafka_protocol::protocol::StrBytes;

pub async fn handle(
    ctx: &ApiContext,
    request: ConsumerGroupHeartbeatRequest,
    version: i16,
) -> Option<ConsumerGroupHeartbeatResponse> {
    let interval = ctx
        .broker
        .group_coordinator()
        .consumer_config(&request.group_id)
        .heartbeat_interval_ms;
    let error = |e: GroupError| {
        Some(
            ConsumerGroupHeartbeatResponse::default()
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string())))
                .with_member_epoch(-1)
                .with_heartbeat_interval_ms(interval),
        )
    };
    if !super::context::feature_enabled(ctx, GROUP_VERSION) {
        return Some(
            ConsumerGroupHeartbeatResponse::default()
                .with_error_code(code::UNSUPPORTED_VERSION)
                .with_error_message(Some(wire_str(super::context::FEATURE_DISABLED)))
                .with_member_epoch(-1),
        );
    }
    if version >= 1 && request.member_id.is_empty() {
        return error(GroupError::InvalidRequest);
    }
    let owned = request.topic_partitions.as_ref().map(|tps| {
        let mut owned = Assignment::new();
        for tp in tps {
            if let Some(topic) = ctx.broker.topic_by_id(tp.topic_id) {
                owned
                    .entry(topic.name.to_string())
                    .or_default()
                    .extend(tp.partitions.iter().copied());
            }
        }
        owned
    });
    let heartbeat = Heartbeat {
        member_id: request.member_id.to_string(),
        member_epoch: request.member_epoch,
        instance_id: request.instance_id.as_ref().map(|s| s.to_string()),
        rack_id: request.rack_id.as_ref().map(|s| s.to_string()),
        rebalance_timeout_ms: request.rebalance_timeout_ms,
        subscribed_topic_names: request
            .subscribed_topic_names
            .as_ref()
            .map(|names| names.iter().map(|n| n.to_string()).collect()),
        subscribed_topic_regex: request
            .subscribed_topic_regex
            .as_ref()
            .map(|r| r.to_string()),
        server_assignor: request.server_assignor.as_ref().map(|a| a.to_string()),
        owned,
        client_id: ctx.client_id.to_string(),
        client_host: ctx.client_host.to_string(),
    };
    let groups = match super::coordinator_for(ctx, &request.group_id).await {
        Ok(groups) => groups,
        Err(e) => return error(e),
    };
    // A share group's id is taken (Kafka: "is not a consumer group").
    if ctx
        .broker
        .share_coordinator()
        .is_share_group(&request.group_id)
    {
        return error(GroupError::GroupIdNotFound);
    }
    match groups.consumer_heartbeat(&request.group_id, heartbeat) {
        Err(e) => error(e),
        Ok(result) => {
            let assignment = result.assignment.map(|a| {
                WireAssignment::default().with_topic_partitions(
                    a.into_iter()
                        .filter_map(|(topic, partitions)| {
                            ctx.broker.topic(&topic).map(|t| {
                                TopicPartitions::default()
                                    .with_topic_id(t.id)
                                    .with_partitions(partitions.into_iter().collect())
                            })
                        })
                        .collect(),
                )
            });
            Some(
                ConsumerGroupHeartbeatResponse::default()
                    .with_error_code(code::NONE)
                    .with_member_id(Some(StrBytes::from_string(result.member_id)))
                    .with_member_epoch(result.member_epoch)
                    .with_heartbeat_interval_ms(interval)
                    .with_assignment(assignment),
            )
        }
    }
}
