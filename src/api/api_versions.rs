//! ApiVersions: the supported APIs and versions, generated from the dispatch table. A request
//! of a version this broker does not know is answered by the server layer with a v0 response
//! carrying UNSUPPORTED_VERSION and the full list (Kafka's rule, so clients can downgrade).
//! From v3 it also carries the supported and finalized feature levels. From v5 a client may
//! name the cluster and node it means to reach: another one answers REBOOTSTRAP_REQUIRED (as
//! Kafka 4.4 does), so a client whose bootstrap address now leads elsewhere starts over.

use super::{ApiContext, controller_apis, supported_apis};
use crate::error::code;
use crate::metadata::features::{FEATURES, finalized_levels};
use kafka_protocol::messages::ApiKey;
use kafka_protocol::messages::api_versions_response::{
    ApiVersion, FinalizedFeatureKey, SupportedFeatureKey,
};
use kafka_protocol::messages::{ApiVersionsRequest, ApiVersionsResponse};
use std::collections::BTreeMap;

pub async fn handle(
    ctx: &ApiContext,
    request: ApiVersionsRequest,
    version: i16,
) -> Option<ApiVersionsResponse> {
    if version >= 3
        && !(valid_software_field(&request.client_software_name)
            && valid_software_field(&request.client_software_version))
    {
        return Some(response_for(ctx, code::INVALID_REQUEST));
    }
    if version >= 5
        && let Some(cluster_id) = &request.cluster_id
        && (cluster_id.as_str() != ctx.broker.cluster_id()
            || request.node_id != ctx.broker.node_id())
    {
        return Some(ApiVersionsResponse::default().with_error_code(code::REBOOTSTRAP_REQUIRED));
    }
    Some(response_for(ctx, code::NONE))
}

/// The response for the listener `ctx` belongs to: the controller listener serves only the
/// controller APIs.
pub fn response_for(ctx: &ApiContext, error_code: i16) -> ApiVersionsResponse {
    let image = ctx.broker.metadata().image();
    let levels = image.finalized_feature_levels();
    let features = Finalized {
        levels: &levels,
        // Kafka's finalized features epoch is the offset of the metadata image they are from.
        epoch: i64::try_from(image.offset).unwrap_or(i64::MAX),
    };
    if ctx.is_controller_listener() {
        response_listing(error_code, controller_apis(), &features)
    } else {
        // With an authorizer, only APIs whose checks are built are offered.
        let authorizing = ctx.authorizer.is_some();
        let apis = supported_apis()
            .into_iter()
            .filter(|(key, _, _)| !authorizing || super::authorized_api(*key))
            .collect();
        response_listing(error_code, apis, &features)
    }
}

/// The feature levels a response reports: those the metadata set, and the epoch.
struct Finalized<'a> {
    levels: &'a BTreeMap<String, i16>,
    epoch: i64,
}

/// The full response with `error_code`.
/// The full response with `error_code`, before any metadata is known (the server layer's
/// answer to a version it does not know): features at their default levels.
pub fn response(error_code: i16) -> ApiVersionsResponse {
    let defaults = Finalized {
        levels: &BTreeMap::new(),
        epoch: 0,
    };
    response_listing(error_code, supported_apis(), &defaults)
}

fn response_listing(
    error_code: i16,
    apis: Vec<(ApiKey, i16, i16)>,
    features: &Finalized<'_>,
) -> ApiVersionsResponse {
    let mut api_keys: Vec<ApiVersion> = apis
        .into_iter()
        .map(|(key, min, max)| {
            // Kafka 4.x lists Produce from v0 though it serves v3 and later only
            // (KAFKA-18659: librdkafka turns compression off against a broker whose oldest
            // Produce version is not 0); so does this broker, and refuses v0-2 as Kafka does.
            let min = if key == ApiKey::Produce { 0 } else { min };
            ApiVersion::default()
                .with_api_key(key as i16)
                .with_min_version(min)
                .with_max_version(max)
        })
        .collect();
    api_keys.sort_by_key(|a| a.api_key);
    let supported_features = FEATURES
        .iter()
        .map(|f| {
            SupportedFeatureKey::default()
                .with_name(f.name.into())
                .with_min_version(f.min_supported)
                .with_max_version(f.max_supported)
        })
        .collect();
    // Kafka reports a finalized range as its one level, and leaves out features at level 0.
    let finalized_features = finalized_levels(features.levels)
        .into_iter()
        .filter(|(_, level)| *level > 0)
        .map(|(name, level)| {
            FinalizedFeatureKey::default()
                .with_name(name.into())
                .with_min_version_level(level)
                .with_max_version_level(level)
        })
        .collect();
    ApiVersionsResponse::default()
        .with_error_code(error_code)
        .with_api_keys(api_keys)
        .with_supported_features(supported_features)
        .with_finalized_features_epoch(features.epoch)
        .with_finalized_features(finalized_features)
}

/// Kafka's pattern for client software name and version: `[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?`.
fn valid_software_field(text: &str) -> bool {
    let bytes = text.as_bytes();
    let edge_ok = |b: &u8| b.is_ascii_alphanumeric();
    match (bytes.first(), bytes.last()) {
        (Some(first), Some(last)) => {
            edge_ok(first)
                && edge_ok(last)
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'.')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_field_pattern() {
        assert!(valid_software_field("librdkafka"));
        assert!(valid_software_field("2.3.0"));
        assert!(valid_software_field("a"));
        assert!(!valid_software_field(""));
        assert!(!valid_software_field("-x"));
        assert!(!valid_software_field("x y"));
    }

    #[test]
    fn response_lists_the_dispatch_table() {
        let response = response(0);
        assert_eq!(response.api_keys.len(), supported_apis().len());
        assert!(
            response
                .api_keys
                .iter()
                .any(|k| k.api_key == 18 && k.max_version == 5)
        );
        let finalized = |name: &str| {
            response
                .finalized_features
                .iter()
                .find(|f| f.name.as_str() == name)
                .map(|f| (f.min_version_level, f.max_version_level))
        };
        assert_eq!(finalized("metadata.version"), Some((25, 25)));
        assert_eq!(finalized("group.version"), Some((1, 1)));
        assert_eq!(finalized("streams.version"), Some((1, 1)));
        assert_eq!(finalized("transaction.version"), Some((2, 2)));
        assert_eq!(response.supported_features.len(), FEATURES.len());
    }
}
