//! Process resource limits. At startup the soft open-file limit is raised to the hard limit
//! (as the JVM and the Go runtime do) and logged; once the logs are loaded, the descriptors
//! they hold (one per segment: index files are closed once mapped) are compared with it, and
//! a warning names the shortfall. Running out later is not fatal either way: connections
//! and requests that cannot get a descriptor are refused and retried, logs stay online.

/// Descriptors kept free for connections, the metadata log and files opened briefly.
const HEADROOM: u64 = 1024;

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

/// Warns when `segments` (one descriptor each) and the headroom exceed the open-file limit.
pub fn check_descriptor_budget(segments: usize) {
    use rustix::process::{Resource, getrlimit};
    let Some(limit) = getrlimit(Resource::Nofile).current else {
        return;
    };
    let needed = segments as u64 + HEADROOM;
    if needed > limit {
        tracing::warn!(
            segments,
            open_file_limit = limit,
            needed,
            "the hosted log segments need more file descriptors than the open-file limit allows; raise it (ulimit -n) or fewer segments will be servable at once"
        );
    }
}
