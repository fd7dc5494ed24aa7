//! What the group coordinator sees of topics (KIP-848 assignment, regex subscriptions, topic
//! ids in its records): [`TopicsView`] over this broker's metadata cache, and over the topic
//! store a single node kept before the metadata log.

use super::consumer::TopicsView;
use crate::metadata::TopicStore;
use crate::metadata::cache::MetadataCache;
use uuid::Uuid;

impl TopicsView for MetadataCache {
    fn partitions_of(&self, topic: &str) -> Option<i32> {
        self.image().topic(topic).map(|t| t.partitions.len() as i32)
    }
    fn topic_names(&self) -> Vec<String> {
        self.image().topics.keys().map(|t| t.to_string()).collect()
    }
    fn topic_id(&self, topic: &str) -> Option<Uuid> {
        self.image().topic(topic).map(|t| t.id)
    }
    fn topic_name(&self, id: Uuid) -> Option<String> {
        self.image().topic_by_id(id).map(|t| t.name.to_string())
    }
}

impl TopicsView for TopicStore {
    fn partitions_of(&self, topic: &str) -> Option<i32> {
        self.get(topic).map(|t| t.partitions)
    }
    fn topic_names(&self) -> Vec<String> {
        self.list().iter().map(|t| t.name.to_string()).collect()
    }
    fn topic_id(&self, topic: &str) -> Option<Uuid> {
        self.get(topic).map(|t| t.id)
    }
    fn topic_name(&self, id: Uuid) -> Option<String> {
        self.get_by_id(id).map(|t| t.name.to_string())
    }
}
