//! Feature levels (KRaft's `FeatureControlManager`): an UpdateFeatures checked against the
//! levels the cluster runs at, then one `FeatureLevelRecord` per named feature, proposed
//! together; one refused feature refuses them all, as on Kafka.

use super::{Changes, ClusterControl, Outcome};
use crate::error::Error;
use crate::metadata::features::{FeatureUpdate, plan_update};
use crate::metadata::records::MetadataRecord;

impl ClusterControl {
    /// Applies UpdateFeatures; nothing is written for `validate_only`.
    pub fn update_features(
        &mut self,
        offset: u64,
        updates: &[FeatureUpdate],
        validate_only: bool,
    ) -> Result<Outcome<()>, Error> {
        let levels = plan_update(&self.image.feature_levels, self.config.own_node, updates)
            .map_err(Error::FeatureUpdateRefused)?;
        let mut changes = Changes::new(&self.image);
        if !validate_only {
            for (name, level) in levels {
                tracing::info!(feature = %name, level, "feature level set");
                changes.push(vec![MetadataRecord::FeatureLevel { name, level }])?;
            }
        }
        Ok(self.finish(offset, changes, ()))
    }
}
