//! The checks of the producer and transaction APIs: InitProducerId (WRITE on the transactional
//! id, or IDEMPOTENT_WRITE / WRITE on some topic), AddPartitionsToTxn (v4+: CLUSTER_ACTION),
//! AddOffsetsToTxn, EndTxn, TxnOffsetCommit, WriteTxnMarkers (CLUSTER_ACTION),
//! Describe/ListTransactions, DescribeProducers.

use super::{Authz, Gate, check_answer, pass, pass_merging, take_refused};
use crate::api::ApiContext;
use crate::auth::acl::{AclOperation, ResourceType};
use crate::auth::authorizer::Requester;
use crate::error::code;
use kafka_protocol::messages::*;

pub fn init_producer_id(
    ctx: &ApiContext,
    request: InitProducerIdRequest,
    _version: i16,
) -> Gate<InitProducerIdRequest, InitProducerIdResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let error = match &request.transactional_id {
        Some(id) if !authz.allowed(AclOperation::Write, ResourceType::TransactionalId, id) => {
            Some(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        }
        Some(_) => None,
        // An idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic.
        None => {
            let who = Requester {
                principal: &authz.principal,
                host: &authz.host,
            };
            let allowed = authz.cluster(AclOperation::IdempotentWrite)
                || authz.authorizer.authorize_by_resource_type(
                    authz.image.acls.values(),
                    who,
                    AclOperation::Write,
                    ResourceType::Topic,
                );
            (!allowed).then_some(code::CLUSTER_AUTHORIZATION_FAILED)
        }
    };
    match error {
        Some(error_code) => Gate::Refuse(
            InitProducerIdResponse::default()
                .with_error_code(error_code)
                .with_producer_id(ProducerId(-1))
                .with_producer_epoch(-1),
        ),
        None => pass(request),
    }
}

pub fn add_partitions_to_txn(
    ctx: &ApiContext,
    request: AddPartitionsToTxnRequest,
    version: i16,
) -> Gate<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> {
    use kafka_protocol::messages::add_partitions_to_txn_response::{
        AddPartitionsToTxnPartitionResult, AddPartitionsToTxnTopicResult,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    if version >= 4 {
        // The batched form is what brokers send each other to verify transactions.
        if authz.cluster(AclOperation::ClusterAction) {
            return pass(request);
        }
        return Gate::Refuse(
            AddPartitionsToTxnResponse::default()
                .with_error_code(code::CLUSTER_AUTHORIZATION_FAILED),
        );
    }
    let transaction_allowed = authz.allowed(
        AclOperation::Write,
        ResourceType::TransactionalId,
        &request.v3_and_below_transactional_id,
    );
    let topic_allowed = |name: &str| authz.topic(AclOperation::Write, name);
    if transaction_allowed
        && request
            .v3_and_below_topics
            .iter()
            .all(|t| topic_allowed(&t.name))
    {
        return pass(request);
    }
    // Nothing is added: refused topics say why, the others OPERATION_NOT_ATTEMPTED.
    let results = request
        .v3_and_below_topics
        .iter()
        .map(|topic| {
            let error_code = if !transaction_allowed {
                code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
            } else if !topic_allowed(&topic.name) {
                code::TOPIC_AUTHORIZATION_FAILED
            } else {
                code::OPERATION_NOT_ATTEMPTED
            };
            AddPartitionsToTxnTopicResult::default()
                .with_name(topic.name.clone())
                .with_results_by_partition(
                    topic
                        .partitions
                        .iter()
                        .map(|p| {
                            AddPartitionsToTxnPartitionResult::default()
                                .with_partition_index(*p)
                                .with_partition_error_code(error_code)
                        })
                        .collect(),
                )
        })
        .collect();
    Gate::Refuse(AddPartitionsToTxnResponse::default().with_results_by_topic_v3_and_below(results))
}

pub fn add_offsets_to_txn(
    ctx: &ApiContext,
    request: AddOffsetsToTxnRequest,
    _version: i16,
) -> Gate<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let error = if !authz.allowed(
        AclOperation::Write,
        ResourceType::TransactionalId,
        &request.transactional_id,
    ) {
        code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    } else if !authz.group(AclOperation::Read, &request.group_id) {
        code::GROUP_AUTHORIZATION_FAILED
    } else {
        return pass(request);
    };
    Gate::Refuse(AddOffsetsToTxnResponse::default().with_error_code(error))
}

pub fn end_txn(
    ctx: &ApiContext,
    request: EndTxnRequest,
    _version: i16,
) -> Gate<EndTxnRequest, EndTxnResponse> {
    match Authz::of(ctx) {
        Some(authz)
            if !authz.allowed(
                AclOperation::Write,
                ResourceType::TransactionalId,
                &request.transactional_id,
            ) =>
        {
            Gate::Refuse(
                EndTxnResponse::default()
                    .with_error_code(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1),
            )
        }
        _ => pass(request),
    }
}

pub fn txn_offset_commit(
    ctx: &ApiContext,
    mut request: TxnOffsetCommitRequest,
    _version: i16,
) -> Gate<TxnOffsetCommitRequest, TxnOffsetCommitResponse> {
    use kafka_protocol::messages::txn_offset_commit_response::{
        TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
    };
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    let failed = |topic: &txn_offset_commit_request::TxnOffsetCommitRequestTopic, error: i16| {
        TxnOffsetCommitResponseTopic::default()
            .with_name(topic.name.clone())
            .with_topic_id(topic.topic_id)
            .with_partitions(
                topic
                    .partitions
                    .iter()
                    .map(|p| {
                        TxnOffsetCommitResponsePartition::default()
                            .with_partition_index(p.partition_index)
                            .with_error_code(error)
                    })
                    .collect(),
            )
    };
    let whole = if !authz.allowed(
        AclOperation::Write,
        ResourceType::TransactionalId,
        &request.transactional_id,
    ) {
        Some(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    } else if !authz.group(AclOperation::Read, &request.group_id) {
        Some(code::GROUP_AUTHORIZATION_FAILED)
    } else {
        None
    };
    if let Some(error) = whole {
        let topics = request.topics.iter().map(|t| failed(t, error)).collect();
        return Gate::Refuse(TxnOffsetCommitResponse::default().with_topics(topics));
    }
    let refused = take_refused(&mut request.topics, |topic| {
        // v6 names topics by id; an unknown id is answered by the API itself.
        (!(authz
            .topic_name(&topic.name, topic.topic_id)
            .is_none_or(|name| authz.topic(AclOperation::Read, &name))))
        .then(|| failed(topic, code::TOPIC_AUTHORIZATION_FAILED))
    });
    pass_merging(
        request,
        refused,
        |response: &mut TxnOffsetCommitResponse| &mut response.topics,
    )
}

pub fn write_txn_markers(
    ctx: &ApiContext,
    request: WriteTxnMarkersRequest,
    _version: i16,
) -> Gate<WriteTxnMarkersRequest, WriteTxnMarkersResponse> {
    use kafka_protocol::messages::write_txn_markers_response::{
        WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
    };
    match Authz::of(ctx) {
        Some(authz) if !authz.cluster(AclOperation::ClusterAction) => {
            let markers = request
                .markers
                .iter()
                .map(|marker| {
                    WritableTxnMarkerResult::default()
                        .with_producer_id(marker.producer_id)
                        .with_topics(
                            marker
                                .topics
                                .iter()
                                .map(|t| {
                                    WritableTxnMarkerTopicResult::default()
                                        .with_name(t.name.clone())
                                        .with_partitions(
                                            t.partition_indexes
                                                .iter()
                                                .map(|p| {
                                                    WritableTxnMarkerPartitionResult::default()
                                                        .with_partition_index(*p)
                                                        .with_error_code(
                                                            code::CLUSTER_AUTHORIZATION_FAILED,
                                                        )
                                                })
                                                .collect(),
                                        )
                                })
                                .collect(),
                        )
                })
                .collect();
            Gate::Refuse(WriteTxnMarkersResponse::default().with_markers(markers))
        }
        _ => pass(request),
    }
}

pub fn describe_transactions(
    ctx: &ApiContext,
    request: DescribeTransactionsRequest,
    _version: i16,
) -> Gate<DescribeTransactionsRequest, DescribeTransactionsResponse> {
    let Some(authz) = Authz::of(ctx) else {
        return pass(request);
    };
    authz.check_answer(
        request,
        move |authz, response: &mut DescribeTransactionsResponse| {
            for state in &mut response.transaction_states {
                if !authz.allowed(
                    AclOperation::Describe,
                    ResourceType::TransactionalId,
                    &state.transactional_id,
                ) {
                    *state = describe_transactions_response::TransactionState::default()
                        .with_transactional_id(state.transactional_id.clone())
                        .with_error_code(code::TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
                        .with_producer_id(ProducerId(-1))
                        .with_producer_epoch(-1)
                        .with_transaction_timeout_ms(-1)
                        .with_transaction_start_time_ms(-1);
                } else {
                    // Only the topics the principal may describe are shown.
                    state
                        .topics
                        .retain(|t| authz.topic(AclOperation::Describe, &t.topic));
                }
            }
        },
    )
}

pub fn list_transactions(
    ctx: &ApiContext,
    request: ListTransactionsRequest,
    _version: i16,
) -> Gate<ListTransactionsRequest, ListTransactionsResponse> {
    check_answer(
        ctx,
        request,
        move |authz, response: &mut ListTransactionsResponse| {
            response.transaction_states.retain(|state| {
                authz.allowed(
                    AclOperation::Describe,
                    ResourceType::TransactionalId,
                    &state.transactional_id,
                )
            });
        },
    )
}

pub fn describe_producers(
    ctx: &ApiContext,
    request: DescribeProducersRequest,
    _version: i16,
) -> Gate<DescribeProducersRequest, DescribeProducersResponse> {
    check_answer(
        ctx,
        request,
        move |authz, response: &mut DescribeProducersResponse| {
            for topic in &mut response.topics {
                if authz.topic(AclOperation::Read, &topic.name) {
                    continue;
                }
                for partition in &mut topic.partitions {
                    *partition = describe_producers_response::PartitionResponse::default()
                        .with_partition_index(partition.partition_index)
                        .with_error_code(code::TOPIC_AUTHORIZATION_FAILED);
                }
            }
        },
    )
}
