//! SyncGroup: followers wait for the leader's assignment; everyone receives their own.

use super::ApiContext;
use crate::error::{GroupError, code};
use crate::group::classic::{SyncRequest, SyncResult};
use kafka_protocol::messages::{SyncGroupRequest, SyncGroupResponse};
use kafka_protocol::protocol::StrBytes;

pub async fn handle(
    ctx: &ApiContext,
    request: SyncGroupRequest,
    version: i16,
) -> Option<SyncGroupResponse> {
    let result = match super::coordinator_for(ctx, &request.group_id).await {
        Err(e) => SyncResult::error(e),
        Ok(groups) => {
            let sync = SyncRequest {
                member_id: request.member_id.to_string(),
                group_instance_id: request.group_instance_id.as_ref().map(|i| i.to_string()),
                generation: request.generation_id,
                protocol_type: request.protocol_type.as_ref().map(|t| t.to_string()),
                protocol_name: request.protocol_name.as_ref().map(|n| n.to_string()),
                assignments: request
                    .assignments
                    .iter()
                    .map(|a| (a.member_id.to_string(), a.assignment.clone()))
                    .collect(),
            };
            // The wait for the leader's assignment is time spent on others.
            crate::stats::requests::remote(groups.sync(&request.group_id, sync)).await
        }
    };
    let mut response = SyncGroupResponse::default()
        .with_error_code(result.error.map(GroupError::code).unwrap_or(code::NONE))
        .with_assignment(result.assignment);
    if version >= 5 {
        response = response
            .with_protocol_type(result.protocol_type.map(StrBytes::from_string))
            .with_protocol_name(result.protocol_name.map(StrBytes::from_string));
    }
    Some(response)
}
