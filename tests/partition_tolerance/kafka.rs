//! The partition-tolerance harness against Apache Kafka 4.4 as a reference
//! (`NEMESIS_AGAINST=kafka`): three combined KRaft nodes started by `compat/kafka-peer/kafka`,
//! with the harness's broker settings appended to theirs. Only the faults that need nothing of
//! Sluice's test build run there — kill -9 with a restart, and SIGSTOP pauses: the fault proxy
//! sits in front of Sluice's own listeners, the slow disk is a Sluice fail point, and the fake
//! clocks are preloaded into Sluice's processes.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct KafkaPeer {
    dir: tempfile::TempDir,
    script: PathBuf,
    pub bootstrap: String,
}

impl KafkaPeer {
    /// Three Kafka nodes with `settings` in their server.properties; ready when each answers.
    pub fn start(settings: &[(&str, &str)]) -> Self {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("compat/kafka-peer/kafka");
        let dir = tempfile::tempdir().unwrap();
        let properties: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let output = Command::new(&script)
            .arg("start")
            .arg(dir.path())
            .arg("3")
            .env("KAFKA_PEER_PROPERTIES", properties.join("\n"))
            .output()
            .expect("compat/kafka-peer/kafka (needs Java 17+ and Maven)");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "Kafka did not start: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let bootstrap = stdout.lines().last().unwrap_or_default().trim().to_string();
        Self {
            dir,
            script,
            bootstrap,
        }
    }

    fn pid(&self, i: usize) -> Option<String> {
        std::fs::read_to_string(self.dir.path().join(format!("node-{}/pid", i + 1)))
            .ok()
            .map(|pid| pid.trim().to_string())
    }

    fn signal(&self, i: usize, signal: &str) {
        let status = Command::new("kill")
            .arg(signal)
            .arg(self.pid(i).unwrap())
            .status()
            .unwrap();
        assert!(status.success(), "kill {signal} node {}", i + 1);
    }

    /// SIGKILL, and waits until the process is gone.
    pub fn kill9(&self, i: usize) {
        self.signal(i, "-KILL");
        let pid = self.pid(i).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::path::Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn restart(&self, i: usize) {
        let status = Command::new(&self.script)
            .arg("restart")
            .arg(self.dir.path())
            .arg((i + 1).to_string())
            .status()
            .unwrap();
        assert!(status.success(), "restarting Kafka node {}", i + 1);
    }

    pub fn pause(&self, i: usize) {
        self.signal(i, "-STOP");
    }

    pub fn resume(&self, i: usize) {
        self.signal(i, "-CONT");
    }
}

impl Drop for KafkaPeer {
    fn drop(&mut self) {
        // A paused node would not stop on SIGTERM.
        for pid in (0..3).filter_map(|i| self.pid(i)) {
            let _ = Command::new("kill").arg("-CONT").arg(pid).status();
        }
        let _ = Command::new(&self.script)
            .arg("stop")
            .arg(self.dir.path())
            .status();
    }
}
