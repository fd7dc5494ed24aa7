//! This broker's view of the cluster metadata (Kafka's `KRaftMetadataCache`): the latest
//! image whose local changes the broker has applied, which the API layer answers from, and a
//! watch of its offset so a request can wait until a change it caused has reached this
//! broker. [`ImageSlot`] hands newly committed images from whoever learns them (the local
//! controller thread, later a remote metadata fetcher) to the thread that applies them.

use super::TopicInfo;
use super::image::MetadataImage;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::watch;
use uuid::Uuid;

#[derive(Debug)]
pub struct MetadataCache {
    image: RwLock<Arc<MetadataImage>>,
    offset: watch::Sender<u64>,
    /// For threads outside the runtime that wait for an image.
    published: (Mutex<()>, Condvar),
}

impl Default for MetadataCache {
    fn default() -> Self {
        Self {
            image: RwLock::new(Arc::new(MetadataImage::default())),
            offset: watch::channel(0).0,
            published: (Mutex::new(()), Condvar::new()),
        }
    }
}

impl TopicInfo {
    fn of(topic: &super::image::TopicImage) -> Self {
        Self {
            name: topic.name.clone(),
            id: topic.id,
            partitions: topic.partitions.len() as i32,
            configs: topic.configs.clone(),
        }
    }
}

impl MetadataCache {
    pub fn image(&self) -> Arc<MetadataImage> {
        self.image.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Makes `image` the current one (its local changes are applied).
    pub fn publish(&self, image: Arc<MetadataImage>) {
        let offset = image.offset;
        *self.image.write().unwrap_or_else(|p| p.into_inner()) = image;
        self.offset.send_replace(offset);
        let _guard = self.published.0.lock().unwrap_or_else(|p| p.into_inner());
        self.published.1.notify_all();
    }

    /// Wakes [`MetadataCache::wait_blocking`] callers to re-check (after work that follows a
    /// publish, such as loading consumer groups).
    pub fn renotify(&self) {
        let _guard = self.published.0.lock().unwrap_or_else(|p| p.into_inner());
        self.published.1.notify_all();
    }

    /// Blocks (outside the runtime) until the current image satisfies `check`; false when
    /// `timeout` passes first.
    pub fn wait_blocking(&self, timeout: Duration, check: impl Fn(&MetadataImage) -> bool) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        let mut guard = self.published.0.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if check(&self.image()) {
                return true;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return false;
            }
            guard = self
                .published
                .1
                .wait_timeout(guard, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Waits until the current image satisfies `check`; false on timeout.
    pub async fn wait_until(
        &self,
        check: impl Fn(&MetadataImage) -> bool,
        timeout: Duration,
    ) -> bool {
        let mut offsets = self.offset.subscribe();
        let satisfied = async {
            loop {
                if check(&self.image()) {
                    return;
                }
                if offsets.changed().await.is_err() {
                    return;
                }
            }
        };
        tokio::time::timeout(timeout, satisfied).await.is_ok() && check(&self.image())
    }

    /// Waits until an image at or after `offset` is current; false on timeout.
    pub async fn wait_for_offset(&self, offset: u64, timeout: Duration) -> bool {
        let mut current = self.offset.subscribe();
        tokio::time::timeout(timeout, current.wait_for(|o| *o >= offset))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    pub fn topic(&self, name: &str) -> Option<Arc<TopicInfo>> {
        self.image().topic(name).map(|t| Arc::new(TopicInfo::of(t)))
    }

    pub fn topic_by_id(&self, id: Uuid) -> Option<Arc<TopicInfo>> {
        self.image()
            .topic_by_id(id)
            .map(|t| Arc::new(TopicInfo::of(t)))
    }

    pub fn topics(&self) -> Vec<Arc<TopicInfo>> {
        self.image()
            .topics
            .values()
            .map(|t| Arc::new(TopicInfo::of(t)))
            .collect()
    }
}

/// The newest image not yet taken; offering replaces an older one not yet taken (only the
/// latest matters: deltas are computed against what was last applied).
#[derive(Debug, Default)]
pub struct ImageSlot {
    state: Mutex<SlotState>,
    changed: Condvar,
}

/// What [`ImageSlot::take`] found.
#[derive(Debug)]
pub enum Taken {
    Image(Arc<MetadataImage>),
    Nothing,
    Closed,
}

#[derive(Debug, Default)]
struct SlotState {
    image: Option<Arc<MetadataImage>>,
    closed: bool,
}

impl ImageSlot {
    pub fn offer(&self, image: Arc<MetadataImage>) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).image = Some(image);
        self.changed.notify_all();
    }

    /// Wakes the taker for good.
    pub fn close(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
        self.changed.notify_all();
    }

    /// Blocks until an image is offered, `wait` passes, or the slot is closed.
    pub fn take(&self, wait: Duration) -> Taken {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let (mut state, _) = self
            .changed
            .wait_timeout_while(state, wait, |s| s.image.is_none() && !s.closed)
            .unwrap_or_else(|p| p.into_inner());
        if state.closed {
            return Taken::Closed;
        }
        match state.image.take() {
            Some(image) => Taken::Image(image),
            None => Taken::Nothing,
        }
    }
}
