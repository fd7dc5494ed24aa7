//! A cluster of real broker processes on loopback: combined nodes, or controllers and brokers
//! apart, static or dynamic (KIP-853) quorums, racks, a proxied network for partitions, fake
//! wall clocks; each node a [`Broker`] in its own data directory.

use super::*;

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
