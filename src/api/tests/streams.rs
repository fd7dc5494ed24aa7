//! Example requests of the streams group APIs (KIP-1071) for the every-version tests.

use super::{encode, s, topic_name};
use bytes::Bytes;
use kafka_protocol::messages::*;

/// A request of `api` at version `v` that reaches the handler's success and error paths.
pub(super) fn request(api: ApiKey, v: i16) -> Bytes {
    match api {
        ApiKey::StreamsGroupHeartbeat => {
            use streams_group_heartbeat_request::{Subtopology, TopicInfo, Topology};
            let topology = Topology::default().with_subtopologies(vec![
                Subtopology::default()
                    .with_subtopology_id(s("0"))
                    .with_source_topics(vec![topic_name("t")])
                    .with_state_changelog_topics(vec![
                        TopicInfo::default().with_name(topic_name("app-store-changelog")),
                    ]),
            ]);
            encode(
                &StreamsGroupHeartbeatRequest::default()
                    .with_group_id(GroupId(s("app")))
                    .with_member_id(s("member-1"))
                    .with_member_epoch(0)
                    .with_rebalance_timeout_ms(30_000)
                    .with_process_id(Some(s("process-1")))
                    .with_topology(Some(topology))
                    .with_active_tasks(Some(vec![]))
                    .with_standby_tasks(Some(vec![]))
                    .with_warmup_tasks(Some(vec![])),
                v,
                "streams_group_heartbeat",
            )
        }
        ApiKey::StreamsGroupDescribe => encode(
            &StreamsGroupDescribeRequest::default()
                .with_group_ids(vec![GroupId(s("app")), GroupId(s("none"))])
                .with_include_topology_description(v >= 1),
            v,
            "streams_group_describe",
        ),
        ApiKey::StreamsGroupTopologyDescriptionUpdate => encode(
            &StreamsGroupTopologyDescriptionUpdateRequest::default()
                .with_group_id(GroupId(s("app")))
                .with_member_id(s("member-1")),
            v,
            "streams_group_topology_description_update",
        ),
        other => panic!("not a streams group API: {other:?}"),
    }
}
