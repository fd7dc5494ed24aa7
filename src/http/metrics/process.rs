//! `process_*`: the figures the Prometheus client libraries (the JMX exporter's too) report
//! for a process, read from `/proc`; `sluice_log_segment_files_*`, the bounded set of open
//! segment files that shares its descriptors, and `sluice_log_index_maps_*`, the bounded set
//! of mapped index files that shares its maps (Kafka has neither: it keeps every segment
//! open and every index it has used mapped).

use super::gauge;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::encoding::EncodeMetric;

pub(super) fn encode(encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
    bounded_set(
        encoder,
        "sluice_log_segment_files",
        "Segment files (.log)",
        "log.segment.open.files.max",
        ["open", "closed", "opened again"],
        crate::storage::open_files::global().stats(),
    )?;
    bounded_set(
        encoder,
        "sluice_log_index_maps",
        "Index files (.index, .timeindex)",
        "log.index.mapped.files.max",
        ["mapped", "unmapped", "mapped again"],
        crate::storage::index::global().stats(),
    )?;
    let Ok(process) = procfs::process::Process::myself() else {
        return Ok(());
    };
    let ticks = procfs::ticks_per_second() as f64;
    let page_size = procfs::page_size() as f64;
    if let Ok(stat) = process.stat() {
        let cpu_seconds = (stat.utime + stat.stime) as f64 / ticks;
        // Fractional seconds, as the client libraries report them.
        let mut family = encoder.encode_descriptor(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            None,
            prometheus_client::metrics::MetricType::Counter,
        )?;
        prometheus_client::metrics::counter::ConstCounter::new(cpu_seconds)
            .encode(family.encode_family(&Vec::<(&str, String)>::new())?)?;
        gauge(
            encoder,
            "process_resident_memory_bytes",
            "Resident memory size in bytes.",
            stat.rss as f64 * page_size,
        )?;
        gauge(
            encoder,
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes.",
            stat.vsize as f64,
        )?;
        if let Ok(boot) = procfs::boot_time_secs() {
            gauge(
                encoder,
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                boot as f64 + stat.starttime as f64 / ticks,
            )?;
        }
    }
    if let Ok(open) = process.fd_count() {
        gauge(
            encoder,
            "process_open_fds",
            "Number of open file descriptors.",
            open as f64,
        )?;
    }
    if let Ok(limits) = process.limits()
        && let procfs::process::LimitValue::Value(max) = limits.max_open_files.soft_limit
    {
        gauge(
            encoder,
            "process_max_fds",
            "Maximum number of open file descriptors.",
            max as f64,
        )?;
    }
    Ok(())
}

/// The metrics of a bounded set of per-segment resources (`storage::clock`): what it holds,
/// its bound, and how its uses went. `verbs`: held, released, taken again.
fn bounded_set(
    encoder: &mut DescriptorEncoder,
    prefix: &str,
    what: &str,
    config: &str,
    [held, released, taken_again]: [&str; 3],
    stats: crate::storage::clock::ClockStats,
) -> Result<(), std::fmt::Error> {
    let name = |suffix: &str| format!("{prefix}_{suffix}");
    gauge(
        encoder,
        &name("open"),
        &format!("{what} {held} now ({config} bounds them)."),
        stats.open as f64,
    )?;
    gauge(
        encoder,
        &name("open_max"),
        &format!("{config} in force."),
        stats.capacity as f64,
    )?;
    for (suffix, help, value) in [
        (
            "hits",
            format!("Uses of {what} that found the file {held}."),
            stats.hits,
        ),
        (
            "opens",
            format!("Uses of {what} that found the file {released} and had it {taken_again}.",),
            stats.misses,
        ),
        (
            "closed",
            format!("{what} {released} to stay within {config}."),
            stats.evictions,
        ),
    ] {
        super::counters(encoder, &name(suffix), &help, &[(Vec::new(), value)])?;
    }
    Ok(())
}
