//! DeleteGroups: removes empty groups with their committed offsets (share groups with their
//! share state).

use super::ApiContext;
use crate::error::{GroupError, ShareError, code};
use kafka_protocol::messages::delete_groups_response::DeletableGroupResult;
use kafka_protocol::messages::{DeleteGroupsRequest, DeleteGroupsResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: DeleteGroupsRequest,
    version: i16,
) -> Option<DeleteGroupsResponse> {
    let coordinator = ctx.broker.groups().await;
    let mut results = Vec::with_capacity(request.groups_names.len());
    for group_id in request.groups_names {
        let shares = ctx.broker.share_coordinator();
        let result = match &coordinator {
            Ok(c) if c.is_loading(&group_id) => Err(GroupError::CoordinatorLoadInProgress.into()),
            Ok(c) if c.owns(&group_id) && shares.is_share_group(&group_id) => {
                shares.delete_group(&group_id).await
            }
            Ok(c) if c.owns(&group_id) => c.delete_group(&group_id).map_err(ShareError::from),
            Ok(_) => Err(GroupError::NotCoordinator.into()),
            Err(_) => Err(GroupError::CoordinatorNotAvailable.into()),
        };
        // v3 carries a message with the error.
        let message = result
            .as_ref()
            .err()
            .filter(|_| version >= 3)
            .map(|e| super::wire_str(&e.to_string()));
        results.push(
            DeletableGroupResult::default()
                .with_group_id(group_id)
                .with_error_code(result.err().map(ShareError::code).unwrap_or(code::NONE))
                .with_error_message(message),
        );
    }
    Some(DeleteGroupsResponse::default().with_results(results))
}
