//! Fetch of `__cluster_metadata` on the controller listener: how a broker-only node (an
//! observer, `controller::observer`) reads the committed metadata from the quorum's leader, as
//! Kafka's brokers fetch it from theirs (KIP-595). The leader answers with the committed
//! entries after the fetch offset as record batches (entry `i` at offset `i - 1`), its high
//! watermark and itself as current leader, holding the request up to `max_wait_ms` while
//! there is nothing new; with the snapshot id to read first (FetchSnapshot) when the offset
//! was compacted; a voter that does not lead answers NOT_LEADER_OR_FOLLOWER naming the leader.
//! The same file is the observer's side: [`MetadataFetcher`] sends these requests.

use super::{ApiContext, metadata_topic, raft_epoch as epoch, wire_str};
use crate::controller::observer::{Answer, BoxFuture, FETCH_MAX_BYTES, Fetched, MetadataSource};
use crate::controller::ops::{MetadataRead, ReadContent, SnapshotChunk};
use crate::controller::service::{ControllerOp, ControllerReply};
use crate::error::{Error, code};
use crate::net::{PeerConnection, PeerSecurity, RequestError};
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic, ReplicaState};
use kafka_protocol::messages::fetch_response::{
    FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData, SnapshotId,
};
use kafka_protocol::messages::{ApiKey, BrokerId, FetchRequest, FetchResponse};
use std::collections::HashMap;
use std::time::Duration;

/// The metadata log's topic id, as Kafka fixes it (`Uuid.METADATA_TOPIC_ID`).
pub const METADATA_TOPIC_ID: uuid::Uuid = uuid::Uuid::from_u128(1);
/// The version an observer fetches with: the metadata topic by id, the replica in
/// `replica_state`, and the leader's address in `node_endpoints` (KIP-951), which a broker that
/// knows only `controller.quorum.bootstrap.servers` needs.
const FETCH_VERSION: i16 = 16;
/// The longest a fetch is held on the leader, whatever it asks.
const MAX_WAIT: Duration = Duration::from_secs(1);

pub async fn handle(
    ctx: &ApiContext,
    request: FetchRequest,
    version: i16,
) -> Option<FetchResponse> {
    let observer = if version >= 15 {
        request.replica_state.replica_id.0
    } else {
        request.replica_id.0
    };
    let mut topics = Vec::new();
    let mut leaders = std::collections::BTreeSet::new();
    for topic in &request.topics {
        let is_metadata = if version >= 13 {
            topic.topic_id == METADATA_TOPIC_ID
        } else {
            topic.topic.as_str() == metadata_topic()
        };
        let mut partitions = Vec::new();
        for asked in &topic.partitions {
            let partition = if is_metadata && asked.partition == 0 {
                let answer = read(ctx, observer, asked.fetch_offset, request.max_wait_ms).await;
                leaders.insert(answer.current_leader.leader_id.0);
                answer
            } else {
                PartitionData::default().with_error_code(code::UNKNOWN_TOPIC_OR_PARTITION)
            };
            partitions.push(partition.with_partition_index(asked.partition));
        }
        topics.push(
            FetchableTopicResponse::default()
                .with_topic(topic.topic.clone())
                .with_topic_id(topic.topic_id)
                .with_partitions(partitions),
        );
    }
    // Where the leader named in the answer listens (v16+): its controller listener.
    let voters = ctx.broker.voter_endpoints();
    let endpoints = leaders
        .into_iter()
        .filter_map(|id| {
            let (_, host, port) = voters.iter().find(|(voter, ..)| *voter == id)?;
            Some(
                NodeEndpoint::default()
                    .with_node_id(BrokerId(id))
                    .with_host(wire_str(host))
                    .with_port(i32::from(*port)),
            )
        })
        .collect();
    let response = FetchResponse::default().with_responses(topics);
    Some(if version >= 16 {
        response.with_node_endpoints(endpoints)
    } else {
        response
    })
}

/// The answer for the metadata partition from `fetch_offset` on.
async fn read(
    ctx: &ApiContext,
    observer: i32,
    fetch_offset: i64,
    max_wait_ms: i32,
) -> PartitionData {
    let controller = ctx.broker.controller();
    if observer < 0 || fetch_offset < 0 {
        return PartitionData::default().with_error_code(code::INVALID_REQUEST);
    }
    let from_index = fetch_offset as u64 + 1;
    let op = ControllerOp::ReadMetadata {
        observer: observer as u64,
        from_index,
        max_bytes: FETCH_MAX_BYTES,
    };
    let mut answer = controller.call(op.clone()).await;
    let nothing_new = matches!(&answer, Ok(ControllerReply::Metadata(MetadataRead {
        content: ReadContent::Entries(batches), ..
    })) if batches.is_empty());
    if nothing_new {
        // Held until the entry asked for is applied here (it is committed then), or the wait
        // is over.
        let wait = Duration::from_millis(max_wait_ms.max(0) as u64).min(MAX_WAIT);
        let mut image = controller.image();
        let arrived = tokio::time::timeout(wait, image.wait_for(|i| i.offset >= from_index))
            .await
            .is_ok_and(|seen| seen.is_ok());
        if arrived {
            answer = controller.call(op).await;
        }
    }
    match answer {
        Ok(ControllerReply::Metadata(read)) => {
            let leader = LeaderIdAndEpoch::default()
                .with_leader_id(BrokerId(read.leader as i32))
                .with_leader_epoch(epoch(read.term));
            let partition = PartitionData::default()
                .with_high_watermark(read.high_watermark as i64)
                .with_current_leader(leader);
            match read.content {
                ReadContent::Entries(batches) => partition.with_records(Some(batches)),
                ReadContent::SnapshotNeeded { index, term } => partition.with_snapshot_id(
                    SnapshotId::default()
                        .with_end_offset(index as i64)
                        .with_epoch(epoch(term)),
                ),
            }
        }
        Ok(_) | Err(Error::NotController) => {
            let status = *controller.status().borrow();
            PartitionData::default()
                .with_error_code(code::NOT_LEADER_OR_FOLLOWER)
                .with_current_leader(
                    LeaderIdAndEpoch::default()
                        .with_leader_id(BrokerId(status.leader.map_or(-1, |l| l as i32)))
                        .with_leader_epoch(epoch(status.term)),
                )
        }
        Err(e) => PartitionData::default().with_error_code(e.code()),
    }
}

/// The observer's side: Fetch and FetchSnapshot to the voters' controller listeners, one
/// kept connection per voter, apart from the connections that carry commands (a held fetch
/// must not hold up a heartbeat).
#[derive(Debug)]
pub struct MetadataFetcher {
    client_id: String,
    timeout: Duration,
    security: PeerSecurity,
    connections: tokio::sync::Mutex<HashMap<String, PeerConnection>>,
}

impl MetadataFetcher {
    pub fn new(node_id: i32, timeout: Duration, security: PeerSecurity) -> Self {
        Self {
            client_id: format!("sluice-metadata-observer-{node_id}"),
            timeout,
            security,
            connections: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    async fn exchange<Req, Resp>(
        &self,
        address: &str,
        api: ApiKey,
        version: i16,
        request: &Req,
        timeout: Duration,
    ) -> Result<Resp, Error>
    where
        Req: kafka_protocol::protocol::Encodable + kafka_protocol::protocol::HeaderVersion,
        Resp: kafka_protocol::protocol::Decodable + kafka_protocol::protocol::HeaderVersion,
    {
        let failed = |e: RequestError| Error::Remote {
            code: code::UNKNOWN_SERVER_ERROR,
            message: e.to_string(),
        };
        let kept = self.connections.lock().await.remove(address);
        let mut connection = match kept {
            Some(connection) => connection,
            None => PeerConnection::connect(address, &self.client_id, self.timeout, &self.security)
                .await
                .map_err(failed)?,
        };
        let response = connection
            .request(api, version, request, timeout)
            .await
            .map_err(failed)?;
        // Kept only after a whole exchange: a failed one may have left bytes in flight.
        self.connections
            .lock()
            .await
            .insert(address.to_string(), connection);
        Ok(response)
    }

    async fn fetch(
        &self,
        address: &str,
        observer: u64,
        from_index: u64,
        wait: Duration,
    ) -> Result<Answer, Error> {
        let max_bytes = FETCH_MAX_BYTES as i32;
        let request = FetchRequest::default()
            .with_replica_state(
                ReplicaState::default()
                    .with_replica_id(BrokerId(observer as i32))
                    .with_replica_epoch(-1),
            )
            .with_max_wait_ms(wait.as_millis().min(i32::MAX as u128) as i32)
            .with_min_bytes(1)
            .with_max_bytes(max_bytes)
            .with_session_id(0)
            .with_session_epoch(-1)
            .with_topics(vec![
                FetchTopic::default()
                    .with_topic_id(METADATA_TOPIC_ID)
                    .with_partitions(vec![
                        FetchPartition::default()
                            .with_partition(0)
                            .with_current_leader_epoch(-1)
                            .with_fetch_offset(from_index.saturating_sub(1) as i64)
                            .with_last_fetched_epoch(-1)
                            .with_log_start_offset(-1)
                            .with_partition_max_bytes(max_bytes),
                    ]),
            ]);
        let response: FetchResponse = self
            .exchange(
                address,
                ApiKey::Fetch,
                FETCH_VERSION,
                &request,
                self.timeout + wait,
            )
            .await?;
        if let Some(e) = Error::from_code(response.error_code, None) {
            return Err(e);
        }
        let endpoint_of = |id: i32| {
            response
                .node_endpoints
                .iter()
                .find(|e| e.node_id.0 == id && id >= 0)
                .map(|e| (id as u64, format!("{}:{}", e.host, e.port)))
        };
        let Some(partition) = response
            .responses
            .iter()
            .cloned()
            .flat_map(|t| t.partitions)
            .find(|p| p.partition_index == 0)
        else {
            return Err(Error::InvalidRequest(
                "the metadata fetch was answered without the metadata partition".into(),
            ));
        };
        let leader = partition.current_leader.leader_id.0;
        let term = partition.current_leader.leader_epoch.max(0) as u64;
        let leader_endpoint = endpoint_of(leader);
        match partition.error_code {
            code::NONE => {}
            code::NOT_LEADER_OR_FOLLOWER => {
                return Ok(Answer {
                    fetched: Fetched::Elsewhere {
                        leader: (leader >= 0).then_some(leader as u64),
                        term,
                    },
                    leader_endpoint,
                });
            }
            other => {
                return Err(Error::from_code(other, None).unwrap_or(Error::NotController));
            }
        }
        let content = if partition.snapshot_id.end_offset >= 0 {
            ReadContent::SnapshotNeeded {
                index: partition.snapshot_id.end_offset as u64,
                term: partition.snapshot_id.epoch.max(0) as u64,
            }
        } else {
            ReadContent::Entries(partition.records.unwrap_or_default())
        };
        Ok(Answer {
            fetched: Fetched::Read(MetadataRead {
                leader: leader.max(0) as u64,
                term,
                high_watermark: partition.high_watermark.max(0) as u64,
                content,
            }),
            leader_endpoint,
        })
    }
}

impl MetadataSource for MetadataFetcher {
    fn read<'a>(
        &'a self,
        address: &'a str,
        observer: u64,
        from_index: u64,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Answer, Error>> {
        Box::pin(self.fetch(address, observer, from_index, wait))
    }

    fn read_snapshot<'a>(
        &'a self,
        address: &'a str,
        observer: u64,
        index: u64,
        term: u64,
        position: u64,
    ) -> BoxFuture<'a, Result<SnapshotChunk, Error>> {
        Box::pin(async move {
            let request = super::fetch_snapshot::request_for(observer, index, term, position);
            let response = self
                .exchange(
                    address,
                    ApiKey::FetchSnapshot,
                    super::fetch_snapshot::VERSION,
                    &request,
                    self.timeout,
                )
                .await?;
            super::fetch_snapshot::chunk_from(response)
        })
    }
}
