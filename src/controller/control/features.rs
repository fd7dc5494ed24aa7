//! Feature levels (KRaft's `FeatureControlManager`): an UpdateFeatures checked against the
//! levels the cluster runs at, then one `FeatureLevelRecord` per named feature, proposed
//! together; one refused feature refuses them all, as on Kafka.

use super::{Changes, ClusterControl, Outcome};
use crate::error::Error;
use crate::metadata::features::{FeatureUpdate, KRAFT_VERSION, plan_update};
use crate::metadata::records::MetadataRecord;

impl ClusterControl {
    /// Applies UpdateFeatures; nothing is written for `validate_only`.
    pub fn update_features(
        &mut self,
        offset: u64,
        updates: &[FeatureUpdate],
        validate_only: bool,
    ) -> Result<Outcome<()>, Error> {
        let current = self.image.finalized_feature_levels();
        let levels = plan_update(&current, self.config.own_node, updates)
            .map_err(Error::FeatureUpdateRefused)?;
        let mut changes = Changes::new(&self.image);
        if !validate_only {
            // kraft.version is the quorum's kind, never a record (it can only stay as it is).
            for (name, level) in levels.into_iter().filter(|(n, _)| n != KRAFT_VERSION) {
                tracing::info!(feature = %name, level, "feature level set");
                changes.push(vec![MetadataRecord::FeatureLevel { name, level }])?;
            }
        }
        Ok(self.finish(offset, changes, ()))
    }
}
