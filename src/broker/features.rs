//! Feature levels (KIP-584): UpdateFeatures sent to the active controller; the levels reach
//! ApiVersions and the features' behaviour from the metadata image.

use super::Broker;
use crate::controller::service::ControllerOp;
use crate::error::Error;
use crate::metadata::features::FeatureUpdate;
use std::collections::BTreeMap;

impl Broker {
    /// Applies UpdateFeatures (all or nothing). Answers once this broker's image shows the
    /// new levels, so the next ApiVersions here reports them.
    pub async fn update_features(
        &self,
        updates: Vec<FeatureUpdate>,
        validate_only: bool,
    ) -> Result<(), Error> {
        // A feature named twice ends at its last level, as the controller decides it.
        let levels: BTreeMap<String, i16> =
            updates.iter().map(|u| (u.name.clone(), u.level)).collect();
        let op = ControllerOp::UpdateFeatures {
            updates,
            validate_only,
        };
        self.call_active_controller(op).await?;
        if !validate_only {
            self.await_visible(|image| {
                levels
                    .iter()
                    .all(|(name, level)| image.feature_level(name) == *level)
            })
            .await;
        }
        Ok(())
    }

    /// The level `feature` runs at in this broker's metadata.
    pub fn feature_level(&self, feature: &str) -> i16 {
        self.metadata.image().feature_level(feature)
    }
}
