//! Integration-test harness: runs the real `sluice` binary as a child process on a free
//! loopback port with a temporary data directory, and cleans both up (also when a test
//! fails). Readiness and restarts are detected from the broker's log, never by sleeping.
#![allow(dead_code, clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub mod pki;
pub mod proxy;
pub mod raw;

pub struct Broker {
    child: Option<Child>,
    pub bootstrap: String,
    dir: PathBuf,
    /// Owns the temporary directory when the broker created it.
    _temp: Option<tempfile::TempDir>,
    log: Arc<Mutex<Vec<String>>>,
}

impl Broker {
    /// A fresh broker in a new temporary directory.
    pub fn start(overrides: &[(&str, &str)]) -> Self {
        Self::start_logging(overrides, "info")
    }

    /// A fresh broker whose log uses the `RUST_LOG` filter `filter` (tests that wait for a
    /// debug event).
    pub fn start_logging(overrides: &[(&str, &str)], filter: &str) -> Self {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = temp.path().to_path_buf();
        let mut broker = Self::launch(&dir, overrides, filter);
        broker._temp = Some(temp);
        broker
    }

    /// A fresh broker with the crash points `failpoints` armed (the `FAILPOINTS` environment
    /// variable; see `sluice::txn::crash_point`).
    pub fn start_with_failpoints(overrides: &[(&str, &str)], failpoints: &str) -> Self {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = temp.path().to_path_buf();
        let (mut broker, lines) = Self::spawn_with(
            &dir,
            overrides,
            "info",
            &[("FAILPOINTS", failpoints)],
            None,
            &[],
        );
        broker.wait_listening(&lines);
        broker._temp = Some(temp);
        broker
    }

    /// A broker over an existing data directory (restarts).
    pub fn start_in(dir: &Path, overrides: &[(&str, &str)]) -> Self {
        Self::launch(dir, overrides, "info")
    }

    /// A broker over `dir` (a restart) whose open-file limit (soft and hard) is `limit`.
    pub fn start_in_with_fd_limit(dir: &Path, limit: u32, overrides: &[(&str, &str)]) -> Self {
        let (mut broker, lines) = Self::spawn_with(dir, overrides, "info", &[], Some(limit), &[]);
        broker.wait_listening(&lines);
        broker
    }

    /// A broker over `dir` started with further command-line arguments (`--create-topic`).
    pub fn start_in_with_args(dir: &Path, overrides: &[(&str, &str)], args: &[&str]) -> Self {
        let (mut broker, lines) = Self::spawn_with(dir, overrides, "info", &[], None, args);
        broker.wait_listening(&lines);
        broker
    }

    fn launch(dir: &Path, overrides: &[(&str, &str)], filter: &str) -> Self {
        let (mut broker, lines) = Self::spawn(dir, overrides, filter);
        broker.wait_listening(&lines);
        broker
    }

    /// Starts the process without waiting for it to listen (cluster nodes start together:
    /// each waits for the others' quorum before it serves).
    pub fn spawn(
        dir: &Path,
        overrides: &[(&str, &str)],
        filter: &str,
    ) -> (Self, mpsc::Receiver<String>) {
        Self::spawn_with(dir, overrides, filter, &[], None, &[])
    }

    /// [`Broker::spawn`] with the crash points `failpoints` armed.
    pub fn spawn_with_failpoints(
        dir: &Path,
        overrides: &[(&str, &str)],
        failpoints: &str,
    ) -> (Self, mpsc::Receiver<String>) {
        Self::spawn_with(
            dir,
            overrides,
            "info",
            &[("FAILPOINTS", failpoints)],
            None,
            &[],
        )
    }

    /// A fresh broker whose open-file limit (soft and hard) is `limit`.
    pub fn start_with_fd_limit(limit: u32, overrides: &[(&str, &str)]) -> Self {
        let temp = tempfile::tempdir().expect("temp dir");
        let dir = temp.path().to_path_buf();
        let (mut broker, lines) = Self::spawn_with(&dir, overrides, "info", &[], Some(limit), &[]);
        broker.wait_listening(&lines);
        broker._temp = Some(temp);
        broker
    }

    /// Starts the broker process; `env` is set in its environment (`FAILPOINTS`, a fake
    /// clock's `LD_PRELOAD`).
    fn spawn_with(
        dir: &Path,
        overrides: &[(&str, &str)],
        filter: &str,
        env: &[(&str, &str)],
        fd_limit: Option<u32>,
        args: &[&str],
    ) -> (Self, mpsc::Receiver<String>) {
        let mut command = match fd_limit {
            // The shell sets the limit and becomes the broker (same pid).
            Some(limit) => {
                let mut shell = Command::new("bash");
                shell
                    .arg("-c")
                    .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
                    .arg(broker_binary());
                shell
            }
            None => Command::new(broker_binary()),
        };
        command
            .arg("--override")
            .arg("listeners=PLAINTEXT://127.0.0.1:0")
            // The HTTP listener only where a test asks for it (`http.listener=127.0.0.1:0`):
            // brokers started side by side would all reach for its default port.
            .arg("--override")
            .arg("http.listener=")
            .arg("--override")
            .arg(format!("log.dirs={}", dir.display()))
            .env("RUST_LOG", filter)
            .env("FAILPOINTS", "")
            .envs(env.iter().copied())
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // `{dir}` in a setting is the broker's data directory (`log.dirs={dir}/a,{dir}/b`).
        for (key, value) in overrides {
            let value = value.replace("{dir}", &dir.display().to_string());
            command.arg("--override").arg(format!("{key}={value}"));
        }
        command.args(args);
        let mut child = command.spawn().expect("spawn sluice");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = mpsc::channel::<String>();
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
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let _ = tx.send(line.clone());
                    log.lock().unwrap().push(line);
                }
            });
        }
        drop(tx);
        let broker = Self {
            child: Some(child),
            bootstrap: String::new(),
            dir: dir.to_path_buf(),
            _temp: None,
            log,
        };
        (broker, rx)
    }

    /// Waits until the node serves: a broker's client listener's "listening on" line, a
    /// controller-only node's "controller ready" (its `bootstrap` is then its controller
    /// listener).
    fn wait_started(&mut self, lines: &mpsc::Receiver<String>, role: Role) {
        if role.is_broker() {
            return self.wait_listening(lines);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut address = None;
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(remaining) {
                Ok(line) => {
                    if let Some(at) = line
                        .split("controller quorum listening on ")
                        .nth(1)
                        .and_then(|rest| rest.split_whitespace().next())
                    {
                        address = Some(at.to_string());
                    }
                    if line.contains("controller ready")
                        && let Some(address) = address.take()
                    {
                        self.bootstrap = address;
                        return;
                    }
                }
                Err(_) => {
                    if let Some(child) = &mut self.child {
                        let _ = child.kill();
                    }
                    panic!("controller did not start; log:\n{}", self.log_text());
                }
            }
        }
    }

    /// Waits for the client listener's "listening on" line.
    fn wait_listening(&mut self, lines: &mpsc::Receiver<String>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        self.bootstrap = loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(remaining) {
                Ok(line) => {
                    if line.contains("controller quorum") {
                        continue;
                    }
                    if let Some(address) = line
                        .split("listening on ")
                        .nth(1)
                        .and_then(|rest| rest.split_whitespace().next())
                    {
                        break address.to_string();
                    }
                }
                Err(_) => {
                    if let Some(child) = &mut self.child {
                        let _ = child.kill();
                    }
                    panic!("broker did not start; log:\n{}", self.log_text());
                }
            }
        };
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The address of the broker's HTTP listener (started with `http.listener` set), from its
    /// startup line.
    pub fn http_address(&self) -> String {
        let mut address = None;
        let found = wait_until(Duration::from_secs(20), || {
            address = self
                .log_text()
                .split("HTTP at ")
                .nth(1)
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|url| url.split("://").nth(1))
                .map(str::to_string);
            address.is_some()
        });
        assert!(found, "no HTTP startup line:\n{}", self.log_text());
        address.unwrap_or_default()
    }

    /// One scrape of `/metrics` on the HTTP listener.
    #[allow(dead_code)]
    pub fn scrape_metrics(&self) -> Metrics {
        let text = ureq::get(format!("http://{}/metrics", self.http_address()))
            .call()
            .expect("scrape")
            .into_body()
            .read_to_string()
            .expect("metrics text");
        Metrics(text)
    }

    pub fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGKILL: an unclean stop.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().expect("kill");
            child.wait().expect("wait");
        }
    }

    /// SIGTERM and wait for a clean exit; returns the exit status code.
    pub fn stop(&mut self) -> Option<i32> {
        let mut child = self.child.take()?;
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .expect("kill -TERM");
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("broker did not stop within 30 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Freezes the process (SIGSTOP): it holds its connections and answers nothing, as a
    /// node in a long GC pause or a stalled VM.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Lets a paused process run again (SIGCONT).
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        if let Some(child) = &self.child {
            let sent = Command::new("kill")
                .arg(signal)
                .arg(child.id().to_string())
                .status()
                .expect("kill");
            assert!(sent.success(), "kill {signal}");
        }
    }

    /// Waits for the process to end by itself (a crash point); its exit code.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        let child = self.child.as_mut()?;
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait().expect("try_wait") {
                self.child = None;
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("broker still running after {timeout:?}");
    }

    pub fn is_running(&mut self) -> bool {
        match &mut self.child {
            Some(child) => child.try_wait().map(|s| s.is_none()).unwrap_or(false),
            None => false,
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("---- broker log ----\n{}", self.log_text());
        }
    }
}

/// Polls `condition` until it holds or `timeout` passes.
/// The broker binary the tests start: this build's, or `SLUICE_BIN` (to show that a
/// regression test fails on an older build: `SLUICE_BIN=/path/to/old/sluice cargo test`).
pub fn broker_binary() -> PathBuf {
    std::env::var_os("SLUICE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sluice")))
}

pub fn wait_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}

/// The values of partition `partition` of `topic`, in offset order, read from the start by a consumer
/// (librdkafka) with `isolation.level` = `isolation`, assigned by hand (no group coordinator
/// involved): until `expected` arrived, or until `patience` passed.
pub fn read_partition(
    bootstrap: &str,
    topic: &str,
    partition: i32,
    isolation: &str,
    expected: usize,
    patience: Duration,
) -> Vec<String> {
    use rdkafka::Message;
    use rdkafka::consumer::{BaseConsumer, Consumer};
    let consumer: BaseConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", bootstrap)
        .set("group.id", format!("check-{topic}-{partition}-{isolation}"))
        .set("isolation.level", isolation)
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    let mut assignment = rdkafka::TopicPartitionList::new();
    assignment
        .add_partition_offset(topic, partition, rdkafka::Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    let mut seen = Vec::new();
    let deadline = Instant::now() + patience;
    while seen.len() < expected.max(1) && Instant::now() < deadline {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(100)) {
            seen.push(String::from_utf8_lossy(message.payload().unwrap_or_default()).into_owned());
        }
    }
    seen
}

/// Sends one request on a fresh connection and decodes the response (raw-protocol helper).
pub fn raw_call<Req, Resp>(
    bootstrap: &str,
    api: kafka_protocol::messages::ApiKey,
    version: i16,
    body: &Req,
) -> Resp
where
    Req: kafka_protocol::protocol::Encodable + kafka_protocol::protocol::HeaderVersion,
    Resp: kafka_protocol::protocol::Decodable + kafka_protocol::protocol::HeaderVersion,
{
    use kafka_protocol::messages::{RequestHeader, ResponseHeader};
    use kafka_protocol::protocol::{Decodable, Encodable};
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(bootstrap).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let header = RequestHeader::default()
        .with_request_api_key(api as i16)
        .with_request_api_version(version)
        .with_correlation_id(1);
    let mut buf = bytes::BytesMut::new();
    header
        .encode(&mut buf, Req::header_version(version))
        .unwrap();
    body.encode(&mut buf, version).unwrap();
    stream.write_all(&(buf.len() as i32).to_be_bytes()).unwrap();
    stream.write_all(&buf).unwrap();
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).unwrap();
    let mut response = vec![0u8; i32::from_be_bytes(size) as usize];
    stream.read_exact(&mut response).unwrap();
    let mut response = bytes::Bytes::from(response);
    ResponseHeader::decode(&mut response, Resp::header_version(version)).unwrap();
    Resp::decode(&mut response, version).unwrap()
}

/// Metadata for every topic, as `bootstrap` answers it (v12).
pub fn metadata_of(bootstrap: &str) -> kafka_protocol::messages::MetadataResponse {
    use kafka_protocol::messages::{ApiKey, MetadataRequest};
    raw_call(
        bootstrap,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default().with_topics(None),
    )
}

/// A free loopback port (bound and released: a node's address must be known before it starts,
/// for `controller.quorum.voters`).
///
/// Taken below the kernel's ephemeral range (32768 and up) rather than with a bind to port 0:
/// a port from that range, once released, is fair game as the source port of any outgoing
/// connection — the nodes' own connections to each other included — during the second a node
/// takes to bind it, which once made a cluster test fail with "Address already in use". Ports
/// below the range are handed out only here, each once per test process (a cursor starting at a
/// process-dependent place), and checked free before they are handed out.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    const LOW: u32 = 20_000;
    const SPAN: u32 = 12_000;
    static CURSOR: AtomicU32 = AtomicU32::new(u32::MAX);
    let seed = std::process::id().wrapping_mul(7919)
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|elapsed| elapsed.subsec_nanos())
            .unwrap_or(0);
    let _ = CURSOR.compare_exchange(u32::MAX, seed % SPAN, Ordering::SeqCst, Ordering::SeqCst);
    for _ in 0..SPAN {
        let port = (LOW + CURSOR.fetch_add(1, Ordering::SeqCst) % SPAN) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port between {LOW} and {}", LOW + SPAN);
}

/// What a cluster node is (`process.roles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Combined,
    Controller,
    Broker,
}

impl Role {
    fn roles(self) -> &'static str {
        match self {
            Role::Combined => "broker,controller",
            Role::Controller => "controller",
            Role::Broker => "broker",
        }
    }

    pub fn is_broker(self) -> bool {
        self != Role::Controller
    }

    pub fn is_controller(self) -> bool {
        self != Role::Broker
    }
}

/// Nodes on loopback forming one cluster (combined broker+controller nodes, or controllers and
/// brokers apart), each in its own data directory and with node id its index + 1; nodes are
/// started together and each is waited for.
pub struct Cluster {
    pub nodes: Vec<Broker>,
    pub roles: Vec<Role>,
    /// Each node's `broker.rack`, substituted for `{rack}` in the settings (none: no racks);
    /// `{dir}` is each node's data directory.
    pub racks: Vec<String>,
    /// Broker-only nodes know the controllers through `controller.quorum.bootstrap.servers`
    /// only (KIP-853), not `controller.quorum.voters`.
    brokers_bootstrap: bool,
    /// A dynamic quorum (KIP-853): the first controller starts alone, the others are formatted
    /// to join (`--no-initial-controllers`) and wait to be added; every node knows the
    /// controllers through `controller.quorum.bootstrap.servers`.
    dynamic_quorum: bool,
    client_ports: Vec<u16>,
    controller_ports: Vec<u16>,
    /// The client address each node advertises (a proxy's when the network is proxied).
    advertised_ports: Vec<u16>,
    voters: String,
    dirs: Vec<tempfile::TempDir>,
    extra: Vec<(String, String)>,
    network: Option<proxy::Network>,
    /// The name of each node's client (and inter-broker) listener.
    client_listener: String,
    /// Each node's fake wall clock offset, a file per node (see [`Cluster::fake_clocks`]).
    clocks: Option<tempfile::TempDir>,
}

/// libfaketime, as Debian installs it.
const FAKETIME_LIBRARY: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";

impl Cluster {
    pub fn start(size: usize, extra: &[(&str, &str)]) -> Self {
        Self::start_on(vec![Role::Combined; size], extra, None, "PLAINTEXT")
    }

    /// `controllers` controller-only nodes (ids 1..) and `brokers` broker-only ones after them.
    pub fn start_separate(controllers: usize, brokers: usize, extra: &[(&str, &str)]) -> Self {
        let mut roles = vec![Role::Controller; controllers];
        roles.extend(vec![Role::Broker; brokers]);
        Self::start_on(roles, extra, None, "PLAINTEXT")
    }

    /// Combined nodes, node `i` in rack `rack-{i + 1}` (`broker.rack`).
    pub fn start_racked(size: usize, extra: &[(&str, &str)]) -> Self {
        let racks: Vec<String> = (1..=size).map(|i| format!("rack-{i}")).collect();
        let mut extra = extra.to_vec();
        extra.push(("broker.rack", "{rack}"));
        let mut cluster =
            Self::start_deferred(vec![Role::Combined; size], &extra, None, "PLAINTEXT");
        cluster.racks = racks;
        cluster.spawn_all();
        cluster
    }

    /// [`Cluster::start_separate`] with brokers that know only
    /// `controller.quorum.bootstrap.servers`.
    pub fn start_separate_bootstrapped(
        controllers: usize,
        brokers: usize,
        extra: &[(&str, &str)],
    ) -> Self {
        let mut roles = vec![Role::Controller; controllers];
        roles.extend(vec![Role::Broker; brokers]);
        let mut cluster = Self::start_deferred(roles, extra, None, "PLAINTEXT");
        cluster.brokers_bootstrap = true;
        cluster.spawn_all();
        cluster
    }

    /// `controllers` controller-only nodes of a dynamic quorum (node 1 alone at first; the
    /// others wait to be added) and `brokers` broker-only ones, all of cluster `cluster_id`.
    pub fn start_dynamic(controllers: usize, brokers: usize, cluster_id: &str) -> Self {
        let mut roles = vec![Role::Controller; controllers];
        roles.extend(vec![Role::Broker; brokers]);
        let mut cluster =
            Self::start_deferred(roles, &[("cluster.id", cluster_id)], None, "PLAINTEXT");
        cluster.dynamic_quorum = true;
        cluster.spawn_all();
        cluster
    }

    /// Node `i`'s settings as a properties file (what `kafka-metadata-quorum add-controller
    /// --command-config` reads), with its log directory.
    pub fn properties_file(&self, i: usize) -> tempfile::NamedTempFile {
        let mut text = String::new();
        for (key, value) in self.settings_of(i) {
            text.push_str(&format!("{key}={value}\n"));
        }
        text.push_str(&format!("log.dirs={}\n", self.dirs[i].path().display()));
        text.push_str("controller.listener.names=CONTROLLER\n");
        let file = tempfile::NamedTempFile::new().expect("temp file");
        std::fs::write(file.path(), text).expect("write properties");
        file
    }

    /// A cluster whose client listener is named `client_listener` (its security protocol and
    /// the controller listener's come from `extra`'s `listener.security.protocol.map`).
    pub fn start_named(size: usize, client_listener: &str, extra: &[(&str, &str)]) -> Self {
        Self::start_on(vec![Role::Combined; size], extra, None, client_listener)
    }

    /// A cluster whose nodes reach each other only through [`proxy::Network`], so a test can
    /// cut one off ([`Cluster::network`]).
    /// [`Cluster::start_partitionable`] whose nodes' wall clocks can be moved
    /// ([`Cluster::shift_clock`]).
    pub fn start_partitionable_with_fake_clocks(size: usize, extra: &[(&str, &str)]) -> Self {
        let mut cluster = Self::start_deferred(
            vec![Role::Combined; size],
            extra,
            Some(proxy::Network::new()),
            "PLAINTEXT",
        );
        cluster.fake_clocks();
        cluster.spawn_all();
        cluster
    }

    pub fn start_partitionable(size: usize, extra: &[(&str, &str)]) -> Self {
        Self::start_on(
            vec![Role::Combined; size],
            extra,
            Some(proxy::Network::new()),
            "PLAINTEXT",
        )
    }

    fn start_on(
        roles: Vec<Role>,
        extra: &[(&str, &str)],
        network: Option<proxy::Network>,
        client_listener: &str,
    ) -> Self {
        let mut cluster = Self::start_deferred(roles, extra, network, client_listener);
        cluster.spawn_all();
        cluster
    }

    /// Starts every node and waits until each serves.
    fn spawn_all(&mut self) {
        let mut spawned = Vec::new();
        for i in 0..self.roles.len() {
            spawned.push(self.spawn_node(i));
        }
        for (i, (mut node, lines)) in spawned.into_iter().enumerate() {
            node.wait_started(&lines, self.roles[i]);
            self.nodes.push(node);
        }
    }

    /// The cluster's ports, directories and settings, no node started yet.
    fn start_deferred(
        roles: Vec<Role>,
        extra: &[(&str, &str)],
        network: Option<proxy::Network>,
        client_listener: &str,
    ) -> Self {
        let size = roles.len();
        let client_ports: Vec<u16> = (0..size).map(|_| free_port()).collect();
        let controller_ports: Vec<u16> = (0..size).map(|_| free_port()).collect();
        let (advertised_ports, voter_ports) = match &network {
            Some(network) => (0..size)
                .map(|i| {
                    let node = (i + 1) as u32;
                    (
                        network.proxy(node, client_ports[i]),
                        network.proxy(node, controller_ports[i]),
                    )
                })
                .unzip(),
            None => (client_ports.clone(), controller_ports.clone()),
        };
        let voters = voter_ports
            .iter()
            .enumerate()
            .filter(|(i, _)| roles[*i].is_controller())
            .map(|(i, port)| format!("{}@127.0.0.1:{port}", i + 1))
            .collect::<Vec<_>>()
            .join(",");
        let dirs: Vec<tempfile::TempDir> = (0..size)
            .map(|_| tempfile::tempdir().expect("temp dir"))
            .collect();
        Self {
            nodes: Vec::new(),
            roles,
            racks: Vec::new(),
            brokers_bootstrap: false,
            dynamic_quorum: false,
            client_ports,
            controller_ports,
            advertised_ports,
            voters,
            dirs,
            extra: extra
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            network,
            client_listener: client_listener.to_string(),
            clocks: None,
        }
    }

    /// The proxied network (clusters from [`Cluster::start_partitionable`]).
    pub fn network(&self) -> &proxy::Network {
        self.network.as_ref().expect("a partitionable cluster")
    }

    fn spawn_node(&self, i: usize) -> (Broker, mpsc::Receiver<String>) {
        let settings = self.settings_of(i);
        let overrides: Vec<(&str, &str)> = settings
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        if self.dynamic_quorum
            && i > 0
            && self.roles[i].is_controller()
            && !self.dirs[i].path().join("meta.properties").exists()
        {
            // Kafka's way for a controller that joins a running quorum.
            let mut format = Command::new(broker_binary());
            format.args(["format", "--no-initial-controllers"]);
            for (key, value) in &overrides {
                format.arg("--override").arg(format!("{key}={value}"));
            }
            format
                .arg("--override")
                .arg(format!("log.dirs={}", self.dirs[i].path().display()));
            let output = format.output().expect("sluice format");
            assert!(output.status.success(), "format: {output:?}");
        }
        let env = self.clock_env(i);
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        Broker::spawn_with(self.dirs[i].path(), &overrides, "info", &env, None, &[])
    }

    /// Gives every node a wall clock that [`Cluster::shift_clock`] can move
    /// (libfaketime, `LD_PRELOAD`; the monotonic clock stays true), for nodes started from
    /// now on. Panics when libfaketime is not installed (`.ci/run` installs it).
    fn fake_clocks(&mut self) {
        assert!(
            std::path::Path::new(FAKETIME_LIBRARY).exists(),
            "{FAKETIME_LIBRARY} missing: apt-get install libfaketime"
        );
        let dir = tempfile::tempdir().expect("temp dir");
        for i in 0..self.roles.len() {
            std::fs::write(dir.path().join(format!("node-{}", i + 1)), "+0").unwrap();
        }
        self.clocks = Some(dir);
    }

    /// Sets node `i`'s wall clock `offset` from the true time (libfaketime's syntax: `+90`,
    /// `-30`, seconds); the node reads it within a second.
    pub fn shift_clock(&self, i: usize, offset: &str) {
        let dir = self.clocks.as_ref().expect("fake_clocks first");
        std::fs::write(dir.path().join(format!("node-{}", i + 1)), offset).unwrap();
    }

    fn clock_env(&self, i: usize) -> Vec<(String, String)> {
        let Some(dir) = &self.clocks else {
            return Vec::new();
        };
        let file = dir.path().join(format!("node-{}", i + 1));
        vec![
            ("LD_PRELOAD".into(), FAKETIME_LIBRARY.into()),
            ("FAKETIME_TIMESTAMP_FILE".into(), file.display().to_string()),
            ("FAKETIME_CACHE_DURATION".into(), "1".into()),
            ("FAKETIME_DONT_FAKE_MONOTONIC".into(), "1".into()),
        ]
    }

    /// Node `i`'s settings (besides its log directory).
    fn settings_of(&self, i: usize) -> Vec<(String, String)> {
        let name = &self.client_listener;
        let role = self.roles[i];
        let client = format!("{name}://127.0.0.1:{}", self.client_ports[i]);
        let controller = format!("CONTROLLER://127.0.0.1:{}", self.controller_ports[i]);
        let listeners = match role {
            Role::Combined => format!("{client},{controller}"),
            Role::Controller => controller,
            Role::Broker => client,
        };
        let advertised = match role {
            Role::Controller => String::new(),
            _ => format!("{name}://127.0.0.1:{}", self.advertised_ports[i]),
        };
        let node_id = (i + 1).to_string();
        let bootstrap_servers: String = self
            .voters
            .split(',')
            .filter_map(|v| v.split_once('@').map(|(_, address)| address))
            .collect::<Vec<_>>()
            .join(",");
        let quorum = if self.dynamic_quorum {
            // Every node asks the first controller, which starts alone (its only bootstrap
            // server is itself); the others are added while the quorum runs, and the nodes
            // learn them from the metadata (the first may be removed later).
            let first = bootstrap_servers.split(',').next().unwrap_or_default();
            ("controller.quorum.bootstrap.servers", first.to_string())
        } else if self.brokers_bootstrap && role == Role::Broker {
            ("controller.quorum.bootstrap.servers", bootstrap_servers)
        } else {
            ("controller.quorum.voters", self.voters.clone())
        };
        let mut settings: Vec<(String, String)> = vec![
            ("node.id".into(), node_id),
            ("process.roles".into(), role.roles().into()),
            (quorum.0.into(), quorum.1),
            ("listeners".into(), listeners),
            ("advertised.listeners".into(), advertised),
        ];
        settings.retain(|(_, value)| !value.is_empty());
        let rack = self.racks.get(i).cloned().unwrap_or_default();
        let dir = self.dirs[i].path().display().to_string();
        settings.extend(
            self.extra
                .iter()
                .map(|(k, v)| (k.clone(), v.replace("{rack}", &rack).replace("{dir}", &dir))),
        );
        settings
    }

    /// Starts node `i` again over its data directory with the fail points `failpoints` armed
    /// (`segment-write=sleep(100)`: a slow disk).
    pub fn restart_with_failpoints(&mut self, i: usize, failpoints: &str) {
        let settings = self.settings_of(i);
        let overrides: Vec<(&str, &str)> = settings
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut env = self.clock_env(i);
        env.push(("FAILPOINTS".into(), failpoints.into()));
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let (mut node, lines) =
            Broker::spawn_with(self.dirs[i].path(), &overrides, "info", &env, None, &[]);
        node.wait_started(&lines, self.roles[i]);
        self.nodes[i] = node;
    }

    /// Gives stopped node `i` a new controller listener port, for its next start (a cluster
    /// without the proxy).
    pub fn move_controller_listener(&mut self, i: usize) -> u16 {
        assert!(self.network.is_none(), "the proxy fixes the ports");
        self.controller_ports[i] = free_port();
        self.controller_ports[i]
    }

    /// Starts node `i` again over its data directory (after `kill9` or `stop`).
    pub fn restart(&mut self, i: usize) {
        let (mut node, lines) = self.spawn_node(i);
        node.wait_started(&lines, self.roles[i]);
        self.nodes[i] = node;
    }

    /// Node `i`'s data directory (`{dir}` in the settings).
    pub fn data_dir(&self, i: usize) -> &Path {
        self.dirs[i].path()
    }

    /// Each node's controller listener port (the quorum's voters' addresses).
    pub fn controller_ports(&self) -> &[u16] {
        &self.controller_ports
    }

    /// Every node's client address, for `bootstrap.servers` (through the proxies when the
    /// network is proxied).
    pub fn bootstrap(&self) -> String {
        self.advertised_ports
            .iter()
            .enumerate()
            .filter(|(i, _)| self.roles[*i].is_broker())
            .map(|(_, p)| format!("127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Fails if two nodes' logs say they became the active controller in the same term
    /// (split brain in the controller quorum).
    pub fn assert_one_active_controller_per_term(&self) {
        let mut claims = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            for line in node.log_text().lines() {
                if !line.contains("active controller") || line.contains("no longer") {
                    continue;
                }
                if let Some(term) = line
                    .split("term=")
                    .nth(1)
                    .and_then(|t| t.split_whitespace().next())
                    .and_then(|t| t.parse::<u64>().ok())
                {
                    claims.push((term, i));
                }
            }
        }
        claims.sort();
        claims.dedup();
        assert!(
            claims.windows(2).all(|w| w[0].0 != w[1].0),
            "two active controllers in one term: {claims:?}"
        );
    }

    /// The node (index) whose log last says it became the active controller, if running.
    pub fn active_controller(&mut self) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if !node.is_running() {
                continue;
            }
            for line in node.log_text().lines() {
                if !line.contains("active controller") {
                    continue;
                }
                let term = line
                    .split("term=")
                    .nth(1)
                    .and_then(|t| t.split_whitespace().next())
                    .and_then(|t| t.parse::<u64>().ok())
                    .unwrap_or(0);
                if best.is_none_or(|(t, _)| term > t) {
                    best = Some((term, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }
}

/// A tmpfs of `megabytes` mounted on a new temporary directory (the tests run as root), for
/// running a broker out of disk space; unmounted when dropped, also when a test fails.
pub struct Tmpfs {
    dir: Option<tempfile::TempDir>,
}

impl Tmpfs {
    pub fn mount(megabytes: u32) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={megabytes}m"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount");
        assert!(
            status.success(),
            "mounting a tmpfs needs root (the tests run as root here and in CI)"
        );
        Self { dir: Some(dir) }
    }

    pub fn path(&self) -> &Path {
        self.dir
            .as_ref()
            .map(|d| d.path())
            .unwrap_or(Path::new("/"))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        if let Some(dir) = self.dir.take() {
            let _ = Command::new("umount").arg("-l").arg(dir.path()).status();
            drop(dir);
        }
    }
}

/// A Prometheus scrape.
#[allow(dead_code)]
pub struct Metrics(pub String);

#[allow(dead_code)]
impl Metrics {
    /// The value of the series `name`, if it was written (a counter appears once counted).
    pub fn find(&self, name: &str) -> Option<f64> {
        self.0
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
    }

    /// The value of the series `name` (with its labels, if any), as written.
    pub fn value(&self, name: &str) -> f64 {
        self.0
            .lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {name} in:\n{}", self.0))
            .parse()
            .expect("a number")
    }
}
