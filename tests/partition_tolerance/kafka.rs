//! The partition-tolerance harness against Apache Kafka 4.4 as a reference
//! (`NEMESIS_AGAINST=kafka`): three combined KRaft nodes started by `compat/kafka-peer/kafka`,
//! with the harness's broker settings appended to theirs, every connection to a node through
//! the fault proxy as Sluice's (the nodes advertise the proxies and name them as the quorum's
//! voters). The faults: kill -9 with a restart, SIGSTOP pauses and the network partitions;
//! not the slow disk (a Sluice fail point) nor the clock jumps (libfaketime in Sluice's
//! processes).

use crate::common::proxy::Network;
use crate::common::{free_port, raw_call};
use kafka_protocol::messages::{ApiKey, DescribeQuorumRequest, DescribeQuorumResponse};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

pub struct KafkaPeer {
    dir: tempfile::TempDir,
    script: PathBuf,
    pub bootstrap: String,
    network: Network,
}

impl KafkaPeer {
    /// Three Kafka nodes with `settings` in their server.properties; ready when each answers.
    pub fn start(settings: &[(&str, &str)]) -> Self {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("compat/kafka-peer/kafka");
        let dir = tempfile::tempdir().unwrap();
        let properties: Vec<String> = settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
        // Each node's client and controller listeners, and the proxies in front of them.
        let network = Network::new();
        let (ports, routes): (Vec<String>, Vec<String>) = (1..=3u32)
            .map(|node| {
                let (client, controller) = (free_port(), free_port());
                (
                    format!("{client}:{controller}"),
                    format!(
                        "{}:{}",
                        network.proxy(node, client),
                        network.proxy(node, controller)
                    ),
                )
            })
            .unzip();
        let output = Command::new(&script)
            .arg("start")
            .arg(dir.path())
            .arg("3")
            .env("KAFKA_PEER_PROPERTIES", properties.join("\n"))
            .env("KAFKA_PEER_PORTS", ports.join(","))
            .env("KAFKA_PEER_ROUTES", routes.join(","))
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
            network,
        }
    }

    /// The proxies between the nodes (and in front of them for clients).
    pub fn network(&self) -> &Network {
        &self.network
    }

    /// The quorum's leader (index), as DescribeQuorum answers through the first broker that
    /// answers.
    pub fn active_controller(&self) -> Option<usize> {
        use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
        let request = DescribeQuorumRequest::default().with_topics(vec![
            TopicData::default()
                .with_topic_name(kafka_protocol::messages::TopicName(
                    kafka_protocol::protocol::StrBytes::from_static_str("__cluster_metadata"),
                ))
                .with_partitions(vec![PartitionData::default()]),
        ]);
        self.bootstrap.split(',').find_map(|address| {
            let response = std::panic::catch_unwind(|| {
                raw_call::<_, DescribeQuorumResponse>(address, ApiKey::DescribeQuorum, 0, &request)
            })
            .ok()?;
            let leader = response.topics.first()?.partitions.first()?.leader_id.0;
            (leader > 0).then(|| leader as usize - 1)
        })
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
