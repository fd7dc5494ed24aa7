//! Topic definitions on a single node: name, topic id, partition count and config overrides,
//! plus the cluster identity in `meta.properties` (Kafka's file and keys).
//!
//! ```text
//! {log.dirs}/meta.properties                         version=1, cluster.id, node.id, directory.id
//! {log.dirs}/.sluice-metadata/topics/{topic}.properties
//!     topic.id=<uuid>
//!     partitions=<n>
//!     config.<name>=<value>                          one line per topic config override
//! ```
//!
//! Those topic files are what a single node kept before the metadata log: they are read once,
//! imported into the log, and renamed `topics.imported`. Submodules: the metadata log's
//! records ([`records`]), the image they build ([`image`]), this broker's current view of it
//! ([`cache`]), the feature levels it runs at ([`features`]) and the records a new cluster
//! starts with ([`bootstrap`]).
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | a single node's topic store (before the metadata log), `meta.properties` |
//! | `records.rs` | the `__cluster_metadata` records |
//! | `image.rs` | the metadata image and this broker's local changes |
//! | `image_tests.rs` | the image's unit tests |
//! | `cache.rs` | this broker's applied image, the image slot for the publisher |
//! | `acl.rs` | ACLs as the metadata stores them |
//! | `quota.rs` | client quotas as the metadata stores them, and the describe filter |
//! | `bootstrap.rs` | records a new cluster starts with (`sluice format`) |
//! | `features.rs` | feature levels (KIP-584) |

pub mod acl;
pub mod bootstrap;
pub mod cache;
pub mod features;
pub mod image;
pub mod quota;
pub mod records;

use crate::config::parse_properties;
use crate::storage::StorageError;
use crate::storage::checkpoint::write_atomically;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use uuid::Uuid;

/// The consumer group coordinators' topic (share groups' records are in it too).
pub const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// Topics Kafka reports as internal.
pub const INTERNAL_TOPICS: &[&str] = &[OFFSETS_TOPIC, "__transaction_state", "__share_group_state"];

/// Kafka's limit on topic name length.
pub const MAX_TOPIC_NAME_LEN: usize = 249;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicInfo {
    pub name: Arc<str>,
    pub id: Uuid,
    pub partitions: i32,
    pub configs: BTreeMap<String, String>,
}

impl TopicInfo {
    /// Kafka's internal topics (coordinator state).
    pub fn is_internal(&self) -> bool {
        INTERNAL_TOPICS.contains(&self.name.as_ref())
    }
}

/// Kafka's topic name rules: 1..=249 characters of `[a-zA-Z0-9._-]`, not `.` or `..`.
pub fn validate_topic_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("topic name is empty".into());
    }
    if name == "." || name == ".." {
        return Err(format!("topic name cannot be '{name}'"));
    }
    if name.len() > MAX_TOPIC_NAME_LEN {
        return Err(format!(
            "topic name is longer than {MAX_TOPIC_NAME_LEN} characters"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
    {
        return Err(format!(
            "topic name '{name}' contains '{bad}'; legal characters are ASCII alphanumerics, '.', '_' and '-'"
        ));
    }
    Ok(())
}

#[derive(Debug)]
pub struct TopicStore {
    dir: PathBuf,
    topics: RwLock<BTreeMap<Arc<str>, Arc<TopicInfo>>>,
}

impl TopicStore {
    pub fn open(log_dir: &Path) -> Result<Self, StorageError> {
        let dir = log_dir.join(".sluice-metadata").join("topics");
        std::fs::create_dir_all(&dir)?;
        let mut topics = BTreeMap::new();
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            let Some(name) = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".properties"))
            else {
                continue;
            };
            let text = std::fs::read_to_string(&path)?;
            let corrupt = |why: &str| StorageError::Corrupt(format!("{}: {why}", path.display()));
            let props = parse_properties(&text).map_err(|e| corrupt(&e.to_string()))?;
            let id = props
                .get("topic.id")
                .and_then(|v| Uuid::parse_str(v).ok())
                .ok_or_else(|| corrupt("missing topic.id"))?;
            let partitions = props
                .get("partitions")
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| corrupt("missing partitions"))?;
            let configs = props
                .iter()
                .filter_map(|(k, v)| {
                    k.strip_prefix("config.")
                        .map(|k| (k.to_string(), v.clone()))
                })
                .collect();
            let info = TopicInfo {
                name: Arc::from(name),
                id,
                partitions,
                configs,
            };
            topics.insert(info.name.clone(), Arc::new(info));
        }
        Ok(Self {
            dir,
            topics: RwLock::new(topics),
        })
    }

    pub fn get(&self, name: &str) -> Option<Arc<TopicInfo>> {
        self.topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    pub fn get_by_id(&self, id: Uuid) -> Option<Arc<TopicInfo>> {
        self.topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .find(|t| t.id == id)
            .cloned()
    }

    pub fn list(&self) -> Vec<Arc<TopicInfo>> {
        self.topics
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// Persists and publishes `info`, replacing any previous definition of the topic.
    pub fn put(&self, info: TopicInfo) -> Result<Arc<TopicInfo>, StorageError> {
        let mut text = format!("topic.id={}\npartitions={}\n", info.id, info.partitions);
        for (k, v) in &info.configs {
            text.push_str(&format!(
                "config.{}={}\n",
                crate::config::escape_property(k, true),
                crate::config::escape_property(v, false)
            ));
        }
        write_atomically(
            &self.dir.join(format!("{}.properties", info.name)),
            text.as_bytes(),
        )?;
        let info = Arc::new(info);
        self.topics
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(info.name.clone(), info.clone());
        Ok(info)
    }

    pub fn remove(&self, name: &str) -> Result<(), StorageError> {
        match std::fs::remove_file(self.dir.join(format!("{name}.properties"))) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        self.topics
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name);
        Ok(())
    }
}

/// The legacy topic files of a single node, if any are left to import.
pub fn legacy_topics(log_dir: &Path) -> Result<Vec<Arc<TopicInfo>>, StorageError> {
    if !log_dir.join(".sluice-metadata").join("topics").is_dir() {
        return Ok(Vec::new());
    }
    Ok(TopicStore::open(log_dir)?.list())
}

/// The first producer id the legacy allocator had not handed out (0 without its file).
pub fn legacy_next_producer_id(log_dir: &Path) -> Result<i64, StorageError> {
    let path = log_dir.join(".sluice-metadata").join("producer-ids");
    match std::fs::read_to_string(&path) {
        Ok(text) => text
            .trim()
            .strip_prefix("next.block.start=")
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| StorageError::Corrupt(format!("malformed {}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// Marks the legacy topic files imported (kept, renamed, for whoever wants to look).
pub fn retire_legacy_topics(log_dir: &Path) -> Result<(), StorageError> {
    let base = log_dir.join(".sluice-metadata");
    std::fs::rename(base.join("topics"), base.join("topics.imported"))?;
    crate::storage::checkpoint::sync_dir(&base)?;
    Ok(())
}

/// Reads `meta.properties`: the cluster id this log directory belongs to, if it has been
/// written yet. A node id that differs from the stored one is an error, as in Kafka.
pub fn read_meta(log_dir: &Path, node_id: i32) -> Result<Option<String>, StorageError> {
    let path = log_dir.join("meta.properties");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let props = parse_properties(&text).map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let stored_node: Option<i32> = props.get("node.id").and_then(|v| v.parse().ok());
    if stored_node.is_some_and(|n| n != node_id) {
        return Err(StorageError::Corrupt(format!(
            "{} belongs to node {:?}, this is node {node_id}",
            path.display(),
            stored_node
        )));
    }
    props
        .get("cluster.id")
        .cloned()
        .map(Some)
        .ok_or_else(|| StorageError::Corrupt(format!("{} has no cluster.id", path.display())))
}

/// A Uuid as Kafka writes it (`Uuid.toString`: URL-safe base64 without padding).
pub fn kafka_uuid_text(id: Uuid) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(id.as_bytes())
}

/// The `directory.id` of `meta.properties` (KIP-858), when the directory has one.
pub fn read_directory_id(log_dir: &Path) -> Option<Uuid> {
    use base64::Engine;
    let text = std::fs::read_to_string(log_dir.join("meta.properties")).ok()?;
    let props = parse_properties(&text).ok()?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(props.get("directory.id")?)
        .ok()?;
    Uuid::from_slice(&bytes).ok()
}

/// Marks every log directory as this node's in `cluster_id` (writing `meta.properties` where
/// it is missing, with a directory id of its own) and returns their directory ids, in order.
/// A directory of another cluster is an error, as in Kafka.
pub fn mark_log_dirs(
    dirs: &[std::path::PathBuf],
    node_id: i32,
    cluster_id: &str,
) -> Result<Vec<Uuid>, StorageError> {
    let mut ids = Vec::with_capacity(dirs.len());
    for dir in dirs {
        match read_meta(dir, node_id)? {
            Some(stored) if stored != cluster_id => {
                return Err(StorageError::Corrupt(format!(
                    "the controller quorum is cluster {cluster_id}, but log directory {} belongs to {stored}",
                    dir.display()
                )));
            }
            Some(_) => {}
            None => write_meta(dir, node_id, cluster_id)?,
        }
        let id = read_directory_id(dir).ok_or_else(|| {
            StorageError::Corrupt(format!("{} has no directory.id", dir.display()))
        })?;
        ids.push(id);
    }
    Ok(ids)
}

/// Writes `meta.properties` (Kafka's keys, KIP-858's `directory.id` among them: a new id
/// for this directory) once the cluster id is known.
pub fn write_meta(log_dir: &Path, node_id: i32, cluster_id: &str) -> Result<(), StorageError> {
    write_meta_with_directory(log_dir, node_id, cluster_id, Uuid::new_v4())
}

/// [`write_meta`] with a directory id given (`kafka-storage format --initial-controllers`
/// names each controller's).
pub fn write_meta_with_directory(
    log_dir: &Path,
    node_id: i32,
    cluster_id: &str,
    directory_id: Uuid,
) -> Result<(), StorageError> {
    let directory_id = kafka_uuid_text(directory_id);
    let text = format!(
        "#\n#Written by sluice\nversion=1\ncluster.id={cluster_id}\nnode.id={node_id}\ndirectory.id={directory_id}\n"
    );
    write_atomically(&log_dir.join("meta.properties"), text.as_bytes())
}

/// A new cluster id: 22 characters of URL-safe base64 of a random UUID, as Kafka's
/// `Uuid.randomUuid`, which also never gives one starting with `-` (it would read as a flag
/// on a command line).
pub fn generate_cluster_id() -> String {
    use base64::Engine;
    loop {
        let id = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(Uuid::new_v4().as_bytes());
        if !id.starts_with('-') {
            return id;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names() {
        assert!(validate_topic_name("orders.v1_A-b").is_ok());
        for bad in ["", ".", "..", "a b", "ü", &"x".repeat(250)] {
            assert!(validate_topic_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn store_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let store = TopicStore::open(dir.path()).unwrap();
        let mut configs = BTreeMap::new();
        configs.insert("cleanup.policy".to_string(), "compact,delete".to_string());
        configs.insert("weird".to_string(), " a=b:c\\d#".to_string());
        let info = TopicInfo {
            name: Arc::from("t1"),
            id: Uuid::new_v4(),
            partitions: 3,
            configs,
        };
        store.put(info.clone()).unwrap();
        let reopened = TopicStore::open(dir.path()).unwrap();
        assert_eq!(*reopened.get("t1").unwrap(), info);
        assert_eq!(reopened.get_by_id(info.id).unwrap().name.as_ref(), "t1");
        reopened.remove("t1").unwrap();
        assert!(TopicStore::open(dir.path()).unwrap().list().is_empty());
    }

    #[test]
    fn meta_properties() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(read_meta(dir.path(), 1).unwrap(), None);
        let id = generate_cluster_id();
        assert_eq!(id.len(), 22);
        write_meta(dir.path(), 1, &id).unwrap();
        assert_eq!(read_meta(dir.path(), 1).unwrap(), Some(id));
        assert!(read_meta(dir.path(), 2).is_err());
    }
}
