//! Fetch: reads record batches as stored, waiting up to `max_wait_ms` for `min_bytes`, with
//! incremental fetch sessions (KIP-227, v7+): a request with epoch 0 opens a session, later
//! ones name only changed partitions and get only partitions with news, in the session's
//! rotating order (see `session.rs`, the session cache, which lives here in the protocol
//! layer as Redpanda keeps it). Topics are named by id from v13.
//! Records of at least `SEND_FROM_FILE_MIN_BYTES` stay in the segment file and are sent
//! from the page cache (`writer`); smaller ones are copied in, which is cheaper than the two
//! extra system calls a file part costs.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | the Fetch handler: sessions, reads through the replica layer, KIP-951 hints |
//! | `session.rs` | the incremental fetch session cache (KIP-227) |
//! | `writer.rs` | the response encoder whose records may stay in segment files |

pub mod session;
mod writer;

use super::frame::ResponseFrame;
use super::{ApiContext, DispatchError, IntoFrame, LeaderHint};
use crate::auth::quota::QuotaType;
use crate::error::{Error, code};
use crate::replica::{FetchLimits, FetchRequestPartition, FetchedPartition};
use crate::storage::segment::FileSlice;
use crate::types::TopicPartition;
use bytes::Bytes;
use kafka_protocol::messages::fetch_response::{
    AbortedTransaction, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData,
};
use kafka_protocol::messages::{
    ApiKey, BrokerId, FetchRequest, FetchResponse, ProducerId, TopicName,
};
use session::{
    PartitionFetch, PartitionOutcome, Reported, SessionError, SessionKey, SessionRequest,
};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

pub use writer::FetchReply;

/// Kafka's cap on how long a fetch may wait, so a hostile max_wait_ms cannot pin a request.
const MAX_WAIT_CAP_MS: i32 = 30 * 60 * 1000;

/// Records at least this large are sent from the segment file rather than copied in.
const SEND_FROM_FILE_MIN_BYTES: usize = 32 * 1024;

impl IntoFrame for FetchReply {
    fn into_frame(
        self,
        api: ApiKey,
        version: i16,
        correlation_id: i32,
    ) -> Result<ResponseFrame, DispatchError> {
        writer::write(&self, version, correlation_id).map_err(|reason| DispatchError::Encode {
            api,
            version,
            reason,
        })
    }
}

pub async fn handle(ctx: &ApiContext, request: FetchRequest, version: i16) -> Option<FetchReply> {
    let by_id = version >= 13;
    // How the request names a topic: by id from v13, by name before.
    let unnamed: Arc<str> = Arc::from("");
    let topic_key = |topic: &TopicName, topic_id: uuid::Uuid| -> (uuid::Uuid, Arc<str>) {
        if by_id {
            (topic_id, unnamed.clone())
        } else {
            (uuid::Uuid::nil(), Arc::from(topic.as_str()))
        }
    };
    let requested: Vec<PartitionFetch> = request
        .topics
        .iter()
        .flat_map(|topic| {
            let (topic_id, name) = topic_key(&topic.topic, topic.topic_id);
            topic.partitions.iter().map(move |p| PartitionFetch {
                key: SessionKey {
                    topic_id,
                    topic: name.clone(),
                    partition: p.partition,
                },
                fetch_offset: p.fetch_offset,
                partition_max_bytes: p.partition_max_bytes,
                current_leader_epoch: p.current_leader_epoch,
                last_fetched_epoch: p.last_fetched_epoch,
            })
        })
        .collect();
    let session = if version >= 7 {
        SessionRequest::of(request.session_id, request.session_epoch)
    } else {
        SessionRequest::Sessionless { close: None }
    };
    let sessions = &ctx.fetch_sessions;
    let wanted = match session {
        SessionRequest::Sessionless { close } | SessionRequest::Open { close } => {
            if let Some(id) = close {
                sessions.close(id);
            }
            requested
        }
        SessionRequest::Incremental { id, epoch } => {
            let forgotten: Vec<SessionKey> = request
                .forgotten_topics_data
                .iter()
                .flat_map(|t| {
                    let (topic_id, name) = topic_key(&t.topic, t.topic_id);
                    t.partitions.iter().map(move |&partition| SessionKey {
                        topic_id,
                        topic: name.clone(),
                        partition,
                    })
                })
                .collect();
            match sessions.update(id, epoch, requested, &forgotten) {
                Ok(wanted) => wanted,
                Err(e) => {
                    let error_code = match e {
                        SessionError::NotFound => code::FETCH_SESSION_ID_NOT_FOUND,
                        SessionError::InvalidEpoch { .. } => code::INVALID_FETCH_SESSION_EPOCH,
                    };
                    return Some(FetchReply {
                        response: FetchResponse::default()
                            .with_error_code(error_code)
                            .with_session_id(0),
                        file_records: Vec::new(),
                    });
                }
            }
        }
    };

    // A follower's fetch (replica id set: in the header field before v15, in the replica
    // state from v15) reads past the high watermark and reports its progress.
    let replica_id = if version >= 15 {
        request.replica_state.replica_id.0
    } else {
        request.replica_id.0
    };
    if replica_id >= 0 {
        crate::stats::requests::note_follower_fetch();
    }
    let read_committed = request.isolation_level == 1;
    // From v11 a consumer names its rack and may read from any replica (KIP-392).
    let from_any_replica = replica_id < 0 && version >= 11;
    let client_rack: Arc<str> = Arc::from(request.rack_id.as_str());
    // A consumer under a fetch quota asks for no more than the quota lets through in one
    // window (Kafka's `getMaxValueInQuotaWindow`); followers are not under client quotas.
    let (user, client_id) = ctx.quota_identity();
    let quotas = ctx.broker.client_quotas();
    let quota_max_bytes = if replica_id < 0 {
        quotas.max_value_in_window(QuotaType::Fetch, user, client_id)
    } else {
        f64::MAX
    };
    let max_bytes = if version >= 3 {
        request.max_bytes.max(0) as usize
    } else {
        i32::MAX as usize
    };
    let (min_bytes, max_wait_ms) = (request.min_bytes, request.max_wait_ms);
    // What follows needs only `wanted`: a request naming many partitions is not held twice.
    drop(request);
    let mut reads = Vec::with_capacity(wanted.len());
    // The last topic looked up by id: a request names a topic's partitions together.
    let mut last_by_id: Option<(uuid::Uuid, Arc<str>)> = None;
    let slots: Vec<Result<usize, Error>> = wanted
        .iter()
        .map(|fetch| {
            let name = if by_id {
                match &last_by_id {
                    Some((id, name)) if *id == fetch.key.topic_id => name.clone(),
                    _ => {
                        let name = ctx
                            .broker
                            .topic_by_id(fetch.key.topic_id)
                            .map(|t| t.name.clone())
                            .ok_or(Error::UnknownTopicId)?;
                        last_by_id = Some((fetch.key.topic_id, name.clone()));
                        name
                    }
                }
            } else {
                fetch.key.topic.clone()
            };
            reads.push(FetchRequestPartition {
                tp: TopicPartition {
                    topic: name,
                    partition: fetch.key.partition,
                },
                current_leader_epoch: fetch.current_leader_epoch,
                replica_id: replica_id.max(-1),
                last_fetched_epoch: fetch.last_fetched_epoch,
                fetch_offset: fetch.fetch_offset,
                partition_max_bytes: fetch.partition_max_bytes.max(0) as usize,
                read_committed,
                from_any_replica,
                client_rack: client_rack.clone(),
            });
            Ok(reads.len() - 1)
        })
        .collect();
    let max_bytes = max_bytes.min(quota_max_bytes.clamp(0.0, i32::MAX as f64) as usize);
    let limits = FetchLimits {
        min_bytes: (min_bytes.max(0) as usize).min(max_bytes),
        max_bytes,
        max_wait: Duration::from_millis(max_wait_ms.clamp(0, MAX_WAIT_CAP_MS) as u64),
    };
    let mut results: Vec<Option<FetchedPartition>> = ctx
        .broker
        .replicas()
        .fetch(&reads, limits)
        .await
        .into_iter()
        .map(Some)
        .collect();
    let mut node_endpoints: Vec<NodeEndpoint> = Vec::new();
    let data: Vec<(PartitionData, Option<FileSlice>)> = wanted
        .iter()
        .zip(slots)
        .map(|(fetch, slot)| {
            let (fetched, tp) = match slot {
                Ok(i) => (
                    results[i]
                        .take()
                        .unwrap_or(FetchedPartition::failed(Error::UnknownTopicOrPartition)),
                    Some(&reads[i].tp),
                ),
                Err(e) => (FetchedPartition::failed(e), None),
            };
            let (mut data, file) = partition_data(fetch.key.partition, fetched, read_committed);
            // KIP-951 (v12+ names the leader, v16+ its address).
            if version >= 12
                && let Some(hint) =
                    tp.and_then(|tp| LeaderHint::for_error(ctx, tp, data.error_code))
            {
                data.current_leader = LeaderIdAndEpoch::default()
                    .with_leader_id(BrokerId(hint.leader_id))
                    .with_leader_epoch(hint.leader_epoch);
                if version >= 16 && !node_endpoints.iter().any(|e| e.node_id.0 == hint.leader_id) {
                    node_endpoints.push(
                        NodeEndpoint::default()
                            .with_node_id(BrokerId(hint.leader_id))
                            .with_host(super::wire_str(&hint.host))
                            .with_port(hint.port)
                            .with_rack(hint.rack.as_deref().map(super::wire_str)),
                    );
                }
            }
            (data, file)
        })
        .collect();
    drop((results, reads));

    if replica_id < 0 && quotas.enabled(QuotaType::Fetch) {
        let size: usize = data
            .iter()
            .map(|(d, file)| {
                file.as_ref().map_or(0, FileSlice::len) + d.records.as_ref().map_or(0, Bytes::len)
            })
            .sum();
        let throttle_ms = quotas.record(QuotaType::Fetch, user, client_id, size as f64);
        if throttle_ms > 0 {
            // Over the quota: nothing is sent, so nothing is counted, and the client comes
            // back after the throttle time for the same records (Kafka's throttled fetch
            // response: empty, the session as it was).
            quotas.unrecord(QuotaType::Fetch, user, client_id, size as f64);
            ctx.throttle(throttle_ms);
            let session_id = match session {
                SessionRequest::Incremental { id, .. } => id,
                _ => 0,
            };
            return Some(FetchReply {
                response: FetchResponse::default()
                    .with_throttle_time_ms(throttle_ms.min(i32::MAX as u32) as i32)
                    .with_error_code(code::NONE)
                    .with_session_id(session_id),
                file_records: Vec::new(),
            });
        }
    }
    let (session_id, include) = match session {
        SessionRequest::Sessionless { .. } => (0, vec![true; data.len()]),
        SessionRequest::Open { .. } => {
            let opened = wanted
                .iter()
                .cloned()
                .zip(data.iter().map(|(d, _)| reported(d)))
                .collect();
            (sessions.open(opened), vec![true; data.len()])
        }
        SessionRequest::Incremental { id, .. } => {
            let outcomes: Vec<(SessionKey, PartitionOutcome)> = wanted
                .iter()
                .zip(&data)
                .map(|(fetch, (d, file))| {
                    let outcome = PartitionOutcome {
                        reported: reported(d),
                        has_records: file.is_some()
                            || d.records.as_ref().is_some_and(|r| !r.is_empty()),
                    };
                    (fetch.key.clone(), outcome)
                })
                .collect();
            (id, sessions.complete(id, &outcomes))
        }
    };

    // One response entry per topic, in the order topics first appear, each sized for its
    // partitions first (a million partitions are not grown into by doubling).
    let mut responses: Vec<FetchableTopicResponse> = Vec::new();
    let mut file_records = Vec::new();
    let mut slot_of_topic: HashMap<(uuid::Uuid, Arc<str>), usize> = HashMap::new();
    let mut counts: Vec<usize> = Vec::new();
    let slots: Vec<Option<usize>> = wanted
        .iter()
        .zip(&include)
        .map(|(fetch, included)| {
            if !included {
                return None;
            }
            let topic = (fetch.key.topic_id, fetch.key.topic.clone());
            let slot = *slot_of_topic.entry(topic).or_insert_with(|| {
                responses.push(
                    FetchableTopicResponse::default()
                        .with_topic(TopicName(super::wire_str(&fetch.key.topic)))
                        .with_topic_id(fetch.key.topic_id),
                );
                counts.push(0);
                responses.len() - 1
            });
            counts[slot] += 1;
            Some(slot)
        })
        .collect();
    for (topic, count) in responses.iter_mut().zip(counts) {
        topic.partitions.reserve_exact(count);
    }
    for ((data, file), slot) in data.into_iter().zip(slots) {
        let Some(slot) = slot else { continue };
        let partitions = &mut responses[slot].partitions;
        if let Some(file) = file {
            file_records.push(((slot, partitions.len()), file));
        }
        partitions.push(data);
    }
    // Partitions were appended topic by topic, so a later topic may have gained partitions
    // after an earlier one's: the writer wants them in wire order.
    file_records.sort_by_key(|(at, _)| *at);
    Some(FetchReply {
        response: FetchResponse::default()
            .with_error_code(code::NONE)
            .with_session_id(session_id)
            .with_responses(responses)
            .with_node_endpoints(node_endpoints),
        file_records,
    })
}

fn reported(data: &PartitionData) -> Reported {
    Reported {
        high_watermark: data.high_watermark,
        last_stable_offset: data.last_stable_offset,
        log_start_offset: data.log_start_offset,
        error_code: data.error_code,
    }
}

/// The partition's answer, with its records either in it or, when large, left in the file.
fn partition_data(
    index: i32,
    fetched: FetchedPartition,
    read_committed: bool,
) -> (PartitionData, Option<FileSlice>) {
    let mut data = PartitionData::default()
        .with_partition_index(index)
        .with_diverging_epoch(
            kafka_protocol::messages::fetch_response::EpochEndOffset::default()
                .with_epoch(fetched.diverging_epoch.map_or(-1, |(e, _)| e))
                .with_end_offset(fetched.diverging_epoch.map_or(-1, |(_, o)| o)),
        )
        .with_aborted_transactions(read_committed.then(|| {
            fetched
                .aborted
                .iter()
                .map(|txn| {
                    AbortedTransaction::default()
                        .with_producer_id(ProducerId(txn.producer_id))
                        .with_first_offset(txn.first_offset)
                })
                .collect()
        }))
        .with_preferred_read_replica(kafka_protocol::messages::BrokerId(
            fetched.preferred_read_replica.unwrap_or(-1),
        ));
    if let Some(offsets) = fetched.offsets {
        data = data
            .with_high_watermark(offsets.high_watermark)
            .with_last_stable_offset(offsets.last_stable_offset)
            .with_log_start_offset(offsets.log_start_offset);
    } else {
        data = data
            .with_high_watermark(-1)
            .with_last_stable_offset(-1)
            .with_log_start_offset(-1);
    }
    let records = match fetched.result {
        Ok(Some(slice)) if slice.len() >= SEND_FROM_FILE_MIN_BYTES => {
            return (data.with_error_code(code::NONE), Some(slice));
        }
        Ok(Some(slice)) => slice.read().map_err(Error::from),
        Ok(None) => Ok(Bytes::new()),
        Err(e) => Err(e),
    };
    let data = match records {
        Ok(records) => data.with_error_code(code::NONE).with_records(Some(records)),
        Err(e) => data
            .with_error_code(e.code())
            .with_records(Some(Bytes::new())),
    };
    (data, None)
}
