//! UpdateFeatures (v0–2, KIP-584, `kafka-features upgrade|downgrade|disable`): feature
//! levels set through the active controller, all or nothing. v0 says a downgrade with
//! `AllowDowngrade`, v1 with `UpgradeType`; up to v1 a success lists every feature, from v2
//! only the top-level error is answered (as Kafka's controller does, also for v0–1 failures).

use super::{ApiContext, wire_str};
use crate::error::code;
use crate::metadata::features::{FeatureUpdate, UpgradeType};
use kafka_protocol::messages::update_features_response::UpdatableFeatureResult;
use kafka_protocol::messages::{UpdateFeaturesRequest, UpdateFeaturesResponse};

pub async fn handle(
    ctx: &ApiContext,
    request: UpdateFeaturesRequest,
    version: i16,
) -> Option<UpdateFeaturesResponse> {
    let updates: Vec<FeatureUpdate> = request
        .feature_updates
        .iter()
        .map(|update| FeatureUpdate {
            name: update.feature.to_string(),
            level: update.max_version_level,
            upgrade: if version == 0 {
                if update.allow_downgrade {
                    UpgradeType::SafeDowngrade
                } else {
                    UpgradeType::Upgrade
                }
            } else {
                UpgradeType::from_code(update.upgrade_type)
            },
        })
        .collect();
    let response = match ctx
        .broker
        .update_features(updates, request.validate_only)
        .await
    {
        Ok(()) if version <= 1 => UpdateFeaturesResponse::default().with_results(
            request
                .feature_updates
                .iter()
                .map(|update| {
                    UpdatableFeatureResult::default()
                        .with_feature(update.feature.clone())
                        .with_error_code(code::NONE)
                })
                .collect(),
        ),
        Ok(()) => UpdateFeaturesResponse::default(),
        Err(e) => UpdateFeaturesResponse::default()
            .with_error_code(e.code())
            .with_error_message(Some(wire_str(&e.message()))),
    };
    Some(response)
}

/// The request another node's controller listener is sent for `updates`.
pub fn request_for(updates: &[FeatureUpdate], validate_only: bool) -> UpdateFeaturesRequest {
    use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
    UpdateFeaturesRequest::default()
        .with_validate_only(validate_only)
        .with_feature_updates(
            updates
                .iter()
                .map(|u| {
                    FeatureUpdateKey::default()
                        .with_feature(wire_str(&u.name))
                        .with_max_version_level(u.level)
                        .with_upgrade_type(u.upgrade.code())
                })
                .collect(),
        )
}
