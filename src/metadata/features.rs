//! The feature levels this broker supports and runs at (KIP-584), as ApiVersions reports them
//! and `Admin.describeFeatures` / `kafka-features describe` show them. They are fixed by what
//! Sluice implements, so they are finalized at build time and never change (no UpdateFeatures).
//!
//! `metadata.version` 4.0-IV3 (level 25) is the Kafka release whose broker behaviour Sluice
//! follows; operators' tools (Strimzi among them) read it to tell a KRaft cluster's version.
//! `group.version` 1 is the KIP-848 consumer group protocol (ConsumerGroupHeartbeat);
//! `share.version` 1 is KIP-932 share groups, finalized only where they are offered.
//! `streams.version` 1 is KIP-1071 streams groups (StreamsGroupHeartbeat).
//! `transaction.version` is left out, which clients read as 0: level 2 (KIP-890 part 2,
//! partitions added to a transaction by Produce and an epoch bump per EndTxn) is not built,
//! and a Java client finding it finalized would rely on it.

/// One feature: the range this broker supports and the level the cluster runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Feature {
    pub name: &'static str,
    pub min_supported: i16,
    pub max_supported: i16,
    pub finalized: i16,
}

pub const SHARE_VERSION: &str = "share.version";

/// Kafka's oldest metadata.version a 4.x broker accepts (3.3-IV3).
const METADATA_VERSION_MINIMUM: i16 = 7;
/// 4.0-IV3.
const METADATA_VERSION: i16 = 25;
/// [`METADATA_VERSION`] as Kafka names it.
pub const METADATA_VERSION_NAME: &str = "4.0-IV3";

pub const FEATURES: &[Feature] = &[
    Feature {
        name: "group.version",
        min_supported: 0,
        max_supported: 1,
        finalized: 1,
    },
    // KIP-932 share groups; finalized only while they are offered (a one-broker cluster):
    // see `ShareCoordinator::offered`.
    Feature {
        name: SHARE_VERSION,
        min_supported: 0,
        max_supported: 1,
        finalized: 1,
    },
    Feature {
        name: "streams.version",
        min_supported: 0,
        max_supported: 1,
        finalized: 1,
    },
    Feature {
        name: "metadata.version",
        min_supported: METADATA_VERSION_MINIMUM,
        max_supported: METADATA_VERSION,
        finalized: METADATA_VERSION,
    },
];

/// The epoch of the finalized levels: they were set once, when the binary was built.
pub const FINALIZED_FEATURES_EPOCH: i64 = 0;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finalized_levels_lie_in_the_supported_ranges() {
        for feature in FEATURES {
            assert!(
                feature.min_supported <= feature.finalized
                    && feature.finalized <= feature.max_supported,
                "{feature:?}"
            );
        }
    }
}
