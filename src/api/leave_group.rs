//! LeaveGroup: one member (v0-2) or a batch of members by id or group.instance.id (v3+).

use super::ApiContext;
use crate::error::{GroupError, code};
use kafka_protocol::messages::leave_group_response::MemberResponse;
use kafka_protocol::messages::{LeaveGroupRequest, LeaveGroupResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: LeaveGroupRequest,
    version: i16,
) -> Option<LeaveGroupResponse> {
    let members: Vec<(String, Option<String>)> = if version >= 3 {
        request
            .members
            .iter()
            .map(|m| {
                (
                    m.member_id.to_string(),
                    m.group_instance_id.as_ref().map(|i| i.to_string()),
                )
            })
            .collect()
    } else {
        vec![(request.member_id.to_string(), None)]
    };
    let outcome = match super::coordinator_for(ctx, &request.group_id).await {
        Err(e) => Err(e),
        Ok(groups) => groups.leave(&request.group_id, &members),
    };
    let code_of = |r: &Result<(), GroupError>| r.err().map(GroupError::code).unwrap_or(code::NONE);
    let response = match outcome {
        Err(e) => LeaveGroupResponse::default().with_error_code(e.code()),
        Ok(results) if version < 3 => LeaveGroupResponse::default()
            .with_error_code(results.first().map(code_of).unwrap_or(code::NONE)),
        Ok(results) => LeaveGroupResponse::default()
            .with_error_code(code::NONE)
            .with_members(
                request
                    .members
                    .into_iter()
                    .zip(results.iter())
                    .map(|(m, r)| {
                        MemberResponse::default()
                            .with_member_id(m.member_id)
                            .with_group_instance_id(m.group_instance_id)
                            .with_error_code(code_of(r))
                    })
                    .collect(),
            ),
    };
    Some(response)
}
