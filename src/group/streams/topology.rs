//! A streams group's topology (KIP-1071) and how it meets the cluster's topics: the
//! subtopologies a Kafka Streams application declares in its first heartbeat, and Kafka's
//! `InternalTopicManager.configureTopics` over them — the partition counts of repartition and
//! changelog topics, copartitioning, the number of tasks of each subtopology, and the internal
//! topics the coordinator must create before any task is assigned.

use super::super::consumer::TopicsView;
use std::collections::{BTreeMap, BTreeSet};

/// An internal topic as the application declares it (`TopicInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TopicInfo {
    pub name: String,
    /// 0: decided by the coordinator.
    pub partitions: i32,
    /// 0: the broker's default.
    pub replication_factor: i16,
    pub configs: BTreeMap<String, String>,
}

/// Source topics that must have the same partition count, as indexes into the subtopology's
/// lists.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CopartitionGroup {
    pub source_topics: Vec<i16>,
    pub source_topic_regex: Vec<i16>,
    pub repartition_source_topics: Vec<i16>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subtopology {
    pub id: String,
    pub source_topics: Vec<String>,
    pub source_topic_regex: Vec<String>,
    pub state_changelog_topics: Vec<TopicInfo>,
    pub repartition_sink_topics: Vec<String>,
    pub repartition_source_topics: Vec<TopicInfo>,
    pub copartition_groups: Vec<CopartitionGroup>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Topology {
    pub epoch: i32,
    /// By subtopology id.
    pub subtopologies: BTreeMap<String, Subtopology>,
}

/// Kafka's `StreamsGroupHeartbeatResponse.Status` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusCode {
    StaleTopology = 0,
    MissingSourceTopics = 1,
    IncorrectlyPartitionedTopics = 2,
    MissingInternalTopics = 3,
    ShutdownApplication = 4,
}

/// An internal topic the coordinator must create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicToCreate {
    pub name: String,
    pub partitions: i32,
    /// -1: the broker's default.
    pub replication_factor: i16,
    pub configs: BTreeMap<String, String>,
}

/// The topology configured against the topics that exist (Kafka's `ConfiguredTopology`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConfiguredTopology {
    pub epoch: i32,
    /// Tasks of each subtopology; empty when configuration failed.
    pub tasks: BTreeMap<String, i32>,
    /// Internal topics each subtopology materializes (changelogs and repartition sources),
    /// with their decided partition counts.
    pub internal_topics: BTreeMap<String, i32>,
    pub to_create: Vec<TopicToCreate>,
    /// Why tasks cannot be assigned yet.
    pub problem: Option<(StatusCode, String)>,
}

impl ConfiguredTopology {
    /// Tasks can be assigned: every topic exists with the partitions it needs.
    pub fn is_ready(&self) -> bool {
        self.problem.is_none()
    }
}

impl Topology {
    /// The partition count of each topic the topology needs (`None`: the topic is missing);
    /// a change of it means the topology must be configured again.
    pub fn required_partition_counts(
        &self,
        topics: &dyn TopicsView,
    ) -> BTreeMap<String, Option<i32>> {
        self.required_topics(topics)
            .into_iter()
            .map(|t| {
                let n = topics.partitions_of(&t);
                (t, n)
            })
            .collect()
    }
    /// Every source topic, regexes resolved against the topics there are.
    pub fn source_topics(&self, topics: &dyn TopicsView) -> BTreeSet<String> {
        let names = topics.topic_names();
        let mut out = BTreeSet::new();
        for s in self.subtopologies.values() {
            out.extend(s.source_topics.iter().cloned());
            out.extend(resolve_regexes(&s.source_topic_regex, &names));
        }
        out
    }

    /// The topics the group's assignment depends on (source and internal), for noticing
    /// metadata changes.
    pub fn required_topics(&self, topics: &dyn TopicsView) -> BTreeSet<String> {
        let mut out = self.source_topics(topics);
        for s in self.subtopologies.values() {
            out.extend(s.repartition_source_topics.iter().map(|t| t.name.clone()));
            out.extend(s.state_changelog_topics.iter().map(|t| t.name.clone()));
        }
        out
    }

    /// Kafka's `InternalTopicManager.configureTopics`.
    pub fn configure(&self, topics: &dyn TopicsView) -> ConfiguredTopology {
        let failed = |code, message: String| ConfiguredTopology {
            epoch: self.epoch,
            problem: Some((code, message)),
            ..Default::default()
        };
        let names = topics.topic_names();
        let mut missing = BTreeSet::new();
        for s in self.subtopologies.values() {
            for t in &s.source_topics {
                if topics.partitions_of(t).is_none() {
                    missing.insert(t.clone());
                }
            }
            for pattern in &s.source_topic_regex {
                if resolve_regexes(std::slice::from_ref(pattern), &names).is_empty() {
                    missing.insert(pattern.clone());
                }
            }
        }
        if !missing.is_empty() {
            return failed(
                StatusCode::MissingSourceTopics,
                format!("Source topics {} are missing.", summarize(&missing)),
            );
        }
        let mut decided: BTreeMap<String, i32> = BTreeMap::new();
        if let Err(message) = self.decide_repartition_counts(topics, &names, &mut decided) {
            return failed(StatusCode::IncorrectlyPartitionedTopics, message);
        }
        if let Err(message) = self.enforce_copartitioning(topics, &names, &mut decided) {
            return failed(StatusCode::IncorrectlyPartitionedTopics, message);
        }
        let count = |topic: &str, decided: &BTreeMap<String, i32>| {
            topics
                .partitions_of(topic)
                .or_else(|| decided.get(topic).copied())
        };
        let mut tasks = BTreeMap::new();
        for s in self.subtopologies.values() {
            let sources = s
                .source_topics
                .iter()
                .cloned()
                .chain(resolve_regexes(&s.source_topic_regex, &names))
                .chain(s.repartition_source_topics.iter().map(|t| t.name.clone()));
            let mut n = 0;
            for topic in sources {
                match count(&topic, &decided) {
                    Some(c) => n = n.max(c),
                    None => {
                        return failed(
                            StatusCode::IncorrectlyPartitionedTopics,
                            format!("Number of partitions must be set for topic {topic}"),
                        );
                    }
                }
            }
            tasks.insert(s.id.clone(), n);
            // A changelog has one partition per task (ChangelogTopics.setup).
            for changelog in &s.state_changelog_topics {
                let n = if changelog.partitions > 0 {
                    changelog.partitions
                } else {
                    n
                };
                decided.insert(changelog.name.clone(), n);
            }
        }
        let mut internal_topics = BTreeMap::new();
        let mut to_create = BTreeMap::new();
        for s in self.subtopologies.values() {
            for info in s
                .repartition_source_topics
                .iter()
                .chain(&s.state_changelog_topics)
            {
                let partitions = decided.get(&info.name).copied().unwrap_or(info.partitions);
                internal_topics.insert(info.name.clone(), partitions);
                match topics.partitions_of(&info.name) {
                    Some(existing) if existing != partitions => {
                        return failed(
                            StatusCode::IncorrectlyPartitionedTopics,
                            format!(
                                "Existing topic {} has different number of partitions: expected {partitions}, found {existing}",
                                info.name
                            ),
                        );
                    }
                    Some(_) => {}
                    None => {
                        to_create.insert(
                            info.name.clone(),
                            TopicToCreate {
                                name: info.name.clone(),
                                partitions,
                                replication_factor: if info.replication_factor == 0 {
                                    -1
                                } else {
                                    info.replication_factor
                                },
                                configs: info.configs.clone(),
                            },
                        );
                    }
                }
            }
        }
        let problem = (!to_create.is_empty()).then(|| {
            let names: BTreeSet<String> = to_create.keys().cloned().collect();
            (
                StatusCode::MissingInternalTopics,
                format!("Internal topics are missing: {}", summarize(&names)),
            )
        });
        ConfiguredTopology {
            epoch: self.epoch,
            tasks,
            internal_topics,
            to_create: to_create.into_values().collect(),
            problem,
        }
    }

    /// Partition counts of repartition topics not fixed by the application: the largest
    /// input of any subtopology writing to it (Kafka's `RepartitionTopics.setup`).
    fn decide_repartition_counts(
        &self,
        topics: &dyn TopicsView,
        names: &[String],
        decided: &mut BTreeMap<String, i32>,
    ) -> Result<(), String> {
        let mut pending: BTreeSet<String> = BTreeSet::new();
        for s in self.subtopologies.values() {
            for info in &s.repartition_source_topics {
                if info.partitions > 0 {
                    decided.insert(info.name.clone(), info.partitions);
                } else if let Some(n) = topics.partitions_of(&info.name) {
                    decided.insert(info.name.clone(), n);
                } else {
                    pending.insert(info.name.clone());
                }
            }
        }
        while !pending.is_empty() {
            let mut progressed = false;
            for topic in pending.clone() {
                let mut best: Option<i32> = None;
                let mut unresolved_writer = false;
                for s in self.subtopologies.values() {
                    if !s.repartition_sink_topics.contains(&topic) {
                        continue;
                    }
                    let inputs = s
                        .source_topics
                        .iter()
                        .cloned()
                        .chain(resolve_regexes(&s.source_topic_regex, names))
                        .chain(s.repartition_source_topics.iter().map(|t| t.name.clone()));
                    for input in inputs {
                        match topics
                            .partitions_of(&input)
                            .or_else(|| decided.get(&input).copied())
                        {
                            Some(n) => best = Some(best.map_or(n, |b| b.max(n))),
                            None => unresolved_writer = true,
                        }
                    }
                }
                if let Some(n) = best.filter(|_| !unresolved_writer) {
                    decided.insert(topic.clone(), n);
                    pending.remove(&topic);
                    progressed = true;
                }
            }
            if !progressed {
                return Err(format!(
                    "Failed to compute number of partitions for all repartition topics. Make sure all user input topics are created and all repartition topics have a writer: {}",
                    summarize(&pending)
                ));
            }
        }
        Ok(())
    }

    /// Kafka's `CopartitionedTopicsEnforcer`: the topics of a copartition group have one
    /// partition count; flexible repartition topics take that of the others.
    fn enforce_copartitioning(
        &self,
        topics: &dyn TopicsView,
        names: &[String],
        decided: &mut BTreeMap<String, i32>,
    ) -> Result<(), String> {
        let fixed: BTreeSet<&str> = self
            .subtopologies
            .values()
            .flat_map(|s| &s.repartition_source_topics)
            .filter(|t| t.partitions > 0)
            .map(|t| t.name.as_str())
            .collect();
        for s in self.subtopologies.values() {
            for group in &s.copartition_groups {
                let index = |list: &[String], i: &i16| list.get(usize::try_from(*i).ok()?).cloned();
                let repartition_names: Vec<String> = s
                    .repartition_source_topics
                    .iter()
                    .map(|t| t.name.clone())
                    .collect();
                let mut members: BTreeSet<String> = BTreeSet::new();
                for i in &group.source_topics {
                    members.extend(index(&s.source_topics, i));
                }
                for i in &group.source_topic_regex {
                    if let Some(pattern) = index(&s.source_topic_regex, i) {
                        members.extend(resolve_regexes(&[pattern], names));
                    }
                }
                for i in &group.repartition_source_topics {
                    members.extend(index(&repartition_names, i));
                }
                let flexible: BTreeSet<String> = members
                    .iter()
                    .filter(|t| repartition_names.contains(t) && !fixed.contains(t.as_str()))
                    .cloned()
                    .collect();
                let mut counts: BTreeMap<String, i32> = BTreeMap::new();
                for t in members.iter().filter(|t| !flexible.contains(*t)) {
                    if let Some(n) = topics.partitions_of(t).or_else(|| decided.get(t).copied()) {
                        counts.insert(t.clone(), n);
                    }
                }
                let distinct: BTreeSet<i32> = counts.values().copied().collect();
                if distinct.len() > 1 {
                    let listed: Vec<String> =
                        counts.iter().map(|(t, n)| format!("{t}={n}")).collect();
                    return Err(format!(
                        "Following topics do not have the same number of partitions: [{}]",
                        listed.join(", ")
                    ));
                }
                let target = match distinct.first() {
                    Some(n) => *n,
                    // Only flexible repartition topics: the largest decided count among them.
                    None => flexible
                        .iter()
                        .filter_map(|t| decided.get(t).copied())
                        .max()
                        .unwrap_or(0),
                };
                if target > 0 {
                    for t in flexible {
                        decided.insert(t, target);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Topics whose whole name matches one of `patterns` (Java regex semantics for the
/// patterns Streams sends; an invalid pattern matches nothing).
fn resolve_regexes(patterns: &[String], names: &[String]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for pattern in patterns {
        if let Ok(re) = regex::Regex::new(&format!("^(?:{pattern})$")) {
            out.extend(names.iter().filter(|n| re.is_match(n)).cloned());
        }
    }
    out
}

/// Topic names for a status message, as Kafka's `summarizeTopics` lists them.
fn summarize(topics: &BTreeSet<String>) -> String {
    topics.iter().cloned().collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Topics(BTreeMap<String, i32>);
    impl TopicsView for Topics {
        fn partitions_of(&self, topic: &str) -> Option<i32> {
            self.0.get(topic).copied()
        }
        fn topic_names(&self) -> Vec<String> {
            self.0.keys().cloned().collect()
        }
        fn topic_id(&self, _: &str) -> Option<uuid::Uuid> {
            None
        }
        fn topic_name(&self, _: uuid::Uuid) -> Option<String> {
            None
        }
    }

    fn info(name: &str) -> TopicInfo {
        TopicInfo {
            name: name.into(),
            ..Default::default()
        }
    }

    /// Word count: subtopology 0 reads the input and writes the repartition topic,
    /// subtopology 1 reads it and keeps a changelog.
    fn word_count() -> Topology {
        let mut t = Topology {
            epoch: 0,
            ..Default::default()
        };
        t.subtopologies.insert(
            "0".into(),
            Subtopology {
                id: "0".into(),
                source_topics: vec!["in".into()],
                repartition_sink_topics: vec!["app-repartition".into()],
                ..Default::default()
            },
        );
        t.subtopologies.insert(
            "1".into(),
            Subtopology {
                id: "1".into(),
                repartition_source_topics: vec![info("app-repartition")],
                state_changelog_topics: vec![info("app-changelog")],
                ..Default::default()
            },
        );
        t
    }

    #[test]
    fn missing_source_topics_are_reported() {
        let configured = word_count().configure(&Topics(BTreeMap::new()));
        assert_eq!(
            configured.problem,
            Some((
                StatusCode::MissingSourceTopics,
                "Source topics in are missing.".into()
            ))
        );
        assert!(configured.tasks.is_empty());
    }

    #[test]
    fn internal_topics_take_the_input_partition_count_and_are_created() {
        let topics = Topics([("in".to_string(), 4)].into());
        let configured = word_count().configure(&topics);
        assert_eq!(configured.tasks, [("0".into(), 4), ("1".into(), 4)].into());
        assert_eq!(
            configured
                .to_create
                .iter()
                .map(|t| (t.name.as_str(), t.partitions, t.replication_factor))
                .collect::<Vec<_>>(),
            vec![("app-changelog", 4, -1), ("app-repartition", 4, -1)]
        );
        assert_eq!(
            configured.problem.map(|p| p.0),
            Some(StatusCode::MissingInternalTopics)
        );
        let topics = Topics(
            [
                ("in".to_string(), 4),
                ("app-repartition".to_string(), 4),
                ("app-changelog".to_string(), 4),
            ]
            .into(),
        );
        assert!(word_count().configure(&topics).is_ready());
        let topics = Topics(
            [
                ("in".to_string(), 4),
                ("app-repartition".to_string(), 4),
                ("app-changelog".to_string(), 2),
            ]
            .into(),
        );
        assert_eq!(
            word_count().configure(&topics).problem.map(|p| p.0),
            Some(StatusCode::IncorrectlyPartitionedTopics)
        );
    }

    #[test]
    fn copartitioned_sources_must_agree() {
        let mut t = Topology::default();
        t.subtopologies.insert(
            "0".into(),
            Subtopology {
                id: "0".into(),
                source_topics: vec!["a".into(), "b".into()],
                copartition_groups: vec![CopartitionGroup {
                    source_topics: vec![0, 1],
                    ..Default::default()
                }],
                ..Default::default()
            },
        );
        let topics = Topics([("a".to_string(), 2), ("b".to_string(), 3)].into());
        assert_eq!(
            t.configure(&topics).problem.map(|p| p.0),
            Some(StatusCode::IncorrectlyPartitionedTopics)
        );
        let topics = Topics([("a".to_string(), 3), ("b".to_string(), 3)].into());
        let configured = t.configure(&topics);
        assert!(configured.is_ready());
        assert_eq!(configured.tasks, [("0".into(), 3)].into());
    }
}
