//! ConsumerGroupDescribe (KIP-848): epochs, assignor, members with their current and target
//! assignments. A classic group answers GROUP_ID_NOT_FOUND, as in Kafka.

use super::{ApiContext, wire_str};
use crate::broker::Broker;
use crate::error::{GroupError, code};
use crate::group::consumer::Assignment;
use crate::metadata::features::GROUP_VERSION;
use kafka_protocol::messages::consumer_group_describe_response::{
    Assignment as WireAssignment, DescribedGroup, Member, TopicPartitions,
};
use kafka_protocol::messages::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;

fn wire(broker: &Broker, assignment: &Assignment) -> WireAssignment {
    WireAssignment::default().with_topic_partitions(
        assignment
            .iter()
            .map(|(topic, partitions)| {
                TopicPartitions::default()
                    .with_topic_id(broker.topic(topic).map(|t| t.id).unwrap_or_default())
                    .with_topic_name(TopicName(StrBytes::from_string(topic.clone())))
                    .with_partitions(partitions.iter().copied().collect())
            })
            .collect(),
    )
}

pub async fn handle(
    ctx: &ApiContext,
    request: ConsumerGroupDescribeRequest,
    version: i16,
) -> Option<ConsumerGroupDescribeResponse> {
    let coordinator = ctx.broker.groups().await;
    let groups = request
        .group_ids
        .into_iter()
        .map(|group_id| {
            let base = DescribedGroup::default()
                .with_group_id(group_id.clone())
                .with_authorized_operations(i32::MIN);
            if !super::context::feature_enabled(ctx, GROUP_VERSION) {
                return base
                    .with_error_code(code::UNSUPPORTED_VERSION)
                    .with_error_message(Some(wire_str(super::context::FEATURE_DISABLED)));
            }
            let Ok(coordinator) = &coordinator else {
                return base.with_error_code(GroupError::CoordinatorNotAvailable.code());
            };
            if coordinator.is_loading(&group_id) {
                return base.with_error_code(GroupError::CoordinatorLoadInProgress.code());
            }
            if !coordinator.owns(&group_id) {
                return base.with_error_code(GroupError::NotCoordinator.code());
            }
            let described = coordinator.consumer_describe(&group_id, |g, config| {
                let members = g
                    .members
                    .values()
                    .map(|m| {
                        let mut member = Member::default()
                            .with_member_id(StrBytes::from_string(m.member_id.clone()))
                            .with_instance_id(m.instance_id.clone().map(StrBytes::from_string))
                            .with_rack_id(m.rack_id.clone().map(StrBytes::from_string))
                            .with_member_epoch(m.member_epoch)
                            .with_client_id(StrBytes::from_string(m.client_id.clone()))
                            .with_client_host(StrBytes::from_string(m.client_host.clone()))
                            .with_subscribed_topic_names(
                                m.subscribed_topic_names
                                    .iter()
                                    .map(|t| TopicName(StrBytes::from_string(t.clone())))
                                    .collect(),
                            )
                            .with_subscribed_topic_regex(
                                m.subscribed_topic_regex.clone().map(StrBytes::from_string),
                            )
                            .with_assignment(wire(&ctx.broker, &m.assigned))
                            .with_target_assignment(wire(
                                &ctx.broker,
                                g.target.get(&m.member_id).unwrap_or(&Assignment::new()),
                            ));
                        if version >= 1 {
                            // 1 = consumer protocol member (0 would be a classic member).
                            member = member.with_member_type(1);
                        }
                        member
                    })
                    .collect();
                base.clone()
                    .with_error_code(code::NONE)
                    .with_group_state(StrBytes::from_static_str(g.state_name()))
                    .with_group_epoch(g.group_epoch)
                    .with_assignment_epoch(g.assignment_epoch)
                    .with_assignor_name(StrBytes::from_string(g.assignor(&config.consumer)))
                    .with_members(members)
            });
            described.unwrap_or_else(|| {
                base.with_error_code(code::GROUP_ID_NOT_FOUND)
                    .with_error_message(Some(wire_str(&format!(
                        "group {} is not a consumer group",
                        group_id.as_str()
                    ))))
            })
        })
        .collect();
    Some(ConsumerGroupDescribeResponse::default().with_groups(groups))
}
