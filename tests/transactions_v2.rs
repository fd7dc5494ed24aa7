//! Transaction version 2 (KIP-890 part 2), driven with raw frames as a Kafka 4.x Java
//! producer drives it once the cluster finalizes `transaction.version` 2: no
//! AddPartitionsToTxn or AddOffsetsToTxn (Produce v12+ and TxnOffsetCommit v5+ add the
//! partitions), a new producer epoch from every EndTxn v5, and the partitions refusing a
//! late write of an ended transaction. The Java client itself runs these paths in
//! `compat/java` and `compat/streams`.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Broker, raw_call, wait_until};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::time::Duration;

const TOPIC: &str = "tv2";
const TXN_ID: &str = "tv2-tx";
const GROUP: &str = "tv2-group";

const INVALID_PRODUCER_EPOCH: i16 = 47;
const INVALID_TXN_STATE: i16 = 48;
const PRODUCER_FENCED: i16 = 90;

fn text(value: &str) -> StrBytes {
    StrBytes::from_string(value.to_string())
}

fn txn_id() -> TransactionalId {
    TransactionalId(text(TXN_ID))
}

/// A transactional batch of `values` from `producer_id` at `epoch`, sequences from `sequence`.
fn batch(values: &[&str], producer_id: i64, epoch: i16, sequence: i32) -> bytes::Bytes {
    common::raw::producer_batch(values, producer_id, epoch, sequence, true)
}

/// Produce v12 (a producer of transaction version 2) to partition 0; its error code.
fn produce(bootstrap: &str, records: bytes::Bytes) -> i16 {
    let request = ProduceRequest::default()
        .with_transactional_id(Some(txn_id()))
        .with_acks(-1)
        .with_timeout_ms(5_000)
        .with_topic_data(vec![
            TopicProduceData::default()
                .with_name(TopicName(text(TOPIC)))
                .with_partition_data(vec![
                    PartitionProduceData::default()
                        .with_index(0)
                        .with_records(Some(records)),
                ]),
        ]);
    let response: ProduceResponse = raw_call(bootstrap, ApiKey::Produce, 12, &request);
    response.responses[0].partition_responses[0].error_code
}

/// EndTxn v5: (error code, producer id, producer epoch).
fn end(bootstrap: &str, producer_id: i64, epoch: i16, commit: bool) -> (i16, i64, i16) {
    let response: EndTxnResponse = raw_call(
        bootstrap,
        ApiKey::EndTxn,
        5,
        &EndTxnRequest::default()
            .with_transactional_id(txn_id())
            .with_producer_id(ProducerId(producer_id))
            .with_producer_epoch(epoch)
            .with_committed(commit),
    );
    (
        response.error_code,
        response.producer_id.0,
        response.producer_epoch,
    )
}

/// ListOffsets "latest" of partition 0: the high watermark, or the last stable offset.
fn latest(bootstrap: &str, read_committed: bool) -> i64 {
    let request = ListOffsetsRequest::default()
        .with_replica_id(BrokerId(-1))
        .with_isolation_level(i8::from(read_committed))
        .with_topics(vec![
            ListOffsetsTopic::default()
                .with_name(TopicName(text(TOPIC)))
                .with_partitions(vec![
                    ListOffsetsPartition::default()
                        .with_partition_index(0)
                        .with_timestamp(-1),
                ]),
        ]);
    let response: ListOffsetsResponse = raw_call(bootstrap, ApiKey::ListOffsets, 7, &request);
    response.topics[0].partitions[0].offset
}

/// TxnOffsetCommit v5 of `offset` for partition 0 in the producer's transaction; the code.
fn commit_offset(bootstrap: &str, producer_id: i64, epoch: i16, offset: i64) -> i16 {
    let request = TxnOffsetCommitRequest::default()
        .with_transactional_id(txn_id())
        .with_group_id(GroupId(text(GROUP)))
        .with_producer_id(ProducerId(producer_id))
        .with_producer_epoch(epoch)
        .with_generation_id(-1)
        .with_member_id(text(""))
        .with_topics(vec![
            TxnOffsetCommitRequestTopic::default()
                .with_name(TopicName(text(TOPIC)))
                .with_partitions(vec![
                    TxnOffsetCommitRequestPartition::default()
                        .with_partition_index(0)
                        .with_committed_offset(offset)
                        .with_committed_leader_epoch(-1),
                ]),
        ]);
    let response: TxnOffsetCommitResponse =
        raw_call(bootstrap, ApiKey::TxnOffsetCommit, 5, &request);
    response.topics[0].partitions[0].error_code
}

/// The group's committed offset for partition 0 (OffsetFetch v7, read_committed).
fn committed_offset(bootstrap: &str) -> (i16, i64) {
    use kafka_protocol::messages::offset_fetch_request::OffsetFetchRequestTopic;
    let request = OffsetFetchRequest::default()
        .with_group_id(GroupId(text(GROUP)))
        .with_topics(Some(vec![
            OffsetFetchRequestTopic::default()
                .with_name(TopicName(text(TOPIC)))
                .with_partition_indexes(vec![0]),
        ]))
        .with_require_stable(true);
    let response: OffsetFetchResponse = raw_call(bootstrap, ApiKey::OffsetFetch, 7, &request);
    let partition = &response.topics[0].partitions[0];
    (partition.error_code, partition.committed_offset)
}

/// DescribeTransactions: (state, producer id, producer epoch).
fn describe(bootstrap: &str) -> (String, i64, i16) {
    let response: DescribeTransactionsResponse = raw_call(
        bootstrap,
        ApiKey::DescribeTransactions,
        0,
        &DescribeTransactionsRequest::default().with_transactional_ids(vec![txn_id()]),
    );
    let state = &response.transaction_states[0];
    assert_eq!(state.error_code, 0);
    (
        state.transaction_state.to_string(),
        state.producer_id.0,
        state.producer_epoch,
    )
}

#[test]
fn transaction_version_2_adds_partitions_by_produce_and_bumps_the_epoch_at_every_end() {
    let broker = Broker::start(&[]);
    let bootstrap = broker.bootstrap.clone();

    // The cluster runs at transaction version 2, as a new Kafka 4.4 cluster does.
    let versions: ApiVersionsResponse = raw_call(
        &bootstrap,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default()
            .with_client_software_name(text("test"))
            .with_client_software_version(text("1")),
    );
    let level = versions
        .finalized_features
        .iter()
        .find(|f| f.name.as_str() == "transaction.version")
        .map(|f| f.max_version_level);
    assert_eq!(level, Some(2));

    let created: CreateTopicsResponse = raw_call(
        &bootstrap,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(vec![
                CreatableTopic::default()
                    .with_name(TopicName(text(TOPIC)))
                    .with_num_partitions(1)
                    .with_replication_factor(1),
            ])
            .with_timeout_ms(10_000),
    );
    assert_eq!(created.topics[0].error_code, 0);
    let mut init = InitProducerIdResponse::default().with_error_code(-1);
    assert!(
        wait_until(Duration::from_secs(30), || {
            // FindCoordinator creates the internal topics on first use.
            for key_type in [0, 1] {
                let key = if key_type == 0 { GROUP } else { TXN_ID };
                let _: FindCoordinatorResponse = raw_call(
                    &bootstrap,
                    ApiKey::FindCoordinator,
                    4,
                    &FindCoordinatorRequest::default()
                        .with_key_type(key_type)
                        .with_coordinator_keys(vec![text(key)]),
                );
            }
            init = raw_call(
                &bootstrap,
                ApiKey::InitProducerId,
                5,
                &InitProducerIdRequest::default()
                    .with_transactional_id(Some(txn_id()))
                    .with_transaction_timeout_ms(60_000)
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1),
            );
            init.error_code == 0
        }),
        "InitProducerId: {init:?}"
    );
    let pid = init.producer_id.0;
    assert_eq!(init.producer_epoch, 0);

    // Produce v12 adds the partition: no AddPartitionsToTxn.
    assert_eq!(produce(&bootstrap, batch(&["a", "b"], pid, 0, 0)), 0);
    assert_eq!(describe(&bootstrap), ("Ongoing".to_string(), pid, 0));
    // TxnOffsetCommit v5 adds the group's partition: no AddOffsetsToTxn.
    let mut offset_code = -1;
    assert!(
        wait_until(Duration::from_secs(20), || {
            offset_code = commit_offset(&bootstrap, pid, 0, 2);
            offset_code == 0
        }),
        "TxnOffsetCommit: {offset_code}"
    );
    assert_eq!(committed_offset(&bootstrap).1, -1, "not before the commit");

    // EndTxn v5 answers with the next transaction's epoch; the markers carry it.
    assert_eq!(end(&bootstrap, pid, 0, true), (0, pid, 1));
    assert!(
        wait_until(Duration::from_secs(10), || latest(&bootstrap, true) == 3),
        "data and commit marker are stable"
    );
    assert!(
        wait_until(Duration::from_secs(10), || committed_offset(&bootstrap)
            == (0, 2)),
        "the offset committed with the transaction: {:?}",
        committed_offset(&bootstrap)
    );
    // A retried EndTxn whose answer was lost (the old epoch) learns the new one.
    assert!(
        wait_until(Duration::from_secs(10), || end(&bootstrap, pid, 0, true)
            == (0, pid, 1)),
        "a retried commit"
    );
    // A late write of the ended transaction cannot begin another one.
    assert_eq!(
        produce(&bootstrap, batch(&["late"], pid, 0, 2)),
        INVALID_PRODUCER_EPOCH
    );
    assert_eq!(latest(&bootstrap, false), 3, "nothing written");

    // The next transaction, at the new epoch, aborted.
    assert_eq!(produce(&bootstrap, batch(&["c"], pid, 1, 0)), 0);
    assert_eq!(end(&bootstrap, pid, 1, false), (0, pid, 2));
    assert!(
        wait_until(Duration::from_secs(10), || latest(&bootstrap, true) == 5),
        "the abort marker makes everything stable"
    );
    // An abort needs no open transaction, and still moves the epoch on; a commit does not.
    assert!(
        wait_until(Duration::from_secs(10), || end(&bootstrap, pid, 2, false)
            == (0, pid, 3)),
        "an abort with nothing open"
    );
    assert!(
        wait_until(Duration::from_secs(10), || describe(&bootstrap)
            == ("CompleteAbort".to_string(), pid, 3)),
        "{:?}",
        describe(&bootstrap)
    );
    assert_eq!(end(&bootstrap, pid, 3, true).0, INVALID_TXN_STATE);
    // An epoch from before the last bump is fenced.
    assert_eq!(end(&bootstrap, pid, 1, true).0, PRODUCER_FENCED);
    assert_eq!(latest(&bootstrap, false), 5);
    assert_eq!(committed_offset(&bootstrap), (0, 2));
}
