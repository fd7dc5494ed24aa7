//! Between "started" and "serving": the topics asked for at startup are created, then the
//! readiness lines are logged. Besides ours, Kafka's own milestone lines, because the tools
//! that start "a Kafka image" wait for them: testcontainers (Java, Go) match
//! `Transitioning from RECOVERY to RUNNING`, testcontainers-python and compose health checks
//! `Kafka Server started`, and ZooKeeper-era wait strategies `[KafkaServer id=N] started`
//! (logged only when `zookeeper.connect` was given).

use crate::broker::{Broker, NewTopic};
use crate::error::Error;

/// Creates each topic that does not exist yet; one that exists is left as it is (a restart
/// asks again). Any other refusal stops the start, naming the topic.
pub async fn create_topics(broker: &Broker, topics: &[NewTopic]) -> Result<(), Error> {
    for topic in topics {
        match broker.create_topic(topic.clone(), false).await {
            Ok(created) => tracing::info!(
                topic = %topic.name,
                partitions = created.partitions,
                "created topic asked for at startup"
            ),
            Err(Error::TopicAlreadyExists(_)) => {
                tracing::info!(topic = %topic.name, "topic asked for at startup exists already")
            }
            Err(e) => {
                return Err(Error::InvalidRequest(format!(
                    "cannot create topic '{}' asked for at startup: {e}",
                    topic.name
                )));
            }
        }
    }
    Ok(())
}

/// Logs the lines that say a controller-only node takes part in the quorum now (Kafka's
/// `KafkaRaftServer` line; it serves no clients).
pub fn announce_controller_ready(broker: &Broker) {
    let node_id = broker.node_id();
    tracing::info!(node_id, "controller ready");
    tracing::info!(
        "[KafkaRaftServer nodeId={node_id}] Kafka Server started (kafka.server.KafkaRaftServer)"
    );
}

/// Logs the lines that say this node serves clients now.
pub fn announce_ready(broker: &Broker) {
    let node_id = broker.node_id();
    tracing::info!(node_id, "broker ready");
    tracing::info!(
        "[BrokerLifecycleManager id={node_id}] The broker has been unfenced. Transitioning from RECOVERY to RUNNING. (kafka.server.BrokerLifecycleManager)"
    );
    tracing::info!(
        "[KafkaRaftServer nodeId={node_id}] Kafka Server started (kafka.server.KafkaRaftServer)"
    );
    let config = broker.config();
    if config
        .without_effect
        .iter()
        .any(|p| p == "zookeeper.connect")
    {
        tracing::info!("[KafkaServer id={node_id}] started (kafka.server.KafkaServer)");
    }
}
