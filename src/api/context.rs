//! What a handler needs besides its request ([`ApiContext`]: the broker, the listener, who
//! asks), and what several handlers ask of the core in the same words: a partition's leader
//! for KIP-951 hints, a partition's state on the wire, a broker's address on this listener,
//! the live brokers on it, the group or share coordinator of a group.

use super::fetch::session::FetchSessionCache;
use crate::broker::Broker;
use kafka_protocol::protocol::StrBytes;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// What a handler needs besides its request: the broker, the advertised address, and who
/// is asking (cheap to clone: it is cloned per connection and per request).
#[derive(Debug, Clone)]
pub struct ApiContext {
    pub broker: Arc<Broker>,
    /// The listener the connection came in on: other brokers are reported by their
    /// endpoint of the same name.
    pub listener: Arc<str>,
    /// The address clients are told to connect to (port resolved after binding).
    pub advertised_host: Arc<str>,
    pub advertised_port: i32,
    /// The peer, as Kafka reports it (`/127.0.0.1`).
    pub client_host: Arc<str>,
    /// The request header's client id.
    pub client_id: StrBytes,
    /// Who the connection authenticated as (`User:ANONYMOUS` without authentication).
    pub principal: Arc<crate::auth::KafkaPrincipal>,
    /// The connection authenticated with a delegation token (its owner is `principal`).
    pub token_authenticated: bool,
    /// `authorizer.class.name`'s authorizer, when one is configured.
    pub authorizer: Option<Arc<crate::auth::authorizer::Authorizer>>,
    /// Incremental fetch sessions (KIP-227), one cache for every client listener.
    pub fetch_sessions: Arc<FetchSessionCache>,
    /// The size of the request being handled (what a produce quota counts).
    pub request_bytes: usize,
    /// What the decoded form of a request may take ([`decode_budget`]): its arrays and
    /// unknown tagged fields, charged as they are decoded. A request over it is refused like
    /// one that does not decode.
    pub decode_budget: usize,
    /// The longest throttle time a quota gave this connection's last request: the connection
    /// is not read again until it has passed (Kafka mutes the channel).
    pub throttle_ms: Arc<AtomicU32>,
}

/// What one request's decoded arrays may take: a quarter of `socket.request.max.bytes`.
/// Answering a request costs up to about ten times its decoded arrays (the Fetch handler's
/// per-partition reads, results and response entries, then the encoded response), so a
/// request then costs at most a few times `socket.request.max.bytes` in all, the frame
/// included. A Fetch may still name about 300,000 partitions (80 bytes each decoded) at the
/// default 100 MiB; a 1,000,000-partition one is refused instead of taking ~900 MiB.
pub fn decode_budget(socket_request_max_bytes: usize) -> usize {
    socket_request_max_bytes / 4
}

impl ApiContext {
    pub fn new(
        broker: Arc<Broker>,
        listener: &str,
        advertised_host: &str,
        advertised_port: i32,
    ) -> Self {
        Self {
            listener: Arc::from(listener),
            advertised_host: Arc::from(advertised_host),
            advertised_port,
            client_host: Arc::from(""),
            client_id: StrBytes::default(),
            principal: Arc::new(crate::auth::KafkaPrincipal::anonymous()),
            token_authenticated: false,
            authorizer: crate::auth::authorizer::Authorizer::from_config(&broker.config())
                .map(Arc::new),
            fetch_sessions: Arc::new(FetchSessionCache::new(
                broker.config().fetch_session_cache_slots,
            )),
            request_bytes: 0,
            decode_budget: decode_budget(broker.config().socket_request_max_bytes),
            throttle_ms: Arc::default(),
            broker,
        }
    }

    /// This context for another listener of the same broker, sharing its fetch sessions and
    /// authorizer.
    pub fn on_listener(&self, listener: &str, advertised_host: &str, advertised_port: i32) -> Self {
        Self {
            listener: Arc::from(listener),
            advertised_host: Arc::from(advertised_host),
            advertised_port,
            ..self.clone()
        }
    }

    /// This context for a connection that authenticated as `principal`.
    pub fn with_principal(&self, principal: crate::auth::KafkaPrincipal) -> Self {
        Self {
            principal: Arc::new(principal),
            ..self.clone()
        }
    }

    /// Whether requests arrive on the controller listener (the controller API table).
    pub fn is_controller_listener(&self) -> bool {
        *self.listener == *self.broker.config().cluster.controller_listener
    }

    /// This context for a connection from `peer`.
    pub fn for_peer(&self, peer: std::net::SocketAddr) -> Self {
        Self {
            client_host: Arc::from(format!("/{}", peer.ip()).as_str()),
            throttle_ms: Arc::default(),
            ..self.clone()
        }
    }

    /// This context for one request of `request_bytes`.
    pub fn for_client(&self, client_id: Option<StrBytes>, request_bytes: usize) -> Self {
        Self {
            client_id: client_id.unwrap_or_default(),
            request_bytes,
            ..self.clone()
        }
    }

    /// A quota throttles this request's connection for `ms` (the longest time asked wins).
    pub fn throttle(&self, ms: u32) {
        if ms > 0 {
            self.throttle_ms.fetch_max(ms, Ordering::Relaxed);
        }
    }

    /// The throttle time the last request was given, cleared.
    pub fn take_throttle(&self) -> Option<std::time::Duration> {
        match self.throttle_ms.swap(0, Ordering::Relaxed) {
            0 => None,
            ms => Some(std::time::Duration::from_millis(u64::from(ms))),
        }
    }

    /// This request's controller mutation quota: strict from `strict_since` (the version
    /// that knows THROTTLING_QUOTA_EXCEEDED), permissive before. Requests forwarded to the
    /// controller were measured by the broker the client asked.
    pub fn mutation_quota(
        &self,
        version: i16,
        strict_since: i16,
    ) -> crate::auth::quota::MutationQuota {
        let (user, client_id) = if self.is_controller_listener() {
            ("", "")
        } else {
            self.quota_identity()
        };
        self.broker
            .client_quotas()
            .mutation_quota(user, client_id, version >= strict_since)
    }

    /// The principal's name and the client id, as quotas know them.
    pub fn quota_identity(&self) -> (&str, &str) {
        (&self.principal.name, self.client_id.as_str())
    }
}

/// KIP-951: who leads a partition now, for a client told NOT_LEADER_OR_FOLLOWER or
/// FENCED_LEADER_EPOCH by Produce or Fetch, with the leader's address on the listener the
/// request came in on — so the client can go there without a metadata round trip.
pub(crate) struct LeaderHint {
    pub leader_id: i32,
    pub leader_epoch: i32,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
}

impl LeaderHint {
    /// The hint for `tp` when `error_code` calls for one and this broker knows a leader.
    pub fn for_error(
        ctx: &ApiContext,
        tp: &crate::types::TopicPartition,
        error_code: i16,
    ) -> Option<Self> {
        use crate::error::code;
        if error_code != code::NOT_LEADER_OR_FOLLOWER && error_code != code::FENCED_LEADER_EPOCH {
            return None;
        }
        let state = ctx.broker.partition_state(tp);
        let leader_id = state.leader?;
        if leader_id == ctx.broker.node_id() {
            return Some(Self {
                leader_id,
                leader_epoch: state.leader_epoch,
                host: ctx.advertised_host.to_string(),
                port: ctx.advertised_port,
                rack: ctx.broker.config().cluster.rack.clone(),
            });
        }
        let image = ctx.broker.metadata().image();
        let registration = image.brokers.get(&leader_id).filter(|b| !b.fenced)?;
        let endpoint = registration.endpoint(&ctx.listener)?;
        Some(Self {
            leader_id,
            leader_epoch: state.leader_epoch,
            host: endpoint.host.clone(),
            port: endpoint.port as i32,
            rack: registration.rack.clone(),
        })
    }
}

/// A partition's leadership as Metadata and DescribeTopicPartitions put it on the wire: no
/// leader is LEADER_NOT_AVAILABLE with leader -1.
pub(crate) struct WirePartitionState {
    pub error_code: i16,
    pub leader_id: kafka_protocol::messages::BrokerId,
    pub replicas: Vec<kafka_protocol::messages::BrokerId>,
    pub isr: Vec<kafka_protocol::messages::BrokerId>,
    pub offline: Vec<kafka_protocol::messages::BrokerId>,
    pub leader_epoch: i32,
}

pub(crate) fn wire_partition_state(state: crate::broker::PartitionState) -> WirePartitionState {
    use kafka_protocol::messages::BrokerId;
    let ids = |ids: Vec<i32>| ids.into_iter().map(BrokerId).collect();
    WirePartitionState {
        error_code: if state.leader.is_some() {
            crate::error::code::NONE
        } else {
            crate::error::code::LEADER_NOT_AVAILABLE
        },
        leader_id: BrokerId(state.leader.unwrap_or(-1)),
        replicas: ids(state.replicas),
        isr: ids(state.isr),
        offline: ids(state.offline),
        leader_epoch: state.leader_epoch,
    }
}

/// Where clients on this request's listener reach broker `id`: this broker's advertised
/// address, or another live broker's endpoint of the same listener name.
pub(crate) fn broker_address(ctx: &ApiContext, id: i32) -> Option<(String, i32)> {
    if id == ctx.broker.node_id() {
        return Some((ctx.advertised_host.to_string(), ctx.advertised_port));
    }
    let image = ctx.broker.metadata().image();
    let registration = image.brokers.get(&id).filter(|b| !b.fenced)?;
    let endpoint = registration.endpoint(&ctx.listener)?;
    Some((endpoint.host.clone(), endpoint.port as i32))
}

/// A live broker as clients on one listener reach it.
pub(crate) struct LiveBroker {
    pub id: i32,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
}

/// The live (unfenced) brokers, each at its endpoint of the listener this request came in on,
/// this broker first, at the address its listener advertises (Metadata's and DescribeCluster's
/// broker lists).
/// The controller id clients are told (Metadata, DescribeCluster on a broker listener): the
/// active controller when it is one of the live brokers they can reach, else a live broker
/// (the lowest id), which forwards what it is sent to the controller — as Kafka's KRaft
/// brokers name a live broker, since clients cannot reach controller-only nodes.
pub(crate) fn controller_for_clients(ctx: &ApiContext, live: &[LiveBroker]) -> i32 {
    let active = ctx.broker.controller_id();
    if live.iter().any(|b| b.id == active) {
        return active;
    }
    live.iter().map(|b| b.id).min().unwrap_or(-1)
}

pub(crate) fn live_brokers(ctx: &ApiContext) -> Vec<LiveBroker> {
    let image = ctx.broker.metadata().image();
    let node = ctx.broker.node_id();
    let mut brokers = vec![LiveBroker {
        id: node,
        host: ctx.advertised_host.to_string(),
        port: ctx.advertised_port,
        rack: ctx.broker.config().cluster.rack.clone(),
    }];
    for registration in image.brokers.values() {
        if registration.id == node || registration.fenced {
            continue;
        }
        let Some(endpoint) = registration.endpoint(&ctx.listener) else {
            continue;
        };
        brokers.push(LiveBroker {
            id: registration.id,
            host: endpoint.host.clone(),
            port: endpoint.port as i32,
            rack: registration.rack.clone(),
        });
    }
    brokers
}

/// The group coordinator when this broker coordinates `group_id` (it leads the group's
/// `__consumer_offsets` partition), else NOT_COORDINATOR so the client looks it up again.
pub(crate) async fn coordinator_for<'a>(
    ctx: &'a ApiContext,
    group_id: &str,
) -> Result<&'a Arc<crate::group::GroupCoordinator>, crate::error::GroupError> {
    let groups = ctx
        .broker
        .groups()
        .await
        .map_err(|_| crate::error::GroupError::CoordinatorNotAvailable)?;
    if groups.is_loading(group_id) {
        return Err(crate::error::GroupError::CoordinatorLoadInProgress);
    }
    if groups.owns(group_id) {
        Ok(groups)
    } else {
        Err(crate::error::GroupError::NotCoordinator)
    }
}

/// Kafka's `allowTokenRequests`: delegation tokens are not created, renewed, expired or
/// described over PLAINTEXT, over TLS without a client certificate, or by a connection that
/// authenticated with a delegation token.
pub(crate) fn token_requests_allowed(ctx: &ApiContext) -> bool {
    use crate::config::SecurityProtocol;
    let protocol = ctx.broker.config().protocol_of(&ctx.listener);
    !(ctx.token_authenticated
        || protocol == SecurityProtocol::Plaintext
        || (protocol == SecurityProtocol::Ssl
            && *ctx.principal == crate::auth::KafkaPrincipal::anonymous()))
}

/// Whether the APIs of `feature` (`group.version`, `streams.version`, `share.version`) are
/// served: Kafka keeps listing them in ApiVersions while the feature is finalized at level 0
/// (`kafka-features disable`) and answers each UNSUPPORTED_VERSION.
pub(crate) fn feature_enabled(ctx: &ApiContext, feature: &str) -> bool {
    ctx.broker.feature_level(feature) >= 1
}

/// Kafka's message for an API whose feature is disabled (`UnsupportedVersionException`'s).
pub(crate) const FEATURE_DISABLED: &str = "The version of API is not supported.";

/// Whether share groups are served: `share.version` not 0.
pub(crate) fn shares_enabled(ctx: &ApiContext) -> bool {
    feature_enabled(ctx, crate::metadata::features::SHARE_VERSION)
}

/// The share coordinator when share groups are served and this broker coordinates
/// `group_id`, which must not name a classic or consumer group (Kafka: "not a share group").
pub(crate) async fn share_coordinator_for<'a>(
    ctx: &'a ApiContext,
    group_id: &str,
) -> Result<&'a Arc<crate::share::ShareCoordinator>, crate::error::ShareError> {
    use crate::error::{GroupError, ShareError};
    if !shares_enabled(ctx) {
        return Err(ShareError::Unsupported);
    }
    if group_id.is_empty() {
        return Err(ShareError::Group(GroupError::InvalidGroupId));
    }
    let groups = coordinator_for(ctx, group_id).await?;
    if groups.has_group(group_id) {
        return Err(ShareError::Group(GroupError::GroupIdNotFound));
    }
    ctx.broker
        .shares()
        .await
        .map_err(|_| ShareError::Group(GroupError::CoordinatorNotAvailable))
}
