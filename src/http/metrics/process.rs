//! `process_*`: the figures the Prometheus client libraries (the JMX exporter's too) report
//! for a process, read from `/proc`; and `sluice_log_segment_files_*`, the bounded set of
//! open segment files that shares its descriptors (Kafka has none: it keeps every segment
//! open).

use super::gauge;
use prometheus_client::encoding::DescriptorEncoder;
use prometheus_client::encoding::EncodeMetric;

pub(super) fn encode(encoder: &mut DescriptorEncoder) -> Result<(), std::fmt::Error> {
    let files = crate::storage::open_files::global().stats();
    gauge(
        encoder,
        "sluice_log_segment_files_open",
        "Segment files (.log) open now (log.segment.open.files.max bounds them).",
        files.open as f64,
    )?;
    gauge(
        encoder,
        "sluice_log_segment_files_open_max",
        "log.segment.open.files.max in force.",
        files.capacity as f64,
    )?;
    for (name, help, value) in [
        (
            "sluice_log_segment_files_hits",
            "Uses of a segment file that found it open.",
            files.hits,
        ),
        (
            "sluice_log_segment_files_opens",
            "Uses of a segment file that had to open it (closed to stay within the bound).",
            files.misses,
        ),
        (
            "sluice_log_segment_files_closed",
            "Segment files closed to stay within log.segment.open.files.max.",
            files.evictions,
        ),
    ] {
        super::counters(encoder, name, help, &[(Vec::new(), value)])?;
    }
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
