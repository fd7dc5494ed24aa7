//! JoinGroup: the classic protocol's join phase. Parks until the rebalance completes.

use super::ApiContext;
use crate::error::{GroupError, code};
use crate::group::classic::{JoinRequest, JoinResult};
use kafka_protocol::messages::join_group_response::JoinGroupResponseMember;
use kafka_protocol::messages::{JoinGroupRequest, JoinGroupResponse};
use kafka_protocol::protocol::StrBytes;

pub async fn handle(
    ctx: &ApiContext,
    request: JoinGroupRequest,
    version: i16,
) -> Option<JoinGroupResponse> {
    let member_id = request.member_id.to_string();
    let result = match super::coordinator_for(ctx, &request.group_id).await {
        Err(e) => JoinResult::error(e, &member_id),
        // A share group's id is taken (Kafka: not a classic group).
        Ok(_)
            if ctx
                .broker
                .share_coordinator()
                .is_share_group(&request.group_id) =>
        {
            JoinResult::error(GroupError::InconsistentGroupProtocol, &member_id)
        }
        Ok(groups) => {
            let join = JoinRequest {
                member_id,
                group_instance_id: request.group_instance_id.as_ref().map(|s| s.to_string()),
                client_id: ctx.client_id.to_string(),
                client_host: ctx.client_host.to_string(),
                session_timeout_ms: request.session_timeout_ms,
                // v0 has no rebalance timeout: Kafka uses the session timeout.
                rebalance_timeout_ms: if version >= 1 {
                    request.rebalance_timeout_ms
                } else {
                    request.session_timeout_ms
                },
                protocol_type: request.protocol_type.to_string(),
                protocols: request
                    .protocols
                    .iter()
                    .map(|p| (p.name.to_string(), p.metadata.clone()))
                    .collect(),
                require_known_member_id: version >= 4,
            };
            // The wait for the rebalance is time spent on others (Kafka parks it in a purgatory).
            crate::stats::requests::remote(groups.join(&request.group_id, join)).await
        }
    };
    let s = |text: String| StrBytes::from_string(text);
    let members = result
        .members
        .into_iter()
        .map(|(member_id, instance, metadata)| {
            JoinGroupResponseMember::default()
                .with_member_id(s(member_id))
                .with_group_instance_id(if version >= 5 { instance.map(s) } else { None })
                .with_metadata(metadata)
        })
        .collect();
    let mut response = JoinGroupResponse::default()
        .with_error_code(result.error.map(GroupError::code).unwrap_or(code::NONE))
        .with_generation_id(result.generation)
        .with_leader(s(result.leader))
        .with_member_id(s(result.member_id))
        .with_members(members);
    // Protocol name is nullable from v7 (an empty string before); protocol type exists from v7.
    response = if version >= 7 {
        response
            .with_protocol_type(result.protocol_type.map(s))
            .with_protocol_name(result.protocol_name.map(s))
    } else {
        response.with_protocol_name(Some(s(result.protocol_name.unwrap_or_default())))
    };
    if version >= 9 {
        response = response.with_skip_assignment(result.skip_assignment);
    }
    Some(response)
}
