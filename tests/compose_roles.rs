//! `docker/compose.roles.yml` without a container engine: Kafka's isolated topology (three
//! controller-only nodes, three broker-only nodes) from the compose file's own environments.
//! Each service's environment goes through the image's mapping (`sluice env-properties`, which
//! the image's run script renders the broker's configuration with) and its format step; the
//! services' hostnames and container ports become loopback ports, one per service and port, and
//! each runs as a process. A producer with `acks=all` writes through the brokers' host
//! listeners, and a consumer reads everything back.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Broker, broker_binary, free_port, metadata_of, wait_until};
use rdkafka::Message;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::collections::BTreeMap;
use std::process::Command;
use std::time::Duration;

/// The image's default cluster id (apache/kafka's), which every service formats with.
const CLUSTER_ID: &str = "5L6g3nShT-eMCtK--X86sw";

/// One compose service: its environment and published ports (host, container).
#[derive(Debug, Default)]
struct Service {
    environment: Vec<(String, String)>,
    ports: Vec<(u16, u16)>,
}

/// The services of a compose file written as the repository's are: names at two spaces,
/// `environment:` `KEY: value` lines and `ports:` `- "host:container"` items below them.
fn services(file: &str) -> BTreeMap<String, Service> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(path).unwrap();
    let mut services: BTreeMap<String, Service> = BTreeMap::new();
    let (mut in_services, mut current, mut section) = (false, None::<String>, "");
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        match indent {
            0 => in_services = trimmed == "services:",
            2 if in_services => {
                let name = trimmed.trim_end_matches(':').to_string();
                services.entry(name.clone()).or_default();
                current = Some(name);
            }
            4 => {
                section = if trimmed == "environment:" || trimmed == "ports:" {
                    trimmed
                } else {
                    ""
                }
            }
            6 => {
                let Some(service) = current.as_ref().and_then(|n| services.get_mut(n)) else {
                    continue;
                };
                if section == "environment:" {
                    let (key, value) = trimmed.split_once(':').unwrap();
                    let value = value.trim().trim_matches('"').to_string();
                    service.environment.push((key.trim().to_string(), value));
                } else if section == "ports:" {
                    let item = trimmed.trim_start_matches('-').trim().trim_matches('"');
                    let (host, container) = item.split_once(':').unwrap();
                    service
                        .ports
                        .push((host.parse().unwrap(), container.parse().unwrap()));
                }
            }
            _ => {}
        }
    }
    services
}

/// The broker properties the image renders from `environment` (`sluice env-properties`).
fn rendered(environment: &[(String, String)]) -> Vec<(String, String)> {
    let output = Command::new(broker_binary())
        .arg("env-properties")
        .env_clear()
        .envs(environment.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(output.status.success(), "env-properties: {output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// The container ports `listeners` binds (`NAME://host:port,...`).
fn listener_ports(listeners: &str) -> Vec<u16> {
    listeners
        .split(',')
        .filter_map(|l| l.rsplit(':').next()?.parse().ok())
        .collect()
}

#[test]
fn the_isolated_roles_compose_file_runs_a_cluster() {
    let services = services("docker/compose.roles.yml");
    let roles: Vec<(&str, String)> = services
        .iter()
        .map(|(name, s)| {
            let role = s
                .environment
                .iter()
                .find(|(k, _)| k == "KAFKA_PROCESS_ROLES");
            (
                name.as_str(),
                role.map(|(_, v)| v.clone()).unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        roles.iter().filter(|(_, r)| r == "controller").count(),
        3,
        "{roles:?}"
    );
    assert_eq!(
        roles.iter().filter(|(_, r)| r == "broker").count(),
        3,
        "{roles:?}"
    );

    // Each service's properties, then a loopback port for each (service, container port).
    let mut properties: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    let mut loopback: BTreeMap<(String, u16), u16> = BTreeMap::new();
    for (name, service) in &services {
        let rendered = rendered(&service.environment);
        let listeners = rendered.iter().find(|(k, _)| k == "listeners").unwrap();
        for port in listener_ports(&listeners.1) {
            loopback.insert((name.clone(), port), free_port());
        }
        properties.insert(name, rendered);
    }
    // Hostnames and ports as each process sees them: a service's `name:port`, its own
    // `0.0.0.0:port`, and `localhost:published` on the host.
    let on_loopback = |own: &str, value: &str| {
        let mut value = value.to_string();
        for ((name, port), local) in &loopback {
            value = value.replace(&format!("{name}:{port}"), &format!("127.0.0.1:{local}"));
            if name == own {
                value = value.replace(&format!("0.0.0.0:{port}"), &format!("127.0.0.1:{local}"));
                for (published, container) in &services[name].ports {
                    if container == port {
                        value = value.replace(
                            &format!("localhost:{published}"),
                            &format!("127.0.0.1:{local}"),
                        );
                    }
                }
            }
        }
        value
    };

    let mut nodes = Vec::new();
    let mut dirs = Vec::new();
    let mut host_listeners = Vec::new();
    for (name, rendered) in &properties {
        let settings: Vec<(String, String)> = rendered
            .iter()
            .map(|(k, v)| (k.clone(), on_loopback(name, v)))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        // The image's format step (kafka-storage format --ignore-formatted -t CLUSTER_ID).
        let mut format = Command::new(broker_binary());
        format.args(["format", "--ignore-formatted", "-t", CLUSTER_ID]);
        for (key, value) in &settings {
            format.arg("--override").arg(format!("{key}={value}"));
        }
        format
            .arg("--override")
            .arg(format!("log.dirs={}", dir.path().display()));
        let formatted = format.output().unwrap();
        assert!(formatted.status.success(), "format {name}: {formatted:?}");
        if let Some(&(published, container)) = services[*name].ports.first() {
            assert!(published > 0);
            host_listeners.push(format!(
                "127.0.0.1:{}",
                loopback[&(name.to_string(), container)]
            ));
        }
        let overrides: Vec<(&str, &str)> = settings
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let (node, _lines) = Broker::spawn(dir.path(), &overrides, "info");
        nodes.push(node);
        dirs.push(dir);
    }
    let bootstrap = host_listeners.join(",");
    assert_eq!(host_listeners.len(), 3);

    // Only the brokers are in the metadata; the controllers host nothing.
    assert!(
        wait_until(Duration::from_secs(60), || {
            std::panic::catch_unwind(|| metadata_of(&host_listeners[0]))
                .is_ok_and(|m| m.brokers.len() == 3)
        }),
        "three brokers registered"
    );
    let brokers: Vec<i32> = metadata_of(&host_listeners[0])
        .brokers
        .iter()
        .map(|b| b.node_id.0)
        .collect();
    assert_eq!(brokers, vec![4, 5, 6]);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("acks", "all")
        .set("enable.idempotence", "true")
        .create()
        .unwrap();
    runtime.block_on(async {
        for i in 0..300 {
            let key = i.to_string();
            producer
                .send(
                    FutureRecord::to("roles")
                        .key(&key)
                        .payload("from the compose file"),
                    Duration::from_secs(60),
                )
                .await
                .unwrap();
        }
    });
    let metadata = metadata_of(&host_listeners[1]);
    let topic = metadata
        .topics
        .iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == "roles"))
        .unwrap();
    // The compose file's defaults: 3 partitions, 3 replicas, all on brokers.
    assert_eq!(topic.partitions.len(), 3);
    for partition in &topic.partitions {
        let mut replicas: Vec<i32> = partition.replica_nodes.iter().map(|r| r.0).collect();
        replicas.sort();
        assert_eq!(replicas, vec![4, 5, 6], "{partition:?}");
    }

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &bootstrap)
        .set("group.id", "compose-roles")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    consumer.subscribe(&["roles"]).unwrap();
    let mut keys = std::collections::BTreeSet::new();
    let read = wait_until(Duration::from_secs(60), || {
        if let Some(Ok(message)) = consumer.poll(Duration::from_millis(200)) {
            keys.insert(String::from_utf8_lossy(message.key().unwrap_or_default()).to_string());
        }
        keys.len() == 300
    });
    assert!(read, "read back {} of 300", keys.len());
    // The clients leave while the cluster still answers them.
    drop(consumer);
    drop(producer);
    drop(nodes);
}
