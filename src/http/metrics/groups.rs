//! Groups this broker coordinates: Kafka's `GroupMetadataManager` gauges (groups by state,
//! committed offsets) and consumer lag per group, topic and partition as kafka_exporter names
//! it (`kafka_consumergroup_current_offset`, `kafka_consumergroup_lag`, and their per-topic
//! `_sum`; `kafka_consumergroup_members`), the lag measured against the high watermark of
//! partitions hosted here.

use super::{Labels, gauge, gauges, help};
use crate::broker::Broker;
use prometheus_client::encoding::DescriptorEncoder;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub(super) fn encode(
    broker: &Arc<Broker>,
    per_partition: bool,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let coordinator = broker.group_coordinator();
    let groups = coordinator.list_groups();
    let manager = |name: &str| {
        help(&format!(
            "kafka.coordinator.group:name={name},type=GroupMetadataManager"
        ))
    };
    let in_state = |state: &str| groups.iter().filter(|g| g.state == state).count() as f64;
    gauge(
        encoder,
        "kafka_coordinator_group_groupmetadatamanager_numgroups",
        &manager("NumGroups"),
        groups.len() as f64,
    )?;
    for (name, mbean, state) in [
        ("numgroupsstable", "NumGroupsStable", "Stable"),
        (
            "numgroupspreparingrebalance",
            "NumGroupsPreparingRebalance",
            "PreparingRebalance",
        ),
        (
            "numgroupscompletingrebalance",
            "NumGroupsCompletingRebalance",
            "CompletingRebalance",
        ),
        ("numgroupsempty", "NumGroupsEmpty", "Empty"),
        ("numgroupsdead", "NumGroupsDead", "Dead"),
    ] {
        gauge(
            encoder,
            &format!("kafka_coordinator_group_groupmetadatamanager_{name}"),
            &manager(mbean),
            in_state(state),
        )?;
    }
    let members: Vec<(Labels, f64)> = groups
        .iter()
        .map(|g| {
            let count = coordinator
                .consumer_describe(&g.group_id, |group, _| group.members.len())
                .or_else(|| {
                    coordinator
                        .describe_group(&g.group_id)
                        .map(|d| d.members.len())
                })
                .unwrap_or(0);
            (vec![("consumergroup", g.group_id.clone())], count as f64)
        })
        .collect();
    gauges(
        encoder,
        "kafka_consumergroup_members",
        "Amount of members in a consumer group",
        &members,
    )?;
    // High watermarks of the partitions hosted here, for the lag.
    let high_watermarks: HashMap<(String, i32), i64> = broker
        .replicas()
        .all()
        .iter()
        .map(|p| {
            let tp = p.topic_partition();
            (
                (tp.topic.to_string(), tp.partition),
                p.offsets().high_watermark,
            )
        })
        .collect();
    let mut offsets = 0usize;
    let mut current: Vec<(Labels, f64)> = Vec::new();
    let mut lag: Vec<(Labels, f64)> = Vec::new();
    let mut sums: BTreeMap<(String, String), (i64, i64)> = BTreeMap::new();
    for group in &groups {
        let Ok(committed) = coordinator.fetch_offsets(&group.group_id, None, None) else {
            continue;
        };
        for (topic, partition, offset) in committed {
            let Some(offset) = offset.map(|o| o.offset) else {
                continue;
            };
            offsets += 1;
            let Some(high_watermark) = high_watermarks.get(&(topic.clone(), partition)) else {
                continue;
            };
            let behind = (high_watermark - offset).max(0);
            let sum = sums
                .entry((group.group_id.clone(), topic.clone()))
                .or_default();
            sum.0 += offset;
            sum.1 += behind;
            let labels = vec![
                ("consumergroup", group.group_id.clone()),
                ("partition", partition.to_string()),
                ("topic", topic),
            ];
            current.push((labels.clone(), offset as f64));
            lag.push((labels, behind as f64));
        }
    }
    gauge(
        encoder,
        "kafka_coordinator_group_groupmetadatamanager_numoffsets",
        &manager("NumOffsets"),
        offsets as f64,
    )?;
    let exporter = "Current Offset of a ConsumerGroup at Topic/Partition";
    if per_partition {
        gauges(
            encoder,
            "kafka_consumergroup_current_offset",
            exporter,
            &current,
        )?;
        gauges(
            encoder,
            "kafka_consumergroup_lag",
            "Current Approximate Lag of a ConsumerGroup at Topic/Partition",
            &lag,
        )?;
    }
    let per_topic = |pick: fn(&(i64, i64)) -> i64| -> Vec<(Labels, f64)> {
        sums.iter()
            .map(|((group, topic), sum)| {
                (
                    vec![("consumergroup", group.clone()), ("topic", topic.clone())],
                    pick(sum) as f64,
                )
            })
            .collect()
    };
    gauges(
        encoder,
        "kafka_consumergroup_current_offset_sum",
        "Current Offset of a ConsumerGroup at Topic for all partitions",
        &per_topic(|s| s.0),
    )?;
    gauges(
        encoder,
        "kafka_consumergroup_lag_sum",
        "Current Approximate Lag of a ConsumerGroup at Topic for all partitions",
        &per_topic(|s| s.1),
    )
}
