//! AddOffsetsToTxn: a transactional producer is about to commit a group's offsets in its
//! transaction (TxnOffsetCommit); the group's `__consumer_offsets` partition joins the
//! transaction, so the commit marker reaches it too.

use super::ApiContext;
use crate::error::code;
use crate::group::OFFSETS_TOPIC;
use kafka_protocol::messages::{AddOffsetsToTxnRequest, AddOffsetsToTxnResponse};
use std::collections::{BTreeMap, BTreeSet};

pub async fn handle(
    ctx: &ApiContext,
    request: AddOffsetsToTxnRequest,
    version: i16,
) -> Option<AddOffsetsToTxnResponse> {
    let groups = match ctx.broker.groups().await {
        Ok(groups) => groups,
        Err(e) => return Some(AddOffsetsToTxnResponse::default().with_error_code(e.code())),
    };
    let partition = groups.partition_of(&request.group_id).partition;
    let partitions = BTreeMap::from([(OFFSETS_TOPIC.to_string(), BTreeSet::from([partition]))]);
    let outcome = ctx
        .broker
        .transaction_coordinator()
        .add_partitions(
            &request.transactional_id,
            request.producer_id.0,
            request.producer_epoch,
            &partitions,
            // Only producers below transaction version 2 send AddOffsetsToTxn.
            0,
        )
        .await;
    Some(
        AddOffsetsToTxnResponse::default()
            .with_error_code(outcome.err().map_or(code::NONE, |e| e.code(version >= 2))),
    )
}
