//! A fault-injecting network for cluster tests: every connection between nodes goes through
//! a proxy in front of the node it reaches, so a test can cut a node off the others without
//! stopping it, and heal the cut.
//!
//! A connection's source is read from the client id of its first request: nodes name
//! themselves (`sluice-broker-N`, `sluice-replica-fetcher-N`, `sluice-controller-N`; Kafka's
//! `raft-client-N`, `broker-N-...`, `AddPartitionsManager-client-N` and `N`); any other
//! client id is a client. A cut-off node is unreachable for clients too, through the
//! proxies; a test plays a client on its side of the cut by connecting to the node's own
//! listener.
//!
//! A cut can also be narrower: one kind of a node's connections, named by client id (say
//! `sluice-broker-2`, node 2's requests to the active controller, while its replica fetches
//! and Raft messages go on), or the links between sides of a partition (majority/minority,
//! a bridge node on both sides) while clients still reach every node.
//!
//! Cut traffic is black-holed, as in a real partition: bytes are read and dropped, so the
//! sender sees no error and waits for its timeouts. At heal, the black-holed connections are
//! reset (their byte streams lost data and cannot resume) and new connections flow again.
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The proxies of one test cluster and the cuts between its nodes.
pub struct Network {
    state: Arc<State>,
    proxy_ports: Mutex<Vec<u16>>,
}

#[derive(Default)]
struct State {
    cuts: Mutex<Cuts>,
    /// Client ids whose connections are cut, wherever they go.
    cut_client_ids: Mutex<HashSet<String>>,
    connections: Mutex<Vec<Arc<Connection>>>,
    stopping: AtomicBool,
}

struct Connection {
    /// The node that opened it, `None` for a client.
    source: Option<u32>,
    client_id: String,
    target: u32,
    downstream: TcpStream,
    upstream: TcpStream,
    /// Set once the connection lost bytes to a cut; it is reset at heal.
    blackholed: AtomicBool,
}

/// The cuts between nodes.
#[derive(Default)]
struct Cuts {
    /// Nodes cut off every other node and clients.
    isolated: HashSet<u32>,
    /// (source, target) links cut between nodes.
    links: HashSet<(u32, u32)>,
}

/// Whether traffic from `source` (`None`: a client) to node `target` is cut.
fn cut(cuts: &Cuts, source: Option<u32>, target: u32) -> bool {
    let isolated = &cuts.isolated;
    match source {
        Some(source) if source == target => false,
        Some(source) => {
            isolated.contains(&source)
                || isolated.contains(&target)
                || cuts.links.contains(&(source, target))
        }
        None => isolated.contains(&target),
    }
}

impl State {
    /// Whether a chunk on `connection` may pass now; a connection that was cut once never
    /// passes again.
    fn passes(&self, connection: &Connection) -> bool {
        if connection.blackholed.load(Ordering::SeqCst) {
            return false;
        }
        let cuts = self.cuts.lock().unwrap();
        if cut(&cuts, connection.source, connection.target)
            || self
                .cut_client_ids
                .lock()
                .unwrap()
                .contains(&connection.client_id)
        {
            // Set under the lock: `heal` clears the cut under it and then resets every
            // connection marked here.
            connection.blackholed.store(true, Ordering::SeqCst);
            return false;
        }
        true
    }
}

impl Connection {
    fn close(&self) {
        let _ = self.downstream.shutdown(Shutdown::Both);
        let _ = self.upstream.shutdown(Shutdown::Both);
    }
}

impl Network {
    pub fn new() -> Self {
        Self {
            state: Arc::default(),
            proxy_ports: Mutex::default(),
        }
    }

    /// Starts a proxy to `upstream_port` (on loopback) of node `target` and returns the port
    /// it listens on.
    pub fn proxy(&self, target: u32, upstream_port: u16) -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        self.proxy_ports.lock().unwrap().push(port);
        let state = self.state.clone();
        std::thread::spawn(move || {
            for downstream in listener.incoming() {
                if state.stopping.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(downstream) = downstream else { continue };
                let state = state.clone();
                std::thread::spawn(move || serve(state, downstream, target, upstream_port));
            }
        });
        port
    }

    /// Cuts `node` off every other node and off clients.
    pub fn isolate(&self, node: u32) {
        let mut cuts = self.state.cuts.lock().unwrap();
        cuts.isolated.insert(node);
        self.blackhole_cut(&cuts);
    }

    /// Splits `nodes` into `sides`: a node reaches only the nodes it shares a side with (a
    /// node on two sides is a bridge between them). Clients still reach every node.
    pub fn partition(&self, nodes: &[u32], sides: &[Vec<u32>]) {
        let mut cuts = self.state.cuts.lock().unwrap();
        for a in nodes {
            for b in nodes {
                let together = sides.iter().any(|s| s.contains(a) && s.contains(b));
                if a != b && !together {
                    cuts.links.insert((*a, *b));
                }
            }
        }
        self.blackhole_cut(&cuts);
    }

    fn blackhole_cut(&self, cuts: &Cuts) {
        for connection in self.state.connections.lock().unwrap().iter() {
            if cut(cuts, connection.source, connection.target) {
                connection.blackholed.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Cuts every connection whose client id is `client_id`, open or opened later.
    pub fn cut_client(&self, client_id: &str) {
        let _cuts = self.state.cuts.lock().unwrap();
        self.state
            .cut_client_ids
            .lock()
            .unwrap()
            .insert(client_id.to_string());
        for connection in self.state.connections.lock().unwrap().iter() {
            if connection.client_id == client_id {
                connection.blackholed.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Removes every cut; connections that lost bytes to one are reset.
    pub fn heal(&self) {
        let mut cuts = self.state.cuts.lock().unwrap();
        *cuts = Cuts::default();
        self.state.cut_client_ids.lock().unwrap().clear();
        drop(cuts);
        let mut connections = self.state.connections.lock().unwrap();
        for connection in connections.iter() {
            if connection.blackholed.load(Ordering::SeqCst) {
                connection.close();
            }
        }
        connections.retain(|c| !c.blackholed.load(Ordering::SeqCst));
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        self.state.stopping.store(true, Ordering::SeqCst);
        for port in self.proxy_ports.lock().unwrap().iter() {
            // Wakes the accept loop, which then sees `stopping`.
            let _ = TcpStream::connect(("127.0.0.1", *port));
        }
        for connection in self.state.connections.lock().unwrap().drain(..) {
            connection.close();
        }
    }
}

/// The node a client id names, if it is one of a node's own connections.
fn node_of_client_id(client_id: &str) -> Option<u32> {
    let sluice = [
        "sluice-broker-",
        "sluice-replica-fetcher-",
        "sluice-controller-",
    ]
    .iter()
    .find_map(|prefix| client_id.strip_prefix(prefix))
    // A dynamic quorum's voter adds where it listens: `sluice-controller-N@host:port`.
    .and_then(|node| node.split('@').next()?.parse().ok());
    // Apache Kafka 4.4's nodes (the harness against Kafka), as seen through the proxy:
    // `raft-client-N` (the quorum), `broker-N-fetcher-M` and `broker-N-txn-marker-sender`,
    // `AddPartitionsManager-client-N` (KIP-890 verification), and the bare node id N (its
    // channels to the controller).
    let kafka = || {
        if !client_id.is_empty() && client_id.chars().all(|c| c.is_ascii_digit()) {
            return client_id.parse().ok();
        }
        let rest = ["raft-client-", "broker-", "AddPartitionsManager-client-"]
            .iter()
            .find_map(|prefix| client_id.strip_prefix(prefix))?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    };
    sluice.or_else(kafka)
}

fn serve(state: Arc<State>, mut downstream: TcpStream, target: u32, upstream_port: u16) {
    // The first request's header: size (4), api key (2), version (2), correlation id (4),
    // client id length (2), client id.
    let mut first = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let client_id = loop {
        if first.len() >= 14 {
            let length = i16::from_be_bytes([first[12], first[13]]).max(0) as usize;
            if first.len() >= 14 + length {
                break String::from_utf8_lossy(&first[14..14 + length]).into_owned();
            }
        }
        match downstream.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => first.extend_from_slice(&chunk[..n]),
        }
    };
    let Ok(mut upstream) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
        return;
    };
    let _ = upstream.set_nodelay(true);
    let _ = downstream.set_nodelay(true);
    let connection = Arc::new(Connection {
        source: node_of_client_id(&client_id),
        client_id,
        target,
        downstream: downstream.try_clone().unwrap(),
        upstream: upstream.try_clone().unwrap(),
        blackholed: AtomicBool::new(false),
    });
    state.connections.lock().unwrap().push(connection.clone());
    if state.passes(&connection) && upstream.write_all(&first).is_err() {
        connection.close();
        return;
    }
    let responses = {
        let state = state.clone();
        let connection = connection.clone();
        let upstream = upstream.try_clone().unwrap();
        let downstream = downstream.try_clone().unwrap();
        std::thread::spawn(move || pump(&state, &connection, upstream, downstream))
    };
    pump(&state, &connection, downstream, upstream);
    let _ = responses.join();
}

/// Copies `from` to `to` while the connection is not cut, drops the bytes while it is.
fn pump(state: &State, connection: &Connection, mut from: TcpStream, mut to: TcpStream) {
    let mut chunk = [0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if state.passes(connection) && to.write_all(&chunk[..n]).is_err() {
            break;
        }
    }
    connection.close();
}

/// A proxy in front of one broker that sends every Produce request twice: the copy carries a
/// correlation id of its own (negative, never a client's), and its response is dropped. An
/// idempotent producer's batches thus reach the broker as retried duplicates.
pub struct ProduceReplayer {
    pub port: u16,
    replayed: Arc<std::sync::atomic::AtomicUsize>,
}

impl ProduceReplayer {
    pub fn start(listener: TcpListener, upstream_port: u16) -> Self {
        let port = listener.local_addr().unwrap().port();
        let replayed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counter = replayed.clone();
        std::thread::spawn(move || {
            for downstream in listener.incoming() {
                let Ok(downstream) = downstream else { continue };
                let Ok(upstream) = TcpStream::connect(("127.0.0.1", upstream_port)) else {
                    continue;
                };
                let _ = downstream.set_nodelay(true);
                let _ = upstream.set_nodelay(true);
                let counter = counter.clone();
                let (down_read, up_write) = (
                    downstream.try_clone().unwrap(),
                    upstream.try_clone().unwrap(),
                );
                std::thread::spawn(move || replay_requests(down_read, up_write, &counter));
                std::thread::spawn(move || drop_replayed_responses(upstream, downstream));
            }
        });
        Self { port, replayed }
    }

    /// How many Produce requests were sent a second time.
    pub fn replayed(&self) -> usize {
        self.replayed.load(Ordering::SeqCst)
    }
}

fn read_frame(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut size = [0u8; 4];
    stream.read_exact(&mut size).ok()?;
    let mut frame = vec![0u8; i32::from_be_bytes(size).max(0) as usize];
    stream.read_exact(&mut frame).ok()?;
    Some(frame)
}

fn write_frame(stream: &mut TcpStream, frame: &[u8]) -> bool {
    let mut out = Vec::with_capacity(4 + frame.len());
    out.extend_from_slice(&(frame.len() as i32).to_be_bytes());
    out.extend_from_slice(frame);
    stream.write_all(&out).is_ok()
}

fn replay_requests(
    mut from: TcpStream,
    mut to: TcpStream,
    replayed: &std::sync::atomic::AtomicUsize,
) {
    let mut next_id = i32::MIN;
    while let Some(frame) = read_frame(&mut from) {
        if !write_frame(&mut to, &frame) {
            break;
        }
        let is_produce = frame.len() >= 8 && i16::from_be_bytes([frame[0], frame[1]]) == 0;
        if is_produce {
            let mut copy = frame.clone();
            copy[4..8].copy_from_slice(&next_id.to_be_bytes());
            next_id += 1;
            if !write_frame(&mut to, &copy) {
                break;
            }
            replayed.fetch_add(1, Ordering::SeqCst);
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}

fn drop_replayed_responses(mut from: TcpStream, mut to: TcpStream) {
    while let Some(frame) = read_frame(&mut from) {
        let injected =
            frame.len() >= 4 && i32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]) < 0;
        if !injected && !write_frame(&mut to, &frame) {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
}
