//! The partitions this broker hosts: `kafka_server_replicamanager_*` (counts, under-replicated
//! and under-min-ISR partitions it leads, ISR changes), and per partition (unless
//! `http.metrics.partition.series.enable` is off) `kafka_log_log_*` (every hosted replica) and
//! `kafka_cluster_partition_*` (partitions it leads), as Kafka's `Log` and `Partition` gauges.

use super::{Labels, counters, gauge, gauges, help};
use crate::broker::Broker;
use crate::storage::manager::lock;
use prometheus_client::encoding::DescriptorEncoder;
use std::sync::Arc;

/// One hosted partition as the gauges see it.
struct Row {
    labels: Labels,
    leader_here: bool,
    replicas: usize,
    isr: usize,
    min_isr: usize,
    offline: bool,
    size: u64,
    log_end_offset: i64,
    log_start_offset: i64,
    segments: usize,
    stable_offset_lag: i64,
}

pub(super) fn encode(
    broker: &Arc<Broker>,
    per_partition: bool,
    encoder: &mut DescriptorEncoder,
) -> Result<(), std::fmt::Error> {
    let node = broker.config().node_id;
    let mut rows: Vec<Row> = broker
        .replicas()
        .all()
        .iter()
        .map(|partition| {
            let tp = partition.topic_partition();
            let leadership = partition.leadership();
            let log = lock(partition.log());
            let offsets = log.offsets();
            Row {
                labels: vec![
                    ("partition", tp.partition.to_string()),
                    ("topic", tp.topic.to_string()),
                ],
                leader_here: leadership.as_ref().is_some_and(|l| l.leader == node),
                replicas: leadership.as_ref().map_or(0, |l| l.replicas.len()),
                isr: leadership.as_ref().map_or(0, |l| l.isr.len()),
                min_isr: log.config().min_insync_replicas.max(1) as usize,
                offline: log.is_failed(),
                size: log.size_bytes(),
                log_end_offset: log.log_end_offset(),
                log_start_offset: log.log_start_offset(),
                segments: log.segment_count(),
                stable_offset_lag: offsets.high_watermark - offsets.last_stable_offset,
            }
        })
        .collect();
    rows.sort_by(|a, b| a.labels.cmp(&b.labels));
    let led = || rows.iter().filter(|r| r.leader_here);
    let count = |n: usize| n as f64;
    let replica_manager = |name: &str| format!("kafka.server:name={name},type=ReplicaManager");
    gauge(
        encoder,
        "kafka_server_replicamanager_partitioncount",
        &help(&replica_manager("PartitionCount")),
        count(rows.len()),
    )?;
    gauge(
        encoder,
        "kafka_server_replicamanager_leadercount",
        &help(&replica_manager("LeaderCount")),
        count(led().count()),
    )?;
    gauge(
        encoder,
        "kafka_server_replicamanager_underreplicatedpartitions",
        &help(&replica_manager("UnderReplicatedPartitions")),
        count(led().filter(|r| r.isr < r.replicas).count()),
    )?;
    gauge(
        encoder,
        "kafka_server_replicamanager_underminisrpartitioncount",
        &help(&replica_manager("UnderMinIsrPartitionCount")),
        count(led().filter(|r| r.isr < r.min_isr).count()),
    )?;
    gauge(
        encoder,
        "kafka_server_replicamanager_atminisrpartitioncount",
        &help(&replica_manager("AtMinIsrPartitionCount")),
        count(led().filter(|r| r.isr == r.min_isr).count()),
    )?;
    gauge(
        encoder,
        "kafka_server_replicamanager_offlinereplicacount",
        &help(&replica_manager("OfflineReplicaCount")),
        count(rows.iter().filter(|r| r.offline).count()),
    )?;
    let (shrinks, expands, failed) = broker.replicas().isr_stats.counts();
    for (name, meter, value) in [
        ("isrshrinks", "IsrShrinksPerSec", shrinks),
        ("isrexpands", "IsrExpandsPerSec", expands),
        ("failedisrupdates", "FailedIsrUpdatesPerSec", failed),
    ] {
        counters(
            encoder,
            &format!("kafka_server_replicamanager_{name}"),
            &help(&format!("{},attribute=Count", replica_manager(meter))),
            &[(Vec::new(), value)],
        )?;
    }
    if !per_partition {
        return Ok(());
    }
    let log_gauge = |f: fn(&Row) -> f64| -> Vec<(Labels, f64)> {
        rows.iter().map(|r| (r.labels.clone(), f(r))).collect()
    };
    for (name, mbean, value) in [
        ("size", "Size", log_gauge(|r| r.size as f64)),
        (
            "logendoffset",
            "LogEndOffset",
            log_gauge(|r| r.log_end_offset as f64),
        ),
        (
            "logstartoffset",
            "LogStartOffset",
            log_gauge(|r| r.log_start_offset as f64),
        ),
        (
            "numlogsegments",
            "NumLogSegments",
            log_gauge(|r| r.segments as f64),
        ),
    ] {
        gauges(
            encoder,
            &format!("kafka_log_log_{name}"),
            &help(&format!("kafka.log:name={mbean},type=Log")),
            &value,
        )?;
    }
    let led_gauge = |f: fn(&Row) -> f64| -> Vec<(Labels, f64)> {
        led().map(|r| (r.labels.clone(), f(r))).collect()
    };
    for (name, mbean, value) in [
        (
            "underreplicated",
            "UnderReplicated",
            led_gauge(|r| f64::from(u8::from(r.isr < r.replicas))),
        ),
        (
            "underminisr",
            "UnderMinIsr",
            led_gauge(|r| f64::from(u8::from(r.isr < r.min_isr))),
        ),
        (
            "atminisr",
            "AtMinIsr",
            led_gauge(|r| f64::from(u8::from(r.isr == r.min_isr))),
        ),
        (
            "insyncreplicascount",
            "InSyncReplicasCount",
            led_gauge(|r| r.isr as f64),
        ),
        (
            "replicascount",
            "ReplicasCount",
            led_gauge(|r| r.replicas as f64),
        ),
        (
            "laststableoffsetlag",
            "LastStableOffsetLag",
            led_gauge(|r| r.stable_offset_lag as f64),
        ),
    ] {
        gauges(
            encoder,
            &format!("kafka_cluster_partition_{name}"),
            &help(&format!("kafka.cluster:name={mbean},type=Partition")),
            &value,
        )?;
    }
    Ok(())
}
