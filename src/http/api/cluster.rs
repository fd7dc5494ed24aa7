//! `GET /api/v1/cluster`: the cluster as this broker sees it — identity, controller, brokers,
//! and the health figures an operator looks at first.

use super::ApiResult;
use crate::broker::Broker;
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use std::sync::Arc;

#[derive(Debug, Serialize)]
pub struct Overview {
    pub cluster_id: String,
    /// Who the request is, as ACLs name principals (`User:ANONYMOUS` without credentials).
    pub principal: String,
    /// The broker answering.
    pub node_id: i32,
    /// The active controller, -1 when none is known.
    pub controller_id: i32,
    pub version: &'static str,
    pub uptime_seconds: u64,
    pub brokers: Vec<BrokerView>,
    pub topics: usize,
    pub partitions: usize,
    /// Partitions with fewer in-sync replicas than replicas.
    pub under_replicated_partitions: usize,
    /// Partitions without a leader.
    pub offline_partitions: usize,
}
// Topic and partition figures count the topics the principal may describe.

#[derive(Debug, Serialize)]
pub struct BrokerView {
    pub id: i32,
    pub endpoints: Vec<String>,
    pub rack: Option<String>,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
}

pub async fn overview(
    State(broker): State<Arc<Broker>>,
    access: crate::http::access::Access,
) -> ApiResult<Overview> {
    let image = broker.metadata().image();
    let topics = || image.topics.values().filter(|t| access.sees_topic(&t.name));
    let partitions = || topics().flat_map(|t| t.partitions.iter());
    let uptime = broker
        .stats()
        .started
        .elapsed()
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Ok(Json(Overview {
        cluster_id: broker.cluster_id(),
        principal: access.principal().to_string(),
        node_id: broker.node_id(),
        controller_id: broker.controller_id(),
        version: env!("CARGO_PKG_VERSION"),
        uptime_seconds: uptime,
        brokers: image
            .brokers
            .values()
            .map(|b| BrokerView {
                id: b.id,
                endpoints: b
                    .endpoints
                    .iter()
                    .map(|e| format!("{}://{}:{}", e.name, e.host, e.port))
                    .collect(),
                rack: b.rack.clone(),
                fenced: b.fenced,
                in_controlled_shutdown: b.in_controlled_shutdown,
            })
            .collect(),
        topics: topics().count(),
        partitions: partitions().count(),
        under_replicated_partitions: partitions()
            .filter(|p| p.isr.len() < p.replicas.len())
            .count(),
        offline_partitions: partitions().filter(|p| p.leader < 0).count(),
    }))
}
