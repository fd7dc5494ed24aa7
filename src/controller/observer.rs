//! A node that follows the controller quorum without voting in it: a broker-only node
//! (`process.roles=broker`). As Kafka's observers do (KIP-595), it fetches the committed
//! metadata from the quorum's leader over the controller listener, reads the leader's snapshot
//! first when what it needs was compacted, applies what it gets to its own image and publishes
//! that image as a voter's event loop does. The leader lists it among the observers of
//! DescribeQuorum.
//!
//! The node keeps the image it reached as a snapshot file in its own `__cluster_metadata-0`
//! (written every few seconds and at a clean stop), so a restart loads its logs with the
//! topic configs it knew and fetches only what it missed.
//!
//! It is never the controller: its [`ControllerHandle`] refuses commands with NOT_CONTROLLER,
//! and the broker forwards them to the leader this observer last heard of.

use super::metadata_log::{self, CLUSTER_METADATA_DIR};
use super::ops::{MetadataRead, ReadContent, SnapshotChunk};
use super::quorum::{QuorumError, decode_snapshot, entry_records, image_from_snapshot};
use super::service::{ControllerHandle, QuorumStatus};
use crate::error::Error;
use crate::metadata::cache::ImageSlot;
use crate::metadata::image::MetadataImage;
use crate::metadata::records::encode_batch;
use raft::prelude::Snapshot;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub type BoxFuture<'a, T> = std::pin::Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// How long the leader may hold a fetch that finds nothing new (Kafka's observers wait
/// `controller.quorum.fetch.timeout.ms` at most; this is well inside it).
pub const FETCH_WAIT: Duration = Duration::from_millis(500);
/// How much one fetch or one piece of a snapshot carries at most.
pub const FETCH_MAX_BYTES: usize = 1 << 20;
/// The largest snapshot an observer accepts (its size comes from the network).
const MAX_SNAPSHOT_BYTES: u64 = 1 << 30;
/// How often the image reached is written down at most.
const SAVE_EVERY: Duration = Duration::from_secs(5);
const RETRY_FIRST: Duration = Duration::from_millis(50);
const RETRY_MAX: Duration = Duration::from_secs(1);

/// The controller listener address of each voter this node knows of: the configured
/// `controller.quorum.voters`, the leaders the quorum named to it (a broker that knows only
/// `controller.quorum.bootstrap.servers`), and a dynamic quorum's voters as the image names
/// them. The broker forwards commands with it too.
pub type ControllerEndpoints = Arc<std::sync::RwLock<BTreeMap<u64, String>>>;

/// Where an observer finds the quorum.
#[derive(Debug, Clone, Default)]
pub struct ControllersToAsk {
    /// The voters known so far (shared with the broker, which forwards commands with it).
    pub endpoints: ControllerEndpoints,
    /// `controller.quorum.bootstrap.servers`.
    pub bootstrap: Vec<String>,
    /// The controller listener's name (`controller.listener.names`' first).
    pub controller_listener: String,
}

/// What a voter answered an observer's fetch with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fetched {
    Read(MetadataRead),
    /// The voter does not lead the quorum; it names the leader when it knows one.
    Elsewhere {
        leader: Option<u64>,
        term: u64,
    },
}

/// A voter's answer, with the leader's controller listener address when it gave one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub fetched: Fetched,
    pub leader_endpoint: Option<(u64, String)>,
}

/// Reads the metadata from a voter's controller listener. The API layer implements it (it
/// speaks the wire protocol: Fetch and FetchSnapshot on `__cluster_metadata`).
pub trait MetadataSource: Send + Sync + std::fmt::Debug {
    /// The committed entries from `from_index` on, waiting up to `wait` for new ones.
    fn read<'a>(
        &'a self,
        address: &'a str,
        observer: u64,
        from_index: u64,
        wait: Duration,
    ) -> BoxFuture<'a, Result<Answer, Error>>;

    /// A piece of the snapshot at `index` of `term`, from byte `position`.
    fn read_snapshot<'a>(
        &'a self,
        address: &'a str,
        observer: u64,
        index: u64,
        term: u64,
        position: u64,
    ) -> BoxFuture<'a, Result<SnapshotChunk, Error>>;
}

/// The observer's state, run by [`Observer::run`] once the node has its transport.
pub struct Observer {
    node: u64,
    /// The voters' controller listener addresses known so far.
    endpoints: ControllerEndpoints,
    /// `controller.quorum.bootstrap.servers`: where to ask first when no voter is known.
    bootstrap: Vec<String>,
    /// The controller listener's name, to pick a dynamic voter's endpoint from the image.
    controller_listener: String,
    dir: PathBuf,
    image: Arc<MetadataImage>,
    /// The term of the entry the image was last advanced by.
    image_term: u64,
    status: QuorumStatus,
    image_tx: watch::Sender<Arc<MetadataImage>>,
    status_tx: watch::Sender<QuorumStatus>,
    publish_to: Option<Arc<ImageSlot>>,
    saved_offset: u64,
    last_save: Instant,
}

impl std::fmt::Debug for Observer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Observer")
            .field("node", &self.node)
            .field("offset", &self.image.offset)
            .field("status", &self.status)
            .finish_non_exhaustive()
    }
}

impl Observer {
    /// Loads the image this node saved last (none on a first start) and returns the handle
    /// the broker uses as its controller. Every image is also offered to `publish_to`.
    pub fn open(
        log_dir: &std::path::Path,
        node: u64,
        quorum: ControllersToAsk,
        publish_to: Option<Arc<ImageSlot>>,
    ) -> Result<(ControllerHandle, Observer), QuorumError> {
        let dir = log_dir.join(CLUSTER_METADATA_DIR);
        std::fs::create_dir_all(&dir).map_err(metadata_log::MetadataLogError::from)?;
        let snapshot = metadata_log::load_latest_snapshot(&dir)?;
        let image = match image_from_snapshot(&snapshot) {
            Ok(image) => image,
            Err(e) => {
                // Only a copy: the quorum has it all.
                tracing::warn!(error = %e, "the saved metadata image cannot be read; fetching it again");
                MetadataImage::default()
            }
        };
        let image = Arc::new(image);
        if let Some(slot) = &publish_to {
            slot.offer(image.clone());
        }
        let (image_tx, image_rx) = watch::channel(image.clone());
        let (status_tx, status_rx) = watch::channel(QuorumStatus::default());
        let ControllersToAsk {
            endpoints,
            bootstrap,
            controller_listener,
        } = quorum;
        let observer = Observer {
            node,
            endpoints,
            bootstrap,
            controller_listener,
            dir,
            saved_offset: image.offset,
            image_term: snapshot.get_metadata().term,
            image,
            status: QuorumStatus::default(),
            image_tx,
            status_tx,
            publish_to,
            last_save: Instant::now(),
        };
        observer.learn_voters();
        Ok((ControllerHandle::observing(image_rx, status_rx), observer))
    }

    /// Follows the quorum until `shutdown`, then saves the image reached.
    pub async fn run(mut self, source: Arc<dyn MetadataSource>, shutdown: CancellationToken) {
        let mut next_voter = 0usize;
        let mut pause = RETRY_FIRST;
        let mut unreachable_said = false;
        while !shutdown.is_cancelled() {
            // The leader when its address is known, else each known voter and bootstrap
            // server in turn.
            let known = self
                .endpoints
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let leader = self
                .status
                .leader
                .and_then(|l| known.get(&l).map(|a| (Some(l), a.clone())));
            let (voter, address) = match leader {
                Some(leader) => leader,
                None => {
                    let candidates: Vec<(Option<u64>, String)> = known
                        .iter()
                        .map(|(id, a)| (Some(*id), a.clone()))
                        .chain(self.bootstrap.iter().map(|a| (None, a.clone())))
                        .collect();
                    if candidates.is_empty() {
                        tracing::error!(
                            "no controller to follow: neither controller.quorum.voters nor controller.quorum.bootstrap.servers"
                        );
                        return;
                    }
                    next_voter = next_voter.wrapping_add(1);
                    candidates[next_voter % candidates.len()].clone()
                }
            };
            let from_index = self.image.offset + 1;
            let fetched = tokio::select! {
                fetched = source.read(&address, self.node, from_index, FETCH_WAIT) => fetched,
                () = shutdown.cancelled() => break,
            };
            tracing::trace!(?voter, from_index, ?fetched, "metadata fetched");
            let fetched = fetched.map(|answer| {
                if let Some((id, address)) = answer.leader_endpoint {
                    self.endpoints
                        .write()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(id, address);
                }
                answer.fetched
            });
            let outcome = match fetched {
                Ok(Fetched::Read(read)) => {
                    self.follow(Some(read.leader), read.term);
                    match read.content {
                        ReadContent::Entries(batches) => {
                            self.apply(&batches, read.high_watermark).map(|_| true)
                        }
                        ReadContent::SnapshotNeeded { index, term } => {
                            let installed = tokio::select! {
                                installed = self.install_snapshot(&*source, &address, index, term) => installed,
                                () = shutdown.cancelled() => break,
                            };
                            installed.map(|_| true)
                        }
                    }
                }
                Ok(Fetched::Elsewhere { leader, term }) => {
                    // Asked the wrong voter: straight to the one it names, else wait a little.
                    let moved = leader.is_some_and(|l| Some(l) != voter);
                    self.follow(leader, term);
                    Ok(moved)
                }
                Err(e) => Err(e),
            };
            match outcome {
                Ok(progressed) => {
                    if unreachable_said {
                        tracing::info!(?voter, %address, "following the controller quorum again");
                        unreachable_said = false;
                    }
                    pause = RETRY_FIRST;
                    if !progressed {
                        tokio::select! {
                            () = tokio::time::sleep(pause) => {}
                            () = shutdown.cancelled() => break,
                        }
                    }
                }
                Err(e) => {
                    if !unreachable_said {
                        tracing::info!(?voter, %address, error = %e, "cannot fetch the metadata from the controller quorum; retrying");
                        unreachable_said = true;
                    }
                    self.follow(None, self.status.term);
                    tokio::select! {
                        () = tokio::time::sleep(pause) => {}
                        () = shutdown.cancelled() => break,
                    }
                    pause = (pause * 2).min(RETRY_MAX);
                }
            }
            if self.last_save.elapsed() >= SAVE_EVERY {
                self.save().await;
            }
        }
        self.save().await;
    }

    /// The leader (and term) this observer now knows of.
    fn follow(&mut self, leader: Option<u64>, term: u64) {
        let status = QuorumStatus {
            leader,
            term: term.max(self.status.term),
            active: false,
        };
        if status != self.status {
            self.status = status;
            self.status_tx.send_replace(status);
        }
    }

    /// Applies the committed entries in `batches` (those up to `high_watermark`).
    fn apply(&mut self, batches: &[u8], high_watermark: u64) -> Result<(), Error> {
        let first = self.image.offset + 1;
        let entries = metadata_log::entries_from_batches(batches, first)
            .map_err(|e| Error::Internal(format!("metadata fetched from {first}: {e}")))?;
        if entries.is_empty() {
            return Ok(());
        }
        let mut image = (*self.image).clone();
        for entry in entries.iter().take_while(|e| e.index <= high_watermark) {
            let records = entry_records(entry).map_err(|e| Error::Internal(e.to_string()))?;
            if records.is_empty() {
                image.offset = entry.index;
            } else {
                image
                    .apply(entry.index, &records)
                    .map_err(|e| Error::Internal(format!("metadata entry {}: {e}", entry.index)))?;
            }
            self.image_term = entry.term;
        }
        self.publish(image);
        Ok(())
    }

    /// Reads the leader's snapshot at `index` in pieces and replaces the image with it.
    async fn install_snapshot(
        &mut self,
        source: &dyn MetadataSource,
        address: &str,
        index: u64,
        term: u64,
    ) -> Result<(), Error> {
        let mut bytes = Vec::new();
        loop {
            let chunk = source
                .read_snapshot(address, self.node, index, term, bytes.len() as u64)
                .await?;
            if chunk.size > MAX_SNAPSHOT_BYTES {
                return Err(Error::Internal(format!(
                    "the metadata snapshot is {} bytes, more than the {MAX_SNAPSHOT_BYTES} an observer takes",
                    chunk.size
                )));
            }
            if chunk.position != bytes.len() as u64
                || (chunk.bytes.is_empty() && (bytes.len() as u64) < chunk.size)
            {
                return Err(Error::Internal(format!(
                    "snapshot piece at {} while {} bytes were read",
                    chunk.position,
                    bytes.len()
                )));
            }
            bytes.extend_from_slice(&chunk.bytes);
            if bytes.len() as u64 >= chunk.size {
                break;
            }
        }
        let snapshot = decode_snapshot(&bytes).map_err(|e| Error::Internal(e.to_string()))?;
        let image = image_from_snapshot(&snapshot).map_err(|e| Error::Internal(e.to_string()))?;
        tracing::info!(
            index,
            term,
            bytes = bytes.len(),
            "loaded the metadata snapshot from the controller quorum"
        );
        self.image_term = term;
        self.publish(image);
        Ok(())
    }

    fn publish(&mut self, image: MetadataImage) {
        let image = Arc::new(image);
        // The watch first: whoever reads it after the publisher took this image sees it too
        // (the broker's lifecycle offers the watch's image once it knows its epoch).
        self.image_tx.send_replace(image.clone());
        if let Some(slot) = &self.publish_to {
            slot.offer(image.clone());
        }
        self.image = image;
        self.learn_voters();
    }

    /// Remembers where each voter of a dynamic quorum listens, as the image names them. The
    /// leader this observer knew and its bootstrap servers may all be removed from the quorum
    /// and stopped; the voters that remain are then still found.
    fn learn_voters(&self) {
        if self.image.quorum_voters.is_empty() {
            return;
        }
        let mut known = self.endpoints.write().unwrap_or_else(|p| p.into_inner());
        for (id, voter) in &self.image.quorum_voters {
            if let (Ok(id), Some(address)) =
                (u64::try_from(*id), voter.address(&self.controller_listener))
            {
                known.insert(id, address);
            }
        }
    }

    /// Writes the image reached as a snapshot file, when it moved since the last one.
    async fn save(&mut self) {
        self.last_save = Instant::now();
        if self.image.offset == self.saved_offset {
            return;
        }
        let (image, term, dir) = (self.image.clone(), self.image_term, self.dir.clone());
        let written = tokio::task::spawn_blocking(move || {
            let mut snapshot = Snapshot {
                data: encode_batch(&image.to_records()).into(),
                ..Default::default()
            };
            snapshot.mut_metadata().index = image.offset;
            snapshot.mut_metadata().term = term;
            metadata_log::write_snapshot_file(&dir, &snapshot)
        })
        .await;
        match written {
            Ok(Ok(())) => self.saved_offset = self.image.offset,
            // Tried again later; a restart meanwhile fetches a little more.
            Ok(Err(e)) => tracing::debug!(error = %e, "saving the metadata image postponed"),
            Err(e) => tracing::debug!(error = %e, "saving the metadata image failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::metadata_log::entries_as_batches;
    use crate::metadata::records::MetadataRecord;
    use raft::prelude::Entry;
    use std::sync::Mutex;

    /// A leader in memory: committed entries, and a snapshot covering the first `compacted`.
    #[derive(Debug, Default)]
    struct FakeLeader {
        entries: Mutex<Vec<Entry>>,
        snapshot: Mutex<Option<bytes::Bytes>>,
        compacted: Mutex<u64>,
        fetches: Mutex<Vec<(String, u64)>>,
        /// The voter leading now and where, once leadership moved away from 2 at "leader";
        /// every other address is then unreachable.
        moved: Mutex<Option<(u64, String)>>,
    }

    fn to_ask(endpoints: &ControllerEndpoints, bootstrap: &[String]) -> ControllersToAsk {
        ControllersToAsk {
            endpoints: endpoints.clone(),
            bootstrap: bootstrap.to_vec(),
            controller_listener: "CONTROLLER".into(),
        }
    }

    fn topic_entry(index: u64, name: &str) -> Entry {
        Entry {
            index,
            term: 2,
            data: encode_batch(&[MetadataRecord::Topic {
                name: name.into(),
                topic_id: uuid::Uuid::new_v4(),
            }])
            .into(),
            ..Default::default()
        }
    }

    impl MetadataSource for FakeLeader {
        fn read<'a>(
            &'a self,
            address: &'a str,
            _observer: u64,
            from_index: u64,
            _wait: Duration,
        ) -> BoxFuture<'a, Result<Answer, Error>> {
            Box::pin(async move {
                self.fetches
                    .lock()
                    .unwrap()
                    .push((address.to_string(), from_index));
                let moved = self.moved.lock().unwrap().clone();
                let (leader, leader_at) = moved.clone().unwrap_or((2, "leader".into()));
                if moved.is_some() && address != leader_at {
                    return Err(Error::RequestTimedOut);
                }
                if address != leader_at {
                    // A bootstrap server names the leader and where it listens.
                    return Ok(Answer {
                        fetched: Fetched::Elsewhere {
                            leader: Some(2),
                            term: 2,
                        },
                        leader_endpoint: Some((2, "leader".into())),
                    });
                }
                let entries = self.entries.lock().unwrap().clone();
                let compacted = *self.compacted.lock().unwrap();
                let content = if from_index <= compacted {
                    ReadContent::SnapshotNeeded {
                        index: compacted,
                        term: 2,
                    }
                } else {
                    let rest: Vec<Entry> = entries
                        .into_iter()
                        .filter(|e| e.index >= from_index)
                        .collect();
                    if rest.is_empty() {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                    ReadContent::Entries(entries_as_batches(&rest).unwrap().into())
                };
                Ok(Answer {
                    fetched: Fetched::Read(MetadataRead {
                        leader,
                        term: 2,
                        high_watermark: self.entries.lock().unwrap().len() as u64,
                        content,
                    }),
                    leader_endpoint: None,
                })
            })
        }

        fn read_snapshot<'a>(
            &'a self,
            _address: &'a str,
            _observer: u64,
            _index: u64,
            _term: u64,
            position: u64,
        ) -> BoxFuture<'a, Result<SnapshotChunk, Error>> {
            Box::pin(async move {
                let bytes = self.snapshot.lock().unwrap().clone().unwrap();
                // Three bytes at a time: the pieces are put together.
                let start = position as usize;
                let end = (start + 3).min(bytes.len());
                Ok(SnapshotChunk {
                    size: bytes.len() as u64,
                    position,
                    bytes: bytes.slice(start..end),
                })
            })
        }
    }

    async fn wait_for_topics(handle: &ControllerHandle, count: usize) {
        let mut image = handle.image();
        tokio::time::timeout(
            Duration::from_secs(10),
            image.wait_for(|i| i.topics.len() == count),
        )
        .await
        .expect("the observer never got there")
        .expect("observer stopped");
    }

    #[tokio::test]
    async fn an_observer_finds_the_leader_reads_a_snapshot_then_entries_and_restarts_from_its_copy()
    {
        let dir = tempfile::tempdir().unwrap();
        let leader = Arc::new(FakeLeader::default());
        // Entries 1-3 compacted into a snapshot; 4 and 5 in the log.
        let mut image = MetadataImage::default();
        for index in 1..=3 {
            let entry = topic_entry(index, &format!("t{index}"));
            image
                .apply(
                    index,
                    &crate::metadata::records::decode_batch(&entry.data).unwrap(),
                )
                .unwrap();
        }
        let mut snapshot = Snapshot {
            data: encode_batch(&image.to_records()).into(),
            ..Default::default()
        };
        snapshot.mut_metadata().index = 3;
        snapshot.mut_metadata().term = 2;
        *leader.snapshot.lock().unwrap() =
            Some(super::super::quorum::encode_snapshot(&snapshot).unwrap());
        *leader.compacted.lock().unwrap() = 3;
        *leader.entries.lock().unwrap() =
            (1..=5).map(|i| topic_entry(i, &format!("t{i}"))).collect();

        // Known only through a bootstrap server, which names the leader.
        let endpoints = ControllerEndpoints::default();
        let bootstrap = vec!["bootstrap".to_string()];
        let (handle, observer) =
            Observer::open(dir.path(), 7, to_ask(&endpoints, &bootstrap), None).unwrap();
        let shutdown = CancellationToken::new();
        let running = tokio::spawn(observer.run(leader.clone(), shutdown.clone()));
        wait_for_topics(&handle, 5).await;
        assert_eq!(handle.status().borrow().leader, Some(2));
        assert!(!handle.status().borrow().active);
        assert!(handle.call_blocking_is_refused());
        shutdown.cancel();
        running.await.unwrap();

        // A restart starts from the copy it saved: it asks for entry 6 first.
        leader.fetches.lock().unwrap().clear();
        leader.entries.lock().unwrap().push(topic_entry(6, "t6"));
        assert_eq!(
            endpoints.read().unwrap().get(&2).map(String::as_str),
            Some("leader")
        );
        let (handle, observer) =
            Observer::open(dir.path(), 7, to_ask(&endpoints, &bootstrap), None).unwrap();
        assert_eq!(handle.image().borrow().topics.len(), 5);
        let shutdown = CancellationToken::new();
        let running = tokio::spawn(observer.run(leader.clone(), shutdown.clone()));
        wait_for_topics(&handle, 6).await;
        let asked = leader.fetches.lock().unwrap().clone();
        assert!(asked.iter().all(|(_, from)| *from >= 6), "{asked:?}");
        shutdown.cancel();
        running.await.unwrap();
    }

    #[tokio::test]
    async fn an_observer_finds_a_voter_the_image_names_once_its_leader_and_bootstrap_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let leader = Arc::new(FakeLeader::default());
        let voter_3 = MetadataRecord::QuorumVoter {
            node_id: 3,
            directory_id: uuid::Uuid::new_v4(),
            endpoints: vec![crate::metadata::records::Endpoint {
                name: "CONTROLLER".into(),
                host: "voter3".into(),
                port: 9093,
                security_protocol: 0,
            }],
        };
        let voter_entry = Entry {
            index: 2,
            term: 2,
            data: encode_batch(&[voter_3]).into(),
            ..Default::default()
        };
        *leader.entries.lock().unwrap() = vec![topic_entry(1, "t1"), voter_entry];
        let endpoints = ControllerEndpoints::default();
        let bootstrap = vec!["bootstrap".to_string()];
        let (handle, observer) =
            Observer::open(dir.path(), 7, to_ask(&endpoints, &bootstrap), None).unwrap();
        let mut image = handle.image();
        let shutdown = CancellationToken::new();
        let running = tokio::spawn(observer.run(leader.clone(), shutdown.clone()));
        tokio::time::timeout(Duration::from_secs(10), image.wait_for(|i| i.offset == 2))
            .await
            .unwrap()
            .unwrap();

        // Voter 3 now leads; the old leader and the bootstrap server are gone.
        *leader.moved.lock().unwrap() = Some((3, "voter3:9093".into()));
        leader.entries.lock().unwrap().push(topic_entry(3, "t3"));
        wait_for_topics(&handle, 2).await;
        assert_eq!(handle.status().borrow().leader, Some(3));
        shutdown.cancel();
        running.await.unwrap();
    }

    impl ControllerHandle {
        fn call_blocking_is_refused(&self) -> bool {
            matches!(
                self.call_blocking(super::super::ops::ControllerOp::DescribeQuorum),
                Err(Error::NotController)
            )
        }
    }
}
