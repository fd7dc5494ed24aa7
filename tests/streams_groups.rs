//! Streams groups (KIP-1071) by raw frames against a real broker: a member joins with a word
//! count's topology; the broker reports the missing source topic, then creates the internal
//! topics and assigns every task; a second member gets its share only after the first
//! revoked it; StreamsGroupDescribe (v0, v1 with a topology description sent by
//! StreamsGroupTopologyDescriptionUpdate), Kafka's errors, leaving and DeleteGroups.
//! (Kafka Streams itself runs over these APIs in `compat/streams`.)

#![allow(clippy::unwrap_used)]

mod common;

use common::raw::{call, connect, create_topic};
use common::{Broker, wait_until};
use kafka_protocol::messages::streams_group_heartbeat_request::{
    Subtopology, TaskIds, TopicInfo, Topology,
};
use kafka_protocol::messages::streams_group_topology_description_update_request::{
    SubtopologyDescription, TopologyDescription, TopologyNode,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeSet;
use std::net::TcpStream;
use std::time::Duration;

const INVALID_REQUEST: i16 = 42;
const GROUP_ID_NOT_FOUND: i16 = 69;
const UNKNOWN_MEMBER_ID: i16 = 25;
const FENCED_MEMBER_EPOCH: i16 = 110;
const MISSING_SOURCE_TOPICS: i8 = 1;
const MISSING_INTERNAL_TOPICS: i8 = 3;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// Subtopology 0 reads `in` and writes the repartition topic; 1 reads it, counts into a store.
fn word_count() -> Topology {
    let info = |name: &str| TopicInfo::default().with_name(TopicName(s(name)));
    Topology::default().with_epoch(0).with_subtopologies(vec![
        Subtopology::default()
            .with_subtopology_id(s("0"))
            .with_source_topics(vec![TopicName(s("in"))])
            .with_repartition_sink_topics(vec![TopicName(s("app-count-repartition"))]),
        Subtopology::default()
            .with_subtopology_id(s("1"))
            .with_repartition_source_topics(vec![info("app-count-repartition")])
            .with_state_changelog_topics(vec![info("app-count-changelog").with_topic_configs(
                vec![
                    streams_group_heartbeat_request::KeyValue::default()
                        .with_key(s("cleanup.policy"))
                        .with_value(s("compact")),
                ],
            )]),
    ])
}

fn join(member: &str) -> StreamsGroupHeartbeatRequest {
    StreamsGroupHeartbeatRequest::default()
        .with_group_id(GroupId(s("app")))
        .with_member_id(s(member))
        .with_member_epoch(0)
        .with_rebalance_timeout_ms(30_000)
        .with_process_id(Some(s(&format!("process-{member}"))))
        .with_topology(Some(word_count()))
        .with_active_tasks(Some(vec![]))
        .with_standby_tasks(Some(vec![]))
        .with_warmup_tasks(Some(vec![]))
}

/// A heartbeat; with `active`, the standby and warm-up tasks are sent empty (Kafka refuses
/// a heartbeat with some task kinds but not all).
fn beat(member: &str, epoch: i32, active: Option<Vec<TaskIds>>) -> StreamsGroupHeartbeatRequest {
    let others = active.as_ref().map(|_| Vec::new());
    StreamsGroupHeartbeatRequest::default()
        .with_group_id(GroupId(s("app")))
        .with_member_id(s(member))
        .with_member_epoch(epoch)
        .with_rebalance_timeout_ms(-1)
        .with_active_tasks(active)
        .with_standby_tasks(others.clone())
        .with_warmup_tasks(others)
}

fn heartbeat(
    stream: &mut TcpStream,
    version: i16,
    request: &StreamsGroupHeartbeatRequest,
) -> StreamsGroupHeartbeatResponse {
    call(stream, ApiKey::StreamsGroupHeartbeat, version, request)
}

fn tasks(response: &[streams_group_heartbeat_response::TaskIds]) -> BTreeSet<(String, i32)> {
    response
        .iter()
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(|p| (t.subtopology_id.to_string(), *p))
        })
        .collect()
}

fn as_request(set: &BTreeSet<(String, i32)>) -> Vec<TaskIds> {
    let mut out: Vec<TaskIds> = Vec::new();
    for (subtopology, partition) in set {
        match out
            .iter_mut()
            .find(|t| t.subtopology_id.as_str() == subtopology)
        {
            Some(t) => t.partitions.push(*partition),
            None => out.push(
                TaskIds::default()
                    .with_subtopology_id(s(subtopology))
                    .with_partitions(vec![*partition]),
            ),
        }
    }
    out
}

fn topic_partitions(stream: &mut TcpStream, topic: &str) -> Option<usize> {
    let response: MetadataResponse = call(
        stream,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(Some(vec![
            metadata_request::MetadataRequestTopic::default().with_name(Some(TopicName(s(topic)))),
        ])),
    );
    let t = &response.topics[0];
    (t.error_code == 0).then_some(t.partitions.len())
}

#[test]
fn a_streams_group_assigns_tasks_and_creates_its_internal_topics() {
    let broker = Broker::start(&[("group.streams.initial.rebalance.delay.ms", "0")]);
    let mut stream = connect(&broker);
    // The coordinator loads __consumer_offsets after the first FindCoordinator.
    let mut joined = StreamsGroupHeartbeatResponse::default();
    assert!(wait_until(Duration::from_secs(30), || {
        let _: FindCoordinatorResponse = call(
            &mut stream,
            ApiKey::FindCoordinator,
            1,
            &FindCoordinatorRequest::default().with_key(s("app")),
        );
        joined = heartbeat(&mut stream, 1, &join("a"));
        !matches!(joined.error_code, 14..=16)
    }));
    assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
    let status = joined.status.clone().unwrap();
    assert_eq!(status[0].status_code, MISSING_SOURCE_TOPICS);
    assert_eq!(
        status[0].status_detail.as_str(),
        "Source topics in are missing."
    );
    assert_eq!(joined.heartbeat_interval_ms, 5000);
    assert_eq!(joined.acceptable_recovery_lag, 10_000);
    assert_eq!(joined.task_offset_interval_ms, 60_000);
    assert!(joined.topology_description_required);

    // With the source topic, the internal topics are reported missing and created (the
    // changelog with the configs the application asked for), then every task is assigned.
    create_topic(&mut stream, "in", 2, &[]);
    let mut a_epoch = joined.member_epoch;
    let mut a_tasks = BTreeSet::new();
    let mut saw_missing_internal = false;
    assert!(wait_until(Duration::from_secs(30), || {
        let r = heartbeat(&mut stream, 1, &beat("a", a_epoch, None));
        assert_eq!(r.error_code, 0, "{:?}", r.error_message);
        a_epoch = r.member_epoch;
        saw_missing_internal |= r
            .status
            .iter()
            .flatten()
            .any(|st| st.status_code == MISSING_INTERNAL_TOPICS);
        if let Some(active) = &r.active_tasks {
            a_tasks = tasks(active);
        }
        a_tasks.len() == 4
    }));
    assert!(saw_missing_internal);
    assert_eq!(
        topic_partitions(&mut stream, "app-count-repartition"),
        Some(2)
    );
    assert_eq!(
        topic_partitions(&mut stream, "app-count-changelog"),
        Some(2)
    );
    let configs: DescribeConfigsResponse = call(
        &mut stream,
        ApiKey::DescribeConfigs,
        4,
        &DescribeConfigsRequest::default().with_resources(vec![
            describe_configs_request::DescribeConfigsResource::default()
                .with_resource_type(2)
                .with_resource_name(s("app-count-changelog"))
                .with_configuration_keys(Some(vec![s("cleanup.policy")])),
        ]),
    );
    assert_eq!(
        configs.results[0].configs[0]
            .value
            .as_ref()
            .map(|v| v.as_str()),
        Some("compact")
    );

    // A second member: nothing until a revokes half, then the other half.
    let b = heartbeat(&mut stream, 0, &join("b"));
    assert_eq!(b.error_code, 0);
    assert!(tasks(b.active_tasks.as_deref().unwrap_or_default()).is_empty());
    let a = heartbeat(
        &mut stream,
        1,
        &beat("a", a_epoch, Some(as_request(&a_tasks))),
    );
    let kept = tasks(a.active_tasks.as_deref().unwrap());
    assert_eq!(kept.len(), 2);
    assert_eq!(
        a.member_epoch, a_epoch,
        "a keeps its epoch until it revoked"
    );
    let a = heartbeat(&mut stream, 1, &beat("a", a_epoch, Some(as_request(&kept))));
    assert!(a.member_epoch > a_epoch);
    let b = heartbeat(&mut stream, 0, &beat("b", b.member_epoch, Some(vec![])));
    let b_tasks = tasks(b.active_tasks.as_deref().unwrap());
    assert_eq!(b_tasks.len(), 2);
    assert!(b_tasks.is_disjoint(&kept));

    // Describe v0, then a topology description and Describe v1 with it.
    let described: StreamsGroupDescribeResponse = call(
        &mut stream,
        ApiKey::StreamsGroupDescribe,
        0,
        &StreamsGroupDescribeRequest::default()
            .with_group_ids(vec![GroupId(s("app")), GroupId(s("nobody"))]),
    );
    let group = &described.groups[0];
    assert_eq!(group.error_code, 0);
    assert_eq!(group.group_state.as_str(), "Stable");
    assert_eq!(group.members.len(), 2);
    let topology = group.topology.as_ref().unwrap();
    let subtopologies = topology.subtopologies.as_ref().unwrap();
    assert_eq!(subtopologies[1].state_changelog_topics[0].partitions, 2);
    assert_eq!(described.groups[1].error_code, GROUP_ID_NOT_FOUND);
    let description = TopologyDescription::default().with_subtopologies(vec![
        SubtopologyDescription::default()
            .with_subtopology_id(s("0"))
            .with_nodes(vec![
                TopologyNode::default()
                    .with_name(s("KSTREAM-SOURCE-0000000000"))
                    .with_source_topics(vec![s("in")]),
            ]),
    ]);
    let updated: StreamsGroupTopologyDescriptionUpdateResponse = call(
        &mut stream,
        ApiKey::StreamsGroupTopologyDescriptionUpdate,
        0,
        &StreamsGroupTopologyDescriptionUpdateRequest::default()
            .with_group_id(GroupId(s("app")))
            .with_member_id(s("a"))
            .with_topology_epoch(0)
            .with_topology_description(description),
    );
    assert_eq!(updated.error_code, 0);
    let described: StreamsGroupDescribeResponse = call(
        &mut stream,
        ApiKey::StreamsGroupDescribe,
        1,
        &StreamsGroupDescribeRequest::default()
            .with_group_ids(vec![GroupId(s("app"))])
            .with_include_topology_description(true),
    );
    let group = &described.groups[0];
    assert_eq!(group.topology_description_status, 3, "AVAILABLE");
    let nodes = &group.topology_description.as_ref().unwrap().subtopologies[0].nodes;
    assert_eq!(nodes[0].name.as_str(), "KSTREAM-SOURCE-0000000000");
    assert_eq!(
        group.assignor_name.as_ref().map(|a| a.as_str()),
        Some("sticky")
    );
    let r = heartbeat(&mut stream, 1, &beat("a", a.member_epoch, None));
    assert!(!r.topology_description_required);

    // Kafka's errors.
    let mut no_timeout = join("c");
    no_timeout.rebalance_timeout_ms = -1;
    let r = heartbeat(&mut stream, 1, &no_timeout);
    assert_eq!(r.error_code, INVALID_REQUEST);
    assert_eq!(
        r.error_message.as_ref().map(|m| m.as_str()),
        Some("RebalanceTimeoutMs must be provided in first request.")
    );
    assert_eq!(
        heartbeat(&mut stream, 1, &beat("ghost", 3, None)).error_code,
        UNKNOWN_MEMBER_ID
    );
    assert_eq!(
        heartbeat(&mut stream, 1, &beat("a", a.member_epoch + 10, None)).error_code,
        FENCED_MEMBER_EPOCH
    );
    let consumer: ConsumerGroupHeartbeatResponse = call(
        &mut stream,
        ApiKey::ConsumerGroupHeartbeat,
        1,
        &ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s("app")))
            .with_member_id(s("consumer-1"))
            .with_member_epoch(0)
            .with_rebalance_timeout_ms(30_000)
            .with_subscribed_topic_names(Some(vec![TopicName(s("in"))]))
            .with_topic_partitions(Some(vec![])),
    );
    assert_eq!(consumer.error_code, GROUP_ID_NOT_FOUND);

    // ListGroups shows it as a streams group; it cannot be deleted until both members leave.
    let listed: ListGroupsResponse = call(
        &mut stream,
        ApiKey::ListGroups,
        5,
        &ListGroupsRequest::default().with_types_filter(vec![s("streams")]),
    );
    assert_eq!(listed.groups.len(), 1);
    assert_eq!(listed.groups[0].group_type.as_str(), "streams");
    let delete = |stream: &mut TcpStream| -> i16 {
        let r: DeleteGroupsResponse = call(
            stream,
            ApiKey::DeleteGroups,
            2,
            &DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s("app"))]),
        );
        r.results[0].error_code
    };
    assert_eq!(delete(&mut stream), 68, "NON_EMPTY_GROUP");
    for member in ["a", "b"] {
        let left = heartbeat(&mut stream, 1, &beat(member, -1, None));
        assert_eq!(left.error_code, 0);
        assert_eq!(left.member_epoch, -1);
    }
    assert_eq!(delete(&mut stream), 0);
}

/// A streams group is kept in `__consumer_offsets` as Kafka's `StreamsGroup*` records: after
/// a restart the group is there with its topology, epochs and members, the member goes on
/// with its epoch and tasks without rejoining, and its committed offsets are there too. A
/// member that leaves then is gone after another restart.
#[test]
fn after_a_restart_the_group_and_its_members_go_on() {
    let overrides = [("group.streams.initial.rebalance.delay.ms", "0")];
    let mut broker = Broker::start(&overrides);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "in", 1, &[]);
    let mut epoch = 0;
    let mut owned = BTreeSet::new();
    assert!(wait_until(Duration::from_secs(30), || {
        let _: FindCoordinatorResponse = call(
            &mut stream,
            ApiKey::FindCoordinator,
            1,
            &FindCoordinatorRequest::default().with_key(s("app")),
        );
        let request = if epoch == 0 {
            join("a")
        } else {
            beat("a", epoch, None)
        };
        let r = heartbeat(&mut stream, 1, &request);
        if matches!(r.error_code, 14..=16) {
            return false;
        }
        assert_eq!(r.error_code, 0, "{:?}", r.error_message);
        epoch = r.member_epoch;
        if let Some(active) = &r.active_tasks {
            owned = tasks(active);
        }
        owned.len() == 2
    }));
    let committed: OffsetCommitResponse = call(
        &mut stream,
        ApiKey::OffsetCommit,
        9,
        &OffsetCommitRequest::default()
            .with_group_id(GroupId(s("app")))
            .with_member_id(s("a"))
            .with_generation_id_or_member_epoch(epoch)
            .with_topics(vec![
                offset_commit_request::OffsetCommitRequestTopic::default()
                    .with_name(TopicName(s("in")))
                    .with_partitions(vec![
                        offset_commit_request::OffsetCommitRequestPartition::default()
                            .with_partition_index(0)
                            .with_committed_offset(17),
                    ]),
            ]),
    );
    assert_eq!(committed.topics[0].partitions[0].error_code, 0);

    let dir = broker.dir().to_path_buf();
    assert_eq!(broker.stop(), Some(0));
    let mut restarted = Broker::start_in(&dir, &overrides);
    let mut stream = connect(&restarted);
    let mut after = StreamsGroupHeartbeatResponse::default();
    assert!(wait_until(Duration::from_secs(30), || {
        let _: FindCoordinatorResponse = call(
            &mut stream,
            ApiKey::FindCoordinator,
            1,
            &FindCoordinatorRequest::default().with_key(s("app")),
        );
        after = heartbeat(&mut stream, 1, &beat("a", epoch, Some(as_request(&owned))));
        !matches!(after.error_code, 14..=16)
    }));
    assert_eq!(after.error_code, 0, "{:?}", after.error_message);
    assert_eq!(after.member_epoch, epoch, "the same epoch: no rebalance");
    // The member is told its assignment again (the new coordinator has not sent it yet).
    assert_eq!(
        tasks(&after.active_tasks.clone().unwrap_or_default()),
        owned
    );

    let described: StreamsGroupDescribeResponse = call(
        &mut stream,
        ApiKey::StreamsGroupDescribe,
        0,
        &StreamsGroupDescribeRequest::default().with_group_ids(vec![GroupId(s("app"))]),
    );
    let group = &described.groups[0];
    assert_eq!(group.error_code, 0);
    assert_eq!(group.group_state.as_str(), "Stable");
    assert_eq!(group.group_epoch, epoch);
    assert_eq!(group.members.len(), 1);
    assert_eq!(group.members[0].process_id.as_str(), "process-a");
    let topology = group.topology.as_ref().unwrap();
    assert_eq!(topology.subtopologies.as_ref().unwrap().len(), 2);

    let fetched: OffsetFetchResponse = call(
        &mut stream,
        ApiKey::OffsetFetch,
        8,
        &OffsetFetchRequest::default().with_groups(vec![
            offset_fetch_request::OffsetFetchRequestGroup::default()
                .with_group_id(GroupId(s("app")))
                .with_topics(None),
        ]),
    );
    let partitions = &fetched.groups[0].topics[0].partitions;
    assert_eq!(partitions[0].committed_offset, 17);

    // The member leaves; after another restart it is unknown, the group empty but there.
    let left = heartbeat(&mut stream, 1, &beat("a", -1, None));
    assert_eq!(left.error_code, 0);
    assert_eq!(restarted.stop(), Some(0));
    let again = Broker::start_in(&dir, &overrides);
    let mut stream = connect(&again);
    let mut gone = StreamsGroupHeartbeatResponse::default();
    assert!(wait_until(Duration::from_secs(30), || {
        let _: FindCoordinatorResponse = call(
            &mut stream,
            ApiKey::FindCoordinator,
            1,
            &FindCoordinatorRequest::default().with_key(s("app")),
        );
        gone = heartbeat(&mut stream, 1, &beat("a", epoch, None));
        !matches!(gone.error_code, 14..=16)
    }));
    assert_eq!(gone.error_code, UNKNOWN_MEMBER_ID);
    let described: StreamsGroupDescribeResponse = call(
        &mut stream,
        ApiKey::StreamsGroupDescribe,
        0,
        &StreamsGroupDescribeRequest::default().with_group_ids(vec![GroupId(s("app"))]),
    );
    assert_eq!(described.groups[0].group_state.as_str(), "Empty");
}

/// Kafka's `handleStreamsGroupHeartbeat`: the coordinator creates a group's internal topics
/// only when the member may create all of them (CREATE on the cluster, or on each topic);
/// otherwise the heartbeat's MISSING_INTERNAL_TOPICS status names the topics it may not create,
/// and nothing is created until it may.
#[test]
fn internal_topics_are_created_only_with_create_permission() {
    use create_acls_request::AclCreation;
    let broker = Broker::start(&[
        ("group.streams.initial.rebalance.delay.ms", "0"),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("allow.everyone.if.no.acl.found", "true"),
    ]);
    let mut stream = connect(&broker);
    // CREATE denied on the cluster and on topics named `app-*`: the internal topics. A
    // resource named by an ACL is closed to everything else (allow.everyone.if.no.acl.found
    // no longer applies to it), so what the test needs is allowed: DESCRIBE on the topics for
    // the heartbeat, ALTER on the cluster for DeleteAcls.
    let acl = |resource_type: i8, name: &str, pattern_type: i8, operation: i8, permission: i8| {
        AclCreation::default()
            .with_resource_type(resource_type)
            .with_resource_name(s(name))
            .with_resource_pattern_type(pattern_type)
            .with_principal(s("User:ANONYMOUS"))
            .with_host(s("*"))
            .with_operation(operation)
            .with_permission_type(permission)
    };
    let (topic, cluster, literal, prefixed) = (2, 4, 3, 4);
    let (create, alter, describe, deny, allow) = (5, 7, 8, 2, 3);
    let created: CreateAclsResponse = call(
        &mut stream,
        ApiKey::CreateAcls,
        3,
        &CreateAclsRequest::default().with_creations(vec![
            acl(cluster, "kafka-cluster", literal, create, deny),
            acl(cluster, "kafka-cluster", literal, alter, allow),
            acl(topic, "app-", prefixed, create, deny),
            acl(topic, "app-", prefixed, describe, allow),
        ]),
    );
    assert!(created.results.iter().all(|r| r.error_code == 0));
    // `in` is named by no ACL: anyone may create it.
    create_topic(&mut stream, "in", 2, &[]);

    let mut epoch = 0;
    let mut detail = String::new();
    assert!(wait_until(Duration::from_secs(30), || {
        let _: FindCoordinatorResponse = call(
            &mut stream,
            ApiKey::FindCoordinator,
            1,
            &FindCoordinatorRequest::default().with_key(s("app")),
        );
        let request = if epoch == 0 {
            join("a")
        } else {
            beat("a", epoch, None)
        };
        let r = heartbeat(&mut stream, 1, &request);
        if matches!(r.error_code, 14..=16) {
            return false;
        }
        assert_eq!(r.error_code, 0, "{:?}", r.error_message);
        epoch = r.member_epoch;
        detail = r
            .status
            .iter()
            .flatten()
            .find(|st| st.status_code == MISSING_INTERNAL_TOPICS)
            .map(|st| st.status_detail.to_string())
            .unwrap_or_default();
        detail.contains("Unauthorized")
    }));
    assert!(
        detail.ends_with(
            "; Unauthorized to CREATE on topics app-count-changelog, app-count-repartition."
        ),
        "{detail}"
    );
    assert_eq!(topic_partitions(&mut stream, "app-count-changelog"), None);
    assert_eq!(topic_partitions(&mut stream, "app-count-repartition"), None);

    // Once the member may create them (the DENY gone, CREATE allowed on `app-*`), the next
    // heartbeats create them.
    let deleted: DeleteAclsResponse = call(
        &mut stream,
        ApiKey::DeleteAcls,
        3,
        &DeleteAclsRequest::default().with_filters(vec![
            delete_acls_request::DeleteAclsFilter::default()
                .with_resource_type_filter(topic)
                .with_resource_name_filter(Some(s("app-")))
                .with_pattern_type_filter(prefixed)
                .with_principal_filter(Some(s("User:ANONYMOUS")))
                .with_host_filter(Some(s("*")))
                .with_operation(create)
                .with_permission_type(deny),
        ]),
    );
    assert_eq!(deleted.filter_results[0].error_code, 0);
    let allowed: CreateAclsResponse = call(
        &mut stream,
        ApiKey::CreateAcls,
        3,
        &CreateAclsRequest::default()
            .with_creations(vec![acl(topic, "app-", prefixed, create, allow)]),
    );
    assert!(allowed.results.iter().all(|r| r.error_code == 0));
    assert!(wait_until(Duration::from_secs(30), || {
        let r = heartbeat(&mut stream, 1, &beat("a", epoch, None));
        assert_eq!(r.error_code, 0, "{:?}", r.error_message);
        epoch = r.member_epoch;
        topic_partitions(&mut stream, "app-count-changelog").is_some()
            && topic_partitions(&mut stream, "app-count-repartition").is_some()
    }));
}
