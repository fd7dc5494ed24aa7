//! The `__cluster_metadata` log on disk, as the storage of the Raft library (raft-rs's
//! `Storage`): entries in a partition log of the ordinary kind, the quorum's hard state, and
//! snapshots.
//!
//! ```text
//! {log.dirs}/__cluster_metadata-0/
//!   00000000000000000000.log/.index/.timeindex   Raft entry i = the record batch at offset
//!                                                i - 1, its partition leader epoch = the
//!                                                entry's term, its one record's value = the
//!                                                entry's data (as KRaft stores its log)
//!   quorum-state                                 {"term":..,"vote":..,"commit":..,"voters":[..],
//!                                                 "dynamic":..}
//!   {index:020}-{term:010}.checkpoint            the latest snapshot: a raft `Snapshot`
//!                                                (protobuf) followed by its CRC32C
//! ```
//!
//! A Raft configuration change (a dynamic quorum's voter added or removed, KIP-853) is stored
//! as its entry's data with the record key [`CONF_CHANGE_KEY`]. The voters are those of
//! `controller.quorum.voters` for a static quorum; a dynamic quorum's are those of the latest
//! snapshot, or of `sluice format` before the first, and the configuration changes after it
//! are applied again as the entries are.
//!
//! Entries are fsynced before [`MetadataLog::append`] returns and the hard state is written
//! atomically, so nothing a node has acknowledged to its peers is lost in a crash. All
//! entries after the snapshot are also kept in memory: snapshots bound their number, and
//! Raft reads recent entries constantly.

use crate::config::{BrokerConfig, LogConfig};
use crate::record::{self, NewRecord};
use crate::storage::StorageError;
use crate::storage::checkpoint::write_atomically;
use crate::storage::log::Log;
use crate::types::{TopicPartition, now_ms};
use protobuf::Message as _;
use raft::prelude::{ConfState, Entry, EntryType, HardState, Snapshot};
use raft::{GetEntriesContext, RaftState, Storage};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use crate::storage::manager::CLUSTER_METADATA_DIR;

const QUORUM_STATE_FILE: &str = "quorum-state";
const SNAPSHOT_SUFFIX: &str = ".checkpoint";
/// The record key marking an entry that carries a Raft configuration change (`ConfChangeV2`).
pub const CONF_CHANGE_KEY: &[u8] = b"ConfChangeV2";

/// Who votes in the quorum (Raft ids).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Membership {
    /// `controller.quorum.voters`: fixed for the life of the quorum.
    Static(Vec<u64>),
    /// A dynamic quorum (KIP-853) whose first voters are these (none for a controller that
    /// joins an existing quorum).
    Dynamic(Vec<u64>),
}

#[derive(Debug, thiserror::Error)]
pub enum MetadataLogError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error("corrupt metadata log: {0}")]
    Corrupt(String),
    #[error(
        "controller.quorum.voters changed from {stored:?} to {configured:?}; changing the voters of a static quorum is not supported (a dynamic quorum, KIP-853, adds and removes controllers with kafka-metadata-quorum)"
    )]
    VotersChanged {
        stored: Vec<u64>,
        configured: Vec<u64>,
    },
    #[error(
        "this metadata log belongs to a {stored} quorum and the node is configured for a {configured} one (controller.quorum.voters against controller.quorum.bootstrap.servers)"
    )]
    QuorumKindChanged {
        stored: &'static str,
        configured: &'static str,
    },
}

impl MetadataLogError {
    /// Out of descriptors or space for now (see [`StorageError::is_transient`]).
    pub fn is_transient(&self) -> bool {
        match self {
            MetadataLogError::Storage(e) => e.is_transient(),
            _ => false,
        }
    }

    /// Out of disk space: the space reserve can help.
    pub fn is_out_of_space(&self) -> bool {
        match self {
            MetadataLogError::Storage(e) => crate::storage::space::is_out_of_space(e),
            _ => false,
        }
    }
}

impl From<crate::record::RecordError> for MetadataLogError {
    fn from(e: crate::record::RecordError) -> Self {
        Self::Storage(e.into())
    }
}

impl From<std::io::Error> for MetadataLogError {
    fn from(e: std::io::Error) -> Self {
        Self::Storage(e.into())
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct QuorumStateFile {
    term: u64,
    vote: u64,
    commit: u64,
    voters: Vec<u64>,
    /// A dynamic quorum's (absent in files of static quorums).
    #[serde(default)]
    dynamic: bool,
}

pub struct MetadataLog {
    dir: PathBuf,
    log: Log,
    /// Entries after the snapshot, in order: `entries[i].index == snapshot index + 1 + i`.
    entries: Vec<Entry>,
    hard_state: HardState,
    conf_state: ConfState,
    dynamic: bool,
    snapshot: Snapshot,
    /// Space given up when the disk is full, so the metadata log can still be written.
    reserve: crate::storage::space::SpaceReserve,
}

impl std::fmt::Debug for MetadataLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetadataLog")
            .field("dir", &self.dir)
            .field("first_index", &self.first())
            .field("last_index", &self.last())
            .field("hard_state", &self.hard_state)
            .finish()
    }
}

fn corrupt(what: impl Into<String>) -> MetadataLogError {
    MetadataLogError::Corrupt(what.into())
}

/// The metadata log's own settings over the broker's topic defaults.
pub fn log_config(broker: &BrokerConfig) -> LogConfig {
    let overrides = [
        ("segment.bytes", "16777216"),
        ("segment.index.bytes", "1048576"),
        ("retention.ms", "-1"),
        ("retention.bytes", "-1"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    LogConfig::resolve(&broker.topic_defaults, &overrides)
}

impl MetadataLog {
    /// Opens (creating on first start) the metadata log in `log_dir` for a quorum of
    /// `membership`. A torn tail is truncated; a static quorum's voters must be the ones it
    /// was created with.
    pub fn open(
        log_dir: &Path,
        membership: &Membership,
        config: LogConfig,
    ) -> Result<Self, MetadataLogError> {
        let dir = log_dir.join(CLUSTER_METADATA_DIR);
        std::fs::create_dir_all(&dir)?;
        let snapshot = load_latest_snapshot(&dir)?;
        let snapshot_index = snapshot.get_metadata().index;
        let tp = TopicPartition::new("__cluster_metadata", 0);
        // Always recovered from the start: the log is small (snapshots bound it) and has no
        // entry in the log manager's checkpoints.
        let (mut log, _) = Log::load(&dir, tp, config, 0, snapshot_index as i64, false, now_ms())?;
        if (log.log_start_offset() as u64) < snapshot_index {
            log.truncate_fully_and_start_at(snapshot_index as i64)?;
        }
        let entries = Self::read_entries(&log, snapshot_index)?;
        let mut hard_state = HardState::default();
        let (mut configured, dynamic) = match membership {
            Membership::Static(voters) => (voters.clone(), false),
            Membership::Dynamic(voters) => (voters.clone(), true),
        };
        configured.sort_unstable();
        let kind = |dynamic: bool| if dynamic { "dynamic" } else { "static" };
        match std::fs::read(dir.join(QUORUM_STATE_FILE)) {
            Ok(bytes) => {
                let state: QuorumStateFile = serde_json::from_slice(&bytes)
                    .map_err(|e| corrupt(format!("{QUORUM_STATE_FILE}: {e}")))?;
                if state.dynamic != dynamic {
                    return Err(MetadataLogError::QuorumKindChanged {
                        stored: kind(state.dynamic),
                        configured: kind(dynamic),
                    });
                }
                if !dynamic && state.voters != configured {
                    return Err(MetadataLogError::VotersChanged {
                        stored: state.voters,
                        configured,
                    });
                }
                hard_state.term = state.term;
                hard_state.vote = state.vote;
                hard_state.commit = state.commit;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        let last = snapshot_index + entries.len() as u64;
        // A commit index past a torn tail cannot stand; Raft re-learns it from the leader.
        hard_state.commit = hard_state.commit.clamp(snapshot_index, last);
        hard_state.term = hard_state
            .term
            .max(snapshot.get_metadata().term)
            .max(entries.last().map_or(0, |e| e.term));
        let conf_state = if dynamic && snapshot_index > 0 {
            snapshot.get_metadata().get_conf_state().clone()
        } else {
            ConfState {
                voters: configured,
                ..Default::default()
            }
        };
        let reserve = crate::storage::space::SpaceReserve::new(&dir);
        let mut metadata_log = Self {
            dir,
            log,
            entries,
            hard_state,
            conf_state,
            dynamic,
            snapshot,
            reserve,
        };
        if let Err(e) = metadata_log.write_quorum_state() {
            // A start on a full disk: the reserve makes room for the quorum's state.
            if !(e.is_out_of_space() && metadata_log.release_reserve()) {
                return Err(e);
            }
            metadata_log.write_quorum_state()?;
        }
        Ok(metadata_log)
    }

    /// Gives up the space reserve (the disk is full); true if there was one to give.
    pub fn release_reserve(&mut self) -> bool {
        self.reserve.release()
    }

    /// Takes the space reserve back once the disk has room again.
    pub fn restore_reserve(&mut self) {
        self.reserve.restore(now_ms());
    }

    fn read_entries(log: &Log, snapshot_index: u64) -> Result<Vec<Entry>, MetadataLogError> {
        let mut entries = Vec::new();
        let mut offset = log.log_start_offset();
        while offset < log.log_end_offset() {
            let Some(read) = log.read(offset, 1 << 20, i64::MAX, true)? else {
                break;
            };
            let bytes = read.records.read()?;
            entries.extend(entries_from_batches(
                &bytes,
                snapshot_index + entries.len() as u64 + 1,
            )?);
            offset = read.next_offset;
        }
        Ok(entries)
    }

    fn write_quorum_state(&self) -> Result<(), MetadataLogError> {
        let state = QuorumStateFile {
            term: self.hard_state.term,
            vote: self.hard_state.vote,
            commit: self.hard_state.commit,
            voters: self.conf_state.voters.clone(),
            dynamic: self.dynamic,
        };
        let text = serde_json::to_vec(&state).map_err(|e| corrupt(e.to_string()))?;
        write_atomically(&self.dir.join(QUORUM_STATE_FILE), &text)?;
        Ok(())
    }

    fn first(&self) -> u64 {
        self.snapshot.get_metadata().index + 1
    }

    fn last(&self) -> u64 {
        self.snapshot.get_metadata().index + self.entries.len() as u64
    }

    pub fn hard_state(&self) -> &HardState {
        &self.hard_state
    }

    pub fn latest_snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The voters and learners as of the entries applied so far (snapshots record them).
    pub fn conf_state(&self) -> &ConfState {
        &self.conf_state
    }

    /// Takes the configuration a committed configuration change produced. Kept in memory:
    /// a restart applies the changes after the latest snapshot again.
    pub fn set_conf_state(&mut self, conf_state: ConfState) {
        self.conf_state = conf_state;
    }

    pub fn is_dynamic(&self) -> bool {
        self.dynamic
    }

    /// Persists the hard state (term, vote, commit) when it changed.
    pub fn set_hard_state(&mut self, hard_state: &HardState) -> Result<(), MetadataLogError> {
        if *hard_state == self.hard_state {
            return Ok(());
        }
        let previous = std::mem::replace(&mut self.hard_state, hard_state.clone());
        let written = self.write_quorum_state();
        if written.is_err() {
            // Not on disk: the same state is written again when the quorum retries.
            self.hard_state = previous;
        }
        written
    }

    pub fn set_commit(&mut self, commit: u64) -> Result<(), MetadataLogError> {
        let mut hard_state = self.hard_state.clone();
        hard_state.commit = commit;
        self.set_hard_state(&hard_state)
    }

    /// Appends entries, replacing any conflicting suffix, and fsyncs them.
    pub fn append(&mut self, entries: &[Entry]) -> Result<(), MetadataLogError> {
        let Some(first) = entries.first() else {
            return Ok(());
        };
        if first.index < self.first() || first.index > self.last() + 1 {
            return Err(corrupt(format!(
                "entries from {} do not fit a log of {}..={}",
                first.index,
                self.first(),
                self.last()
            )));
        }
        if first.index <= self.last() {
            self.log.truncate_to(first.index as i64 - 1)?;
            self.entries.truncate((first.index - self.first()) as usize);
        }
        let bytes = entries_as_batches(entries)?;
        self.log.append_as_follower(&bytes, now_ms())?;
        // In the log now, durable or not: a retry after a failed flush replaces them.
        self.entries.extend_from_slice(entries);
        self.log.flush(now_ms())?;
        Ok(())
    }

    /// Takes a snapshot of the applied state at `index` (its term from the log), writes it
    /// and drops the entries it covers.
    pub fn compact(&mut self, index: u64, data: Vec<u8>) -> Result<(), MetadataLogError> {
        if index <= self.snapshot.get_metadata().index {
            return Ok(());
        }
        let term = self
            .term(index)
            .map_err(|e| corrupt(format!("no term for entry {index}: {e}")))?;
        let mut snapshot = Snapshot {
            data: data.into(),
            ..Default::default()
        };
        let metadata = snapshot.mut_metadata();
        metadata.index = index;
        metadata.term = term;
        metadata.set_conf_state(self.conf_state.clone());
        self.write_snapshot(&snapshot)?;
        let drop = (index + 1 - self.first()) as usize;
        self.entries.drain(..drop.min(self.entries.len()));
        self.snapshot = snapshot;
        self.log.delete_records_before(index as i64)?;
        Ok(())
    }

    /// Installs a snapshot received from the leader: the log restarts after it.
    pub fn apply_snapshot(&mut self, snapshot: Snapshot) -> Result<(), MetadataLogError> {
        let index = snapshot.get_metadata().index;
        if index < self.first() {
            return Ok(());
        }
        self.write_snapshot(&snapshot)?;
        self.log.truncate_fully_and_start_at(index as i64)?;
        self.entries.clear();
        self.hard_state.term = self.hard_state.term.max(snapshot.get_metadata().term);
        self.hard_state.commit = index;
        if self.dynamic {
            self.conf_state = snapshot.get_metadata().get_conf_state().clone();
        }
        self.snapshot = snapshot;
        self.write_quorum_state()
    }

    fn write_snapshot(&self, snapshot: &Snapshot) -> Result<(), MetadataLogError> {
        write_snapshot_file(&self.dir, snapshot)
    }

    /// Flushes and closes the underlying log.
    pub fn close(&mut self) -> Result<(), MetadataLogError> {
        self.log.close(now_ms())?;
        Ok(())
    }
}

/// Entries as the metadata log stores them (and observers fetch them): entry `i` is a batch at
/// offset `i - 1` whose partition leader epoch is the entry's term and whose one record's
/// value is the entry's data.
pub fn entries_as_batches(entries: &[Entry]) -> Result<Vec<u8>, MetadataLogError> {
    let mut bytes = Vec::new();
    for entry in entries {
        let term = i32::try_from(entry.term)
            .map_err(|_| corrupt(format!("term {} does not fit a leader epoch", entry.term)))?;
        let key =
            (entry.get_entry_type() == EntryType::EntryConfChangeV2).then_some(CONF_CHANGE_KEY);
        let mut batch = record::build_batch(&[NewRecord {
            key,
            value: Some(&entry.data),
            timestamp: now_ms(),
        }]);
        record::assign_offsets(&mut batch, entry.index as i64 - 1, term, None);
        bytes.extend_from_slice(&batch);
    }
    Ok(bytes)
}

/// The entries in `bytes` (see [`entries_as_batches`]), which must start at entry `first`
/// and follow each other.
pub fn entries_from_batches(bytes: &[u8], first: u64) -> Result<Vec<Entry>, MetadataLogError> {
    let mut entries = Vec::new();
    for batch in record::BatchIter::new(bytes) {
        let batch = batch?;
        let expected = first + entries.len() as u64;
        if batch.base_offset() as u64 + 1 != expected || batch.records_count() != 1 {
            return Err(corrupt(format!(
                "batch at offset {} is not entry {expected}",
                batch.base_offset()
            )));
        }
        let records =
            record::records::parse_records(batch.records_payload(), batch.records_count())?;
        let data = records.first().and_then(|r| r.value).unwrap_or_default();
        let entry_type = match records.first().and_then(|r| r.key) {
            Some(key) if key == CONF_CHANGE_KEY => EntryType::EntryConfChangeV2,
            _ => EntryType::EntryNormal,
        };
        entries.push(Entry {
            index: expected,
            term: batch.partition_leader_epoch().max(0) as u64,
            entry_type,
            data: data.to_vec().into(),
            ..Default::default()
        });
    }
    Ok(entries)
}

fn snapshot_name(index: u64, term: u64) -> String {
    format!("{index:020}-{term:010}{SNAPSHOT_SUFFIX}")
}

/// The newest snapshot file in `dir` that is intact (an empty snapshot when there is none);
/// older ones and broken ones are removed.
pub fn load_latest_snapshot(dir: &Path) -> Result<Snapshot, MetadataLogError> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(SNAPSHOT_SUFFIX))
        .collect();
    names.sort_unstable();
    let mut found = None;
    while let Some(name) = names.pop() {
        let path = dir.join(&name);
        if found.is_some() {
            std::fs::remove_file(&path)?;
            continue;
        }
        match read_snapshot(&path) {
            Ok(snapshot) => found = Some(snapshot),
            Err(e) => {
                tracing::warn!(file = %path.display(), error = %e, "removing unreadable metadata snapshot");
                std::fs::remove_file(&path)?;
            }
        }
    }
    Ok(found.unwrap_or_default())
}

fn read_snapshot(path: &Path) -> Result<Snapshot, MetadataLogError> {
    let bytes = std::fs::read(path)?;
    if bytes.len() < 4 {
        return Err(corrupt("snapshot shorter than its checksum"));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let expected = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32c::crc32c(body) != expected {
        return Err(corrupt("snapshot checksum mismatch"));
    }
    Snapshot::parse_from_bytes(body).map_err(|e| corrupt(format!("snapshot: {e}")))
}

/// Writes `snapshot` (with its CRC32C) into `dir` atomically and removes older ones.
pub fn write_snapshot_file(dir: &Path, snapshot: &Snapshot) -> Result<(), MetadataLogError> {
    let mut bytes = snapshot
        .write_to_bytes()
        .map_err(|e| corrupt(format!("encoding a snapshot: {e}")))?;
    let crc = crc32c::crc32c(&bytes);
    bytes.extend_from_slice(&crc.to_be_bytes());
    let metadata = snapshot.get_metadata();
    let name = snapshot_name(metadata.index, metadata.term);
    write_atomically(&dir.join(&name), &bytes)?;
    for old in std::fs::read_dir(dir)?.filter_map(|e| e.ok()) {
        let old_name = old.file_name().to_string_lossy().into_owned();
        if old_name.ends_with(SNAPSHOT_SUFFIX) && old_name < name {
            std::fs::remove_file(old.path())?;
        }
    }
    Ok(())
}

fn other(e: impl std::error::Error + Send + Sync + 'static) -> raft::Error {
    raft::Error::Store(raft::StorageError::Other(Box::new(e)))
}

impl Storage for MetadataLog {
    fn initial_state(&self) -> raft::Result<RaftState> {
        Ok(RaftState::new(
            self.hard_state.clone(),
            self.conf_state.clone(),
        ))
    }

    fn entries(
        &self,
        low: u64,
        high: u64,
        max_size: impl Into<Option<u64>>,
        _context: GetEntriesContext,
    ) -> raft::Result<Vec<Entry>> {
        if low < self.first() {
            return Err(raft::Error::Store(raft::StorageError::Compacted));
        }
        if high > self.last() + 1 {
            return Err(other(MetadataLogError::Corrupt(format!(
                "entries up to {high} asked of a log ending at {}",
                self.last()
            ))));
        }
        let from = (low - self.first()) as usize;
        let to = (high - self.first()) as usize;
        let mut entries = self.entries[from..to].to_vec();
        raft::util::limit_size(&mut entries, max_size.into());
        Ok(entries)
    }

    fn term(&self, idx: u64) -> raft::Result<u64> {
        let snapshot = self.snapshot.get_metadata();
        if idx == snapshot.index {
            return Ok(snapshot.term);
        }
        if idx < self.first() {
            return Err(raft::Error::Store(raft::StorageError::Compacted));
        }
        if idx > self.last() {
            return Err(raft::Error::Store(raft::StorageError::Unavailable));
        }
        Ok(self.entries[(idx - self.first()) as usize].term)
    }

    fn first_index(&self) -> raft::Result<u64> {
        Ok(self.first())
    }

    fn last_index(&self) -> raft::Result<u64> {
        Ok(self.last())
    }

    fn snapshot(&self, request_index: u64, _to: u64) -> raft::Result<Snapshot> {
        if self.snapshot.get_metadata().index < request_index {
            return Err(raft::Error::Store(
                raft::StorageError::SnapshotTemporarilyUnavailable,
            ));
        }
        Ok(self.snapshot.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> LogConfig {
        log_config(&BrokerConfig::with_overrides(&[]).unwrap())
    }

    fn entry(index: u64, term: u64, data: &[u8]) -> Entry {
        Entry {
            index,
            term,
            data: data.to_vec().into(),
            ..Default::default()
        }
    }

    /// An entry larger than `max.message.bytes` (the records of one topic of 7,500
    /// partitions are 2.2 MB) survives a restart: recovery had truncated it, and the broker
    /// then removed every log of the topic as a stray.
    #[test]
    fn an_entry_over_max_message_bytes_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let big = vec![7u8; 3 << 20];
        let mut log =
            MetadataLog::open(dir.path(), &Membership::Static(vec![1]), config()).unwrap();
        log.append(&[entry(1, 1, b"a"), entry(2, 1, &big), entry(3, 1, b"c")])
            .unwrap();
        drop(log);
        let log = MetadataLog::open(dir.path(), &Membership::Static(vec![1]), config()).unwrap();
        assert_eq!(log.last(), 3);
        let all = log
            .entries(1, 4, None, GetEntriesContext::empty(false))
            .unwrap();
        assert_eq!(all[1].data.len(), big.len());
    }

    #[test]
    fn entries_state_and_snapshots_survive_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let mut log =
            MetadataLog::open(dir.path(), &Membership::Static(vec![1, 2, 3]), config()).unwrap();
        assert_eq!((log.first(), log.last()), (1, 0));
        log.append(&[entry(1, 1, b""), entry(2, 1, b"a"), entry(3, 2, b"b")])
            .unwrap();
        // A new leader overwrites the uncommitted entry 3.
        log.append(&[entry(3, 3, b"c"), entry(4, 3, b"d")]).unwrap();
        let hard_state = HardState {
            term: 3,
            vote: 2,
            commit: 3,
            ..Default::default()
        };
        log.set_hard_state(&hard_state).unwrap();
        drop(log);

        let mut log =
            MetadataLog::open(dir.path(), &Membership::Static(vec![3, 2, 1]), config()).unwrap();
        assert_eq!(log.hard_state(), &hard_state);
        let all = log
            .entries(1, 5, None, GetEntriesContext::empty(false))
            .unwrap();
        let seen: Vec<(u64, u64, Vec<u8>)> = all
            .iter()
            .map(|e| (e.index, e.term, e.data.to_vec()))
            .collect();
        assert_eq!(
            seen,
            vec![
                (1, 1, vec![]),
                (2, 1, b"a".to_vec()),
                (3, 3, b"c".to_vec()),
                (4, 3, b"d".to_vec())
            ]
        );
        log.compact(3, b"image at 3".to_vec()).unwrap();
        assert_eq!(log.first_index().unwrap(), 4);
        assert_eq!(log.term(3).unwrap(), 3);
        assert!(matches!(
            log.entries(2, 4, None, GetEntriesContext::empty(false)),
            Err(raft::Error::Store(raft::StorageError::Compacted))
        ));
        drop(log);

        let mut log =
            MetadataLog::open(dir.path(), &Membership::Static(vec![1, 2, 3]), config()).unwrap();
        assert_eq!((log.first(), log.last()), (4, 4));
        assert_eq!(&log.snapshot(0, 2).unwrap().data[..], b"image at 3");
        // A snapshot from the leader past the log replaces it.
        let mut snapshot = Snapshot {
            data: b"image at 10".to_vec().into(),
            ..Default::default()
        };
        snapshot.mut_metadata().index = 10;
        snapshot.mut_metadata().term = 4;
        log.apply_snapshot(snapshot).unwrap();
        log.append(&[entry(11, 4, b"e")]).unwrap();
        drop(log);
        let log =
            MetadataLog::open(dir.path(), &Membership::Static(vec![1, 2, 3]), config()).unwrap();
        assert_eq!((log.first(), log.last()), (11, 11));
        assert_eq!(log.hard_state().commit, 10);
        assert_eq!(log.term(10).unwrap(), 4);
    }

    #[test]
    fn other_voters_are_refused_and_a_torn_tail_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let mut log =
            MetadataLog::open(dir.path(), &Membership::Static(vec![1, 2, 3]), config()).unwrap();
        log.append(&[entry(1, 1, b"x"), entry(2, 1, b"y")]).unwrap();
        log.set_commit(2).unwrap();
        drop(log);
        assert!(matches!(
            MetadataLog::open(dir.path(), &Membership::Static(vec![1, 2]), config()),
            Err(MetadataLogError::VotersChanged { .. })
        ));
        let segment = dir
            .path()
            .join(CLUSTER_METADATA_DIR)
            .join("00000000000000000000.log");
        let len = std::fs::metadata(&segment).unwrap().len();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&segment)
            .unwrap();
        file.set_len(len - 3).unwrap();
        let log =
            MetadataLog::open(dir.path(), &Membership::Static(vec![1, 2, 3]), config()).unwrap();
        assert_eq!(log.last(), 1);
        assert_eq!(log.hard_state().commit, 1, "commit never past the log end");
    }

    #[test]
    fn a_dynamic_quorum_keeps_conf_changes_and_takes_its_voters_from_the_snapshot() {
        let dir = tempfile::tempdir().unwrap();
        let mut log =
            MetadataLog::open(dir.path(), &Membership::Dynamic(vec![1]), config()).unwrap();
        assert_eq!(log.conf_state().voters, vec![1]);
        let mut change = entry(2, 1, b"change");
        change.set_entry_type(EntryType::EntryConfChangeV2);
        log.append(&[entry(1, 1, b"x"), change]).unwrap();
        log.set_conf_state(ConfState {
            voters: vec![1, 2],
            ..Default::default()
        });
        log.compact(2, b"image".to_vec()).unwrap();
        log.append(&[entry(3, 1, b"y")]).unwrap();
        drop(log);
        // The snapshot's voters, not the first ones, once there is a snapshot.
        let log = MetadataLog::open(dir.path(), &Membership::Dynamic(vec![1]), config()).unwrap();
        assert_eq!(log.conf_state().voters, vec![1, 2]);
        drop(log);
        assert!(matches!(
            MetadataLog::open(dir.path(), &Membership::Static(vec![1, 2]), config()),
            Err(MetadataLogError::QuorumKindChanged { .. })
        ));
        // A configuration change keeps its type on the way through batches.
        let mut change = entry(5, 2, b"cc");
        change.set_entry_type(EntryType::EntryConfChangeV2);
        let batches = entries_as_batches(&[entry(4, 2, b"a"), change]).unwrap();
        let back = entries_from_batches(&batches, 4).unwrap();
        assert_eq!(back[0].get_entry_type(), EntryType::EntryNormal);
        assert_eq!(back[1].get_entry_type(), EntryType::EntryConfChangeV2);
        assert_eq!(&back[1].data[..], b"cc");
    }
}
