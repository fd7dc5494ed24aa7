//! The feature levels this broker supports (KIP-584) and the level the cluster runs each at,
//! as ApiVersions reports them and `Admin.describeFeatures` / `kafka-features describe` show
//! them. A new cluster starts every feature at its default level; UpdateFeatures
//! (`kafka-features upgrade|downgrade`) moves a level within the supported range, recorded in
//! the cluster metadata as KRaft's `FeatureLevelRecord` ([`finalized_level`] reads it back).
//!
//! `metadata.version` 4.0-IV3 (level 25) is the Kafka release whose broker behaviour Sluice
//! follows; operators' tools (Strimzi among them) read it to tell a KRaft cluster's version.
//! It may move down only as far as Kafka allows a safe downgrade ([`plan_update`]: no
//! version in between changed the metadata format, so 4.0-IV2 and 4.0-IV1) and back up.
//! `group.version` 1 is the KIP-848 consumer group protocol (ConsumerGroupHeartbeat);
//! `share.version` 1 is KIP-932 share groups.
//! `streams.version` 1 is KIP-1071 streams groups (StreamsGroupHeartbeat).
//! `kraft.version` is 1 for a dynamic controller quorum (KIP-853) and 0 for a static one
//! (`controller.quorum.voters`); it comes from the quorum, not from a `FeatureLevelRecord`
//! ([`MetadataImage::finalized_feature_levels`](super::image::MetadataImage::finalized_feature_levels)),
//! and UpdateFeatures cannot change it here: Kafka 4.4 can turn a static quorum into a
//! dynamic one, which this quorum cannot.
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
pub const KRAFT_VERSION: &str = "kraft.version";
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

/// Kafka's metadata versions from [`METADATA_VERSION_MINIMUM`] to [`METADATA_VERSION_LEVEL`]:
/// level, name, and whether the version changed the metadata format (Kafka's
/// `didMetadataChange`; a downgrade across such a version may lose metadata, so is refused).
const METADATA_VERSIONS: &[(i16, &str, bool)] = &[
    (7, "3.3-IV3", true),
    (8, "3.4-IV0", true),
    (9, "3.5-IV0", false),
    (10, "3.5-IV1", false),
    (11, "3.5-IV2", true),
    (12, "3.6-IV0", false),
    (13, "3.6-IV1", true),
    (14, "3.6-IV2", true),
    (15, "3.7-IV0", true),
    (16, "3.7-IV1", false),
    (17, "3.7-IV2", true),
    (18, "3.7-IV3", false),
    (19, "3.7-IV4", false),
    (20, "3.8-IV0", false),
    (21, "3.9-IV0", false),
    (22, "4.0-IV0", false),
    (23, "4.0-IV1", true),
    (24, "4.0-IV2", false),
    (25, "4.0-IV3", false),
];

/// A metadata.version level as Kafka names it (`4.0-IV3`); `None` for a level it never had.
pub fn metadata_version_name(level: i16) -> Option<&'static str> {
    METADATA_VERSIONS
        .iter()
        .find(|(l, _, _)| *l == level)
        .map(|(_, name, _)| *name)
}

/// How UpdateFeatures may move a level (Kafka's `FeatureUpdate.UpgradeType`; v0's
/// `AllowDowngrade` is a safe downgrade).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpgradeType {
    Upgrade,
    SafeDowngrade,
    UnsafeDowngrade,
    /// A code Kafka does not define; refused.
    Unknown,
}

impl UpgradeType {
    pub fn from_code(code: i8) -> Self {
        match code {
            1 => Self::Upgrade,
            2 => Self::SafeDowngrade,
            3 => Self::UnsafeDowngrade,
            _ => Self::Unknown,
        }
    }

    pub fn code(self) -> i8 {
        match self {
            Self::Upgrade => 1,
            Self::SafeDowngrade => 2,
            Self::UnsafeDowngrade => 3,
            Self::Unknown => 0,
        }
    }
}

/// One feature's requested level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeatureUpdate {
    pub name: String,
    pub level: i16,
    pub upgrade: UpgradeType,
}

/// The levels an UpdateFeatures sets, checked as Kafka's `FeatureControlManager` checks them,
/// against the levels the cluster runs at (`recorded`) and what controller `node` supports:
/// all of them, in name order, or the first refusal with Kafka's message (the whole request
/// fails then, as on Kafka). Every Sluice node runs the same feature ranges, so this
/// controller's support stands for the cluster's.
pub fn plan_update(
    recorded: &BTreeMap<String, i16>,
    node: i32,
    updates: &[FeatureUpdate],
) -> Result<Vec<(String, i16)>, String> {
    // A feature named twice keeps its last update, as Kafka's map of updates does.
    let updates: BTreeMap<&str, &FeatureUpdate> =
        updates.iter().map(|u| (u.name.as_str(), u)).collect();
    let mut levels = Vec::with_capacity(updates.len());
    for (name, update) in updates {
        check_update(recorded, node, update).map_err(|reason| {
            format!(
                "The update failed for all features since the following feature had an error: {reason}"
            )
        })?;
        levels.push((name.to_string(), update.level));
    }
    Ok(levels)
}

fn check_update(
    recorded: &BTreeMap<String, i16>,
    node: i32,
    update: &FeatureUpdate,
) -> Result<(), String> {
    let FeatureUpdate {
        name,
        level,
        upgrade,
    } = update;
    let invalid =
        |reason: &str| format!("Invalid update version {level} for feature {name}. {reason}");
    if *upgrade == UpgradeType::Unknown {
        return Err(invalid(
            "The controller does not support the given upgrade type.",
        ));
    }
    let current = finalized_level(recorded, name);
    if *level < 0 {
        return Err(invalid("A feature version cannot be less than 0."));
    }
    // A feature this node does not know is supported at 0 only (Kafka's DISABLED range).
    let (min, max) = feature(name).map_or((0, 0), |f| (f.min_supported, f.max_supported));
    if !(min..=max).contains(level) {
        let reason = if max == 0 {
            format!("Local controller {node} does not support this feature.")
        } else if min == max {
            format!("Local controller {node} only supports versions {min}")
        } else {
            format!("Local controller {node} only supports versions {min}-{max}")
        };
        return Err(invalid(&reason));
    }
    if *level < current && *upgrade == UpgradeType::Upgrade {
        return Err(invalid(
            "Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.",
        ));
    }
    if *level > current && *upgrade != UpgradeType::Upgrade {
        return Err(invalid("Can't downgrade to a newer version."));
    }
    if name == METADATA_VERSION {
        if *level < current && metadata_changed_between(*level, current) {
            let reason = if *upgrade == UpgradeType::UnsafeDowngrade {
                "Unsafe metadata downgrade is not supported in this version."
            } else {
                "Refusing to perform the requested downgrade because it might delete metadata information."
            };
            return Err(format!(
                "Unsupported metadata.version downgrade from {current} to {level}. {reason}"
            ));
        }
        return Ok(());
    }
    if feature(name).is_none() {
        return Err(invalid(&format!("Feature {name} not found.")));
    }
    if name == KRAFT_VERSION && *level != current {
        return Err(invalid(&format!(
            "Local controller {node} cannot change the kind of the controller quorum: a static quorum (controller.quorum.voters) stays static, a dynamic one dynamic."
        )));
    }
    Ok(())
}

/// Whether a metadata.version in `(low, high]` changed the metadata format (Kafka's
/// `checkIfMetadataChanged`).
fn metadata_changed_between(low: i16, high: i16) -> bool {
    METADATA_VERSIONS
        .iter()
        .filter(|(level, _, _)| *level > low && *level <= high)
        .any(|(_, _, changed)| *changed)
}

pub const FEATURES: &[Feature] = &[
    Feature {
        name: GROUP_VERSION,
        min_supported: 0,
        max_supported: 1,
        default_level: 1,
    },
    // KIP-932 share groups.
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
    // KIP-853: 1 is a dynamic quorum. Never recorded; see `MetadataImage::finalized_feature_levels`.
    Feature {
        name: KRAFT_VERSION,
        min_supported: 0,
        max_supported: 1,
        default_level: 0,
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
    fn kraft_version_stays_as_the_quorum_runs_it() {
        let static_quorum = BTreeMap::from([(KRAFT_VERSION.to_string(), 0)]);
        let refused = plan_update(
            &static_quorum,
            1,
            &[update(KRAFT_VERSION, 1, UpgradeType::Upgrade)],
        )
        .unwrap_err();
        assert!(refused.contains("cannot change the kind"), "{refused}");
        let dynamic_quorum = BTreeMap::from([(KRAFT_VERSION.to_string(), 1)]);
        assert!(
            plan_update(
                &dynamic_quorum,
                1,
                &[update(KRAFT_VERSION, 0, UpgradeType::SafeDowngrade)]
            )
            .is_err()
        );
        assert_eq!(
            plan_update(
                &dynamic_quorum,
                1,
                &[update(KRAFT_VERSION, 1, UpgradeType::Upgrade)]
            ),
            Ok(vec![(KRAFT_VERSION.to_string(), 1)])
        );
    }

    fn update(name: &str, level: i16, upgrade: UpgradeType) -> FeatureUpdate {
        FeatureUpdate {
            name: name.into(),
            level,
            upgrade,
        }
    }

    const PREFIX: &str =
        "The update failed for all features since the following feature had an error: ";

    /// Each refusal as Apache Kafka 4.4's controller words it (run with `kafka-features`
    /// against `compat/kafka-peer`).
    #[test]
    fn updates_are_checked_as_kafka_checks_them() {
        use UpgradeType::*;
        let recorded = BTreeMap::new();
        let refused = |updates: &[FeatureUpdate]| {
            plan_update(&recorded, 1, updates)
                .unwrap_err()
                .strip_prefix(PREFIX)
                .unwrap()
                .to_string()
        };
        assert_eq!(
            refused(&[update(TRANSACTION_VERSION, 1, Upgrade)]),
            "Invalid update version 1 for feature transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."
        );
        assert_eq!(
            refused(&[update(TRANSACTION_VERSION, 3, Upgrade)]),
            "Invalid update version 3 for feature transaction.version. Local controller 1 only supports versions 0-2"
        );
        assert_eq!(
            refused(&[update("foo.version", 1, Upgrade)]),
            "Invalid update version 1 for feature foo.version. Local controller 1 does not support this feature."
        );
        assert_eq!(
            refused(&[update("foo.version", 0, SafeDowngrade)]),
            "Invalid update version 0 for feature foo.version. Feature foo.version not found."
        );
        assert_eq!(
            refused(&[
                update(GROUP_VERSION, 1, Upgrade),
                update(METADATA_VERSION, 26, Upgrade)
            ]),
            "Invalid update version 26 for feature metadata.version. Local controller 1 only supports versions 7-25"
        );
        assert_eq!(
            refused(&[update(METADATA_VERSION, 22, SafeDowngrade)]),
            "Unsupported metadata.version downgrade from 25 to 22. Refusing to perform the requested downgrade because it might delete metadata information."
        );
        assert_eq!(
            refused(&[update(METADATA_VERSION, 7, UnsafeDowngrade)]),
            "Unsupported metadata.version downgrade from 25 to 7. Unsafe metadata downgrade is not supported in this version."
        );
        assert_eq!(
            refused(&[
                update(SHARE_VERSION, 1, SafeDowngrade),
                update(GROUP_VERSION, 2, SafeDowngrade)
            ]),
            "Invalid update version 2 for feature group.version. Local controller 1 only supports versions 0-1"
        );
        assert_eq!(
            refused(&[update(GROUP_VERSION, -1, SafeDowngrade)]),
            "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."
        );
        assert_eq!(
            refused(&[update(GROUP_VERSION, 1, Unknown)]),
            "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."
        );
    }

    #[test]
    fn allowed_updates_set_every_named_level() {
        use UpgradeType::*;
        let mut recorded = BTreeMap::new();
        // A level set again, a disable, and metadata.version down across versions that did
        // not change the format (4.0-IV3 to 4.0-IV1).
        let levels = plan_update(
            &recorded,
            1,
            &[
                update(TRANSACTION_VERSION, 2, Upgrade),
                update(GROUP_VERSION, 0, SafeDowngrade),
                update(METADATA_VERSION, 23, SafeDowngrade),
            ],
        )
        .unwrap();
        assert_eq!(
            levels,
            vec![
                (GROUP_VERSION.to_string(), 0),
                (METADATA_VERSION.to_string(), 23),
                (TRANSACTION_VERSION.to_string(), 2),
            ]
        );
        recorded.extend(levels);
        assert_eq!(
            plan_update(&recorded, 1, &[update(GROUP_VERSION, 1, Upgrade)]).unwrap(),
            vec![(GROUP_VERSION.to_string(), 1)]
        );
        assert!(
            plan_update(&recorded, 1, &[update(GROUP_VERSION, 1, SafeDowngrade)])
                .unwrap_err()
                .ends_with("Can't downgrade to a newer version.")
        );
        assert_eq!(metadata_version_name(23), Some("4.0-IV1"));
        assert_eq!(
            metadata_version_name(METADATA_VERSION_LEVEL),
            Some(METADATA_VERSION_NAME)
        );
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
