//! The feature levels this broker supports (KIP-584) and the level the cluster runs each at,
//! as ApiVersions reports them and `Admin.describeFeatures` / `kafka-features describe` show
//! them. A new cluster starts every feature at its default level; UpdateFeatures
//! (`kafka-features upgrade|downgrade`) moves a level within the supported range, recorded in
//! the cluster metadata as KRaft's `FeatureLevelRecord` ([`finalized_level`] reads it back).
//!
//! `metadata.version` 4.0-IV3 (level 25) is the Kafka release whose broker behaviour Sluice
//! follows; operators' tools (Strimzi among them) read it to tell a KRaft cluster's version.
//! `group.version` 1 is the KIP-848 consumer group protocol (ConsumerGroupHeartbeat);
//! `share.version` 1 is KIP-932 share groups, finalized only where they are offered.
//! `streams.version` 1 is KIP-1071 streams groups (StreamsGroupHeartbeat).
//! `transaction.version` 2 is KIP-890 part 2: a client finding it finalized skips
//! AddPartitionsToTxn/AddOffsetsToTxn (Produce v12+ and TxnOffsetCommit v5+ add the partition)
//! and gets a new producer epoch from every EndTxn (v5+); at 0 or 1 clients keep the older
//! protocol, which the broker serves alike.

use std::collections::BTreeMap;

/// One feature: the range this broker supports and the level a new cluster starts at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    pub name: &'static str,
    pub min_supported: i16,
    pub max_supported: i16,
    pub default_level: i16,
}

pub const METADATA_VERSION: &str = "metadata.version";
pub const GROUP_VERSION: &str = "group.version";
pub const SHARE_VERSION: &str = "share.version";
pub const STREAMS_VERSION: &str = "streams.version";
pub const TRANSACTION_VERSION: &str = "transaction.version";

/// Kafka's oldest metadata.version a 4.x broker accepts (3.3-IV3).
const METADATA_VERSION_MINIMUM: i16 = 7;
/// 4.0-IV3.
const METADATA_VERSION_LEVEL: i16 = 25;
/// [`METADATA_VERSION_LEVEL`] as Kafka names it.
pub const METADATA_VERSION_NAME: &str = "4.0-IV3";

pub const FEATURES: &[Feature] = &[
    Feature {
        name: GROUP_VERSION,
        min_supported: 0,
        max_supported: 1,
        default_level: 1,
    },
    // KIP-932 share groups; finalized only while they are offered (a one-broker cluster):
    // see `ShareCoordinator::offered`.
    Feature {
        name: SHARE_VERSION,
        min_supported: 0,
        max_supported: 1,
        default_level: 1,
    },
    Feature {
        name: STREAMS_VERSION,
        min_supported: 0,
        max_supported: 1,
        default_level: 1,
    },
    Feature {
        name: TRANSACTION_VERSION,
        min_supported: 0,
        max_supported: 2,
        default_level: 2,
    },
    Feature {
        name: METADATA_VERSION,
        min_supported: METADATA_VERSION_MINIMUM,
        max_supported: METADATA_VERSION_LEVEL,
        default_level: METADATA_VERSION_LEVEL,
    },
];

pub fn feature(name: &str) -> Option<&'static Feature> {
    FEATURES.iter().find(|f| f.name == name)
}

/// The level `name` runs at: what the metadata recorded for it (`recorded`, by name), else
/// the level a new cluster starts at. A cluster whose metadata predates feature records runs
/// at the defaults, which is what it ran at then. Unknown features are at 0.
pub fn finalized_level(recorded: &BTreeMap<String, i16>, name: &str) -> i16 {
    recorded
        .get(name)
        .copied()
        .or_else(|| feature(name).map(|f| f.default_level))
        .unwrap_or(0)
}

/// The levels of every feature, in [`FEATURES`] order.
pub fn finalized_levels(recorded: &BTreeMap<String, i16>) -> Vec<(&'static str, i16)> {
    FEATURES
        .iter()
        .map(|f| (f.name, finalized_level(recorded, f.name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_levels_lie_in_the_supported_ranges() {
        for feature in FEATURES {
            assert!(
                feature.min_supported <= feature.default_level
                    && feature.default_level <= feature.max_supported,
                "{feature:?}"
            );
        }
    }

    #[test]
    fn recorded_levels_override_the_defaults() {
        let mut recorded = BTreeMap::new();
        assert_eq!(finalized_level(&recorded, TRANSACTION_VERSION), 2);
        recorded.insert(TRANSACTION_VERSION.to_string(), 0);
        assert_eq!(finalized_level(&recorded, TRANSACTION_VERSION), 0);
        assert_eq!(finalized_level(&recorded, GROUP_VERSION), 1);
        assert_eq!(finalized_level(&recorded, "no.such.feature"), 0);
    }
}
