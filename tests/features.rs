//! Feature levels (KIP-584) moved by UpdateFeatures as `kafka-features` moves them: Kafka's
//! checks and messages, every request version's answer, the levels in ApiVersions, kept
//! across a restart and forwarded to the active controller from any node; a feature disabled
//! at level 0 keeps its APIs listed but answers them UNSUPPORTED_VERSION, as Kafka does.
//! `compat/kafka-tools` runs Kafka's own `kafka-features` against the same cases.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Broker, Cluster, raw_call, wait_until};
use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::time::Duration;

const INVALID_UPDATE_VERSION: i16 = 95;
const UNSUPPORTED_VERSION: i16 = 35;
const PREFIX: &str =
    "The update failed for all features since the following feature had an error: ";

const UPGRADE: i8 = 1;
const SAFE_DOWNGRADE: i8 = 2;

fn update(feature: &str, level: i16, upgrade_type: i8) -> FeatureUpdateKey {
    FeatureUpdateKey::default()
        .with_feature(StrBytes::from_string(feature.to_string()))
        .with_max_version_level(level)
        .with_upgrade_type(upgrade_type)
}

fn update_features(
    bootstrap: &str,
    version: i16,
    updates: Vec<FeatureUpdateKey>,
    validate_only: bool,
) -> UpdateFeaturesResponse {
    let request = UpdateFeaturesRequest::default()
        .with_feature_updates(updates)
        .with_validate_only(validate_only);
    raw_call(bootstrap, ApiKey::UpdateFeatures, version, &request)
}

/// The finalized levels ApiVersions v3 reports, by name, and their epoch.
fn finalized(bootstrap: &str) -> (Vec<(String, i16)>, i64) {
    let request = ApiVersionsRequest::default()
        .with_client_software_name(StrBytes::from_static_str("sluice-test"))
        .with_client_software_version(StrBytes::from_static_str("1"));
    let response: ApiVersionsResponse = raw_call(bootstrap, ApiKey::ApiVersions, 3, &request);
    let mut levels: Vec<(String, i16)> = response
        .finalized_features
        .iter()
        .map(|f| {
            assert_eq!(f.min_version_level, f.max_version_level, "{f:?}");
            (f.name.to_string(), f.max_version_level)
        })
        .collect();
    levels.sort();
    assert!(
        response
            .api_keys
            .iter()
            .any(|k| k.api_key == ApiKey::UpdateFeatures as i16 && k.max_version == 2)
    );
    (levels, response.finalized_features_epoch)
}

fn level(bootstrap: &str, feature: &str) -> Option<i16> {
    finalized(bootstrap)
        .0
        .into_iter()
        .find(|(name, _)| name == feature)
        .map(|(_, level)| level)
}

fn refusal(response: &UpdateFeaturesResponse) -> String {
    assert_eq!(response.error_code, INVALID_UPDATE_VERSION, "{response:?}");
    assert!(response.results.is_empty(), "{response:?}");
    let message = response.error_message.as_deref().unwrap();
    message.strip_prefix(PREFIX).unwrap().to_string()
}

#[test]
fn levels_move_as_kafka_moves_them_and_stay_after_a_restart() {
    let broker = Broker::start(&[]);
    let b = broker.bootstrap.as_str();
    let (levels, epoch) = finalized(b);
    for expected in [
        ("group.version", 1),
        ("metadata.version", 25),
        ("share.version", 1),
        ("streams.version", 1),
        ("transaction.version", 2),
    ] {
        assert!(
            levels.contains(&(expected.0.to_string(), expected.1)),
            "{levels:?}"
        );
    }

    // kraft.version 0 (a quorum without dynamic voters) is left out, as Kafka leaves out
    // every level 0; it stays as it is (Kafka 4.4 could make the quorum dynamic, Sluice not).
    assert_eq!(level(b, "kraft.version"), None, "{levels:?}");
    let refused = update_features(b, 2, vec![update("kraft.version", 1, UPGRADE)], false);
    assert!(
        refusal(&refused).starts_with("Invalid update version 1 for feature kraft.version. Local controller 1 cannot change the kind of the controller quorum"),
        "{refused:?}"
    );
    let same = update_features(b, 2, vec![update("kraft.version", 0, UPGRADE)], false);
    assert_eq!(same.error_code, 0, "{same:?}");

    // Kafka's refusals (the same requests to Apache Kafka 4.4 answer the same text).
    let refused = update_features(b, 2, vec![update("transaction.version", 1, UPGRADE)], false);
    assert_eq!(
        refusal(&refused),
        "Invalid update version 1 for feature transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."
    );
    let refused = update_features(b, 2, vec![update("transaction.version", 3, UPGRADE)], false);
    assert_eq!(
        refusal(&refused),
        "Invalid update version 3 for feature transaction.version. Local controller 1 only supports versions 0-2"
    );
    let refused = update_features(
        b,
        2,
        vec![update("metadata.version", 22, SAFE_DOWNGRADE)],
        false,
    );
    assert_eq!(
        refusal(&refused),
        "Unsupported metadata.version downgrade from 25 to 22. Refusing to perform the requested downgrade because it might delete metadata information."
    );
    // One refused feature refuses the request: the other feature is not changed.
    let refused = update_features(
        b,
        1,
        vec![
            update("transaction.version", 1, SAFE_DOWNGRADE),
            update("foo.version", 1, UPGRADE),
        ],
        false,
    );
    assert_eq!(
        refusal(&refused),
        "Invalid update version 1 for feature foo.version. Local controller 1 does not support this feature."
    );
    assert_eq!(level(b, "transaction.version"), Some(2));

    // validate_only (v1: a result per feature) changes nothing.
    let checked = update_features(
        b,
        1,
        vec![update("transaction.version", 1, SAFE_DOWNGRADE)],
        true,
    );
    assert_eq!(checked.error_code, 0, "{checked:?}");
    assert_eq!(checked.results.len(), 1);
    assert_eq!(checked.results[0].feature.as_str(), "transaction.version");
    assert_eq!(checked.results[0].error_code, 0);
    assert_eq!(level(b, "transaction.version"), Some(2));

    // v2 answers the top-level code only; the level is in ApiVersions once it answered.
    let done = update_features(
        b,
        2,
        vec![
            update("transaction.version", 1, SAFE_DOWNGRADE),
            update("metadata.version", 23, SAFE_DOWNGRADE),
        ],
        false,
    );
    assert_eq!(done.error_code, 0, "{done:?}");
    assert!(done.results.is_empty());
    let (levels, later) = finalized(b);
    assert!(
        later > epoch,
        "the finalized epoch moves: {epoch} -> {later}"
    );
    assert!(
        levels.contains(&("transaction.version".into(), 1)),
        "{levels:?}"
    );
    assert!(
        levels.contains(&("metadata.version".into(), 23)),
        "{levels:?}"
    );

    // v0's AllowDowngrade; a level of 0 leaves the feature out of the finalized list.
    let disabled = update_features(
        b,
        0,
        vec![
            FeatureUpdateKey::default()
                .with_feature(StrBytes::from_static_str("group.version"))
                .with_max_version_level(0)
                .with_allow_downgrade(true),
        ],
        false,
    );
    assert_eq!(disabled.error_code, 0, "{disabled:?}");
    assert_eq!(disabled.results.len(), 1);
    assert_eq!(level(b, "group.version"), None);

    // Kept across a restart.
    let dir = broker.dir().to_path_buf();
    let mut broker = broker;
    broker.stop();
    let restarted = Broker::start_in(&dir, &[]);
    let b = restarted.bootstrap.as_str();
    assert_eq!(level(b, "transaction.version"), Some(1));
    assert_eq!(level(b, "metadata.version"), Some(23));
    assert_eq!(level(b, "group.version"), None);
    let back = update_features(
        b,
        2,
        vec![
            update("transaction.version", 2, UPGRADE),
            update("metadata.version", 25, UPGRADE),
            update("group.version", 1, UPGRADE),
        ],
        false,
    );
    assert_eq!(back.error_code, 0, "{back:?}");
    assert_eq!(level(b, "transaction.version"), Some(2));
    assert_eq!(level(b, "metadata.version"), Some(25));
    drop(broker);
}

#[test]
fn a_disabled_feature_answers_its_apis_unsupported_version() {
    let broker = Broker::start(&[]);
    let b = broker.bootstrap.as_str();
    let heartbeat = || {
        let request = ConsumerGroupHeartbeatRequest::default()
            .with_group_id(GroupId(StrBytes::from_static_str("features-group")))
            .with_member_id(StrBytes::from_static_str("m-1"))
            .with_member_epoch(0)
            .with_rebalance_timeout_ms(30_000)
            .with_subscribed_topic_names(Some(vec![]))
            .with_server_assignor(None)
            .with_topic_partitions(Some(vec![]));
        let response: ConsumerGroupHeartbeatResponse =
            raw_call(b, ApiKey::ConsumerGroupHeartbeat, 1, &request);
        response
    };
    // The group coordinator loads __consumer_offsets first (COORDINATOR_LOAD_IN_PROGRESS).
    assert!(wait_until(Duration::from_secs(30), || heartbeat()
        .error_code
        == 0));

    let off = update_features(
        b,
        2,
        vec![
            update("group.version", 0, SAFE_DOWNGRADE),
            update("streams.version", 0, SAFE_DOWNGRADE),
            update("share.version", 0, SAFE_DOWNGRADE),
        ],
        false,
    );
    assert_eq!(off.error_code, 0, "{off:?}");
    let refused = heartbeat();
    assert_eq!(refused.error_code, UNSUPPORTED_VERSION, "{refused:?}");
    let described: ConsumerGroupDescribeResponse = raw_call(
        b,
        ApiKey::ConsumerGroupDescribe,
        1,
        &ConsumerGroupDescribeRequest::default()
            .with_group_ids(vec![GroupId(StrBytes::from_static_str("features-group"))]),
    );
    assert_eq!(described.groups[0].error_code, UNSUPPORTED_VERSION);
    let streams: StreamsGroupDescribeResponse = raw_call(
        b,
        ApiKey::StreamsGroupDescribe,
        0,
        &StreamsGroupDescribeRequest::default()
            .with_group_ids(vec![GroupId(StrBytes::from_static_str("features-streams"))]),
    );
    assert_eq!(streams.groups[0].error_code, UNSUPPORTED_VERSION);
    let shares: ShareGroupDescribeResponse = raw_call(
        b,
        ApiKey::ShareGroupDescribe,
        1,
        &ShareGroupDescribeRequest::default()
            .with_group_ids(vec![GroupId(StrBytes::from_static_str("features-share"))]),
    );
    assert_eq!(shares.groups[0].error_code, UNSUPPORTED_VERSION);

    // Back at level 1 the member joins.
    let on = update_features(b, 2, vec![update("group.version", 1, UPGRADE)], false);
    assert_eq!(on.error_code, 0, "{on:?}");
    let joined = heartbeat();
    assert_eq!(joined.error_code, 0, "{joined:?}");
    assert!(joined.member_epoch > 0, "{joined:?}");
}

#[test]
fn any_node_forwards_an_update_to_the_active_controller() {
    let mut cluster = Cluster::start(3, &[]);
    let active = wait_until(Duration::from_secs(30), || {
        cluster.active_controller().is_some()
    });
    assert!(active);
    let controller = cluster.active_controller().unwrap();
    let other = (controller + 1) % 3;
    let via = cluster.nodes[other].bootstrap.clone();
    let refused = update_features(&via, 2, vec![update("group.version", 2, UPGRADE)], false);
    assert_eq!(
        refusal(&refused),
        format!(
            "Invalid update version 2 for feature group.version. Local controller {} only supports versions 0-1",
            controller + 1
        )
    );
    let done = update_features(
        &via,
        2,
        vec![update("transaction.version", 0, SAFE_DOWNGRADE)],
        false,
    );
    assert_eq!(done.error_code, 0, "{done:?}");
    // The node that answered shows it at once; every node shows it soon after.
    assert_eq!(level(&via, "transaction.version"), None);
    for node in &cluster.nodes {
        assert!(wait_until(Duration::from_secs(15), || level(
            &node.bootstrap,
            "transaction.version"
        )
        .is_none()));
    }
}
