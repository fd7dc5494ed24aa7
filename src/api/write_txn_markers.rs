//! WriteTxnMarkers (v1–2): a transaction coordinator ends a producer's transaction on the
//! partitions this broker leads, with a commit or abort marker in each; [`MarkerSender`] is
//! the coordinator's side, sending it to other brokers. Each partition is
//! answered once its marker is replicated to the ISR (markers are written with acks=all, as
//! Kafka does), so the coordinator only completes a transaction every replica can show.

use super::{ApiContext, wire_str};
use crate::broker::Broker;
use crate::error::{Error, code};
use crate::net::PeerConnection;
use crate::record::control::{Marker, MarkerKind};
use crate::txn::coordinator::{BoxFuture, MarkerRequest, MarkerWriter};
use crate::types::TopicPartition;
use kafka_protocol::messages::write_txn_markers_request::{
    WritableTxnMarker, WritableTxnMarkerTopic,
};
use kafka_protocol::messages::write_txn_markers_response::{
    WritableTxnMarkerPartitionResult, WritableTxnMarkerResult, WritableTxnMarkerTopicResult,
};
use kafka_protocol::messages::{
    ApiKey, ProducerId, TopicName, WriteTxnMarkersRequest, WriteTxnMarkersResponse,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

pub async fn handle(
    ctx: &ApiContext,
    request: WriteTxnMarkersRequest,
    version: i16,
) -> Option<WriteTxnMarkersResponse> {
    let mut markers = Vec::with_capacity(request.markers.len());
    for entry in request.markers {
        let marker = Marker {
            kind: if entry.transaction_result {
                MarkerKind::Commit
            } else {
                MarkerKind::Abort
            },
            coordinator_epoch: entry.coordinator_epoch,
        };
        // v2 says which transaction version the marker ends (KIP-890); v1 markers are of
        // the older versions.
        let transaction_version = if version >= 2 {
            i16::from(entry.transaction_version)
        } else {
            0
        };
        let mut topics = Vec::with_capacity(entry.topics.len());
        for topic in entry.topics {
            let mut partitions = Vec::with_capacity(topic.partition_indexes.len());
            for index in topic.partition_indexes {
                let tp = TopicPartition::new(&topic.name, index);
                let request = MarkerRequest {
                    producer_id: entry.producer_id.0,
                    producer_epoch: entry.producer_epoch,
                    commit: marker.kind == MarkerKind::Commit,
                    coordinator_epoch: marker.coordinator_epoch,
                    transaction_version,
                };
                let outcome = ctx.broker.write_marker(&tp, request).await;
                partitions.push(
                    WritableTxnMarkerPartitionResult::default()
                        .with_partition_index(index)
                        .with_error_code(outcome.err().map_or(code::NONE, |e| e.code())),
                );
            }
            topics.push(
                WritableTxnMarkerTopicResult::default()
                    .with_name(topic.name)
                    .with_partitions(partitions),
            );
        }
        markers.push(
            WritableTxnMarkerResult::default()
                .with_producer_id(entry.producer_id)
                .with_topics(topics),
        );
    }
    Some(WriteTxnMarkersResponse::default().with_markers(markers))
}

/// Sends a transaction coordinator's markers to the brokers leading the partitions, with
/// WriteTxnMarkers over their inter-broker listener (one request per leader per round).
#[derive(Debug)]
pub struct MarkerSender {
    broker: Weak<Broker>,
    client_id: String,
    security: crate::net::PeerSecurity,
}

impl MarkerSender {
    pub fn new(broker: &Arc<Broker>, security: crate::net::PeerSecurity) -> Self {
        Self {
            client_id: format!("sluice-broker-{}", broker.node_id()),
            broker: Arc::downgrade(broker),
            security,
        }
    }

    async fn send(
        &self,
        broker: &Broker,
        leader: i32,
        marker: MarkerRequest,
        partitions: &[TopicPartition],
    ) -> Result<Vec<Result<(), Error>>, Error> {
        let listener = &broker.config().cluster.inter_broker_listener;
        let image = broker.metadata().image();
        let endpoint = image
            .brokers
            .get(&leader)
            .and_then(|b| b.endpoint(listener))
            .ok_or(Error::NotLeaderOrFollower)?;
        let address = format!("{}:{}", endpoint.host, endpoint.port);
        let timeout = Duration::from_millis(broker.config().cluster.replica_socket_timeout_ms);
        let mut topics: Vec<WritableTxnMarkerTopic> = Vec::new();
        for tp in partitions {
            match topics.iter_mut().find(|t| t.name.as_str() == &*tp.topic) {
                Some(topic) => topic.partition_indexes.push(tp.partition),
                None => topics.push(
                    WritableTxnMarkerTopic::default()
                        .with_name(TopicName(wire_str(&tp.topic)))
                        .with_partition_indexes(vec![tp.partition]),
                ),
            }
        }
        let request = WriteTxnMarkersRequest::default().with_markers(vec![
            WritableTxnMarker::default()
                .with_producer_id(ProducerId(marker.producer_id))
                .with_producer_epoch(marker.producer_epoch)
                .with_transaction_result(marker.commit)
                .with_coordinator_epoch(marker.coordinator_epoch)
                .with_transaction_version(i8::try_from(marker.transaction_version).unwrap_or(0))
                .with_topics(topics),
        ]);
        // v2 carries the transaction version; a marker of the older versions goes as v1.
        let version = if marker.transaction_version >= 2 {
            2
        } else {
            1
        };
        let mut connection =
            PeerConnection::connect(&address, &self.client_id, timeout, &self.security)
                .await
                .map_err(|_| Error::NotLeaderOrFollower)?;
        let response: WriteTxnMarkersResponse = connection
            .request(ApiKey::WriteTxnMarkers, version, &request, timeout)
            .await
            .map_err(|_| Error::NotLeaderOrFollower)?;
        let answered: Vec<(String, i32, i16)> = response
            .markers
            .iter()
            .flat_map(|m| m.topics.iter())
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(|p| (t.name.to_string(), p.partition_index, p.error_code))
            })
            .collect();
        Ok(partitions
            .iter()
            .map(|tp| {
                let code = answered
                    .iter()
                    .find(|(topic, p, _)| topic == &*tp.topic && *p == tp.partition)
                    .map_or(code::UNKNOWN_SERVER_ERROR, |(_, _, code)| *code);
                match Error::from_code(code, None) {
                    None => Ok(()),
                    Some(e) => Err(e),
                }
            })
            .collect())
    }
}

impl MarkerWriter for MarkerSender {
    fn write_markers<'a>(
        &'a self,
        marker: MarkerRequest,
        partitions: &'a [TopicPartition],
    ) -> BoxFuture<'a, Vec<Result<(), Error>>> {
        Box::pin(async move {
            let Some(broker) = self.broker.upgrade() else {
                return partitions
                    .iter()
                    .map(|_| Err(Error::NotLeaderOrFollower))
                    .collect();
            };
            let mut by_leader: BTreeMap<i32, Vec<usize>> = BTreeMap::new();
            let mut results: Vec<Result<(), Error>> = partitions
                .iter()
                .map(|_| Err(Error::NotLeaderOrFollower))
                .collect();
            for (i, tp) in partitions.iter().enumerate() {
                if let Some(leader) = broker.partition_state(tp).leader {
                    by_leader.entry(leader).or_default().push(i);
                }
            }
            for (leader, indexes) in by_leader {
                let targets: Vec<TopicPartition> =
                    indexes.iter().map(|i| partitions[*i].clone()).collect();
                match self.send(&broker, leader, marker, &targets).await {
                    Ok(answers) => {
                        for (i, answer) in indexes.into_iter().zip(answers) {
                            results[i] = answer;
                        }
                    }
                    Err(e) => {
                        tracing::debug!(leader, error = %e, "sending transaction markers failed")
                    }
                }
            }
            results
        })
    }
}
