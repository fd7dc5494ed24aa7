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

    /// A broker over an existing data directory (restarts).
    pub fn start_in(dir: &Path, overrides: &[(&str, &str)]) -> Self {
        Self::launch(dir, overrides, "info")
    }

    fn launch(dir: &Path, overrides: &[(&str, &str)], filter: &str) -> Self {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sluice"));
        command
            .arg("--override")
            .arg("listeners=PLAINTEXT://127.0.0.1:0")
            .arg("--override")
            .arg(format!("log.dirs={}", dir.display()))
            .env("RUST_LOG", filter)
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in overrides {
            command.arg("--override").arg(format!("{key}={value}"));
        }
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
        let deadline = Instant::now() + Duration::from_secs(60);
        let bootstrap = loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(remaining) {
                Ok(line) => {
                    if let Some(address) = line
                        .split("listening on ")
                        .nth(1)
                        .and_then(|rest| rest.split_whitespace().next())
                    {
                        break address.to_string();
                    }
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!(
                        "broker did not start; log:\n{}",
                        log.lock().unwrap().join("\n")
                    );
                }
            }
        };
        Self {
            child: Some(child),
            bootstrap,
            dir: dir.to_path_buf(),
            _temp: None,
            log,
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
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
