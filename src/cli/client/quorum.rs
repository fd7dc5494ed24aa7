//! DescribeQuorum, as Kafka's AdminClient sends it (`describeMetadataQuorum`): to the
//! bootstrap broker, which has the quorum's leader answer, or, with bootstrap controllers, to
//! the active controller found by DescribeCluster's controller endpoints (KIP-919).

use super::{AdminClient, AdminError, BrokerNode, ClusterDescription, kafka_error};
use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_protocol::messages::describe_quorum_response::ReplicaState;
use kafka_protocol::messages::{
    AddRaftVoterRequest, AddRaftVoterResponse, RemoveRaftVoterRequest, RemoveRaftVoterResponse,
};
use kafka_protocol::messages::{ApiKey, DescribeQuorumRequest, DescribeQuorumResponse, TopicName};
use kafka_protocol::messages::{DescribeClusterRequest, DescribeClusterResponse};
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeMap;

/// The metadata log's topic (its one partition is 0).
const METADATA_TOPIC: &str = "__cluster_metadata";

/// One replica of the metadata log (Kafka's `QuorumInfo.ReplicaState`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumReplica {
    pub id: i32,
    /// The all-zero id when the node has none (a static quorum).
    pub directory_id: uuid::Uuid,
    pub log_end_offset: i64,
    pub last_fetch_ms: Option<i64>,
    pub last_caught_up_ms: Option<i64>,
}

/// A voter's endpoint: listener name, host, port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumEndpoint {
    pub listener: String,
    pub host: String,
    pub port: u16,
}

/// The quorum as its leader describes it (Kafka's `QuorumInfo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumInfo {
    pub leader_id: i32,
    pub leader_epoch: i32,
    pub high_watermark: i64,
    pub voters: Vec<QuorumReplica>,
    pub observers: Vec<QuorumReplica>,
    /// Each node's endpoints, by node id (v2).
    pub nodes: BTreeMap<i32, Vec<QuorumEndpoint>>,
}

fn replica(state: &ReplicaState) -> QuorumReplica {
    let known = |ms: i64| (ms != -1).then_some(ms);
    QuorumReplica {
        id: state.replica_id.0,
        directory_id: state.replica_directory_id,
        log_end_offset: state.log_end_offset,
        last_fetch_ms: known(state.last_fetch_timestamp),
        last_caught_up_ms: known(state.last_caught_up_timestamp),
    }
}

/// The answer as Kafka's AdminClient checks it: exactly the metadata log's partition 0.
fn quorum_of(response: DescribeQuorumResponse) -> Result<QuorumInfo, AdminError> {
    if response.error_code != 0 {
        return Err(kafka_error(
            response.error_code,
            response.error_message.as_ref(),
        ));
    }
    let unexpected = |what: String| AdminError::Kafka {
        code: -1,
        message: what,
    };
    let [topic] = response.topics.as_slice() else {
        return Err(unexpected(format!(
            "DescribeMetadataQuorum received {} topics when 1 was expected",
            response.topics.len()
        )));
    };
    if topic.topic_name.as_str() != METADATA_TOPIC {
        return Err(unexpected(format!(
            "DescribeMetadataQuorum received a topic with name {} when {METADATA_TOPIC} was expected",
            topic.topic_name.as_str()
        )));
    }
    let [partition] = topic.partitions.as_slice() else {
        return Err(unexpected(format!(
            "DescribeMetadataQuorum received a topic {METADATA_TOPIC} with {} partitions when 1 was expected",
            topic.partitions.len()
        )));
    };
    if partition.partition_index != 0 {
        return Err(unexpected(format!(
            "DescribeMetadataQuorum received a single partition with index {} when 0 was expected",
            partition.partition_index
        )));
    }
    if partition.error_code != 0 {
        return Err(kafka_error(
            partition.error_code,
            partition.error_message.as_ref(),
        ));
    }
    let nodes = response
        .nodes
        .iter()
        .map(|node| {
            let endpoints = node
                .listeners
                .iter()
                .map(|l| QuorumEndpoint {
                    listener: l.name.to_string(),
                    host: l.host.to_string(),
                    port: l.port,
                })
                .collect();
            (node.node_id.0, endpoints)
        })
        .collect();
    Ok(QuorumInfo {
        leader_id: partition.leader_id.0,
        leader_epoch: partition.leader_epoch,
        high_watermark: partition.high_watermark,
        voters: partition.current_voters.iter().map(replica).collect(),
        observers: partition.observers.iter().map(replica).collect(),
        nodes,
    })
}

impl AdminClient {
    /// The metadata quorum: its leader, epoch, high watermark, voters and observers; asked of
    /// node `at` (the active controller, with bootstrap controllers), else of the bootstrap
    /// broker.
    pub async fn describe_quorum(&mut self, at: Option<i32>) -> Result<QuorumInfo, AdminError> {
        let request = DescribeQuorumRequest::default().with_topics(vec![
            TopicData::default()
                .with_topic_name(TopicName(StrBytes::from_static_str(METADATA_TOPIC)))
                .with_partitions(vec![PartitionData::default()]),
        ]);
        let response: DescribeQuorumResponse = match at {
            Some(node) => {
                self.call_node(node, ApiKey::DescribeQuorum, "DescribeQuorum", &request)
                    .await?
            }
            None => {
                self.call(ApiKey::DescribeQuorum, "DescribeQuorum", &request)
                    .await?
            }
        };
        quorum_of(response)
    }

    /// AddRaftVoter (KIP-853), to node `at` (the active controller) or the bootstrap broker.
    pub async fn add_raft_voter(
        &mut self,
        at: Option<i32>,
        voter: i32,
        directory_id: uuid::Uuid,
        listeners: &[QuorumEndpoint],
        timeout_ms: i32,
    ) -> Result<(), AdminError> {
        use kafka_protocol::messages::add_raft_voter_request::Listener;
        let request = AddRaftVoterRequest::default()
            .with_timeout_ms(timeout_ms)
            .with_voter_id(voter)
            .with_voter_directory_id(directory_id)
            .with_listeners(
                listeners
                    .iter()
                    .map(|l| {
                        Listener::default()
                            .with_name(StrBytes::from_string(l.listener.clone()))
                            .with_host(StrBytes::from_string(l.host.clone()))
                            .with_port(l.port)
                    })
                    .collect(),
            );
        let response: AddRaftVoterResponse = match at {
            Some(node) => {
                self.call_node(node, ApiKey::AddRaftVoter, "AddRaftVoter", &request)
                    .await?
            }
            None => {
                self.call(ApiKey::AddRaftVoter, "AddRaftVoter", &request)
                    .await?
            }
        };
        match response.error_code {
            0 => Ok(()),
            code => Err(kafka_error(code, response.error_message.as_ref())),
        }
    }

    /// RemoveRaftVoter (KIP-853), sent as [`AdminClient::add_raft_voter`] is.
    pub async fn remove_raft_voter(
        &mut self,
        at: Option<i32>,
        voter: i32,
        directory_id: uuid::Uuid,
    ) -> Result<(), AdminError> {
        let request = RemoveRaftVoterRequest::default()
            .with_voter_id(voter)
            .with_voter_directory_id(directory_id);
        let response: RemoveRaftVoterResponse = match at {
            Some(node) => {
                self.call_node(node, ApiKey::RemoveRaftVoter, "RemoveRaftVoter", &request)
                    .await?
            }
            None => {
                self.call(ApiKey::RemoveRaftVoter, "RemoveRaftVoter", &request)
                    .await?
            }
        };
        match response.error_code {
            0 => Ok(()),
            code => Err(kafka_error(code, response.error_message.as_ref())),
        }
    }

    /// With a bootstrap controller: the cluster id, the active controller and the controllers
    /// (DescribeCluster for controller endpoints, KIP-919), whose addresses are kept for
    /// connecting to them.
    pub async fn describe_controllers(&mut self) -> Result<ClusterDescription, AdminError> {
        let request = DescribeClusterRequest::default().with_endpoint_type(2);
        let response: DescribeClusterResponse = self
            .call(ApiKey::DescribeCluster, "DescribeCluster", &request)
            .await?;
        if response.error_code != 0 {
            return Err(kafka_error(
                response.error_code,
                response.error_message.as_ref(),
            ));
        }
        let mut controllers: Vec<BrokerNode> = response
            .brokers
            .iter()
            .map(|b| BrokerNode {
                id: b.broker_id.0,
                host: b.host.to_string(),
                port: b.port,
                rack: b.rack.as_ref().map(|r| r.to_string()),
            })
            .collect();
        controllers.sort_by_key(|c| c.id);
        for controller in &controllers {
            self.remember_address(
                controller.id,
                &format!("{}:{}", controller.host, controller.port),
            );
        }
        Ok(ClusterDescription {
            cluster_id: response.cluster_id.to_string(),
            controller: (response.controller_id.0 >= 0).then_some(response.controller_id.0),
            brokers: controllers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kafka_protocol::messages::BrokerId;
    use kafka_protocol::messages::describe_quorum_response::{
        Listener, Node, PartitionData as Answered, TopicData as AnsweredTopic,
    };

    fn answer(topic: &str, partition: i32) -> DescribeQuorumResponse {
        DescribeQuorumResponse::default()
            .with_topics(vec![
                AnsweredTopic::default()
                    .with_topic_name(TopicName(StrBytes::from_string(topic.into())))
                    .with_partitions(vec![
                        Answered::default()
                            .with_partition_index(partition)
                            .with_leader_id(BrokerId(2))
                            .with_leader_epoch(5)
                            .with_high_watermark(40)
                            .with_current_voters(vec![
                                ReplicaState::default()
                                    .with_replica_id(BrokerId(2))
                                    .with_log_end_offset(41)
                                    .with_last_fetch_timestamp(1_000)
                                    .with_last_caught_up_timestamp(1_000),
                                ReplicaState::default()
                                    .with_replica_id(BrokerId(3))
                                    .with_log_end_offset(-1),
                            ]),
                    ]),
            ])
            .with_nodes(vec![
                Node::default()
                    .with_node_id(BrokerId(2))
                    .with_listeners(vec![
                        Listener::default()
                            .with_name(StrBytes::from_static_str("CONTROLLER"))
                            .with_host(StrBytes::from_static_str("c2"))
                            .with_port(9093),
                    ]),
            ])
    }

    #[test]
    fn the_answer_is_read_as_kafkas_admin_client_reads_it() {
        let quorum = quorum_of(answer(METADATA_TOPIC, 0)).unwrap();
        assert_eq!(
            (quorum.leader_id, quorum.leader_epoch, quorum.high_watermark),
            (2, 5, 40)
        );
        assert_eq!(quorum.voters[0].last_fetch_ms, Some(1_000));
        // -1 is "unknown".
        assert_eq!(quorum.voters[1].last_fetch_ms, None);
        assert_eq!(quorum.nodes[&2][0].host, "c2");
        let wrong = quorum_of(answer("other", 0)).unwrap_err().to_string();
        assert_eq!(
            wrong,
            "DescribeMetadataQuorum received a topic with name other when __cluster_metadata was expected"
        );
        assert!(quorum_of(answer(METADATA_TOPIC, 1)).is_err());
    }
}
