//! FindCoordinator: a group's coordinator is the broker leading its `__consumer_offsets`
//! partition, a transactional id's the one leading its `__transaction_state` partition, a
//! share-partition's (v6) the one leading its `__share_group_state` partition (each topic is
//! created on first use). Batched keys from v4.

use super::{ApiContext, wire_str};
use crate::error::code;
use crate::types::TopicPartition;
use kafka_protocol::messages::find_coordinator_response::Coordinator;
use kafka_protocol::messages::{BrokerId, FindCoordinatorRequest, FindCoordinatorResponse};
use kafka_protocol::protocol::StrBytes;

const KEY_TYPE_GROUP: i8 = 0;
const KEY_TYPE_TRANSACTION: i8 = 1;
const KEY_TYPE_SHARE: i8 = 2;

/// The partition of a coordinator's internal topic that holds a key.
type Placement = Box<dyn Fn(&str) -> TopicPartition + Send + Sync>;

pub async fn handle(
    ctx: &ApiContext,
    request: FindCoordinatorRequest,
    version: i16,
) -> Option<FindCoordinatorResponse> {
    let key_type = if version >= 1 {
        request.key_type
    } else {
        KEY_TYPE_GROUP
    };
    // Where a key lives: its partition of the coordinator's internal topic (created on
    // first use).
    let placement: Result<Option<Placement>, _> = match key_type {
        KEY_TYPE_GROUP => ctx.broker.groups().await.map(|groups| {
            let groups = groups.clone();
            Some(Box::new(move |key: &str| groups.partition_of(key)) as Box<_>)
        }),
        KEY_TYPE_TRANSACTION => ctx.broker.transactions().await.map(|txns| {
            let txns = txns.clone();
            Some(Box::new(move |key: &str| txns.partition_of(key)) as Box<_>)
        }),
        // A share-partition's key, `group:topicId:partition` (KIP-932; brokers ask, from v6).
        KEY_TYPE_SHARE if version >= 6 => ctx.broker.shares().await.map(|shares| {
            let shares = shares.clone();
            Some(Box::new(move |key: &str| {
                TopicPartition::new(
                    crate::share::SHARE_STATE_TOPIC,
                    shares.store().shard_of_coordinator_key(key),
                )
            }) as Box<_>)
        }),
        _ => Ok(None),
    };
    let answer = |key: StrBytes| -> Coordinator {
        let coordinator = Coordinator::default().with_key(key);
        match &placement {
            // The coordinator is the leader of the key's partition.
            Ok(Some(partition_of)) => {
                let tp = partition_of(&coordinator.key);
                let leader = ctx.broker.partition_state(&tp).leader;
                match leader.and_then(|id| super::broker_address(ctx, id).map(|a| (id, a))) {
                    Some((id, (host, port))) => coordinator
                        .with_error_code(code::NONE)
                        .with_node_id(BrokerId(id))
                        .with_host(wire_str(&host))
                        .with_port(port),
                    None => coordinator
                        .with_error_code(code::COORDINATOR_NOT_AVAILABLE)
                        .with_node_id(BrokerId(-1))
                        .with_port(-1),
                }
            }
            Ok(None) => coordinator
                .with_error_code(code::COORDINATOR_NOT_AVAILABLE)
                .with_node_id(BrokerId(-1))
                .with_port(-1),
            Err(e) => {
                tracing::warn!(error = %e, "cannot create the coordinator's internal topic");
                coordinator
                    .with_error_code(code::COORDINATOR_NOT_AVAILABLE)
                    .with_error_message(Some(wire_str(&e.message())))
                    .with_node_id(BrokerId(-1))
                    .with_port(-1)
            }
        }
    };
    if version >= 4 {
        let coordinators = request.coordinator_keys.into_iter().map(answer).collect();
        return Some(FindCoordinatorResponse::default().with_coordinators(coordinators));
    }
    let c = answer(request.key);
    let mut response = FindCoordinatorResponse::default()
        .with_error_code(c.error_code)
        .with_node_id(c.node_id)
        .with_host(c.host)
        .with_port(c.port);
    if version >= 1 {
        response = response.with_error_message(c.error_message);
    }
    Some(response)
}
