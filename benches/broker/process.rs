//! The broker processes the benchmark starts (release build, free port, temporary data dir)
//! and what it reads of a broker process from /proc (CPU seconds, resident memory).

use super::*;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::MetadataExt;
use std::process::{Child, Command, Stdio};

/// A Sluice broker this benchmark started: release build, free port, temporary data dir.
pub(super) struct OwnedBroker {
    pub(super) child: Child,
    pub(super) bootstrap: String,
    /// Every listener's bound address, by listener name.
    pub(super) endpoints: Vec<(String, String)>,
    pub(super) startup: Duration,
    /// Whether the broker found a clean-shutdown marker (from its "loaded logs" line).
    pub(super) clean_start: bool,
    pub(super) overrides: Vec<String>,
    pub(super) dir: tempfile::TempDir,
    pub(super) binary: PathBuf,
}

impl OwnedBroker {
    pub(super) fn start(binary: PathBuf, overrides: &[String]) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let (child, endpoints, startup, clean_start) = Self::spawn(&binary, dir.path(), overrides);
        Self {
            child,
            bootstrap: endpoints[0].1.clone(),
            endpoints,
            startup,
            clean_start,
            overrides: overrides.to_vec(),
            dir,
            binary,
        }
    }

    pub(super) fn spawn(
        binary: &std::path::Path,
        dir: &std::path::Path,
        overrides: &[String],
    ) -> (Child, Vec<(String, String)>, Duration, bool) {
        // The last `listeners` override says how many "listening on" lines to wait for.
        let listeners = overrides
            .iter()
            .rev()
            .find_map(|o| o.strip_prefix("listeners="))
            .map_or(1, |l| l.split(',').count());
        let mut command = Command::new(binary);
        command
            .args(["--override", "listeners=PLAINTEXT://127.0.0.1:0"])
            .arg("--override")
            .arg(format!("log.dirs={}", dir.display()))
            .env("RUST_LOG", "warn,sluice::server=info,sluice::broker=info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for o in overrides {
            command.arg("--override").arg(o);
        }
        let started = Instant::now();
        let mut child = command.spawn().expect("spawn sluice");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut lines = BufReader::new(stdout).lines();
        let mut clean_start = false;
        let mut endpoints = Vec::new();
        while endpoints.len() < listeners {
            match lines.next() {
                Some(Ok(line)) => {
                    if line.contains("loaded logs") && line.contains("clean=true") {
                        clean_start = true;
                    }
                    if let Some(at) = line.find("listening on ") {
                        let rest = &line[at + "listening on ".len()..];
                        let address = rest.split_whitespace().next().unwrap_or_default();
                        let name = rest
                            .split("listener=")
                            .nth(1)
                            .and_then(|n| n.split_whitespace().next())
                            .unwrap_or_default();
                        endpoints.push((name.to_string(), address.to_string()));
                    }
                }
                _ => panic!("the broker exited before listening"),
            }
        }
        let startup = started.elapsed();
        // Keep draining the log so the broker never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        (child, endpoints, startup, clean_start)
    }

    /// Stops the broker cleanly (SIGTERM, as an operator would) and starts it again on the
    /// same data directory.
    pub(super) fn restart(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let (child, endpoints, startup, clean_start) =
            Self::spawn(&self.binary, self.dir.path(), &self.overrides);
        self.child = child;
        self.bootstrap = endpoints[0].1.clone();
        self.endpoints = endpoints;
        self.startup = startup;
        self.clean_start = clean_start;
    }
}

impl Drop for OwnedBroker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Disk space taken by the files under `dir`.
pub(super) fn disk_usage(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => disk_usage(&e.path()),
            // Allocated blocks: index files are preallocated sparse, as in Kafka.
            _ => e.metadata().map(|m| m.blocks() * 512).unwrap_or(0),
        })
        .sum()
}

/// CPU time and memory of a broker process, from /proc.
pub(super) struct ProcessProbe {
    pub(super) pid: u32,
    pub(super) ticks_per_second: f64,
}

impl ProcessProbe {
    pub(super) fn new(pid: u32) -> Self {
        let ticks_per_second = Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(100.0);
        Self {
            pid,
            ticks_per_second,
        }
    }

    /// User + system CPU seconds so far.
    pub(super) fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).unwrap_or_default();
        // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
        let after = stat.rsplit_once(')').map(|(_, rest)| rest).unwrap_or("");
        let fields: Vec<&str> = after.split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        (ticks(11) + ticks(12)) / self.ticks_per_second
    }

    pub(super) fn status_kib(&self, field: &str) -> u64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .unwrap_or_default()
            .lines()
            .find(|l| l.starts_with(field))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    pub(super) fn rss_mib(&self) -> f64 {
        self.status_kib("VmRSS:") as f64 / 1024.0
    }

    pub(super) fn peak_rss_mib(&self) -> f64 {
        self.status_kib("VmHWM:") as f64 / 1024.0
    }

    /// Resets the peak RSS so the next reading is this scenario's (Linux `clear_refs` 5).
    pub(super) fn reset_peak(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.pid), "5");
    }
}
