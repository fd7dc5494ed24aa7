//! Process resource limits. At startup the soft open-file limit is raised to the hard limit
//! (as the JVM and the Go runtime do) and logged. Segment files share a bounded part of it
//! (`storage::open_files`, half by default), so any number of partitions loads and is served;
//! running out anyway is not fatal: connections and requests that cannot get a descriptor
//! are refused and retried, and a segment file that cannot be opened closes others first.

/// Raises the soft `RLIMIT_NOFILE` to the hard one; returns the limit now in force.
pub fn raise_open_file_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let raised = match (limit.current, limit.maximum) {
        (Some(current), Some(maximum)) if maximum > current => {
            let wanted = rustix::process::Rlimit {
                current: Some(maximum),
                maximum: Some(maximum),
            };
            match setrlimit(Resource::Nofile, wanted) {
                Ok(()) => Some(maximum),
                Err(e) => {
                    tracing::warn!(error = %e, current, maximum, "cannot raise the open-file limit");
                    Some(current)
                }
            }
        }
        (Some(current), _) => Some(current),
        // Unlimited.
        (None, _) => None,
    };
    match raised {
        Some(limit) => tracing::info!(open_file_limit = limit, "open-file limit"),
        None => tracing::info!("open-file limit: unlimited"),
    }
    raised
}

/// Logs how the loaded `segments` stand against the descriptors segment files may use
/// (`open_segment_files_max`, `log.segment.open.files.max`) and the maps index files may use
/// (`index_mapped_files_max`, `log.index.mapped.files.max`): beyond them, files are closed or
/// unmapped and opened or mapped again on use.
pub fn report_descriptor_budget(
    segments: usize,
    open_segment_files_max: usize,
    index_mapped_files_max: usize,
) {
    tracing::info!(
        segments,
        open_segment_files_max,
        index_mapped_files_max,
        "segment files are opened and index files mapped on use, at most this many at once"
    );
}
