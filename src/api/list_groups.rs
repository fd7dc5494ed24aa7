//! ListGroups, with the state (v4+) and type (v5+: "classic", "consumer" or "share") filters.

use super::ApiContext;
use crate::error::{GroupError, code};
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::{GroupId, ListGroupsRequest, ListGroupsResponse};
use kafka_protocol::protocol::StrBytes;

pub async fn handle(
    ctx: &ApiContext,
    request: ListGroupsRequest,
    version: i16,
) -> Option<ListGroupsResponse> {
    let groups = match ctx.broker.groups().await {
        Err(_) => {
            return Some(
                ListGroupsResponse::default()
                    .with_error_code(GroupError::CoordinatorNotAvailable.code()),
            );
        }
        // Each broker lists the groups it coordinates (Kafka's ListGroups is per broker).
        Ok(groups) => {
            let shares = ctx
                .broker
                .share_coordinator()
                .list_groups()
                .into_iter()
                .map(|(group_id, state)| crate::group::GroupListing {
                    group_id,
                    protocol_type: "share".into(),
                    state,
                    group_type: "share",
                });
            let mut all = groups.list_groups();
            all.extend(shares);
            all.retain(|g| groups.owns(&g.group_id));
            all.sort_by(|a, b| a.group_id.cmp(&b.group_id));
            all
        }
    };
    let states: Vec<String> = request
        .states_filter
        .iter()
        .map(|s| s.to_lowercase())
        .collect();
    let types: Vec<String> = request
        .types_filter
        .iter()
        .map(|s| s.to_lowercase())
        .collect();
    let listed = groups
        .into_iter()
        .filter(|g| states.is_empty() || states.contains(&g.state.to_lowercase()))
        .filter(|g| types.is_empty() || types.iter().any(|t| t == g.group_type))
        .map(|g| {
            let mut listed = ListedGroup::default()
                .with_group_id(GroupId(StrBytes::from_string(g.group_id)))
                .with_protocol_type(StrBytes::from_string(g.protocol_type));
            if version >= 4 {
                listed = listed.with_group_state(StrBytes::from_static_str(g.state));
            }
            if version >= 5 {
                listed = listed.with_group_type(StrBytes::from_static_str(g.group_type));
            }
            listed
        })
        .collect();
    Some(
        ListGroupsResponse::default()
            .with_error_code(code::NONE)
            .with_groups(listed),
    )
}
