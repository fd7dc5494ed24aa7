//! DescribeGroups: state, protocol and members; member metadata and assignments are shown once
//! the group is Stable, as in Kafka. An unknown group is "Dead" (GROUP_ID_NOT_FOUND from v6).

use super::{ApiContext, authorized_operations, wire_str};
use crate::error::{GroupError, code};
use kafka_protocol::messages::describe_groups_response::{DescribedGroup, DescribedGroupMember};
use kafka_protocol::messages::{DescribeGroupsRequest, DescribeGroupsResponse};
use kafka_protocol::protocol::StrBytes;

/// READ, DESCRIBE, DELETE on a group.
const GROUP_OPERATIONS: &[i8] = &[3, 6, 8];

pub async fn handle(
    ctx: &ApiContext,
    request: DescribeGroupsRequest,
    version: i16,
) -> Option<DescribeGroupsResponse> {
    let coordinator = ctx.broker.groups().await;
    let ops = if version >= 3 && request.include_authorized_operations {
        authorized_operations(GROUP_OPERATIONS)
    } else {
        i32::MIN
    };
    let groups = request
        .groups
        .into_iter()
        .map(|group_id| {
            let described = DescribedGroup::default()
                .with_group_id(group_id.clone())
                .with_authorized_operations(ops);
            let coordinator = match &coordinator {
                Ok(c) if c.is_loading(&group_id) => {
                    return described.with_error_code(GroupError::CoordinatorLoadInProgress.code());
                }
                Ok(c) if c.owns(&group_id) => c,
                Ok(_) => return described.with_error_code(GroupError::NotCoordinator.code()),
                Err(_) => {
                    return described.with_error_code(GroupError::CoordinatorNotAvailable.code());
                }
            };
            match coordinator.describe_group(&group_id) {
                None => {
                    let described = described.with_group_state(StrBytes::from_static_str("Dead"));
                    if version >= 6 {
                        described
                            .with_error_code(code::GROUP_ID_NOT_FOUND)
                            .with_error_message(Some(wire_str(&format!(
                                "group {} not found",
                                group_id.as_str()
                            ))))
                    } else {
                        described.with_error_code(code::NONE)
                    }
                }
                Some(d) => described
                    .with_error_code(code::NONE)
                    .with_group_state(StrBytes::from_static_str(d.state))
                    .with_protocol_type(StrBytes::from_string(d.protocol_type))
                    .with_protocol_data(StrBytes::from_string(d.protocol))
                    .with_members(
                        d.members
                            .into_iter()
                            .map(|m| {
                                DescribedGroupMember::default()
                                    .with_member_id(StrBytes::from_string(m.member_id))
                                    .with_group_instance_id(if version >= 4 {
                                        m.group_instance_id.map(StrBytes::from_string)
                                    } else {
                                        None
                                    })
                                    .with_client_id(StrBytes::from_string(m.client_id))
                                    .with_client_host(StrBytes::from_string(m.client_host))
                                    .with_member_metadata(m.metadata)
                                    .with_member_assignment(m.assignment)
                            })
                            .collect(),
                    ),
            }
        })
        .collect();
    Some(DescribeGroupsResponse::default().with_groups(groups))
}

/// A classic consumer's assignment bytes (ConsumerProtocol's Assignment), by topic; empty
/// when they cannot be read (another protocol's, or none yet).
pub fn consumer_assignment(bytes: &bytes::Bytes) -> std::collections::BTreeMap<String, Vec<i32>> {
    use bytes::Buf;
    let mut buf = bytes.clone();
    if buf.remaining() < 2 {
        return std::collections::BTreeMap::new();
    }
    let version = buf.get_i16().clamp(0, 3);
    use kafka_protocol::protocol::Decodable;
    match kafka_protocol::messages::ConsumerProtocolAssignment::decode(&mut buf, version) {
        Ok(assignment) => assignment
            .assigned_partitions
            .into_iter()
            .map(|t| {
                let mut partitions = t.partitions;
                partitions.sort_unstable();
                (t.topic.to_string(), partitions)
            })
            .collect(),
        Err(_) => std::collections::BTreeMap::new(),
    }
}
