//! How share-partition leaders and the group coordinator reach a share-partition's state
//! (Kafka's `DefaultStatePersister`): to the leader of the `__share_group_state` partition
//! its key falls on — this broker's [`ShareStateStore`], or another broker's through the
//! state RPCs (the API layer's [`RemoteState`]). While that partition has no leader, or its
//! leader is loading or has just moved, the call is retried until the metadata names a leader
//! that answers: a broker killed under the share coordinator is fenced after
//! `broker.session.timeout.ms`, so the retries last that long and ten seconds more.

use super::state::StateKey;
use super::store::{ShareStateStore, StateOp, StateReply};
use crate::error::{GroupError, ShareError};
use crate::metadata::cache::MetadataCache;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio::time::Instant;

pub type StateFuture<'a> =
    Pin<Box<dyn Future<Output = Result<StateReply, ShareError>> + Send + 'a>>;

/// The state RPCs to another broker's share coordinator (implemented by the API layer).
pub trait RemoteState: Send + Sync + std::fmt::Debug {
    fn call<'a>(&'a self, broker: i32, key: &'a StateKey, op: StateOp) -> StateFuture<'a>;
}

/// Pause between attempts while the share coordinator is moving.
const RETRY_BACKOFF: Duration = Duration::from_millis(200);

#[derive(Debug)]
pub struct Persister {
    node_id: i32,
    store: Arc<ShareStateStore>,
    metadata: Arc<MetadataCache>,
    remote: OnceLock<Arc<dyn RemoteState>>,
    /// How long a call keeps retrying a share coordinator that is moving.
    patience: Duration,
}

impl Persister {
    pub fn new(
        node_id: i32,
        store: Arc<ShareStateStore>,
        metadata: Arc<MetadataCache>,
        broker_session_timeout: Duration,
    ) -> Self {
        Self {
            node_id,
            store,
            metadata,
            remote: OnceLock::new(),
            patience: broker_session_timeout + Duration::from_secs(10),
        }
    }

    /// Sets the way to other brokers' share coordinators (once, when the API layer is up).
    pub fn set_remote(&self, remote: Arc<dyn RemoteState>) {
        let _ = self.remote.set(remote);
    }

    /// Applies `op` to `key`'s state wherever its share coordinator is.
    pub async fn call(&self, key: &StateKey, op: StateOp) -> Result<StateReply, ShareError> {
        let deadline = Instant::now() + self.patience;
        loop {
            let result = self.call_once(key, op.clone()).await;
            match result {
                Err(e) if moving(e) && Instant::now() + RETRY_BACKOFF < deadline => {
                    tracing::debug!(group = key.group, error = %e, "share coordinator not ready; retrying");
                    tokio::time::sleep(RETRY_BACKOFF).await;
                }
                other => return other,
            }
        }
    }

    async fn call_once(&self, key: &StateKey, op: StateOp) -> Result<StateReply, ShareError> {
        let shard = self.store.shard_of(key);
        let leader = self
            .metadata
            .image()
            .partition(super::SHARE_STATE_TOPIC, shard)
            .map(|p| p.leader)
            .filter(|leader| *leader >= 0)
            .ok_or(ShareError::Group(GroupError::CoordinatorNotAvailable))?;
        if leader == self.node_id {
            return self.store.apply(key, op).await;
        }
        match self.remote.get() {
            Some(remote) => remote.call(leader, key, op).await,
            None => Err(ShareError::Group(GroupError::CoordinatorNotAvailable)),
        }
    }
}

/// Whether the share coordinator is elsewhere or not ready yet (worth asking again).
fn moving(e: ShareError) -> bool {
    matches!(
        e,
        ShareError::Group(
            GroupError::NotCoordinator
                | GroupError::CoordinatorNotAvailable
                | GroupError::CoordinatorLoadInProgress
        ) | ShareError::NotLeaderOrFollower
    )
}
