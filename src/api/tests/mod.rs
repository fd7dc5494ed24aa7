//! Every advertised API at every advertised version, through the real dispatcher: requests
//! that reach the success and the error paths must encode a response. This is what keeps
//! ApiVersions truthful.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | a started broker's API context, the every-version tests |
//! | `log_dirs.rs` | DescribeLogDirs and AlterReplicaLogDirs over one and several log directories |
//! | `requests.rs` | an example request of every API |
//! | `streams.rs` | example requests of the streams group APIs (KIP-1071) |

use super::*;
use crate::broker::Broker;
use crate::broker::NewTopic;
use crate::config::BrokerConfig;
use crate::types::TopicPartition;
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion};

mod log_dirs;
mod requests;
mod streams;

use requests::request;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}
fn topic_name(text: &str) -> TopicName {
    TopicName(s(text))
}

/// An API context over a started broker, which is shut down when this is dropped.
struct TestContext(ApiContext);

impl std::ops::Deref for TestContext {
    type Target = ApiContext;
    fn deref(&self) -> &ApiContext {
        &self.0
    }
}

impl Drop for TestContext {
    fn drop(&mut self) {
        if let Err(e) = self.0.broker.shutdown() {
            eprintln!("test broker shutdown: {e}");
        }
    }
}

async fn context(dir: &std::path::Path) -> TestContext {
    context_with(dir, &[]).await
}

async fn context_with(dir: &std::path::Path, overrides: &[(&str, &str)]) -> TestContext {
    let log_dirs = dir.display().to_string();
    let mut all = vec![("log.dirs", log_dirs.as_str())];
    all.extend_from_slice(overrides);
    let config = BrokerConfig::with_overrides(&all).unwrap();
    let broker = Broker::open(config).unwrap();
    broker
        .start(vec![crate::metadata::records::Endpoint {
            name: "PLAINTEXT".into(),
            host: "127.0.0.1".into(),
            port: 9092,
            security_protocol: 0,
        }])
        .unwrap();
    let topic = NewTopic {
        name: "t".into(),
        partitions: 2,
        replication_factor: 1,
        assignments: vec![],
        configs: Default::default(),
    };
    broker.create_topic(topic, false).await.unwrap();
    let batch = crate::record::test_support::batch(0, 3, 1_000, 10);
    broker
        .replicas()
        .get(&TopicPartition::new("t", 0))
        .unwrap()
        .append(&crate::record::test_support::checked(batch), 1)
        .unwrap();
    TestContext(ApiContext::new(broker, "PLAINTEXT", "127.0.0.1", 9092))
}

fn encode<R: Encodable>(request: &R, version: i16, what: &str) -> Bytes {
    let mut buf = BytesMut::new();
    request
        .encode(&mut buf, version)
        .unwrap_or_else(|e| panic!("building {what} v{version}: {e}"));
    buf.freeze()
}

/// The README's compatibility table states exactly the advertised version ranges.
#[test]
fn readme_table_matches_the_dispatch_table() {
    let readme = include_str!("../../../README.md");
    // As ApiVersions lists them (Produce from v0, as Kafka lists it).
    let advertised = crate::api::api_versions::response(0).api_keys;
    for (api, _, _) in supported_apis() {
        let listed = advertised
            .iter()
            .find(|k| k.api_key == api as i16)
            .expect("every dispatched API is listed");
        let (min, max) = (listed.min_version, listed.max_version);
        let row = format!("| {api:?} ({}) | {min}–{max} |", api as i16);
        assert!(readme.contains(&row), "README row missing or wrong: {row}");
    }
    let rows = readme
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(") | ") && l.contains('–'))
        .count();
    assert_eq!(
        rows,
        supported_apis().len(),
        "README lists an API that is not dispatched"
    );
}

#[tokio::test]
async fn every_advertised_version_answers() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    for (api, min, max) in supported_apis() {
        for version in min..=max {
            let body = request(&ctx, api, version);
            match dispatch(&ctx, api, version, 7, body).await {
                Ok(Some(_)) => {}
                Ok(None) => panic!("{api:?} v{version}: no response"),
                Err(e) => panic!("{api:?} v{version}: {e}"),
            }
        }
    }
}

/// With an authorizer and a principal no ACL allows anything, every API whose checks
/// exist answers at every version (its refusals encode), and the others are refused.
#[tokio::test]
async fn every_advertised_version_answers_a_principal_that_may_do_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context_with(
        dir.path(),
        &[(
            "authorizer.class.name",
            crate::auth::authorizer::STANDARD_AUTHORIZER,
        )],
    )
    .await;
    let ctx = ctx.with_principal(crate::auth::KafkaPrincipal::user("nobody"));
    answers_as_authorized(&ctx).await;
}

/// With `allow.everyone.if.no.acl.found` and no ACLs, the checked APIs answer as without
/// an authorizer (every merge keeps its response encodable).
#[tokio::test]
async fn every_advertised_version_answers_when_everyone_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context_with(
        dir.path(),
        &[
            (
                "authorizer.class.name",
                crate::auth::authorizer::STANDARD_AUTHORIZER,
            ),
            ("allow.everyone.if.no.acl.found", "true"),
        ],
    )
    .await;
    answers_as_authorized(&ctx).await;
}

/// On the controller listener, a principal that is not one of the cluster's nodes gets
/// CLUSTER_AUTHORIZATION_FAILED from the lifecycle APIs at every version (the refusals
/// encode), and forwarded administration closes its connection.
#[tokio::test]
async fn the_controller_table_refuses_a_principal_that_is_no_node() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context_with(
        dir.path(),
        &[(
            "authorizer.class.name",
            crate::auth::authorizer::STANDARD_AUTHORIZER,
        )],
    )
    .await;
    let ctx = ctx.with_principal(crate::auth::KafkaPrincipal::user("nobody"));
    for (api, min, max) in controller_apis() {
        for version in min..=max {
            let body = match api {
                ApiKey::BrokerRegistration => encode(
                    &BrokerRegistrationRequest::default(),
                    version,
                    "registration",
                ),
                ApiKey::BrokerHeartbeat => {
                    encode(&BrokerHeartbeatRequest::default(), version, "heartbeat")
                }
                ApiKey::UnregisterBroker => {
                    encode(&UnregisterBrokerRequest::default(), version, "unregister")
                }
                ApiKey::AlterPartition => encode(
                    &AlterPartitionRequest::default(),
                    version,
                    "alter_partition",
                ),
                ApiKey::AllocateProducerIds => {
                    encode(&AllocateProducerIdsRequest::default(), version, "allocate")
                }
                ApiKey::SaslHandshake | ApiKey::SaslAuthenticate => continue,
                other => request(&ctx, other, version),
            };
            let outcome = dispatch_controller(&ctx, api, version, 7, body).await;
            match (api, outcome) {
                (ApiKey::ApiVersions, Ok(Some(_))) => {}
                (
                    ApiKey::BrokerRegistration
                    | ApiKey::BrokerHeartbeat
                    | ApiKey::AssignReplicasToDirs
                    | ApiKey::UnregisterBroker
                    | ApiKey::UnregisterController
                    | ApiKey::ControllerRegistration
                    | ApiKey::AlterPartition
                    | ApiKey::AllocateProducerIds
                    | ApiKey::DescribeQuorum
                    | ApiKey::AddRaftVoter
                    | ApiKey::RemoveRaftVoter
                    | ApiKey::UpdateRaftVoter
                    | ApiKey::DescribeCluster,
                    Ok(Some(frame)),
                ) => {
                    let bytes = frame.into_bytes().unwrap();
                    // size, correlation id, (tagged fields,) throttle time, error code:
                    // the error is CLUSTER_AUTHORIZATION_FAILED (31) in every response.
                    assert!(
                        bytes.windows(2).any(|w| w == [0, 31]),
                        "{api:?} v{version}: {bytes:?}"
                    );
                }
                (_, Err(DispatchError::Refused(reason))) => {
                    assert!(reason.contains("CLUSTER_ACTION"), "{api:?}: {reason}");
                }
                (api, outcome) => panic!("{api:?} v{version}: {outcome:?}"),
            }
        }
    }
}

async fn answers_as_authorized(ctx: &ApiContext) {
    for (api, min, max) in supported_apis() {
        for version in min..=max {
            let body = request(ctx, api, version);
            let outcome = dispatch(ctx, api, version, 7, body).await;
            match (authorized_api(api), outcome) {
                (true, Ok(Some(_))) => {}
                // Produce with acks=0 sends nothing, even when refused.
                (true, Ok(None)) if api == ApiKey::Produce => {}
                (false, Err(DispatchError::Unauthorizable(_))) => {}
                (covered, outcome) => {
                    panic!("{api:?} v{version} (checks built: {covered}): {outcome:?}")
                }
            }
        }
    }
}

/// Encodes `request`, runs it through the dispatcher and decodes the response.
async fn call<Req, Resp>(ctx: &ApiContext, api: ApiKey, version: i16, request: &Req) -> Resp
where
    Req: Encodable,
    Resp: Decodable + HeaderVersion,
{
    let body = encode(request, version, "request");
    let frame = dispatch(ctx, api, version, 42, body)
        .await
        .unwrap()
        .expect("a response");
    let mut bytes = frame.into_bytes().unwrap();
    let size = bytes::Buf::get_i32(&mut bytes);
    assert_eq!(size as usize, bytes.len(), "frame size");
    let header = ResponseHeader::decode(&mut bytes, Resp::header_version(version)).unwrap();
    assert_eq!(header.correlation_id, 42);
    Resp::decode(&mut bytes, version).unwrap()
}

#[tokio::test]
async fn leader_election_and_reassignment_follow_the_single_replica() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let elect = |election_type: i8, topics: Option<Vec<(&str, Vec<i32>)>>| {
        ElectLeadersRequest::default()
            .with_election_type(election_type)
            .with_topic_partitions(topics.map(|ts| {
                ts.into_iter()
                    .map(|(t, ps)| {
                        elect_leaders_request::TopicPartitions::default()
                            .with_topic(topic_name(t))
                            .with_partitions(ps)
                    })
                    .collect()
            }))
    };
    let outcome = |r: &ElectLeadersResponse| -> Vec<(String, i32, i16)> {
        r.replica_election_results
            .iter()
            .flat_map(|t| {
                t.partition_result
                    .iter()
                    .map(|p| (t.topic.to_string(), p.partition_id, p.error_code))
            })
            .collect()
    };
    for election_type in [0, 1] {
        let listed: ElectLeadersResponse = call(
            &ctx,
            ApiKey::ElectLeaders,
            2,
            &elect(
                election_type,
                Some(vec![("t", vec![0, 1, 9]), ("nope", vec![0])]),
            ),
        )
        .await;
        assert_eq!(
            outcome(&listed),
            vec![
                ("t".into(), 0, 84),
                ("t".into(), 1, 84),
                ("t".into(), 9, 3),
                ("nope".into(), 0, 3)
            ]
        );
    }
    let all: ElectLeadersResponse = call(&ctx, ApiKey::ElectLeaders, 2, &elect(0, None)).await;
    assert_eq!(all.error_code, 0);
    assert!(
        outcome(&all).is_empty(),
        "partitions needing no election are left out"
    );
    let bad: ElectLeadersResponse = call(&ctx, ApiKey::ElectLeaders, 2, &elect(7, None)).await;
    assert_eq!(bad.error_code, 42);

    let node = ctx.broker.node_id();
    let reassign = |topic: &str, replicas: Option<Vec<i32>>, allow_rf_change: bool| {
        AlterPartitionReassignmentsRequest::default()
            .with_allow_replication_factor_change(allow_rf_change)
            .with_topics(vec![
                alter_partition_reassignments_request::ReassignableTopic::default()
                    .with_name(topic_name(topic))
                    .with_partitions(vec![
                        alter_partition_reassignments_request::ReassignablePartition::default()
                            .with_partition_index(0)
                            .with_replicas(replicas.map(|r| r.into_iter().map(BrokerId).collect())),
                    ]),
            ])
    };
    let cases = [
        ("t", Some(vec![node]), true, 0),
        ("t", Some(vec![node, node + 1]), true, 39),
        ("t", Some(vec![node, node]), true, 39),
        ("t", Some(vec![]), true, 39),
        ("t", None, true, 85),
        ("nope", Some(vec![node]), true, 3),
    ];
    for (topic, replicas, allow, expected) in cases {
        let response: AlterPartitionReassignmentsResponse = call(
            &ctx,
            ApiKey::AlterPartitionReassignments,
            1,
            &reassign(topic, replicas.clone(), allow),
        )
        .await;
        assert_eq!(
            response.responses[0].partitions[0].error_code, expected,
            "{topic} {replicas:?}"
        );
    }
    let listed: ListPartitionReassignmentsResponse = call(
        &ctx,
        ApiKey::ListPartitionReassignments,
        0,
        &ListPartitionReassignmentsRequest::default().with_topics(None),
    )
    .await;
    assert_eq!((listed.error_code, listed.topics.len()), (0, 0));
}

#[tokio::test]
async fn describe_topic_partitions_pages_in_name_order() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let topic = NewTopic {
        name: "u".into(),
        partitions: 4,
        replication_factor: 1,
        assignments: vec![],
        configs: Default::default(),
    };
    ctx.broker.create_topic(topic, false).await.unwrap();
    let request = |names: &[&str], limit: i32, cursor: Option<(&str, i32)>| {
        DescribeTopicPartitionsRequest::default()
            .with_topics(
                names
                    .iter()
                    .map(|n| {
                        describe_topic_partitions_request::TopicRequest::default()
                            .with_name(topic_name(n))
                    })
                    .collect(),
            )
            .with_response_partition_limit(limit)
            .with_cursor(cursor.map(|(t, p)| {
                describe_topic_partitions_request::Cursor::default()
                    .with_topic_name(topic_name(t))
                    .with_partition_index(p)
            }))
    };
    let summary = |r: &DescribeTopicPartitionsResponse| {
        let topics: Vec<(String, i16, Vec<i32>)> = r
            .topics
            .iter()
            .map(|t| {
                let name = t.name.as_ref().map(|n| n.to_string()).unwrap_or_default();
                let partitions = t.partitions.iter().map(|p| p.partition_index).collect();
                (name, t.error_code, partitions)
            })
            .collect();
        let cursor = r
            .next_cursor
            .as_ref()
            .map(|c| (c.topic_name.to_string(), c.partition_index));
        (topics, cursor)
    };
    let first: DescribeTopicPartitionsResponse = call(
        &ctx,
        ApiKey::DescribeTopicPartitions,
        0,
        &request(&["u", "missing", "t"], 3, None),
    )
    .await;
    assert_eq!(
        summary(&first),
        (
            vec![
                ("missing".into(), 3, vec![]),
                ("t".into(), 0, vec![0, 1]),
                ("u".into(), 0, vec![0]),
            ],
            Some(("u".into(), 1))
        )
    );
    let next: DescribeTopicPartitionsResponse = call(
        &ctx,
        ApiKey::DescribeTopicPartitions,
        0,
        &request(&["u", "missing", "t"], 10, Some(("u", 1))),
    )
    .await;
    assert_eq!(summary(&next), (vec![("u".into(), 0, vec![1, 2, 3])], None));
    let exact: DescribeTopicPartitionsResponse = call(
        &ctx,
        ApiKey::DescribeTopicPartitions,
        0,
        &request(&[], 2, None),
    )
    .await;
    assert_eq!(
        summary(&exact),
        (vec![("t".into(), 0, vec![0, 1])], Some(("u".into(), 0)))
    );
    let stray_cursor: DescribeTopicPartitionsResponse = call(
        &ctx,
        ApiKey::DescribeTopicPartitions,
        0,
        &request(&["t"], 10, Some(("u", 0))),
    )
    .await;
    assert!(stray_cursor.topics.iter().all(|t| t.error_code == 42));
}

#[tokio::test]
async fn list_config_resources_lists_topics_and_the_broker() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let list = |types: Vec<i8>| ListConfigResourcesRequest::default().with_resource_types(types);
    let names = |r: &ListConfigResourcesResponse| -> Vec<(i8, String)> {
        r.config_resources
            .iter()
            .map(|c| (c.resource_type, c.resource_name.to_string()))
            .collect()
    };
    let node = ctx.broker.node_id().to_string();
    let every: ListConfigResourcesResponse =
        call(&ctx, ApiKey::ListConfigResources, 1, &list(vec![])).await;
    assert_eq!(every.error_code, 0);
    assert_eq!(names(&every), vec![(4, node.clone()), (2, "t".into())]);
    let topics: ListConfigResourcesResponse =
        call(&ctx, ApiKey::ListConfigResources, 1, &list(vec![2, 2])).await;
    assert_eq!(names(&topics), vec![(2, "t".to_string())]);
    let loggers: ListConfigResourcesResponse =
        call(&ctx, ApiKey::ListConfigResources, 1, &list(vec![4, 8])).await;
    assert_eq!(
        (loggers.error_code, loggers.config_resources.len()),
        (35, 0)
    );
    let client_metrics: ListConfigResourcesResponse =
        call(&ctx, ApiKey::ListConfigResources, 0, &list(vec![])).await;
    assert_eq!(
        (
            client_metrics.error_code,
            client_metrics.config_resources.len()
        ),
        (0, 0)
    );
}

#[tokio::test]
async fn fetch_sessions_answer_only_news_in_rotating_order() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let partition = |p: i32, offset: i64| {
        fetch_request::FetchPartition::default()
            .with_partition(p)
            .with_fetch_offset(offset)
            .with_partition_max_bytes(1 << 20)
    };
    let fetch = |session_id: i32, epoch: i32, partitions: Vec<fetch_request::FetchPartition>| {
        let topics = if partitions.is_empty() {
            vec![]
        } else {
            vec![
                fetch_request::FetchTopic::default()
                    .with_topic(topic_name("t"))
                    .with_partitions(partitions),
            ]
        };
        FetchRequest::default()
            .with_max_wait_ms(0)
            .with_min_bytes(0)
            .with_max_bytes(1 << 20)
            .with_session_id(session_id)
            .with_session_epoch(epoch)
            .with_topics(topics)
    };
    let answered = |r: &FetchResponse| -> Vec<(i32, usize)> {
        r.responses
            .iter()
            .flat_map(|t| t.partitions.iter())
            .map(|p| (p.partition_index, p.records.as_ref().map_or(0, |r| r.len())))
            .collect()
    };

    // The test topic "t" holds 3 records in partition 0 and none in partition 1.
    let opened: FetchResponse = call(
        &ctx,
        ApiKey::Fetch,
        12,
        &fetch(0, 0, vec![partition(0, 0), partition(1, 0)]),
    )
    .await;
    let id = opened.session_id;
    assert_ne!(id, 0, "epoch 0 opens a session");
    let first = answered(&opened);
    assert_eq!(first.iter().map(|p| p.0).collect::<Vec<_>>(), vec![0, 1]);
    assert!(first[0].1 > 0 && first[1].1 == 0);

    // Partition 0 moves on; nothing new anywhere: an empty answer.
    let quiet: FetchResponse = call(
        &ctx,
        ApiKey::Fetch,
        12,
        &fetch(id, 1, vec![partition(0, 3)]),
    )
    .await;
    assert_eq!((quiet.error_code, quiet.session_id), (0, id));
    assert!(answered(&quiet).is_empty(), "{:?}", answered(&quiet));

    // New data in partition 1 only: only partition 1 is answered.
    let batch = crate::record::test_support::batch(0, 2, 1_000, 10);
    ctx.broker
        .replicas()
        .get(&TopicPartition::new("t", 1))
        .unwrap()
        .append(&crate::record::test_support::checked(batch), 1)
        .unwrap();
    let news: FetchResponse = call(&ctx, ApiKey::Fetch, 12, &fetch(id, 2, vec![])).await;
    let news = answered(&news);
    assert_eq!(news.len(), 1);
    assert_eq!(news[0].0, 1);
    assert!(news[0].1 > 0);

    let stale: FetchResponse = call(&ctx, ApiKey::Fetch, 12, &fetch(id, 2, vec![])).await;
    assert_eq!(stale.error_code, 71, "INVALID_FETCH_SESSION_EPOCH");
    let closed: FetchResponse = call(&ctx, ApiKey::Fetch, 12, &fetch(id, -1, vec![])).await;
    assert_eq!((closed.error_code, closed.session_id), (0, 0));
    let gone: FetchResponse = call(&ctx, ApiKey::Fetch, 12, &fetch(id, 3, vec![])).await;
    assert_eq!(gone.error_code, 70, "FETCH_SESSION_ID_NOT_FOUND");
}

#[tokio::test]
async fn a_partition_whose_log_went_offline_has_no_leader() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let node = BrokerId(ctx.broker.node_id());
    let offline = TopicPartition::new("t", 1);
    crate::storage::manager::lock(ctx.broker.replicas().get(&offline).unwrap().log())
        .fail_for_test();

    let metadata: MetadataResponse = call(
        &ctx,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(Some(vec![
            metadata_request::MetadataRequestTopic::default().with_name(Some(topic_name("t"))),
        ])),
    )
    .await;
    let seen: Vec<_> = metadata.topics[0]
        .partitions
        .iter()
        .map(|p| {
            let state = (p.leader_id, p.isr_nodes.clone(), p.offline_replicas.clone());
            (p.partition_index, p.error_code, state)
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (0, 0, (node, vec![node], vec![])),
            (1, 5, (BrokerId(-1), vec![], vec![node])),
        ]
    );

    let described: DescribeTopicPartitionsResponse = call(
        &ctx,
        ApiKey::DescribeTopicPartitions,
        0,
        &DescribeTopicPartitionsRequest::default()
            .with_topics(vec![
                describe_topic_partitions_request::TopicRequest::default()
                    .with_name(topic_name("t")),
            ])
            .with_response_partition_limit(10),
    )
    .await;
    let codes: Vec<(i32, i16, BrokerId)> = described.topics[0]
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.error_code, p.leader_id))
        .collect();
    assert_eq!(codes, vec![(0, 0, node), (1, 5, BrokerId(-1))]);

    for (election_type, expected) in [(0, 80), (1, 83)] {
        let elected: ElectLeadersResponse = call(
            &ctx,
            ApiKey::ElectLeaders,
            2,
            &ElectLeadersRequest::default()
                .with_election_type(election_type)
                .with_topic_partitions(Some(vec![
                    elect_leaders_request::TopicPartitions::default()
                        .with_topic(topic_name("t"))
                        .with_partitions(vec![1]),
                ])),
        )
        .await;
        assert_eq!(
            elected.replica_election_results[0].partition_result[0].error_code,
            expected
        );
    }
}
