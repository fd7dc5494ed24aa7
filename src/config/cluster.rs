//! Listeners and the cluster's shape: `listeners` / `advertised.listeners` entries, the
//! controller quorum's voters and bootstrap servers, `process.roles`, and the replication
//! settings, checked by KRaft's rules.

use super::{ConfigError, SecurityProtocol, invalid};
use std::net::SocketAddr;

/// A client listener: name and address to bind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerConfig {
    pub name: String,
    pub host: String,
    pub port: u16,
    /// From `listener.security.protocol.map` (a name it does not list is PLAINTEXT).
    pub protocol: SecurityProtocol,
}

impl ListenerConfig {
    pub fn parse_list(property: &str, value: &str) -> Result<Vec<Self>, ConfigError> {
        let mut out = Vec::new();
        for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (name, address) = item
                .split_once("://")
                .ok_or_else(|| invalid(property, item, "expected NAME://host:port"))?;
            let (host, port) = address
                .rsplit_once(':')
                .ok_or_else(|| invalid(property, item, "expected NAME://host:port"))?;
            let port = port
                .parse::<u16>()
                .map_err(|_| invalid(property, item, "port must be 0-65535"))?;
            let host = host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            out.push(Self {
                name: name.to_string(),
                host,
                port,
                protocol: SecurityProtocol::Plaintext,
            });
        }
        if out.is_empty() {
            return Err(invalid(property, value, "no listener given"));
        }
        Ok(out)
    }

    /// The socket address to bind (empty host means all interfaces).
    pub fn bind_address(&self) -> Result<SocketAddr, ConfigError> {
        let host = if self.host.is_empty() {
            "0.0.0.0"
        } else {
            &self.host
        };
        let text = if host.contains(':') {
            format!("[{host}]:{}", self.port)
        } else {
            format!("{host}:{}", self.port)
        };
        text.parse::<SocketAddr>()
            .or_else(|_| {
                std::net::ToSocketAddrs::to_socket_addrs(&text)
                    .ok()
                    .and_then(|mut addrs| addrs.next())
                    .ok_or(())
            })
            .map_err(|_| invalid("listeners", &text, "cannot resolve host"))
    }
}

/// One controller quorum voter from `controller.quorum.voters`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voter {
    pub id: i32,
    pub host: String,
    pub port: u16,
}

/// This node's place in the cluster: roles, the controller quorum, inter-broker settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterConfig {
    pub broker_role: bool,
    pub controller_role: bool,
    /// The quorum's voters. On a single node left unconfigured: this node alone, with no
    /// address (it never talks to another voter).
    pub voters: Vec<Voter>,
    /// Controller addresses a broker-only node contacts when `voters` is empty.
    pub bootstrap_servers: Vec<(String, u16)>,
    /// The listener controllers bind for quorum traffic (the first controller listener name).
    pub controller_listener: String,
    /// The listener followers fetch from and brokers advertise to each other.
    pub inter_broker_listener: String,
    pub rack: Option<String>,
    /// `replica.selector.class` is Kafka's RackAwareReplicaSelector: leaders send consumers
    /// to an in-sync replica in their rack (KIP-392).
    pub rack_aware_reads: bool,
    pub replica_lag_time_max_ms: i64,
    pub replica_fetch_max_bytes: i32,
    pub replica_fetch_response_max_bytes: i32,
    pub replica_fetch_wait_max_ms: i32,
    pub replica_fetch_min_bytes: i32,
    pub replica_fetch_backoff_ms: u64,
    pub replica_socket_timeout_ms: u64,
    pub broker_session_timeout_ms: i64,
    pub broker_heartbeat_interval_ms: u64,
    pub election_timeout_ms: u64,
    pub offsets_topic_replication_factor: i32,
    pub transaction_state_replication_factor: i32,
    /// `share.coordinator.state.topic.replication.factor`.
    pub share_state_replication_factor: i32,
}

impl ClusterConfig {
    /// One node that is the whole cluster: the zero-configuration default.
    pub fn is_single_node(&self) -> bool {
        self.voters.len() <= 1
            && self.bootstrap_servers.len() <= 1
            && self.broker_role
            && self.controller_role
    }

    /// A controller of a dynamic quorum (KIP-853): it knows the quorum through
    /// `controller.quorum.bootstrap.servers` alone, and controllers are added and removed
    /// while it runs (`kafka-metadata-quorum add-controller / remove-controller`).
    pub fn is_dynamic_quorum(&self) -> bool {
        self.controller_role && self.voters.is_empty() && !self.bootstrap_servers.is_empty()
    }

    fn parse_voters(value: &str) -> Result<Vec<Voter>, ConfigError> {
        let name = "controller.quorum.voters";
        let mut voters: Vec<Voter> = Vec::new();
        for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let bad = || invalid(name, item, "expected id@host:port");
            let (id, address) = item.split_once('@').ok_or_else(bad)?;
            let (host, port) = address.rsplit_once(':').ok_or_else(bad)?;
            let voter = Voter {
                id: id.parse().map_err(|_| bad())?,
                host: host
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string(),
                port: port.parse().map_err(|_| bad())?,
            };
            if voter.id < 0 || voters.iter().any(|v| v.id == voter.id) {
                return Err(invalid(name, item, "voter ids must be distinct and >= 0"));
            }
            voters.push(voter);
        }
        Ok(voters)
    }

    fn parse_bootstrap(value: &str) -> Result<Vec<(String, u16)>, ConfigError> {
        let name = "controller.quorum.bootstrap.servers";
        value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|item| {
                let (host, port) = item
                    .rsplit_once(':')
                    .ok_or_else(|| invalid(name, item, "expected host:port"))?;
                let port = port
                    .parse()
                    .map_err(|_| invalid(name, item, "expected host:port"))?;
                Ok((host.to_string(), port))
            })
            .collect()
    }

    /// Kafka's KRaft checks, in its words where it has them.
    pub(super) fn from_values(
        get: &dyn Fn(&str) -> Option<String>,
        int: &dyn Fn(&str) -> i64,
        node_id: i32,
        listeners: &[ListenerConfig],
        explicit_inter_broker_protocol: bool,
    ) -> Result<Self, ConfigError> {
        let roles_text = get("process.roles").unwrap_or_default();
        let roles: Vec<&str> = roles_text.split(',').map(str::trim).collect();
        let broker_role = roles.contains(&"broker");
        let controller_role = roles.contains(&"controller");
        let controller_names: Vec<String> = get("controller.listener.names")
            .unwrap_or_default()
            .split(',')
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
            .collect();
        let controller_listener = controller_names
            .first()
            .cloned()
            .ok_or_else(|| invalid("controller.listener.names", "", "no listener name given"))?;
        let voters = match get("controller.quorum.voters") {
            Some(text) => Self::parse_voters(&text)?,
            None => Vec::new(),
        };
        let bootstrap_servers = match get("controller.quorum.bootstrap.servers") {
            Some(text) => Self::parse_bootstrap(&text)?,
            None => Vec::new(),
        };
        let is_controller_listener = |l: &ListenerConfig| controller_names.contains(&l.name);
        let voters_text = get("controller.quorum.voters").unwrap_or_default();
        if controller_role {
            if !voters.is_empty() && !voters.iter().any(|v| v.id == node_id) {
                return Err(invalid(
                    "controller.quorum.voters",
                    &voters_text,
                    format!("node.id {node_id} has the controller role but is not a voter"),
                ));
            }
            let dynamic = voters.is_empty() && !bootstrap_servers.is_empty();
            if (voters.len() > 1 || dynamic)
                && !listeners.iter().any(|l| l.name == controller_listener)
            {
                return Err(invalid(
                    "listeners",
                    "",
                    format!(
                        "a controller in a multi-voter quorum needs a {controller_listener} listener (controller.listener.names)"
                    ),
                ));
            }
        } else if voters.iter().any(|v| v.id == node_id) {
            return Err(invalid(
                "process.roles",
                &roles_text,
                format!(
                    "node.id {node_id} is a voter in controller.quorum.voters, so process.roles must include controller"
                ),
            ));
        }
        if broker_role && !controller_role && voters.is_empty() && bootstrap_servers.is_empty() {
            return Err(invalid(
                "controller.quorum.voters",
                "",
                "a broker-only node needs controller.quorum.voters or controller.quorum.bootstrap.servers",
            ));
        }
        if !broker_role && listeners.iter().any(|l| !is_controller_listener(l)) {
            return Err(invalid(
                "listeners",
                "",
                "a controller-only node may only have controller listeners",
            ));
        }
        if broker_role && listeners.iter().all(is_controller_listener) {
            return Err(invalid(
                "listeners",
                "",
                "a broker needs a listener that is not a controller listener",
            ));
        }
        let inter_broker_protocol = get("security.inter.broker.protocol")
            .filter(|_| get("inter.broker.listener.name").is_none())
            .and_then(|p| SecurityProtocol::from_name(&p));
        let inter_broker_listener = match get("inter.broker.listener.name") {
            Some(_) if explicit_inter_broker_protocol => {
                return Err(invalid(
                    "inter.broker.listener.name",
                    &get("inter.broker.listener.name").unwrap_or_default(),
                    "only one of inter.broker.listener.name and security.inter.broker.protocol may be set",
                ));
            }
            None if explicit_inter_broker_protocol => {
                let protocol = inter_broker_protocol.unwrap_or(SecurityProtocol::Plaintext);
                listeners
                    .iter()
                    .filter(|l| !is_controller_listener(l))
                    .find(|l| l.protocol == protocol)
                    .map(|l| l.name.clone())
                    .ok_or_else(|| {
                        invalid(
                            "security.inter.broker.protocol",
                            protocol.name(),
                            "no broker listener has this security protocol",
                        )
                    })?
            }
            Some(name) => {
                if !listeners.iter().any(|l| l.name == name) || controller_names.contains(&name) {
                    return Err(invalid(
                        "inter.broker.listener.name",
                        &name,
                        "must name a broker listener in listeners",
                    ));
                }
                name
            }
            None => listeners
                .iter()
                .filter(|l| !is_controller_listener(l))
                .find(|l| l.name == "PLAINTEXT")
                .or_else(|| listeners.iter().find(|l| !is_controller_listener(l)))
                .map(|l| l.name.clone())
                .unwrap_or_default(),
        };
        let cluster_of_one = voters.len() <= 1 && broker_role && controller_role;
        Ok(Self {
            broker_role,
            controller_role,
            voters,
            bootstrap_servers,
            controller_listener,
            inter_broker_listener,
            rack: get("broker.rack").filter(|r| !r.is_empty()),
            rack_aware_reads: get("replica.selector.class").is_some_and(|c| !c.is_empty()),
            replica_lag_time_max_ms: int("replica.lag.time.max.ms"),
            replica_fetch_max_bytes: int("replica.fetch.max.bytes") as i32,
            replica_fetch_response_max_bytes: int("replica.fetch.response.max.bytes") as i32,
            replica_fetch_wait_max_ms: int("replica.fetch.wait.max.ms") as i32,
            replica_fetch_min_bytes: int("replica.fetch.min.bytes") as i32,
            replica_fetch_backoff_ms: int("replica.fetch.backoff.ms").max(0) as u64,
            replica_socket_timeout_ms: int("replica.socket.timeout.ms").max(1) as u64,
            broker_session_timeout_ms: int("broker.session.timeout.ms"),
            broker_heartbeat_interval_ms: int("broker.heartbeat.interval.ms").max(1) as u64,
            election_timeout_ms: int("controller.quorum.election.timeout.ms").max(1) as u64,
            offsets_topic_replication_factor: match get("offsets.topic.replication.factor") {
                Some(v) => v.trim().parse().unwrap_or(3),
                None if cluster_of_one => 1,
                None => 3,
            },
            transaction_state_replication_factor: match get(
                "transaction.state.log.replication.factor",
            ) {
                Some(v) => v.trim().parse().unwrap_or(3),
                None if cluster_of_one => 1,
                None => 3,
            },
            share_state_replication_factor: match get(
                "share.coordinator.state.topic.replication.factor",
            ) {
                Some(v) => v.trim().parse().unwrap_or(3),
                None if cluster_of_one => 1,
                None => 3,
            },
        })
    }
}
