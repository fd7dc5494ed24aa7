//! ShareGroupDescribe (KIP-932): each share group's state, epochs, assignor and members with
//! their subscriptions and assignments.

use super::{ApiContext, wire_str};
use crate::error::{GroupError, ShareError, code};
use kafka_protocol::messages::share_group_describe_response::{
    Assignment, DescribedGroup, Member, TopicPartitions,
};
use kafka_protocol::messages::{ShareGroupDescribeRequest, ShareGroupDescribeResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

/// READ, DESCRIBE, DELETE on a group.
const GROUP_OPERATIONS: &[i8] = &[3, 6, 8];

pub async fn handle(
    ctx: &ApiContext,
    request: ShareGroupDescribeRequest,
    _version: i16,
) -> Option<ShareGroupDescribeResponse> {
    let mut groups = Vec::with_capacity(request.group_ids.len());
    for group_id in request.group_ids {
        let described = DescribedGroup::default().with_group_id(group_id.clone());
        let shares = match super::share_coordinator_for(ctx, &group_id).await {
            Ok(shares) => shares,
            Err(e) => {
                groups.push(failed(described, e));
                continue;
            }
        };
        let Some(view) = shares.describe(&group_id) else {
            groups.push(failed(
                described,
                ShareError::Group(GroupError::GroupIdNotFound),
            ));
            continue;
        };
        let members = view
            .members
            .into_iter()
            .map(|m| {
                let assignment = Assignment::default().with_topic_partitions(
                    m.assignment
                        .into_iter()
                        .map(|(topic_id, partitions)| {
                            TopicPartitions::default()
                                .with_topic_id(topic_id)
                                .with_topic_name(super::topic_name_of(ctx, topic_id))
                                .with_partitions(partitions.into_iter().collect())
                        })
                        .collect(),
                );
                Member::default()
                    .with_member_id(StrBytes::from_string(m.member_id))
                    .with_rack_id(m.rack_id.map(StrBytes::from_string))
                    .with_member_epoch(m.member_epoch)
                    .with_client_id(StrBytes::from_string(m.client_id))
                    .with_client_host(StrBytes::from_string(m.client_host))
                    .with_subscribed_topic_names(
                        m.subscribed_topic_names
                            .iter()
                            .map(|t| TopicName(wire_str(t)))
                            .collect(),
                    )
                    .with_assignment(assignment)
            })
            .collect();
        let operations = if request.include_authorized_operations {
            super::authorized_operations(GROUP_OPERATIONS)
        } else {
            super::OPERATIONS_NOT_REQUESTED
        };
        groups.push(
            described
                .with_error_code(code::NONE)
                .with_group_state(StrBytes::from_static_str(view.state))
                .with_group_epoch(view.group_epoch)
                .with_assignment_epoch(view.assignment_epoch)
                .with_assignor_name(StrBytes::from_static_str("simple"))
                .with_members(members)
                .with_authorized_operations(operations),
        );
    }
    Some(ShareGroupDescribeResponse::default().with_groups(groups))
}

fn failed(described: DescribedGroup, e: ShareError) -> DescribedGroup {
    described
        .with_error_code(e.code())
        .with_error_message(Some(wire_str(&e.to_string())))
}
