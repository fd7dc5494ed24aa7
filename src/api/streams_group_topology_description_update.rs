//! StreamsGroupTopologyDescriptionUpdate (KIP-1331): a member sends the description of its
//! topology (processors, stores, successors) when a heartbeat asked for it; the coordinator
//! keeps it for StreamsGroupDescribe (`kafka-streams-groups --describe` shows it).

use super::{ApiContext, wire_str};
use crate::error::code;
use crate::metadata::features::STREAMS_VERSION;
use bytes::BytesMut;
use kafka_protocol::messages::{
    StreamsGroupTopologyDescriptionUpdateRequest, StreamsGroupTopologyDescriptionUpdateResponse,
};
use kafka_protocol::protocol::Encodable;

/// The version the description is kept in: it is answered in StreamsGroupDescribe v1, whose
/// `TopologyDescription` has the same fields.
pub const STORED_VERSION: i16 = 0;

pub async fn handle(
    ctx: &ApiContext,
    request: StreamsGroupTopologyDescriptionUpdateRequest,
    _version: i16,
) -> Option<StreamsGroupTopologyDescriptionUpdateResponse> {
    let error = |code: i16, message: Option<String>| {
        Some(
            StreamsGroupTopologyDescriptionUpdateResponse::default()
                .with_error_code(code)
                .with_error_message(message.map(|m| wire_str(&m))),
        )
    };
    if !super::context::feature_enabled(ctx, STREAMS_VERSION) {
        return error(
            code::UNSUPPORTED_VERSION,
            Some(super::context::FEATURE_DISABLED.to_string()),
        );
    }
    let groups = match super::coordinator_for(ctx, &request.group_id).await {
        Ok(groups) => groups,
        Err(e) => return error(e.code(), None),
    };
    let mut bytes = BytesMut::new();
    if let Err(e) = request
        .topology_description
        .encode(&mut bytes, STORED_VERSION)
    {
        return error(
            code::STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED,
            Some(format!("The topology description cannot be stored: {e}")),
        );
    }
    match groups.streams_topology_description(
        &request.group_id,
        &request.member_id,
        request.topology_epoch,
        bytes.freeze(),
    ) {
        Ok(()) => Some(StreamsGroupTopologyDescriptionUpdateResponse::default()),
        Err(e) => error(e.code(), e.message()),
    }
}
