//! The error codes a response carries, counted as Kafka's `AbstractResponse.errorCounts` counts
//! them for `kafka_network_requestmetrics_errors_total`: per API, the top-level code, each
//! entity's (topic, partition, group, resource), or both — Kafka 4.4's rules, response by
//! response (`clients/.../requests/*Response.java`), so the series match Kafka's on the same
//! traffic.

use kafka_protocol::messages::*;

/// A response's error codes, each once per time Kafka counts it.
pub trait ErrorCounts {
    fn error_codes(&self, count: &mut dyn FnMut(i16));
}

/// Responses Kafka counts by their top-level error code alone.
macro_rules! top_level {
    ($($response:ty),* $(,)?) => {
        $(impl ErrorCounts for $response {
            fn error_codes(&self, count: &mut dyn FnMut(i16)) {
                count(self.error_code)
            }
        })*
    };
}

top_level!(
    AddOffsetsToTxnResponse,
    AllocateProducerIdsResponse,
    ApiVersionsResponse,
    BrokerHeartbeatResponse,
    BrokerRegistrationResponse,
    ConsumerGroupHeartbeatResponse,
    CreateDelegationTokenResponse,
    DescribeAclsResponse,
    DescribeClientQuotasResponse,
    DescribeClusterResponse,
    DescribeDelegationTokenResponse,
    EndTxnResponse,
    ExpireDelegationTokenResponse,
    HeartbeatResponse,
    InitProducerIdResponse,
    JoinGroupResponse,
    ListConfigResourcesResponse,
    ListGroupsResponse,
    ListPartitionReassignmentsResponse,
    ListTransactionsResponse,
    RenewDelegationTokenResponse,
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
    ShareGroupHeartbeatResponse,
    StreamsGroupHeartbeatResponse,
    StreamsGroupTopologyDescriptionUpdateResponse,
    SyncGroupResponse,
);

/// Responses Kafka counts by one code per entry of one list.
macro_rules! per_entry {
    ($($response:ty => $list:ident),* $(,)?) => {
        $(impl ErrorCounts for $response {
            fn error_codes(&self, count: &mut dyn FnMut(i16)) {
                self.$list.iter().for_each(|entry| count(entry.error_code));
            }
        })*
    };
}

per_entry!(
    AlterClientQuotasResponse => entries,
    AlterUserScramCredentialsResponse => results,
    ConsumerGroupDescribeResponse => groups,
    CreateAclsResponse => results,
    CreatePartitionsResponse => results,
    CreateTopicsResponse => topics,
    DeleteAclsResponse => filter_results,
    DeleteGroupsResponse => results,
    DeleteTopicsResponse => responses,
    DescribeConfigsResponse => results,
    DescribeGroupsResponse => groups,
    DescribeTransactionsResponse => transaction_states,
    DescribeUserScramCredentialsResponse => results,
    IncrementalAlterConfigsResponse => responses,
    ShareGroupDescribeResponse => groups,
    StreamsGroupDescribeResponse => groups,
);

/// Responses Kafka counts by one code per partition of each topic (`$top`: and the top-level
/// code first).
macro_rules! per_partition {
    ($($response:ty => $topics:ident . $partitions:ident $(, $top:ident)?);* $(;)?) => {
        $(impl ErrorCounts for $response {
            fn error_codes(&self, count: &mut dyn FnMut(i16)) {
                $(count(self.$top);)?
                for topic in &self.$topics {
                    topic.$partitions.iter().for_each(|partition| count(partition.error_code));
                }
            }
        })*
    };
}

per_partition!(
    AlterPartitionResponse => topics.partitions, error_code;
    AlterPartitionReassignmentsResponse => responses.partitions, error_code;
    AlterReplicaLogDirsResponse => results.partitions;
    DeleteRecordsResponse => topics.partitions;
    DeleteShareGroupStateResponse => results.partitions;
    InitializeShareGroupStateResponse => results.partitions;
    ReadShareGroupStateResponse => results.partitions;
    ReadShareGroupStateSummaryResponse => results.partitions;
    WriteShareGroupStateResponse => results.partitions;
    DescribeProducersResponse => topics.partitions;
    DescribeQuorumResponse => topics.partitions, error_code;
    ElectLeadersResponse => replica_election_results.partition_result, error_code;
    FetchResponse => responses.partitions, error_code;
    FetchSnapshotResponse => topics.partitions, error_code;
    ListOffsetsResponse => topics.partitions;
    OffsetCommitResponse => topics.partitions;
    OffsetDeleteResponse => topics.partitions, error_code;
    OffsetForLeaderEpochResponse => topics.partitions;
    ProduceResponse => responses.partition_responses;
    ShareAcknowledgeResponse => responses.partitions, error_code;
    ShareFetchResponse => responses.partitions, error_code;
    TxnOffsetCommitResponse => topics.partitions;
);

impl ErrorCounts for crate::api::fetch::FetchReply {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        count(self.response.error_code);
        for topic in &self.response.responses {
            topic.partitions.iter().for_each(|p| count(p.error_code));
        }
    }
}

impl ErrorCounts for UpdateFeaturesResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        count(self.error_code);
        self.results.iter().for_each(|r| count(r.error_code));
    }
}

impl ErrorCounts for MetadataResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        for topic in &self.topics {
            topic.partitions.iter().for_each(|p| count(p.error_code));
            count(topic.error_code);
        }
    }
}

impl ErrorCounts for DescribeTopicPartitionsResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        for topic in &self.topics {
            topic.partitions.iter().for_each(|p| count(p.error_code));
            count(topic.error_code);
        }
    }
}

impl ErrorCounts for AlterConfigsResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        self.responses.iter().for_each(|r| count(r.error_code));
    }
}

impl ErrorCounts for AddPartitionsToTxnResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        // v4+ (results by transaction) counts the top-level code too; v3 and below do not.
        if self.results_by_topic_v3_and_below.is_empty() {
            count(self.error_code);
        }
        for topic in &self.results_by_topic_v3_and_below {
            topic
                .results_by_partition
                .iter()
                .for_each(|p| count(p.partition_error_code));
        }
        for transaction in &self.results_by_transaction {
            for topic in &transaction.topic_results {
                topic
                    .results_by_partition
                    .iter()
                    .for_each(|p| count(p.partition_error_code));
            }
        }
    }
}

impl ErrorCounts for DescribeLogDirsResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        count(self.error_code);
        self.results.iter().for_each(|r| count(r.error_code));
    }
}

impl ErrorCounts for FindCoordinatorResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        if self.coordinators.is_empty() {
            count(self.error_code);
        } else {
            self.coordinators.iter().for_each(|c| count(c.error_code));
        }
    }
}

impl ErrorCounts for LeaveGroupResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        count(self.error_code);
        self.members.iter().for_each(|m| count(m.error_code));
    }
}

impl ErrorCounts for OffsetFetchResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        if self.groups.is_empty() {
            // v0-v7: the top-level code and each partition's.
            count(self.error_code);
            for topic in &self.topics {
                topic.partitions.iter().for_each(|p| count(p.error_code));
            }
        } else {
            for group in &self.groups {
                count(group.error_code);
                for topic in &group.topics {
                    topic.partitions.iter().for_each(|p| count(p.error_code));
                }
            }
        }
    }
}

impl ErrorCounts for AddRaftVoterResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        if self.error_code != 0 {
            count(self.error_code);
        }
    }
}

impl ErrorCounts for UpdateRaftVoterResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        if self.error_code != 0 {
            count(self.error_code);
        }
    }
}

impl ErrorCounts for RemoveRaftVoterResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        if self.error_code != 0 {
            count(self.error_code);
        }
    }
}

/// Kafka's `AssignReplicasToDirsResponse`: the top-level code and every partition's.
impl ErrorCounts for AssignReplicasToDirsResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        count(self.error_code);
        for dir in &self.directories {
            for topic in &dir.topics {
                for partition in &topic.partitions {
                    count(partition.error_code);
                }
            }
        }
    }
}

impl ErrorCounts for UnregisterBrokerResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        if self.error_code != 0 {
            count(self.error_code);
        }
    }
}

impl ErrorCounts for UnregisterControllerResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        if self.error_code != 0 {
            count(self.error_code);
        }
    }
}

impl ErrorCounts for ControllerRegistrationResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        if self.error_code != 0 {
            count(self.error_code);
        }
    }
}

impl ErrorCounts for WriteTxnMarkersResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        for marker in &self.markers {
            for topic in &marker.topics {
                topic.partitions.iter().for_each(|p| count(p.error_code));
            }
        }
    }
}

impl ErrorCounts for AlterShareGroupOffsetsResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        count(self.error_code);
        for topic in &self.responses {
            topic.partitions.iter().for_each(|p| count(p.error_code));
        }
    }
}

impl ErrorCounts for DeleteShareGroupOffsetsResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        count(self.error_code);
        self.responses
            .iter()
            .for_each(|topic| count(topic.error_code));
    }
}

impl ErrorCounts for DescribeShareGroupOffsetsResponse {
    fn error_codes(&self, count: &mut dyn FnMut(i16)) {
        for group in &self.groups {
            // Kafka keeps the groups' errors apart and counts those that are errors.
            if group.error_code != 0 {
                count(group.error_code);
            }
            for topic in &group.topics {
                topic.partitions.iter().for_each(|p| count(p.error_code));
            }
        }
    }
}
