//! The coordinators' internal topics, created on first use as Kafka creates them on the first
//! FindCoordinator (`__consumer_offsets`, `__transaction_state`) or share-group request
//! (`__share_group_state`), and the coordinators behind them.

use super::{Broker, GROUPS_TOPIC_WAIT, NewTopic};
use crate::error::Error;
use crate::group::{GroupCoordinator, OFFSETS_TOPIC};
use crate::txn::coordinator::{TRANSACTION_STATE_TOPIC, TransactionCoordinator};
use std::collections::BTreeMap;
use std::sync::Arc;

impl Broker {
    /// The group coordinator, creating `__consumer_offsets` on first use (as Kafka does on the
    /// first FindCoordinator).
    pub async fn groups(&self) -> Result<&Arc<GroupCoordinator>, Error> {
        self.ensure_internal_topic(
            OFFSETS_TOPIC,
            self.config.offsets_topic_partitions,
            self.config.cluster.offsets_topic_replication_factor,
            &[
                (
                    "segment.bytes",
                    self.config.offsets_topic_segment_bytes.to_string(),
                ),
                ("compression.type", "producer".to_string()),
            ],
        )
        .await?;
        Ok(&self.groups)
    }

    /// The share groups' coordinators, creating `__share_group_state` on first use (its
    /// partitions' leaders load the state they hold when elected).
    pub async fn shares(&self) -> Result<&Arc<crate::share::ShareCoordinator>, Error> {
        let replication_factor = self.config.cluster.share_state_replication_factor;
        let min_isr = self
            .config
            .share
            .state_topic_min_isr
            .min(replication_factor);
        self.ensure_internal_topic(
            crate::share::SHARE_STATE_TOPIC,
            self.config.share.state_topic_partitions,
            replication_factor,
            &[
                (
                    "segment.bytes",
                    self.config.share.state_topic_segment_bytes.to_string(),
                ),
                ("compression.type", "producer".to_string()),
                ("min.insync.replicas", min_isr.to_string()),
                ("unclean.leader.election.enable", "false".to_string()),
            ],
        )
        .await?;
        Ok(&self.shares)
    }

    /// The share coordinator without creating anything.
    pub fn share_coordinator(&self) -> &Arc<crate::share::ShareCoordinator> {
        &self.shares
    }

    /// Creates a coordinator's compacted internal topic, with `configs` besides, unless it
    /// exists.
    async fn ensure_internal_topic(
        &self,
        name: &str,
        partitions: i32,
        replication_factor: i32,
        configs: &[(&str, String)],
    ) -> Result<(), Error> {
        if self.metadata.topic(name).is_some() {
            return Ok(());
        }
        let mut all: BTreeMap<String, String> = configs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        all.insert("cleanup.policy".to_string(), "compact".to_string());
        self.create_internal_topic(NewTopic {
            name: name.to_string(),
            partitions,
            replication_factor: replication_factor as i16,
            assignments: Vec::new(),
            configs: all,
        })
        .await
    }

    /// Creates a coordinator's internal topic on its first use.
    async fn create_internal_topic(&self, request: NewTopic) -> Result<(), Error> {
        let name = request.name.clone();
        // FindCoordinator answers COORDINATOR_NOT_AVAILABLE soon when there is no
        // controller (clients retry), rather than holding the connection.
        match self
            .create_topic_within(request, false, GROUPS_TOPIC_WAIT)
            .await
        {
            Ok(_) => Ok(()),
            // Created by a concurrent first use: answer once it is known here too.
            Err(Error::TopicAlreadyExists(_)) => {
                self.await_visible(|image| image.topic(&name).is_some())
                    .await;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The transaction coordinator, creating `__transaction_state` on first use (Kafka does
    /// on the first FindCoordinator for a transactional id).
    pub async fn transactions(&self) -> Result<&Arc<TransactionCoordinator>, Error> {
        let replication_factor = self.config.cluster.transaction_state_replication_factor;
        let min_isr = self
            .config
            .transaction_state_min_isr
            .min(replication_factor);
        self.ensure_internal_topic(
            TRANSACTION_STATE_TOPIC,
            self.config.transaction_state_partitions,
            replication_factor,
            &[
                (
                    "segment.bytes",
                    self.config.transaction_state_segment_bytes.to_string(),
                ),
                ("min.insync.replicas", min_isr.to_string()),
                ("unclean.leader.election.enable", "false".to_string()),
            ],
        )
        .await?;
        Ok(self.transaction_coordinator())
    }

    /// The transaction coordinator without creating anything.
    pub fn transaction_coordinator(&self) -> &Arc<TransactionCoordinator> {
        // Set in `open` before the broker is shared.
        self.transactions
            .get()
            .unwrap_or_else(|| unreachable!("the transaction coordinator is set at open"))
    }
}
