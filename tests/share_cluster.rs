//! Share groups on a three-node cluster, over raw frames: membership on the group coordinator,
//! records acquired and acknowledged on the partition's leader, the state kept by the share
//! coordinator (the leader of the key's `__share_group_state` partition, FindCoordinator key
//! type 2) — and that node killed, or the partition's leader: acknowledged records are not
//! delivered again, the rest are, and the group's start offset ends past every record.

#![allow(clippy::unwrap_used)]

mod common;

use common::{Cluster, metadata_of, raw_call, wait_until};
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::share_fetch_request::{
    AcknowledgementBatch, FetchPartition, FetchTopic,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeSet;
use std::time::Duration;
use uuid::Uuid;

const ACCEPT: i8 = 1;
const GROUP: &str = "g";
const RECORDS: i64 = 40;

fn s(text: &str) -> StrBytes {
    StrBytes::from_string(text.to_string())
}

/// The node (index) a FindCoordinator sent to `via` names for `key`.
fn coordinator(cluster: &Cluster, via: usize, key: &str, key_type: i8) -> Option<usize> {
    let response: FindCoordinatorResponse = raw_call(
        &cluster.nodes[via].bootstrap,
        ApiKey::FindCoordinator,
        6,
        &FindCoordinatorRequest::default()
            .with_key_type(key_type)
            .with_coordinator_keys(vec![s(key)]),
    );
    let found = response.coordinators.first()?;
    (found.error_code == 0).then(|| found.node_id.0 as usize - 1)
}

/// The leader (index) of `topic`-0 as `via` sees it.
fn leader(cluster: &Cluster, via: usize, topic: &str) -> Option<usize> {
    let metadata = metadata_of(&cluster.nodes[via].bootstrap);
    let topic = metadata
        .topics
        .iter()
        .find(|t| t.name.as_ref().is_some_and(|n| n.as_str() == topic))?;
    let leader = topic.partitions.first()?.leader_id.0;
    (leader > 0).then(|| leader as usize - 1)
}

/// One share consumer: its member id and epoch on the group coordinator, its share session
/// epoch on the partition's leader.
struct Member {
    id: String,
    epoch: i32,
    session: Option<(usize, i32)>,
    topic_id: Uuid,
}

impl Member {
    /// Heartbeats through the group coordinator until the partition is assigned; `false`
    /// while there is no coordinator to answer.
    fn heartbeat(&mut self, cluster: &Cluster, alive: &BTreeSet<usize>) -> bool {
        let via = *alive.first().unwrap();
        let Some(at) = coordinator(cluster, via, GROUP, 0).filter(|c| alive.contains(c)) else {
            return false;
        };
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s(GROUP)))
            .with_member_id(s(&self.id))
            .with_member_epoch(self.epoch)
            .with_subscribed_topic_names(Some(vec![TopicName(s("work"))]));
        let response: ShareGroupHeartbeatResponse = raw_call(
            &cluster.nodes[at].bootstrap,
            ApiKey::ShareGroupHeartbeat,
            1,
            &request,
        );
        match response.error_code {
            0 => {
                self.epoch = response.member_epoch;
                true
            }
            // A new coordinator does not know the member: it joins again.
            25 | 110 => {
                self.epoch = 0;
                false
            }
            _ => false,
        }
    }

    /// One ShareFetch on the partition's leader, acknowledging `acks` (unless it opens a new
    /// session); what it acquired, and whether `acks` were taken.
    fn fetch(
        &mut self,
        cluster: &Cluster,
        alive: &BTreeSet<usize>,
        acks: &[(i64, i64)],
    ) -> Result<(Vec<i64>, bool), i16> {
        let via = *alive.first().unwrap();
        let at = leader(cluster, via, "work")
            .filter(|l| alive.contains(l))
            .ok_or(-1i16)?;
        let epoch = match self.session {
            Some((node, epoch)) if node == at => epoch,
            // A new leader: a new session, and acknowledgements of records acquired from
            // the old one are not taken.
            _ => 0,
        };
        let acks = if epoch == 0 { &[][..] } else { acks };
        let partition = FetchPartition::default()
            .with_partition_index(0)
            .with_acknowledgement_batches(
                acks.iter()
                    .map(|(f, l)| {
                        AcknowledgementBatch::default()
                            .with_first_offset(*f)
                            .with_last_offset(*l)
                            .with_acknowledge_types(vec![ACCEPT])
                    })
                    .collect(),
            );
        let request = ShareFetchRequest::default()
            .with_group_id(Some(GroupId(s(GROUP))))
            .with_member_id(Some(s(&self.id)))
            .with_share_session_epoch(epoch)
            .with_max_wait_ms(200)
            .with_max_records(7)
            .with_max_bytes(1 << 20)
            .with_topics(vec![
                FetchTopic::default()
                    .with_topic_id(self.topic_id)
                    .with_partitions(vec![partition]),
            ]);
        let response: ShareFetchResponse = raw_call(
            &cluster.nodes[at].bootstrap,
            ApiKey::ShareFetch,
            2,
            &request,
        );
        if response.error_code != 0 {
            self.session = None;
            return Err(response.error_code);
        }
        self.session = Some((at, epoch + 1));
        let mut acquired = Vec::new();
        for topic in response.responses {
            for p in topic.partitions {
                if p.error_code != 0 {
                    return Err(p.error_code);
                }
                if p.acknowledge_error_code != 0 && !acks.is_empty() {
                    return Err(p.acknowledge_error_code);
                }
                for range in p.acquired_records {
                    acquired.extend(range.first_offset..=range.last_offset);
                }
            }
        }
        Ok((acquired, !acks.is_empty()))
    }
}

fn start_offset(cluster: &Cluster, alive: &BTreeSet<usize>, topic: &str) -> Option<i64> {
    let via = *alive.first().unwrap();
    let at = coordinator(cluster, via, GROUP, 0).filter(|c| alive.contains(c))?;
    let response: DescribeShareGroupOffsetsResponse = raw_call(
        &cluster.nodes[at].bootstrap,
        ApiKey::DescribeShareGroupOffsets,
        0,
        &DescribeShareGroupOffsetsRequest::default().with_groups(vec![
            describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup::default()
                .with_group_id(GroupId(s(GROUP)))
                .with_topics(Some(vec![
                    describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestTopic::default()
                        .with_topic_name(TopicName(s(topic)))
                        .with_partitions(vec![0]),
                ])),
        ]),
    );
    let group = response.groups.first()?;
    if group.error_code != 0 {
        return None;
    }
    let partition = group.topics.first()?.partitions.first()?;
    (partition.error_code == 0).then_some(partition.start_offset)
}

/// Which node the test kills once half the records are acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Victim {
    /// The leader of the `__share_group_state` partition holding the state.
    ShareCoordinator,
    /// The leader of the partition the records are in (which holds the share-partition).
    PartitionLeader,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_state_survives_its_share_coordinator_being_killed() {
    survives(Victim::ShareCoordinator).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn share_state_is_handed_over_when_the_partition_leader_is_killed() {
    survives(Victim::PartitionLeader).await;
}

async fn survives(victim: Victim) {
    let mut cluster = Cluster::start(
        3,
        &[
            ("group.share.min.record.lock.duration.ms", "1000"),
            ("group.share.record.lock.duration.ms", "3000"),
            ("broker.session.timeout.ms", "3000"),
            ("broker.heartbeat.interval.ms", "300"),
        ],
    );
    let mut alive: BTreeSet<usize> = (0..3).collect();
    let bootstrap = cluster.nodes[0].bootstrap.clone();
    let created: CreateTopicsResponse = raw_call(
        &bootstrap,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(vec![
                create_topics_request::CreatableTopic::default()
                    .with_name(TopicName(s("work")))
                    .with_num_partitions(1)
                    .with_replication_factor(3),
            ])
            .with_timeout_ms(30_000),
    );
    assert_eq!(created.topics[0].error_code, 0);
    let topic_id = created.topics[0].topic_id;
    {
        use rdkafka::config::ClientConfig;
        use rdkafka::producer::{FutureProducer, FutureRecord};
        let producer: FutureProducer = ClientConfig::new()
            .set("bootstrap.servers", cluster.bootstrap())
            .set("acks", "all")
            .create()
            .unwrap();
        for i in 0..RECORDS {
            let value = format!("record-{i}");
            producer
                .send(
                    FutureRecord::<(), _>::to("work").payload(&value),
                    Duration::from_secs(30),
                )
                .await
                .unwrap();
        }
    }
    let configs: IncrementalAlterConfigsResponse = raw_call(
        &bootstrap,
        ApiKey::IncrementalAlterConfigs,
        1,
        &IncrementalAlterConfigsRequest::default().with_resources(vec![
            AlterConfigsResource::default()
                .with_resource_type(32)
                .with_resource_name(s(GROUP))
                .with_configs(vec![
                    AlterableConfig::default()
                        .with_name(s("share.auto.offset.reset"))
                        .with_config_operation(0)
                        .with_value(Some(s("earliest"))),
                ]),
        ]),
    );
    assert_eq!(configs.responses[0].error_code, 0);

    let mut member = Member {
        id: Uuid::new_v4().to_string(),
        epoch: 0,
        session: None,
        topic_id,
    };
    assert!(
        wait_until(Duration::from_secs(30), || member
            .heartbeat(&cluster, &alive)),
        "the member never joined"
    );
    // Half the records acquired and acknowledged before the failure.
    let mut delivered: Vec<i64> = Vec::new();
    let mut pending: Vec<(i64, i64)> = Vec::new();
    let mut acknowledged: BTreeSet<i64> = BTreeSet::new();
    assert!(
        wait_until(Duration::from_secs(30), || {
            let Ok((got, acked)) = member.fetch(&cluster, &alive, &pending) else {
                return false;
            };
            if acked {
                acknowledged.extend(pending.iter().flat_map(|(f, l)| *f..=*l));
            }
            pending = got.iter().map(|o| (*o, *o)).collect();
            delivered.extend(&got);
            acknowledged.len() as i64 >= RECORDS / 2
        }),
        "records were not delivered before the failure"
    );
    assert!(
        wait_until(Duration::from_secs(20), || start_offset(
            &cluster, &alive, "work"
        )
        .is_some_and(|o| o >= RECORDS / 2)),
        "the start offset did not move past the acknowledged records"
    );

    // The share coordinator of the share-partition's state, or the partition's leader, dies.
    let key = format!("{GROUP}:{topic_id}:0");
    let share_coordinator = coordinator(&cluster, 0, &key, 2).expect("a share coordinator");
    let partition_leader = leader(&cluster, 0, "work").expect("a partition leader");
    let killed = match victim {
        Victim::ShareCoordinator => share_coordinator,
        Victim::PartitionLeader => partition_leader,
    };
    cluster.nodes[killed].kill9();
    alive.remove(&killed);
    eprintln!(
        "killed node {} ({victim:?}; share coordinator {}, partition leader {})",
        killed + 1,
        share_coordinator + 1,
        partition_leader + 1
    );
    // Locks held on a killed leader are gone with it; records it never saw acknowledged
    // come back. Everything is consumed in the end, and acknowledged records only once.
    let mut redelivered_after_ack: Vec<i64> = Vec::new();
    assert!(
        wait_until(Duration::from_secs(90), || {
            if !member.heartbeat(&cluster, &alive) && member.epoch == 0 {
                return false;
            }
            match member.fetch(&cluster, &alive, &pending) {
                Ok((got, acked)) => {
                    if acked {
                        acknowledged.extend(pending.iter().flat_map(|(f, l)| *f..=*l));
                    }
                    redelivered_after_ack.extend(got.iter().filter(|o| acknowledged.contains(o)));
                    pending = got.iter().map(|o| (*o, *o)).collect();
                    delivered.extend(&got);
                }
                Err(code) => {
                    if code != -1 {
                        eprintln!("fetch error {code}; asking again");
                    }
                    pending.clear();
                    member.session = None;
                }
            }
            acknowledged.len() as i64 == RECORDS && pending.is_empty()
        }),
        "not every record was acknowledged: {} of {RECORDS}",
        acknowledged.len()
    );
    assert!(
        redelivered_after_ack.is_empty(),
        "acknowledged records delivered again: {redelivered_after_ack:?}"
    );
    assert!(
        wait_until(Duration::from_secs(30), || start_offset(
            &cluster, &alive, "work"
        ) == Some(RECORDS)),
        "the start offset is not past every record"
    );
    let via = *alive.first().unwrap();
    let now_coordinating = coordinator(&cluster, via, &key, 2).unwrap();
    let now_leading = leader(&cluster, via, "work").unwrap();
    assert!(alive.contains(&now_coordinating) && alive.contains(&now_leading));
    eprintln!(
        "{} deliveries of {RECORDS} records; now share coordinator {}, partition leader {}",
        delivered.len(),
        now_coordinating + 1,
        now_leading + 1
    );
}
