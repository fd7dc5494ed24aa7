//! The share coordinator's state RPCs (Initialize/Read/Write/Delete ShareGroupState and
//! ReadShareGroupStateSummary, 83–87) in wire terms: one partition of a request applied to
//! this broker's share coordinator ([`apply`]), and [`StateSender`], the way partition leaders
//! and group coordinators on other brokers reach it.

use super::{ApiContext, wire_str};
use crate::broker::Broker;
use crate::error::{GroupError, ShareError};
use crate::net::{PeerConnection, PeerSecurity};
use crate::share::partition::{RecordState, StateBatch};
use crate::share::persister::{RemoteState, StateFuture};
use crate::share::state::{Snapshot, StateKey};
use crate::share::store::{StateOp, StateReply};
use kafka_protocol::messages::{
    ApiKey, DeleteShareGroupStateRequest, DeleteShareGroupStateResponse,
    InitializeShareGroupStateRequest, InitializeShareGroupStateResponse,
    ReadShareGroupStateRequest, ReadShareGroupStateResponse, ReadShareGroupStateSummaryRequest,
    ReadShareGroupStateSummaryResponse, WriteShareGroupStateRequest, WriteShareGroupStateResponse,
    delete_share_group_state_request, initialize_share_group_state_request,
    read_share_group_state_request, read_share_group_state_response,
    read_share_group_state_summary_request, write_share_group_state_request,
};
use kafka_protocol::protocol::StrBytes;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;
use uuid::Uuid;

/// One partition of a state request, applied to this broker's share coordinator.
pub(super) async fn apply(
    ctx: &ApiContext,
    group: &StrBytes,
    topic_id: Uuid,
    partition: i32,
    op: StateOp,
) -> Result<StateReply, ShareError> {
    if group.is_empty() || partition < 0 {
        return Err(ShareError::Group(GroupError::InvalidRequest));
    }
    let key = StateKey {
        group: group.to_string(),
        topic_id,
        partition,
    };
    ctx.broker.share_coordinator().store().apply(&key, op).await
}

/// A partition's error as the state responses carry it.
pub(super) fn error_fields(outcome: &Result<StateReply, ShareError>) -> (i16, Option<StrBytes>) {
    match outcome {
        Ok(_) => (0, None),
        Err(e) => (e.code(), Some(wire_str(&e.to_string()))),
    }
}

/// Wire state batches as the share coordinator keeps them; an unknown delivery state or a
/// batch that ends before it starts makes the request invalid.
pub(super) fn batches_from_wire(
    wire: &[write_share_group_state_request::StateBatch],
) -> Result<Vec<StateBatch>, ShareError> {
    wire.iter()
        .map(|b| {
            let state = RecordState::from_id(b.delivery_state)
                .ok_or(ShareError::Group(GroupError::InvalidRequest))?;
            if b.last_offset < b.first_offset {
                return Err(ShareError::Group(GroupError::InvalidRequest));
            }
            Ok(StateBatch {
                first_offset: b.first_offset,
                last_offset: b.last_offset,
                state,
                delivery_count: b.delivery_count,
            })
        })
        .collect()
}

pub(super) fn batches_to_wire(
    batches: &[StateBatch],
) -> Vec<read_share_group_state_response::StateBatch> {
    batches
        .iter()
        .map(|b| {
            read_share_group_state_response::StateBatch::default()
                .with_first_offset(b.first_offset)
                .with_last_offset(b.last_offset)
                .with_delivery_state(b.state as i8)
                .with_delivery_count(b.delivery_count)
        })
        .collect()
}

/// The persister's way to another broker's share coordinator: one request per call over that
/// broker's inter-broker listener, on connections kept for the next call.
#[derive(Debug)]
pub struct StateSender {
    broker: Weak<Broker>,
    client_id: String,
    security: PeerSecurity,
    idle: tokio::sync::Mutex<HashMap<i32, Vec<PeerConnection>>>,
}

/// Idle connections kept per broker.
const IDLE_PER_BROKER: usize = 4;

impl StateSender {
    pub fn new(broker: &Arc<Broker>, security: PeerSecurity) -> Self {
        Self {
            client_id: format!("sluice-broker-{}", broker.node_id()),
            broker: Arc::downgrade(broker),
            security,
            idle: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    async fn connection(&self, broker: &Broker, id: i32) -> Result<PeerConnection, ShareError> {
        if let Some(kept) = self.idle.lock().await.get_mut(&id).and_then(Vec::pop) {
            return Ok(kept);
        }
        let listener = &broker.config().cluster.inter_broker_listener;
        let image = broker.metadata().image();
        let endpoint = image
            .brokers
            .get(&id)
            .and_then(|b| b.endpoint(listener))
            .ok_or(ShareError::Group(GroupError::CoordinatorNotAvailable))?;
        let address = format!("{}:{}", endpoint.host, endpoint.port);
        PeerConnection::connect(
            &address,
            &self.client_id,
            self.timeout(broker),
            &self.security,
        )
        .await
        .map_err(|e| {
            tracing::debug!(broker = id, error = %e, "cannot reach a share coordinator");
            ShareError::Group(GroupError::CoordinatorNotAvailable)
        })
    }

    fn timeout(&self, broker: &Broker) -> Duration {
        Duration::from_millis(broker.config().cluster.replica_socket_timeout_ms)
    }

    async fn send(&self, id: i32, key: &StateKey, op: StateOp) -> Result<StateReply, ShareError> {
        let broker = self
            .broker
            .upgrade()
            .ok_or(ShareError::Group(GroupError::CoordinatorNotAvailable))?;
        let mut connection = self.connection(&broker, id).await?;
        let timeout = self.timeout(&broker);
        let outcome = exchange(&mut connection, key, op, timeout).await;
        match outcome {
            Err(e) => {
                tracing::debug!(broker = id, error = %e, "share state request failed");
                Err(ShareError::Group(GroupError::CoordinatorNotAvailable))
            }
            Ok(answer) => {
                let mut idle = self.idle.lock().await;
                let kept = idle.entry(id).or_default();
                if kept.len() < IDLE_PER_BROKER {
                    kept.push(connection);
                }
                answer
            }
        }
    }
}

impl RemoteState for StateSender {
    fn call<'a>(&'a self, broker: i32, key: &'a StateKey, op: StateOp) -> StateFuture<'a> {
        Box::pin(self.send(broker, key, op))
    }
}

/// The partition's error code and message in a response, as the share coordinator's error.
fn answered(code: i16, message: Option<&StrBytes>) -> Result<(), ShareError> {
    use crate::error::code as c;
    Err(match code {
        c::NONE => return Ok(()),
        c::NOT_COORDINATOR => ShareError::Group(GroupError::NotCoordinator),
        c::COORDINATOR_LOAD_IN_PROGRESS => ShareError::Group(GroupError::CoordinatorLoadInProgress),
        c::COORDINATOR_NOT_AVAILABLE => ShareError::Group(GroupError::CoordinatorNotAvailable),
        c::FENCED_LEADER_EPOCH => ShareError::FencedLeaderEpoch,
        c::FENCED_STATE_EPOCH => ShareError::FencedStateEpoch,
        c::KAFKA_STORAGE_ERROR => ShareError::Storage,
        c::INVALID_REQUEST => ShareError::Group(GroupError::InvalidRequest),
        other => {
            tracing::warn!(
                code = other,
                message = message.map(|m| m.as_str()),
                "unexpected answer from a share coordinator"
            );
            ShareError::Group(GroupError::CoordinatorNotAvailable)
        }
    })
}

/// Sends `$request` (v0), and maps its one partition's answer with `$body` (`$p` bound to the
/// partition's result): a share coordinator's error as [`ShareError`], no partition in the
/// response as COORDINATOR_NOT_AVAILABLE.
macro_rules! answer {
    ($connection:expr, $api:expr, $request:expr, $timeout:expr, $response:ty, |$p:ident| $body:expr) => {{
        let response: $response = $connection.request($api, 0, &$request, $timeout).await?;
        match response.results.first().and_then(|r| r.partitions.first()) {
            Some($p) => answered($p.error_code, $p.error_message.as_ref()).map(|()| $body),
            None => Err(ShareError::Group(GroupError::CoordinatorNotAvailable)),
        }
    }};
}

/// One state request for one partition, and its answer. `Err` is a failed exchange (the
/// connection is not reused); `Ok(Err)` the share coordinator's refusal.
async fn exchange(
    connection: &mut PeerConnection,
    key: &StateKey,
    op: StateOp,
    timeout: Duration,
) -> Result<Result<StateReply, ShareError>, crate::net::RequestError> {
    let group = wire_str(&key.group);
    Ok(match op {
        StateOp::Read { leader_epoch } => {
            let request = ReadShareGroupStateRequest::default()
                .with_group_id(group)
                .with_topics(vec![
                    read_share_group_state_request::ReadStateData::default()
                        .with_topic_id(key.topic_id)
                        .with_partitions(vec![
                            read_share_group_state_request::PartitionData::default()
                                .with_partition(key.partition)
                                .with_leader_epoch(leader_epoch),
                        ]),
                ]);
            answer!(
                connection,
                ApiKey::ReadShareGroupState,
                request,
                timeout,
                ReadShareGroupStateResponse,
                |p| {
                    (p.start_offset >= 0).then(|| Snapshot {
                        snapshot_epoch: 0,
                        state_epoch: p.state_epoch,
                        leader_epoch,
                        start_offset: p.start_offset,
                        create_timestamp: 0,
                        write_timestamp: 0,
                        batches: p
                            .state_batches
                            .iter()
                            .filter_map(|b| {
                                Some(StateBatch {
                                    first_offset: b.first_offset,
                                    last_offset: b.last_offset,
                                    state: RecordState::from_id(b.delivery_state)?,
                                    delivery_count: b.delivery_count,
                                })
                            })
                            .collect(),
                    })
                }
            )
        }
        StateOp::Write(snapshot) => {
            let request = WriteShareGroupStateRequest::default()
                .with_group_id(group)
                .with_topics(vec![
                    write_share_group_state_request::WriteStateData::default()
                        .with_topic_id(key.topic_id)
                        .with_partitions(vec![
                            write_share_group_state_request::PartitionData::default()
                                .with_partition(key.partition)
                                .with_state_epoch(snapshot.state_epoch)
                                .with_leader_epoch(snapshot.leader_epoch)
                                .with_start_offset(snapshot.start_offset)
                                .with_state_batches(
                                    snapshot
                                        .batches
                                        .iter()
                                        .map(|b| {
                                            write_share_group_state_request::StateBatch::default()
                                                .with_first_offset(b.first_offset)
                                                .with_last_offset(b.last_offset)
                                                .with_delivery_state(b.state as i8)
                                                .with_delivery_count(b.delivery_count)
                                        })
                                        .collect(),
                                ),
                        ]),
                ]);
            answer!(
                connection,
                ApiKey::WriteShareGroupState,
                request,
                timeout,
                WriteShareGroupStateResponse,
                |p| None
            )
        }
        StateOp::Initialize {
            state_epoch,
            start_offset,
        } => {
            let request = InitializeShareGroupStateRequest::default()
                .with_group_id(group)
                .with_topics(vec![
                    initialize_share_group_state_request::InitializeStateData::default()
                        .with_topic_id(key.topic_id)
                        .with_partitions(vec![
                            initialize_share_group_state_request::PartitionData::default()
                                .with_partition(key.partition)
                                .with_state_epoch(state_epoch)
                                .with_start_offset(start_offset),
                        ]),
                ]);
            answer!(
                connection,
                ApiKey::InitializeShareGroupState,
                request,
                timeout,
                InitializeShareGroupStateResponse,
                |p| None
            )
        }
        StateOp::Delete => {
            let request = DeleteShareGroupStateRequest::default()
                .with_group_id(group)
                .with_topics(vec![
                    delete_share_group_state_request::DeleteStateData::default()
                        .with_topic_id(key.topic_id)
                        .with_partitions(vec![
                            delete_share_group_state_request::PartitionData::default()
                                .with_partition(key.partition),
                        ]),
                ]);
            answer!(
                connection,
                ApiKey::DeleteShareGroupState,
                request,
                timeout,
                DeleteShareGroupStateResponse,
                |p| None
            )
        }
        StateOp::Summary => {
            let request = ReadShareGroupStateSummaryRequest::default()
                .with_group_id(group)
                .with_topics(vec![
                    read_share_group_state_summary_request::ReadStateSummaryData::default()
                        .with_topic_id(key.topic_id)
                        .with_partitions(vec![
                            read_share_group_state_summary_request::PartitionData::default()
                                .with_partition(key.partition)
                                .with_leader_epoch(-1),
                        ]),
                ]);
            answer!(
                connection,
                ApiKey::ReadShareGroupStateSummary,
                request,
                timeout,
                ReadShareGroupStateSummaryResponse,
                |p| {
                    (p.start_offset >= 0).then(|| Snapshot {
                        snapshot_epoch: 0,
                        state_epoch: p.state_epoch,
                        leader_epoch: p.leader_epoch,
                        start_offset: p.start_offset,
                        create_timestamp: 0,
                        write_timestamp: 0,
                        // v0 does not carry the records done (DeliveryCompleteCount is v1's).
                        batches: Vec::new(),
                    })
                }
            )
        }
    })
}
