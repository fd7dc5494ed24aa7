//! ShareFetch (KIP-932, v2 with KIP-1206/1222): acknowledges what the request carries, then
//! acquires records for the member from its share session's partitions, waiting up to
//! `max_wait_ms` for some. The session epoch opens (0), continues or closes (-1) the session.
//! Records go out as whole log batches with the acquired offset ranges beside them; the
//! client delivers only those offsets.

use super::{ApiContext, LeaderHint, wire_str};
use crate::error::{GroupError, ShareError, code};
use crate::share::session::SessionUse;
use crate::share::{AckBatches, FetchSpec, SharedTopicPartition};
use crate::types::TopicPartition;
use kafka_protocol::messages::share_fetch_response::{
    AcquiredRecords, LeaderIdAndEpoch, NodeEndpoint, PartitionData, ShareFetchableTopicResponse,
};
use kafka_protocol::messages::{BrokerId, ShareFetchRequest, ShareFetchResponse};
use std::collections::BTreeMap;
use std::time::Duration;
use uuid::Uuid;

/// What a client gets when it asks for no record limit (Kafka's `max.poll.records` default).
const DEFAULT_MAX_RECORDS: usize = 500;
/// KIP-1206's ShareAcquireMode 1: at most `max_records`, even inside a batch (0, the default,
/// takes whole batches).
const RECORD_LIMIT: i8 = 1;

#[derive(Default)]
struct Answer {
    error: Option<ShareError>,
    ack_error: Option<Option<ShareError>>,
    records: Option<bytes::Bytes>,
    acquired: Vec<AcquiredRecords>,
}

pub async fn handle(
    ctx: &ApiContext,
    request: ShareFetchRequest,
    _version: i16,
) -> Option<ShareFetchResponse> {
    let top = |e: ShareError| {
        Some(
            ShareFetchResponse::default()
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string()))),
        )
    };
    let (shares, group, member) =
        match session_owner(ctx, &request.group_id, &request.member_id).await {
            Ok(found) => found,
            Err(e) => return top(e),
        };
    let epoch = request.share_session_epoch;
    let has_acks = request.topics.iter().any(|t| {
        t.partitions
            .iter()
            .any(|p| !p.acknowledgement_batches.is_empty())
    });
    if epoch == 0 && has_acks {
        return top(ShareError::Group(GroupError::InvalidRequest));
    }
    let requested: Vec<(Uuid, i32)> = request
        .topics
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.topic_id, p.partition_index)))
        .collect();
    let forgotten: Vec<(Uuid, i32)> = request
        .forgotten_topics_data
        .iter()
        .flat_map(|t| t.partitions.iter().map(|p| (t.topic_id, *p)))
        .collect();
    let mut answers: BTreeMap<(Uuid, i32), Answer> = BTreeMap::new();
    let acknowledged =
        |answers: &mut BTreeMap<(Uuid, i32), Answer>,
         outcomes: Vec<((Uuid, i32), Result<(), ShareError>)>| {
            for (at, outcome) in outcomes {
                answers.entry(at).or_default().ack_error = Some(outcome.err());
            }
        };
    let session = if epoch == -1 {
        let outcomes = acknowledge_all(ctx, shares, &group, &member, &request).await;
        acknowledged(&mut answers, outcomes);
        shares
            .fetch_session(&group, &member, epoch, &requested, &forgotten)
            .await
    } else {
        let session = shares
            .fetch_session(&group, &member, epoch, &requested, &forgotten)
            .await;
        if session.is_ok() {
            let outcomes = acknowledge_all(ctx, shares, &group, &member, &request).await;
            acknowledged(&mut answers, outcomes);
        }
        session
    };
    let partitions = match session {
        Err(e) => return top(e),
        Ok(SessionUse::Closed(_)) => Vec::new(),
        Ok(SessionUse::Open(partitions)) => partitions.into_iter().collect(),
    };
    let mut targets = Vec::with_capacity(partitions.len());
    for (topic_id, partition) in partitions {
        match resolve(ctx, topic_id, partition) {
            Ok(target) => targets.push(target),
            Err(e) => answers.entry((topic_id, partition)).or_default().error = Some(e),
        }
    }
    let settings = shares.settings(&group);
    if !targets.is_empty() {
        let spec = FetchSpec {
            group: group.clone(),
            member: member.clone(),
            // Acknowledgements are answered without waiting for more records.
            max_wait: if has_acks {
                Duration::ZERO
            } else {
                Duration::from_millis(request.max_wait_ms.max(0) as u64)
            },
            max_bytes: request.max_bytes.max(1) as usize,
            max_records: if request.max_records > 0 {
                request.max_records as usize
            } else {
                DEFAULT_MAX_RECORDS
            },
            record_limit: request.share_acquire_mode == RECORD_LIMIT,
        };
        for fetched in shares.fetch(&spec, &targets).await {
            let answer = answers
                .entry((fetched.topic_id, fetched.partition))
                .or_default();
            answer.error = fetched.error;
            answer.records = fetched.records;
            answer.acquired = fetched
                .acquired
                .into_iter()
                .map(|r| {
                    AcquiredRecords::default()
                        .with_first_offset(r.first_offset)
                        .with_last_offset(r.last_offset)
                        .with_delivery_count(r.delivery_count)
                })
                .collect();
        }
    }
    let mut topics: BTreeMap<Uuid, Vec<PartitionData>> = BTreeMap::new();
    let mut endpoints: BTreeMap<i32, NodeEndpoint> = BTreeMap::new();
    for ((topic_id, partition), answer) in answers {
        let mut data = PartitionData::default()
            .with_partition_index(partition)
            .with_records(answer.records)
            .with_acquired_records(answer.acquired)
            .with_current_leader(
                LeaderIdAndEpoch::default()
                    .with_leader_id(-1)
                    .with_leader_epoch(-1),
            );
        if let Some(e) = answer.error {
            data = data
                .with_error_code(e.code())
                .with_error_message(Some(wire_str(&e.to_string())));
            if let Some(name) = ctx.broker.topic_by_id(topic_id).map(|t| t.name.to_string())
                && let Some(hint) =
                    LeaderHint::for_error(ctx, &TopicPartition::new(&name, partition), e.code())
            {
                data = data.with_current_leader(
                    LeaderIdAndEpoch::default()
                        .with_leader_id(hint.leader_id)
                        .with_leader_epoch(hint.leader_epoch),
                );
                endpoints.insert(
                    hint.leader_id,
                    NodeEndpoint::default()
                        .with_node_id(BrokerId(hint.leader_id))
                        .with_host(wire_str(&hint.host))
                        .with_port(hint.port)
                        .with_rack(hint.rack.as_deref().map(wire_str)),
                );
            }
        }
        if let Some(Some(e)) = answer.ack_error {
            data = data
                .with_acknowledge_error_code(e.code())
                .with_acknowledge_error_message(Some(wire_str(&e.to_string())));
        }
        topics.entry(topic_id).or_default().push(data);
    }
    Some(
        ShareFetchResponse::default()
            .with_error_code(code::NONE)
            .with_acquisition_lock_timeout_ms(settings.limits.lock_duration.as_millis() as i32)
            .with_responses(
                topics
                    .into_iter()
                    .map(|(topic_id, partitions)| {
                        ShareFetchableTopicResponse::default()
                            .with_topic_id(topic_id)
                            .with_partitions(partitions)
                    })
                    .collect(),
            )
            .with_node_endpoints(endpoints.into_values().collect()),
    )
}

/// Applies the acknowledgements a ShareFetch carries, partition by partition.
async fn acknowledge_all(
    ctx: &ApiContext,
    shares: &crate::share::ShareCoordinator,
    group: &str,
    member: &str,
    request: &ShareFetchRequest,
) -> Vec<((Uuid, i32), Result<(), ShareError>)> {
    let mut outcomes = Vec::new();
    for topic in &request.topics {
        for p in &topic.partitions {
            if p.acknowledgement_batches.is_empty() {
                continue;
            }
            let batches: AckBatches = p
                .acknowledgement_batches
                .iter()
                .map(|b| (b.first_offset, b.last_offset, b.acknowledge_types.clone()))
                .collect();
            let outcome = match resolve(ctx, topic.topic_id, p.partition_index) {
                Ok(target) => {
                    shares
                        .acknowledge_partition(group, member, &target, &batches)
                        .await
                }
                Err(e) => Err(e),
            };
            outcomes.push(((topic.topic_id, p.partition_index), outcome));
        }
    }
    outcomes
}

/// The share coordinator and the (group, member) a ShareFetch or ShareAcknowledge acts for:
/// both must be given. Sent to the partitions' leader, not the group coordinator.
pub(super) async fn session_owner<'a>(
    ctx: &'a ApiContext,
    group: &Option<kafka_protocol::messages::GroupId>,
    member: &Option<kafka_protocol::protocol::StrBytes>,
) -> Result<
    (
        &'a std::sync::Arc<crate::share::ShareCoordinator>,
        String,
        String,
    ),
    ShareError,
> {
    let (Some(group), Some(member)) = (group, member) else {
        return Err(ShareError::Group(GroupError::InvalidRequest));
    };
    if group.is_empty() || member.is_empty() {
        return Err(ShareError::Group(GroupError::InvalidRequest));
    }
    if !super::context::shares_enabled(ctx) {
        return Err(ShareError::Unsupported);
    }
    let shares = ctx
        .broker
        .shares()
        .await
        .map_err(|_| ShareError::Group(GroupError::CoordinatorNotAvailable))?;
    Ok((shares, group.to_string(), member.to_string()))
}

/// A partition named by topic id, as the share coordinator takes it.
pub(super) fn resolve(
    ctx: &ApiContext,
    topic_id: Uuid,
    partition: i32,
) -> Result<SharedTopicPartition, ShareError> {
    let topic = ctx
        .broker
        .topic_by_id(topic_id)
        .ok_or(ShareError::UnknownTopicId)?;
    if partition < 0 || partition >= topic.partitions {
        return Err(ShareError::Group(GroupError::UnknownTopicOrPartition));
    }
    Ok(SharedTopicPartition {
        topic_id,
        tp: TopicPartition::new(&topic.name, partition),
    })
}
