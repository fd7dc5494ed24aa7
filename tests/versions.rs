//! The newer versions Kafka 4.4 serves, by raw frames against a real broker: ApiVersions v5's
//! cluster and node check, DeleteGroups v3's error message, ListOffsets v11's earliest
//! pending upload, DescribeLogDirs v5, WriteTxnMarkers v2, UnregisterController v0, and
//! OffsetCommit v10, OffsetFetch v10 and TxnOffsetCommit v6 naming topics by id (an unknown
//! id answers UNKNOWN_TOPIC_ID).

#![allow(clippy::unwrap_used)]

mod common;

use common::raw::{call, connect};
use common::{Broker, wait_until};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::list_offsets_request::{ListOffsetsPartition, ListOffsetsTopic};
use kafka_protocol::messages::offset_commit_request::{
    OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
use kafka_protocol::messages::offset_fetch_request::{
    OffsetFetchRequestGroup, OffsetFetchRequestTopics,
};
use kafka_protocol::messages::txn_offset_commit_request::{
    TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::net::TcpStream;
use std::time::Duration;
use uuid::Uuid;

const UNKNOWN_TOPIC_ID: i16 = 100;
const REBOOTSTRAP_REQUIRED: i16 = 129;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

fn api_versions(stream: &mut TcpStream, cluster: Option<&str>, node: i32) -> ApiVersionsResponse {
    call(
        stream,
        ApiKey::ApiVersions,
        5,
        &ApiVersionsRequest::default()
            .with_client_software_name(s("raw"))
            .with_client_software_version(s("1.0"))
            .with_cluster_id(cluster.map(s))
            .with_node_id(node),
    )
}

/// A topic of one partition; its id.
fn create_topic(stream: &mut TcpStream, name: &str) -> Uuid {
    let response: CreateTopicsResponse = call(
        stream,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(vec![
                CreatableTopic::default()
                    .with_name(TopicName(s(name)))
                    .with_num_partitions(1)
                    .with_replication_factor(1),
            ])
            .with_timeout_ms(10_000),
    );
    assert_eq!(response.topics[0].error_code, 0);
    response.topics[0].topic_id
}

fn commit_v10(stream: &mut TcpStream, group: &str, topic: Uuid, offset: i64) -> i16 {
    let response: OffsetCommitResponse = call(
        stream,
        ApiKey::OffsetCommit,
        10,
        &OffsetCommitRequest::default()
            .with_group_id(GroupId(s(group)))
            .with_generation_id_or_member_epoch(-1)
            .with_topics(vec![
                OffsetCommitRequestTopic::default()
                    .with_topic_id(topic)
                    .with_partitions(vec![
                        OffsetCommitRequestPartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(offset),
                    ]),
            ]),
    );
    assert_eq!(response.topics[0].topic_id, topic);
    response.topics[0].partitions[0].error_code
}

/// (topic id, error, committed offset) of each answered partition of OffsetFetch v10.
fn fetch_v10(
    stream: &mut TcpStream,
    group: &str,
    topics: Option<&[Uuid]>,
) -> Vec<(Uuid, i16, i64)> {
    let response: OffsetFetchResponse = call(
        stream,
        ApiKey::OffsetFetch,
        10,
        &OffsetFetchRequest::default().with_groups(vec![
            OffsetFetchRequestGroup::default()
                .with_group_id(GroupId(s(group)))
                .with_topics(topics.map(|ids| {
                    ids.iter()
                        .map(|id| {
                            OffsetFetchRequestTopics::default()
                                .with_topic_id(*id)
                                .with_partition_indexes(vec![0])
                        })
                        .collect()
                })),
        ]),
    );
    let group = &response.groups[0];
    assert_eq!(group.error_code, 0);
    group
        .topics
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.topic_id, p.error_code, p.committed_offset))
        })
        .collect()
}

#[test]
fn kafka_4_4s_newer_versions() {
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);

    // ApiVersions v5: no cluster named is served; the right cluster and node are served; a
    // wrong cluster or node answers REBOOTSTRAP_REQUIRED.
    let plain = api_versions(&mut stream, None, -1);
    assert_eq!(plain.error_code, 0);
    let produce = plain.api_keys.iter().find(|k| k.api_key == 0).unwrap();
    assert_eq!((produce.min_version, produce.max_version), (0, 13));
    let described: DescribeClusterResponse = call(
        &mut stream,
        ApiKey::DescribeCluster,
        1,
        &DescribeClusterRequest::default(),
    );
    let cluster = described.cluster_id.to_string();
    assert_eq!(api_versions(&mut stream, Some(&cluster), 1).error_code, 0);
    assert_eq!(
        api_versions(&mut stream, Some("another-cluster-id"), 1).error_code,
        REBOOTSTRAP_REQUIRED
    );
    let other_node = api_versions(&mut stream, Some(&cluster), 7);
    assert_eq!(other_node.error_code, REBOOTSTRAP_REQUIRED);
    assert!(other_node.api_keys.is_empty());

    // Produce v0 is listed but refused as Kafka 4.4 refuses it: the connection is closed.
    {
        let mut produce_v0 = connect(&broker);
        let mut request = vec![0, 0, 0, 0, 0, 0, 0, 1, 0, 1, b't'];
        request.extend_from_slice(&[0, 1, 0, 0, 3, 232, 0, 0, 0, 0]);
        let mut framed = (request.len() as i32).to_be_bytes().to_vec();
        framed.extend(request);
        assert!(common::raw::write_refused(&mut produce_v0, &framed));
    }

    // DeleteGroups v3: the error comes with a message (polled while the group coordinator
    // loads, just after the start).
    let mut deleted = DeleteGroupsResponse::default();
    assert!(wait_until(Duration::from_secs(30), || {
        deleted = call(
            &mut stream,
            ApiKey::DeleteGroups,
            3,
            &DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s("no-such-group"))]),
        );
        !matches!(deleted.results[0].error_code, 14 | 15)
    }));
    let result = &deleted.results[0];
    assert_eq!(result.error_code, 69, "GROUP_ID_NOT_FOUND");
    assert!(result.error_message.is_some());

    // OffsetCommit v10 and OffsetFetch v10 by topic id.
    let topic = create_topic(&mut stream, "by-id");
    assert_eq!(commit_v10(&mut stream, "v10-group", topic, 42), 0);
    let unknown = Uuid::new_v4();
    assert_eq!(
        commit_v10(&mut stream, "v10-group", unknown, 1),
        UNKNOWN_TOPIC_ID
    );
    assert_eq!(
        fetch_v10(&mut stream, "v10-group", Some(&[topic, unknown])),
        vec![(topic, 0, 42), (unknown, UNKNOWN_TOPIC_ID, -1)]
    );
    assert_eq!(
        fetch_v10(&mut stream, "v10-group", None),
        vec![(topic, 0, 42)]
    );

    // TxnOffsetCommit v6 by topic id: an unknown id is answered before anything else.
    let txn: TxnOffsetCommitResponse = call(
        &mut stream,
        ApiKey::TxnOffsetCommit,
        6,
        &TxnOffsetCommitRequest::default()
            .with_transactional_id(TransactionalId(s("no-such-txn")))
            .with_group_id(GroupId(s("v10-group")))
            .with_producer_id(ProducerId(1))
            .with_producer_epoch(0)
            .with_generation_id(-1)
            .with_topics(vec![
                TxnOffsetCommitRequestTopic::default()
                    .with_topic_id(unknown)
                    .with_partitions(vec![
                        TxnOffsetCommitRequestPartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(5),
                    ]),
            ]),
    );
    assert_eq!(txn.topics[0].topic_id, unknown);
    assert_eq!(txn.topics[0].partitions[0].error_code, UNKNOWN_TOPIC_ID);

    // ListOffsets v11: the earliest offset pending upload is -1 without tiered storage.
    let listed: ListOffsetsResponse = call(
        &mut stream,
        ApiKey::ListOffsets,
        11,
        &ListOffsetsRequest::default()
            .with_replica_id(BrokerId(-1))
            .with_topics(vec![
                ListOffsetsTopic::default()
                    .with_name(TopicName(s("by-id")))
                    .with_partitions(vec![
                        ListOffsetsPartition::default()
                            .with_partition_index(0)
                            .with_timestamp(-6),
                    ]),
            ]),
    );
    let partition = &listed.topics[0].partitions[0];
    assert_eq!(
        (partition.error_code, partition.offset, partition.timestamp),
        (0, -1, -1)
    );

    // DescribeLogDirs v5: the log directory, not cordoned.
    let dirs: DescribeLogDirsResponse = call(
        &mut stream,
        ApiKey::DescribeLogDirs,
        5,
        &DescribeLogDirsRequest::default().with_topics(None),
    );
    assert_eq!(dirs.error_code, 0);
    assert_eq!(dirs.results.len(), 1);
    assert!(!dirs.results[0].is_cordoned);

    // WriteTxnMarkers v2 (carrying the transaction version) is decoded and answered.
    let markers: WriteTxnMarkersResponse = call(
        &mut stream,
        ApiKey::WriteTxnMarkers,
        2,
        &WriteTxnMarkersRequest::default().with_markers(vec![]),
    );
    assert!(markers.markers.is_empty());
}

/// UnregisterController (94, KIP-1312) by raw frames: advertised at v0; an id that is not
/// registered answers CONTROLLER_ID_NOT_REGISTERED and the active controller itself
/// INVALID_REQUEST, each with Kafka's message.
#[test]
fn unregister_controller_answers_with_kafkas_errors() {
    const CONTROLLER_ID_NOT_REGISTERED: i16 = 136;
    const INVALID_REQUEST: i16 = 42;
    let broker = Broker::start(&[]);
    let mut stream = connect(&broker);
    let versions = api_versions(&mut stream, None, -1);
    let key = versions.api_keys.iter().find(|k| k.api_key == 94).unwrap();
    assert_eq!((key.min_version, key.max_version), (0, 0));

    let unregister = |stream: &mut TcpStream, id: i32| -> UnregisterControllerResponse {
        call(
            stream,
            ApiKey::UnregisterController,
            0,
            &UnregisterControllerRequest::default().with_controller_id(id),
        )
    };
    let unknown = unregister(&mut stream, 99);
    assert_eq!(unknown.error_code, CONTROLLER_ID_NOT_REGISTERED);
    assert_eq!(
        unknown.error_message.as_deref(),
        Some("Controller ID 99 is not currently registered.")
    );
    let itself = unregister(&mut stream, 1);
    assert_eq!(itself.error_code, INVALID_REQUEST);
    assert_eq!(
        itself.error_message.as_deref(),
        Some("Controller cannot unregister itself while it is active.")
    );
}
