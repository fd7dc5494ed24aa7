//! Request quotas (KIP-124) where every request passes: the handler's own time (its waits on
//! others left out, as Kafka counts request-handler thread time) is recorded against the
//! client's `request_percentage`; a throttle time — this one, or a byte-rate or mutation
//! quota's the handler set — goes into the response's `throttle_time_ms` and the connection
//! is not read for that long. Requests on the controller listener come from the cluster's
//! own nodes and are exempt, as Kafka exempts cluster actions.

use super::ApiContext;
use super::fetch::FetchReply;
use crate::auth::quota::QuotaType;
use kafka_protocol::messages as m;
use std::time::Duration;

/// A response's `throttle_time_ms`, where it has one.
pub trait ThrottleTime {
    fn throttle_time_ms(&mut self) -> Option<&mut i32>;
}

macro_rules! throttle_field {
    ($($response:ty),* $(,)?) => {
        $(impl ThrottleTime for $response {
            fn throttle_time_ms(&mut self) -> Option<&mut i32> {
                Some(&mut self.throttle_time_ms)
            }
        })*
    };
}

throttle_field!(
    m::AddOffsetsToTxnResponse,
    m::AddPartitionsToTxnResponse,
    m::AllocateProducerIdsResponse,
    m::AlterClientQuotasResponse,
    m::AlterConfigsResponse,
    m::AlterPartitionResponse,
    m::AlterPartitionReassignmentsResponse,
    m::AlterReplicaLogDirsResponse,
    m::AlterShareGroupOffsetsResponse,
    m::AlterUserScramCredentialsResponse,
    m::ApiVersionsResponse,
    m::AssignReplicasToDirsResponse,
    m::BrokerHeartbeatResponse,
    m::BrokerRegistrationResponse,
    m::ConsumerGroupDescribeResponse,
    m::ConsumerGroupHeartbeatResponse,
    m::CreateAclsResponse,
    m::CreatePartitionsResponse,
    m::CreateTopicsResponse,
    m::DeleteAclsResponse,
    m::DeleteGroupsResponse,
    m::DeleteRecordsResponse,
    m::DeleteShareGroupOffsetsResponse,
    m::DeleteTopicsResponse,
    m::DescribeAclsResponse,
    m::DescribeClientQuotasResponse,
    m::DescribeClusterResponse,
    m::DescribeConfigsResponse,
    m::DescribeGroupsResponse,
    m::DescribeLogDirsResponse,
    m::DescribeProducersResponse,
    m::DescribeShareGroupOffsetsResponse,
    m::DescribeTopicPartitionsResponse,
    m::DescribeTransactionsResponse,
    m::DescribeUserScramCredentialsResponse,
    m::ElectLeadersResponse,
    m::EndTxnResponse,
    m::FetchResponse,
    m::FetchSnapshotResponse,
    m::FindCoordinatorResponse,
    m::HeartbeatResponse,
    m::IncrementalAlterConfigsResponse,
    m::InitProducerIdResponse,
    m::JoinGroupResponse,
    m::LeaveGroupResponse,
    m::ListConfigResourcesResponse,
    m::ListGroupsResponse,
    m::ListOffsetsResponse,
    m::ListPartitionReassignmentsResponse,
    m::ListTransactionsResponse,
    m::MetadataResponse,
    m::OffsetCommitResponse,
    m::OffsetDeleteResponse,
    m::OffsetFetchResponse,
    m::OffsetForLeaderEpochResponse,
    m::ProduceResponse,
    m::ShareAcknowledgeResponse,
    m::ShareFetchResponse,
    m::ShareGroupDescribeResponse,
    m::ShareGroupHeartbeatResponse,
    m::StreamsGroupDescribeResponse,
    m::StreamsGroupHeartbeatResponse,
    m::StreamsGroupTopologyDescriptionUpdateResponse,
    m::SyncGroupResponse,
    m::TxnOffsetCommitResponse,
    m::UnregisterBrokerResponse,
    m::UnregisterControllerResponse,
    m::ControllerRegistrationResponse,
    m::AddRaftVoterResponse,
    m::RemoveRaftVoterResponse,
    m::UpdateRaftVoterResponse,
    m::UpdateFeaturesResponse,
    m::RenewDelegationTokenResponse,
    m::ExpireDelegationTokenResponse,
    m::DescribeDelegationTokenResponse,
    m::CreateDelegationTokenResponse,
);

macro_rules! no_throttle_field {
    ($($response:ty),* $(,)?) => {
        $(impl ThrottleTime for $response {
            fn throttle_time_ms(&mut self) -> Option<&mut i32> {
                None
            }
        })*
    };
}

no_throttle_field!(
    m::DescribeQuorumResponse,
    m::SaslAuthenticateResponse,
    m::SaslHandshakeResponse,
    m::WriteTxnMarkersResponse,
    m::InitializeShareGroupStateResponse,
    m::ReadShareGroupStateResponse,
    m::WriteShareGroupStateResponse,
    m::DeleteShareGroupStateResponse,
    m::ReadShareGroupStateSummaryResponse,
);

impl ThrottleTime for FetchReply {
    fn throttle_time_ms(&mut self) -> Option<&mut i32> {
        Some(&mut self.response.throttle_time_ms)
    }
}

/// Records the request's handling time (`handling`: its own time, waits left out) against
/// the request quota and applies the longest throttle time to the response and connection.
pub fn apply<R: ThrottleTime>(ctx: &ApiContext, handling: Duration, response: &mut R) {
    let quotas = ctx.broker.client_quotas();
    // Without request quotas (the usual case) this is one atomic load per request.
    if !quotas.enabled(QuotaType::Request) || ctx.is_controller_listener() {
        return;
    }
    let (user, client_id) = ctx.quota_identity();
    // Kafka's unit: percent of one handler thread, per second.
    let percent = handling.as_nanos() as f64 * 100.0 / 1e9;
    let throttle_ms = quotas.record(QuotaType::Request, user, client_id, percent);
    if throttle_ms == 0 {
        return;
    }
    ctx.throttle(throttle_ms);
    if let Some(field) = response.throttle_time_ms() {
        *field = (*field).max(throttle_ms.min(i32::MAX as u32) as i32);
    }
}
