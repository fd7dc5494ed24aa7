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

mod cluster;
pub mod pki;
pub mod proxy;
pub mod raw;

// Each test binary uses a part of the harness (as `dead_code` above).
#[allow(unused_imports)]
pub use cluster::{Cluster, Role};

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
