//! The image as the tools that start "a Kafka image" use it. No container engine runs on the
//! build machines, so `docker/test/container` runs the image's files (laid out by
//! `docker/install-image`, as the Dockerfile does) in new mount, network, UTS and PID
//! namespaces: the start scripts run exactly as testcontainers (Java, Go, Python, Node) writes
//! and calls them, with the environment each module sets, and must print the line its wait
//! strategy matches; then librdkafka (kcat) and the Java client (Kafka's console tools)
//! produce and consume through every advertised listener, from inside the container as a
//! client on its network would. Needs root (namespaces), as CI has.
//!
//! Also: topics created at startup (`--create-topic`, `KAFKA_CREATE_TOPICS`) as plain
//! processes.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Broker, broker_binary, wait_until};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The container's environment before the module's: what the image's ENV sets.
const IMAGE_ENV: &[(&str, &str)] = &[
    (
        "PATH",
        "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/bitnami/kafka/bin",
    ),
    ("HOME", "/tmp"),
];

/// The image's user (the Dockerfile's `USER`).
const IMAGE_USER: &str = "1000:1000";

/// One running container of the image.
struct Container {
    child: Child,
    state: tempfile::TempDir,
    log: Arc<Mutex<Vec<String>>>,
}

impl Container {
    /// Starts `command` in a fresh container named `hostname`, with the module's `env`.
    fn start(hostname: &str, env: &[(&str, &str)], command: &[&str]) -> Self {
        let state = tempfile::tempdir().unwrap();
        let installed = Command::new(repo().join("docker/install-image"))
            .arg(state.path().join("image"))
            .arg(broker_binary())
            .arg("1000")
            .status()
            .unwrap();
        assert!(installed.success(), "docker/install-image failed");
        let mut child = Command::new(repo().join("docker/test/container"))
            .args(["run"])
            .arg(state.path())
            .args([hostname, IMAGE_USER, "--"])
            .args(command)
            .env_clear()
            .envs(IMAGE_ENV.iter().copied())
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        for stream in [
            child
                .stdout
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
            child
                .stderr
                .take()
                .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let log = log.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    log.lock().unwrap().push(line);
                }
            });
        }
        let container = Self { child, state, log };
        assert!(
            wait_until(Duration::from_secs(30), || container
                .state
                .path()
                .join("pid")
                .exists()),
            "the container did not start: {}",
            container.log_text()
        );
        container
    }

    fn state(&self) -> &Path {
        self.state.path()
    }

    fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Waits for a log line containing every one of `parts`, as a wait strategy's regular
    /// expression `.*A.*B.*` matches.
    fn wait_for_log(&self, parts: &[&str]) {
        let found = wait_until(Duration::from_secs(60), || {
            self.log.lock().unwrap().iter().any(|line| {
                let mut rest = line.as_str();
                parts.iter().all(|part| match rest.find(part) {
                    Some(at) => {
                        rest = &rest[at + part.len()..];
                        true
                    }
                    None => false,
                })
            })
        });
        assert!(
            found,
            "no line matching {parts:?}; log:\n{}",
            self.log_text()
        );
    }

    /// Writes a file into the container, mode 0777 (testcontainers' copyFileToContainer).
    fn copy_in(&self, path: &str, content: &str) {
        self.copy_in_bytes(path, content.as_bytes());
    }

    fn copy_in_bytes(&self, path: &str, content: &[u8]) {
        let mut cp = Command::new(repo().join("docker/test/container"))
            .arg("cp")
            .arg(self.state())
            .arg(path)
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        cp.stdin.take().unwrap().write_all(content).unwrap();
        assert!(cp.wait().unwrap().success(), "cannot copy {path} in");
    }

    /// Runs a command in the container (`docker exec`), with `input` on its standard input.
    fn exec(&self, args: &[&str], input: &str) -> Output {
        let mut command = Command::new(repo().join("docker/test/container"));
        command
            .arg("exec")
            .arg(self.state())
            .arg("--")
            .args(args)
            .env(
                "HOME",
                std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    }

    /// Produces five messages through `bootstrap` with librdkafka, then reads them back.
    fn round_trip_librdkafka(&self, bootstrap: &str, topic: &str) {
        let messages: Vec<String> = (0..5).map(|i| format!("{topic}-librdkafka-{i}")).collect();
        let produced = self.exec(
            &["kcat", "-P", "-b", bootstrap, "-t", topic],
            &(messages.join("\n") + "\n"),
        );
        assert!(
            produced.status.success(),
            "kcat -P via {bootstrap}: {produced:?}\n{}",
            self.log_text()
        );
        let consumed = self.exec(
            &[
                "kcat",
                "-C",
                "-b",
                bootstrap,
                "-t",
                topic,
                "-o",
                "beginning",
                "-e",
                "-q",
            ],
            "",
        );
        let text = String::from_utf8_lossy(&consumed.stdout);
        for message in &messages {
            assert!(
                text.contains(message),
                "{message} not read back via {bootstrap}: {consumed:?}"
            );
        }
    }

    /// The same with the Java client: Kafka's console producer and consumer.
    fn round_trip_java(&self, bootstrap: &str, topic: &str) {
        let tool = repo().join("compat/kafka-peer/kafka");
        let tool = tool.to_str().unwrap();
        let topic = &format!("{topic}-java");
        let messages: Vec<String> = (0..5).map(|i| format!("{topic}-java-{i}")).collect();
        let produced = self.exec(
            &[
                tool,
                "tool",
                "kafka-console-producer",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                topic,
            ],
            &(messages.join("\n") + "\n"),
        );
        assert!(
            produced.status.success(),
            "console producer via {bootstrap}: {produced:?}"
        );
        let consumed = self.exec(
            &[
                tool,
                "tool",
                "kafka-console-consumer",
                "--bootstrap-server",
                bootstrap,
                "--topic",
                topic,
                "--from-beginning",
                "--max-messages",
                &messages.len().to_string(),
                "--timeout-ms",
                "30000",
            ],
            "",
        );
        let text = String::from_utf8_lossy(&consumed.stdout);
        for message in &messages {
            assert!(
                text.contains(message),
                "{message} not read back via {bootstrap}: {consumed:?}"
            );
        }
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        // The container's first process ends with unshare (--kill-child), and every other
        // process of its PID namespace with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Kafka's jars for the Java client (compat/kafka-peer; Maven Central), fetched once.
fn fetch_java_client() {
    let fetched = Command::new(repo().join("compat/kafka-peer/kafka"))
        .arg("fetch")
        .status()
        .unwrap();
    assert!(
        fetched.success(),
        "cannot fetch Kafka's jars for the Java client"
    );
}

/// testcontainers-java's `org.testcontainers.kafka.KafkaContainer` (KafkaHelper.envVars,
/// COMMAND, and the starter script containerIsStarting writes) with apache/kafka's
/// /etc/kafka/docker/run.
#[test]
fn testcontainers_java_starts_the_apache_kafka_entry_point() {
    fetch_java_client();
    let env = [
        ("CLUSTER_ID", "4L6g3nShT-eMCtK--X86sw"),
        (
            "KAFKA_LISTENERS",
            "PLAINTEXT://:9092,BROKER://:9093,CONTROLLER://:9094",
        ),
        (
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
            "BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        ),
        ("KAFKA_INTER_BROKER_LISTENER_NAME", "BROKER"),
        ("KAFKA_PROCESS_ROLES", "broker,controller"),
        ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER"),
        ("KAFKA_NODE_ID", "1"),
        ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1"),
        ("KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS", "1"),
        ("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1"),
        ("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1"),
        ("KAFKA_LOG_FLUSH_INTERVAL_MESSAGES", "9223372036854775807"),
        ("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0"),
    ];
    let container = Container::start(
        "tc-java",
        &env,
        &[
            "sh",
            "-c",
            "while [ ! -f /tmp/testcontainers_start.sh ]; do sleep 0.1; done; /tmp/testcontainers_start.sh",
        ],
    );
    // The host's address for the mapped port 9092 is 127.0.0.1:9092 here (no port mapping).
    container.copy_in(
        "/tmp/testcontainers_start.sh",
        "#!/bin/bash\nexport KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://127.0.0.1:9092,BROKER://tc-java:9093\n/etc/kafka/docker/run \n",
    );
    container.wait_for_log(&["Transitioning from RECOVERY to RUNNING"]);
    // apache/kafka's data path; the cluster id the environment gave.
    let meta = container.exec(&["cat", "/var/lib/kafka/data/meta.properties"], "");
    assert!(
        String::from_utf8_lossy(&meta.stdout).contains("cluster.id=4L6g3nShT-eMCtK--X86sw"),
        "{meta:?}"
    );
    for (bootstrap, topic) in [
        ("127.0.0.1:9092", "via-plaintext"),
        ("tc-java:9093", "via-broker"),
    ] {
        container.round_trip_librdkafka(bootstrap, topic);
        container.round_trip_java(bootstrap, topic);
    }
}

/// testcontainers-go's `modules/kafka` (confluent-local): its environment, `sh -c` waiting for
/// the starter script, which edits /etc/confluent/docker/configure (sed, an appended
/// `kafka-storage format` with `kafka-storage random-uuid`), blanks ensure, and runs configure
/// and launch.
#[test]
fn testcontainers_go_starts_the_confluent_scripts() {
    let env = [
        (
            "KAFKA_LISTENERS",
            "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092,CONTROLLER://0.0.0.0:9094",
        ),
        (
            "KAFKA_REST_BOOTSTRAP_SERVERS",
            "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092,CONTROLLER://0.0.0.0:9094",
        ),
        (
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
            "BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        ),
        ("KAFKA_INTER_BROKER_LISTENER_NAME", "BROKER"),
        ("KAFKA_BROKER_ID", "1"),
        ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1"),
        ("KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS", "1"),
        ("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "1"),
        ("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1"),
        ("KAFKA_LOG_FLUSH_INTERVAL_MESSAGES", "9223372036854775807"),
        ("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0"),
        ("KAFKA_NODE_ID", "1"),
        ("KAFKA_PROCESS_ROLES", "broker,controller"),
        ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER"),
        ("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:9094"),
    ];
    let script = "/usr/sbin/testcontainers_start.sh";
    let container = Container::start(
        "tc-go",
        &env,
        &[
            "sh",
            "-c",
            &format!("while [ ! -f {script} ]; do sleep 0.1; done; bash {script}"),
        ],
    );
    container.copy_in(
        script,
        "#!/bin/bash\nsource /etc/confluent/docker/bash-config\nexport KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://127.0.0.1:9093,BROKER://tc-go:9092\necho Starting Kafka KRaft mode\nsed -i '/KAFKA_ZOOKEEPER_CONNECT/d' /etc/confluent/docker/configure\necho 'kafka-storage format --ignore-formatted -t \"$(kafka-storage random-uuid)\" -c /etc/kafka/kafka.properties' >> /etc/confluent/docker/configure\necho '' > /etc/confluent/docker/ensure\n/etc/confluent/docker/configure\n/etc/confluent/docker/launch",
    );
    container.wait_for_log(&["Transitioning from RECOVERY to RUNNING"]);
    // cp-kafka's PATH name.
    let listed = container.exec(
        &["kafka-topics", "--bootstrap-server", "tc-go:9092", "--list"],
        "",
    );
    assert!(listed.status.success(), "{listed:?}");
    // The console tools as compose health checks and init containers run them.
    let produced = container.exec(
        &[
            "kafka-console-producer",
            "--bootstrap-server",
            "tc-go:9092",
            "--topic",
            "console",
            "--reader-property",
            "parse.key=true",
            "--reader-property",
            "key.separator=:",
        ],
        "k1:one\nk2:two\n",
    );
    assert!(produced.status.success(), "{produced:?}");
    let consumed = container.exec(
        &[
            "kafka-console-consumer",
            "--bootstrap-server",
            "tc-go:9092",
            "--topic",
            "console",
            "--from-beginning",
            "--max-messages",
            "2",
            "--group",
            "health",
            "--formatter-property",
            "print.key=true",
        ],
        "",
    );
    assert!(consumed.status.success(), "{consumed:?}");
    let mut lines: Vec<String> = String::from_utf8_lossy(&consumed.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    lines.sort();
    assert_eq!(lines, ["k1\tone", "k2\ttwo"], "{consumed:?}");
    let described = container.exec(
        &[
            "kafka-consumer-groups",
            "--bootstrap-server",
            "tc-go:9092",
            "--describe",
            "--group",
            "health",
        ],
        "",
    );
    let text = String::from_utf8_lossy(&described.stdout);
    assert!(
        text.contains("CURRENT-OFFSET") && text.contains("health"),
        "{described:?}"
    );
    assert!(
        container.log_text().contains("rest.bootstrap.servers"),
        "a variable for another component is named, not refused:\n{}",
        container.log_text()
    );
    for (bootstrap, topic) in [
        ("127.0.0.1:9093", "via-plaintext"),
        ("tc-go:9092", "via-broker"),
    ] {
        container.round_trip_librdkafka(bootstrap, topic);
    }
}

/// testcontainers-python's `KafkaContainer` (cp-kafka): the script it writes is run by `sh`,
/// not bash; KRaft with `with_kraft()`, and its default, "with ZooKeeper".
#[test]
fn testcontainers_python_starts_the_confluent_scripts() {
    let common_env = [
        (
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
            "BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        ),
        ("KAFKA_INTER_BROKER_LISTENER_NAME", "BROKER"),
        ("KAFKA_BROKER_ID", "1"),
        ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1"),
        ("KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS", "1"),
        ("KAFKA_LOG_FLUSH_INTERVAL_MESSAGES", "10000000"),
        ("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0"),
    ];
    let command = [
        "sh",
        "-c",
        "while [ ! -f /tc-start.sh ]; do sleep 0.1; done; sh /tc-start.sh",
    ];
    let cluster_id = "zk8oJsM8TuSn3ayT3V9klA==";
    let mut kraft_env = common_env.to_vec();
    kraft_env.extend([
        (
            "KAFKA_LISTENERS",
            "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092,CONTROLLER://0.0.0.0:9094",
        ),
        ("CLUSTER_ID", cluster_id),
        ("KAFKA_NODE_ID", "1"),
        ("KAFKA_PROCESS_ROLES", "broker,controller"),
        ("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:9094"),
        ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER"),
    ]);
    let container = Container::start("tc-python", &kraft_env, &command);
    container.copy_in(
        "/tc-start.sh",
        &format!(
            "#!/bin/bash\n\n                    sed -i '/KAFKA_ZOOKEEPER_CONNECT/d' /etc/confluent/docker/configure\n                    echo 'kafka-storage format --ignore-formatted -t {cluster_id} -c /etc/kafka/kafka.properties' >> /etc/confluent/docker/configure\n                \nexport KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://127.0.0.1:9093,BROKER://$(hostname -i):9092\n. /etc/confluent/docker/bash-config\n/etc/confluent/docker/configure\n/etc/confluent/docker/launch"
        ),
    );
    container.wait_for_log(&["Kafka Server started"]);
    let meta = container.exec(&["cat", "/var/lib/kafka/data/meta.properties"], "");
    assert!(
        String::from_utf8_lossy(&meta.stdout).contains(cluster_id),
        "{meta:?}"
    );
    container.round_trip_librdkafka("127.0.0.1:9093", "via-plaintext");
    container.round_trip_librdkafka("127.0.0.1:9092", "via-broker");
    drop(container);

    let mut zookeeper_env = common_env.to_vec();
    zookeeper_env.push((
        "KAFKA_LISTENERS",
        "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092",
    ));
    let container = Container::start("tc-python-zk", &zookeeper_env, &command);
    container.copy_in(
        "/tc-start.sh",
        "#!/bin/bash\n\n                echo 'clientPort=2181' > zookeeper.properties\n                echo 'dataDir=/var/lib/zookeeper/data' >> zookeeper.properties\n                echo 'dataLogDir=/var/lib/zookeeper/log' >> zookeeper.properties\n                zookeeper-server-start zookeeper.properties &\n                export KAFKA_ZOOKEEPER_CONNECT='localhost:2181'\n        \nexport KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://127.0.0.1:9093,BROKER://$(hostname -i):9092\n. /etc/confluent/docker/bash-config\n/etc/confluent/docker/configure\n/etc/confluent/docker/launch",
    );
    container.wait_for_log(&["[KafkaServer id=", "] started"]);
    container.round_trip_librdkafka("127.0.0.1:9093", "via-plaintext");
}

/// testcontainers-node's `KafkaContainer` with `withKraft()` on a current cp-kafka: its script
/// exports the advertised listeners and runs /etc/confluent/docker/run (configure, ensure's
/// format with CLUSTER_ID, launch); its wait strategy is the listening port.
#[test]
fn testcontainers_node_starts_the_confluent_run_script() {
    let env = [
        (
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
            "BROKER:PLAINTEXT,PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        ),
        ("KAFKA_INTER_BROKER_LISTENER_NAME", "BROKER"),
        ("KAFKA_BROKER_ID", "1"),
        ("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "1"),
        ("KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS", "1"),
        ("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "1"),
        ("KAFKA_LOG_FLUSH_INTERVAL_MESSAGES", "9223372036854775807"),
        ("KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS", "0"),
        ("KAFKA_CONFLUENT_SUPPORT_METRICS_ENABLE", "false"),
        ("KAFKA_ADVERTISED_LISTENERS", "BROKER://localhost:9092"),
        (
            "KAFKA_LISTENERS",
            "PLAINTEXT://0.0.0.0:9093,BROKER://0.0.0.0:9092,CONTROLLER://0.0.0.0:9094",
        ),
        ("CLUSTER_ID", "4L6g3nShT-eMCtK--X86sw"),
        ("KAFKA_NODE_ID", "1"),
        ("KAFKA_PROCESS_ROLES", "broker,controller"),
        ("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@localhost:9094"),
        ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER"),
    ];
    let script = "/testcontainers_start.sh";
    let container = Container::start(
        "tc-node",
        &env,
        &[
            "sh",
            "-c",
            &format!(
                "echo 'Waiting for script...'; while [ ! -f {script} ]; do sleep 0.1; done; {script}"
            ),
        ],
    );
    container.wait_for_log(&["Waiting for script..."]);
    container.copy_in(
        script,
        "#!/bin/bash\nexport KAFKA_ADVERTISED_LISTENERS=BROKER://tc-node:9092,PLAINTEXT://127.0.0.1:9093\n/etc/confluent/docker/run \n",
    );
    container.wait_for_log(&["Kafka Server started"]);
    let meta = container.exec(&["cat", "/var/lib/kafka/data/meta.properties"], "");
    assert!(
        String::from_utf8_lossy(&meta.stdout).contains("4L6g3nShT-eMCtK--X86sw"),
        "{meta:?}"
    );
    container.round_trip_librdkafka("127.0.0.1:9093", "via-plaintext");
    container.round_trip_librdkafka("tc-node:9092", "via-broker");
}

/// A Bitnami-style compose service: KAFKA_CFG_* properties, KAFKA_KRAFT_CLUSTER_ID, Bitnami's
/// own variables beside them, the image's default command; data in /bitnami/kafka/data.
/// apache/kafka's file input too: /mnt/shared/config/server.properties under the environment.
#[test]
fn bitnami_environment_and_mounted_properties_configure_the_broker() {
    let env = [
        ("KAFKA_CFG_NODE_ID", "0"),
        ("KAFKA_CFG_PROCESS_ROLES", "controller,broker"),
        (
            "KAFKA_CFG_LISTENERS",
            "PLAINTEXT://:9092,CONTROLLER://:9093",
        ),
        ("KAFKA_CFG_ADVERTISED_LISTENERS", "PLAINTEXT://kafka:9092"),
        (
            "KAFKA_CFG_LISTENER_SECURITY_PROTOCOL_MAP",
            "CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT",
        ),
        ("KAFKA_CFG_CONTROLLER_QUORUM_VOTERS", "0@kafka:9093"),
        ("KAFKA_CFG_CONTROLLER_LISTENER_NAMES", "CONTROLLER"),
        ("KAFKA_CFG_NUM_PARTITIONS", "3"),
        ("KAFKA_KRAFT_CLUSTER_ID", "abcdefghijklmnopqrstuv"),
        ("ALLOW_PLAINTEXT_LISTENER", "yes"),
        ("KAFKA_ENABLE_KRAFT", "yes"),
        ("KAFKA_CREATE_TOPICS", "orders:2:1,events:1:1:compact"),
    ];
    let container = Container::start("kafka", &env, &["/opt/bitnami/scripts/kafka/run.sh"]);
    container.wait_for_log(&["Kafka Server started"]);
    let meta = container.exec(&["cat", "/bitnami/kafka/data/meta.properties"], "");
    assert!(
        String::from_utf8_lossy(&meta.stdout).contains("cluster.id=abcdefghijklmnopqrstuv"),
        "{meta:?}"
    );
    let listed = container.exec(&["kcat", "-L", "-b", "kafka:9092"], "");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains("topic \"orders\" with 2 partitions"),
        "{listed}"
    );
    assert!(
        listed.contains("topic \"events\" with 1 partitions"),
        "{listed}"
    );
    container.round_trip_librdkafka("kafka:9092", "bitnami");
    let auto = container.exec(&["kcat", "-L", "-b", "kafka:9092", "-t", "bitnami"], "");
    assert!(
        String::from_utf8_lossy(&auto.stdout).contains("with 3 partitions"),
        "KAFKA_CFG_NUM_PARTITIONS applies: {auto:?}"
    );
    drop(container);

    // apache/kafka's file input: a mounted server.properties, the environment over it.
    let env = [
        ("KAFKA_NUM_PARTITIONS", "2"),
        ("CLUSTER_ID", "mounted-config-cluster1"),
    ];
    let container = Container::start(
        "mounted",
        &env,
        &[
            "sh",
            "-c",
            "while [ ! -f /tmp/go ]; do sleep 0.1; done; exec /etc/kafka/docker/run",
        ],
    );
    container.copy_in(
        "/mnt/shared/config/server.properties",
        "process.roles=broker,controller\nnode.id=7\ncontroller.quorum.voters=7@localhost:9093\nlisteners=PLAINTEXT://:9092,CONTROLLER://:9093\nadvertised.listeners=PLAINTEXT://mounted:9092\ncontroller.listener.names=CONTROLLER\nnum.partitions=5\n",
    );
    container.copy_in("/tmp/go", "");
    container.wait_for_log(&["[KafkaRaftServer nodeId=7] Kafka Server started"]);
    container.round_trip_librdkafka("mounted:9092", "mounted");
    let described = container.exec(&["kcat", "-L", "-b", "mounted:9092", "-t", "mounted"], "");
    assert!(
        String::from_utf8_lossy(&described.stdout).contains("with 2 partitions"),
        "the environment wins over the mounted file: {described:?}"
    );
}

/// `--create-topic` and `--create-topics` create their topics before the broker reports that
/// it listens; a restart leaves them (and data in them) as they are; a bad spec stops the start
/// naming it, before anything is opened.
#[test]
fn topics_asked_for_at_startup_exist_before_clients_connect() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--create-topic",
        "orders:3:1:retention.ms=3600000",
        "--create-topics",
        "events:1:1:compact,logs",
    ];
    let mut broker = Broker::start_in_with_args(dir.path(), &[], &args);
    let topics = partition_counts(&broker.bootstrap);
    assert_eq!(topics.get("orders"), Some(&3), "{topics:?}");
    assert_eq!(topics.get("events"), Some(&1), "{topics:?}");
    assert_eq!(
        topics.get("logs"),
        Some(&1),
        "the broker's default partitions: {topics:?}"
    );
    assert!(
        broker
            .log_text()
            .contains("created topic asked for at startup")
    );
    broker.stop();
    let mut broker = Broker::start_in_with_args(dir.path(), &[], &args);
    let topics = partition_counts(&broker.bootstrap);
    assert_eq!(topics.get("orders"), Some(&3));
    assert!(
        broker.log_text().contains("exists already"),
        "{}",
        broker.log_text()
    );
    broker.stop();

    for bad in [
        "bad topic:1:1",
        "orders:zero:1",
        "orders:1:1:retention.mss=5",
    ] {
        let output = Command::new(broker_binary())
            .args(["--override", "listeners=PLAINTEXT://127.0.0.1:0"])
            .arg("--override")
            .arg(format!("log.dirs={}", dir.path().join("never").display()))
            .args(["--create-topic", bad])
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(bad), "the bad spec is named: {stderr}");
        assert!(
            !dir.path().join("never").exists(),
            "nothing opened before the check"
        );
    }
}

/// Each topic's partition count, as librdkafka's metadata request sees it.
fn partition_counts(bootstrap: &str) -> std::collections::BTreeMap<String, usize> {
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = rdkafka::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .create()
        .unwrap();
    let metadata = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    metadata
        .topics()
        .iter()
        .map(|t| (t.name().to_string(), t.partitions().len()))
        .collect()
}

/// The `environment:` of a compose file's first service (`KEY: value` lines; quotes dropped).
fn compose_environment(file: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let mut env = Vec::new();
    let mut inside = None;
    for line in text.lines() {
        let indent = line.len() - line.trim_start().len();
        let trimmed = line.trim();
        if trimmed == "environment:" {
            if !env.is_empty() {
                break;
            }
            inside = Some(indent);
            continue;
        }
        match inside {
            Some(at) if indent > at && !trimmed.is_empty() => {
                if trimmed.starts_with('#') {
                    continue;
                }
                let (key, value) = trimmed.split_once(':').unwrap();
                env.push((
                    key.trim().to_string(),
                    value.trim().trim_matches('"').to_string(),
                ));
            }
            Some(_) if !trimmed.is_empty() => inside = None,
            _ => {}
        }
    }
    assert!(!env.is_empty(), "no environment in {file}");
    env
}

/// The repository's compose files: the image's default command with their environment.
#[test]
fn the_compose_files_environments_start_the_image() {
    let env = compose_environment("docker/compose.yml");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let container = Container::start("broker", &env, &["/etc/kafka/docker/run"]);
    container.wait_for_log(&["Kafka Server started"]);
    container.round_trip_librdkafka("localhost:9092", "compose-host");
    container.round_trip_librdkafka("broker:29092", "compose-internal");
    drop(container);

    let env = compose_environment("docker/compose.compat.yml");
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let container = Container::start("broker", &env, &["/etc/kafka/docker/run"]);
    container.wait_for_log(&["[KafkaRaftServer nodeId=0] Kafka Server started"]);
    container.round_trip_librdkafka("broker:9092", "compose-compat");
}

/// apache/kafka's secrets convention: a PKCS12 keystore named by KAFKA_SSL_KEYSTORE_FILENAME in
/// /etc/kafka/secrets, its passwords in the files KAFKA_SSL_*_CREDENTIALS name; arguments to
/// `run` set variables. librdkafka connects over TLS, trusting the test's CA.
#[test]
fn the_secrets_convention_configures_tls() {
    let pki = common::pki::Pki::new();
    let keystore = pki.path("server.p12");
    let exported = Command::new("openssl")
        .args([
            "pkcs12",
            "-export",
            "-in",
            &pki.path("server.pem"),
            "-out",
            &keystore,
        ])
        .args(["-passout", "pass:store-secret", "-name", "server"])
        .status()
        .unwrap();
    assert!(exported.success(), "openssl pkcs12 -export");
    let env = [
        ("KAFKA_NODE_ID", "1"),
        ("KAFKA_PROCESS_ROLES", "broker,controller"),
        (
            "KAFKA_LISTENERS",
            "SSL://:9092,BROKER://:9093,CONTROLLER://:9094",
        ),
        (
            "KAFKA_ADVERTISED_LISTENERS",
            "SSL://localhost:9092,BROKER://localhost:9093",
        ),
        (
            "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
            "SSL:SSL,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT",
        ),
        ("KAFKA_INTER_BROKER_LISTENER_NAME", "BROKER"),
        ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER"),
        ("KAFKA_SSL_KEYSTORE_FILENAME", "server.p12"),
        ("KAFKA_SSL_KEYSTORE_TYPE", "PKCS12"),
        ("KAFKA_SSL_KEYSTORE_CREDENTIALS", "keystore_creds"),
        ("KAFKA_SSL_KEY_CREDENTIALS", "key_creds"),
    ];
    let container = Container::start(
        "tls",
        &env,
        &[
            "sh",
            "-c",
            "while [ ! -f /tmp/go ]; do sleep 0.1; done; exec /etc/kafka/docker/run KAFKA_NUM_PARTITIONS=2",
        ],
    );
    container.copy_in_bytes(
        "/etc/kafka/secrets/server.p12",
        &std::fs::read(&keystore).unwrap(),
    );
    container.copy_in("/etc/kafka/secrets/keystore_creds", "store-secret\n");
    container.copy_in("/etc/kafka/secrets/key_creds", "store-secret\n");
    container.copy_in(
        "/tmp/ca.pem",
        &std::fs::read_to_string(pki.path("ca.pem")).unwrap(),
    );
    container.copy_in("/tmp/go", "");
    container.wait_for_log(&["Kafka Server started"]);
    let tls = [
        "-X",
        "security.protocol=ssl",
        "-X",
        "ssl.ca.location=/tmp/ca.pem",
    ];
    let produced = container.exec(
        &[
            &["kcat", "-P", "-b", "localhost:9092", "-t", "secure"],
            &tls[..],
        ]
        .concat(),
        "over tls\n",
    );
    assert!(
        produced.status.success(),
        "{produced:?}\n{}",
        container.log_text()
    );
    let consumed = container.exec(
        &[
            &[
                "kcat",
                "-C",
                "-b",
                "localhost:9092",
                "-t",
                "secure",
                "-o",
                "beginning",
                "-e",
                "-q",
            ],
            &tls[..],
        ]
        .concat(),
        "",
    );
    assert_eq!(
        String::from_utf8_lossy(&consumed.stdout).trim(),
        "over tls",
        "{consumed:?}"
    );
    let described = container.exec(&["kcat", "-L", "-b", "localhost:9093", "-t", "secure"], "");
    assert!(
        String::from_utf8_lossy(&described.stdout).contains("with 2 partitions"),
        "run's VAR=value arguments apply: {described:?}"
    );
}
