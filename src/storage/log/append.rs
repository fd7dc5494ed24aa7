//! Writing a partition log (Kafka's `UnifiedLog.append` / `LocalLog`): a leader's batches
//! (offsets, leader epoch and timestamps stamped in a copy of the header, the records written as
//! they arrived), transaction markers, a follower's batches exactly as the leader wrote them;
//! segment roll; truncation by whole batches; and flushing (fsync prepared under the log's lock,
//! run outside it, then recorded).

use super::{AppendInfo, Log, new_segment};
use crate::record::produced::CheckedBatch;
use crate::record::{self, BatchView};
use crate::storage::StorageError;
use crate::storage::flush::FlushJob;
use crate::storage::producer_state::{self, Admission};
use crate::storage::segment::{self, Segment};

impl Log {
    /// Appends a transaction marker for `producer_id` as leader (the transaction
    /// coordinator's WriteTxnMarkers): refused if from an older producer epoch or an older
    /// coordinator.
    pub fn append_marker(
        &mut self,
        producer_id: i64,
        producer_epoch: i16,
        marker: record::control::Marker,
        transaction_version: i16,
        leader_epoch: i32,
        now_ms: i64,
    ) -> Result<AppendInfo, StorageError> {
        self.check_online()?;
        self.producers.admit_marker(
            producer_id,
            producer_epoch,
            marker.coordinator_epoch,
            transaction_version,
        )?;
        let batch = record::control::build_marker(producer_id, producer_epoch, marker, now_ms);
        let result = BatchView::new(&batch)
            .map_err(StorageError::from)
            .and_then(|view| self.append_inner(view, leader_epoch, now_ms, None));
        self.guard(result)
    }

    /// Appends one checked batch as leader: assigns offsets from the log end offset, stamps
    /// the leader epoch and, for LogAppendTime topics, the broker time; with CreateTime the
    /// header gets the largest record timestamp the checks found, as Kafka's validator sets
    /// it. Only the batch header is rewritten (in a copy); the records go to the segment as
    /// they arrived.
    pub fn append_as_leader(
        &mut self,
        batch: &CheckedBatch,
        leader_epoch: i32,
        now_ms: i64,
    ) -> Result<AppendInfo, StorageError> {
        self.check_online()?;
        self.check_space(now_ms)?;
        let result = self.append_inner(
            batch.view(),
            leader_epoch,
            now_ms,
            Some(batch.max_timestamp()),
        );
        self.guard(result)
    }

    pub(super) fn append_inner(
        &mut self,
        view: BatchView<'_>,
        leader_epoch: i32,
        now_ms: i64,
        validated_max_timestamp: Option<i64>,
    ) -> Result<AppendInfo, StorageError> {
        let base_offset = self.log_end_offset();
        // A retried idempotent batch already in the log is answered with its offsets.
        if let Admission::Duplicate {
            base_offset,
            last_offset,
        } = self.producers.admit(&view)?
        {
            return Ok(AppendInfo {
                base_offset,
                last_offset,
                log_append_time: -1,
                log_start_offset: self.log_start_offset,
                flush_due: false,
            });
        }
        let batch = view.bytes();
        let delta = view.last_offset_delta() as i64;
        let count = view.records_count() as i64;
        let max_timestamp = view.max_timestamp();
        let stamp = match (self.config.log_append_time, validated_max_timestamp) {
            (true, _) => record::MaxTimestamp::LogAppendTime(now_ms),
            (false, Some(t)) if t != max_timestamp => record::MaxTimestamp::Create(t),
            (false, _) => record::MaxTimestamp::AsProduced,
        };
        let incoming_timestamp = stamp.value().unwrap_or(max_timestamp);
        self.maybe_roll(batch.len(), base_offset + delta, incoming_timestamp, now_ms)?;
        let log_append_time = self.config.log_append_time.then_some(now_ms);
        let header = record::stamped_header(batch, base_offset, leader_epoch, stamp)?;
        // Before the write: a crash between the two leaves an entry past the log end, which
        // loading drops; the other order could lose an epoch the log holds.
        self.leader_epochs.assign(leader_epoch, base_offset)?;
        let active = self
            .segments
            .values_mut()
            .next_back()
            .ok_or(StorageError::Offline)?;
        active.append_stamped(&header, &batch[record::HEADER_LEN..])?;
        if let Some(txn) = self.producers.update(&view, base_offset) {
            self.record_completed(txn)?;
        }
        self.unflushed_messages += count;
        self.commit_if_unreplicated();
        Ok(AppendInfo {
            base_offset,
            last_offset: base_offset + delta,
            log_append_time: log_append_time.unwrap_or(-1),
            log_start_offset: self.log_start_offset,
            flush_due: self.unflushed_messages >= self.config.flush_messages,
        })
    }

    /// Appends batches fetched from the leader exactly as they are (the leader assigned
    /// offsets, epochs and timestamps). They must continue the log (at its end, or past it
    /// over a gap compaction left) and pass validation;
    /// when any fails nothing is appended. A partial batch at the end (a fetch cut at its
    /// byte limit) is ignored. Returns the last offset appended, `None` for no batch.
    pub fn append_as_follower(
        &mut self,
        records: &[u8],
        now_ms: i64,
    ) -> Result<Option<i64>, StorageError> {
        self.check_online()?;
        self.check_space(now_ms)?;
        let mut expected = self.log_end_offset();
        let mut batches = Vec::new();
        for batch in record::BatchIter::new(records) {
            let batch = batch?;
            batch.validate()?;
            // Forward gaps are the leader's compaction having dropped whole batches, as
            // Kafka's `appendAsFollower` allows; going back is not continuing the log.
            if batch.base_offset() < expected {
                return Err(StorageError::UnexpectedAppendOffset {
                    expected,
                    got: batch.base_offset(),
                });
            }
            expected = batch.last_offset() + 1;
            batches.push(batch);
        }
        let result = self.append_replicated(&batches, now_ms);
        self.guard(result)?;
        Ok(batches.last().map(|b| b.last_offset()))
    }

    fn append_replicated(
        &mut self,
        batches: &[BatchView<'_>],
        now_ms: i64,
    ) -> Result<(), StorageError> {
        for batch in batches {
            self.maybe_roll(
                batch.size(),
                batch.last_offset(),
                batch.max_timestamp(),
                now_ms,
            )?;
            self.leader_epochs
                .assign(batch.partition_leader_epoch(), batch.base_offset())?;
            let active = self
                .segments
                .values_mut()
                .next_back()
                .ok_or(StorageError::Offline)?;
            active.append(batch.bytes())?;
            if let Some(txn) = self.producers.update(batch, batch.base_offset()) {
                self.record_completed(txn)?;
            }
            self.unflushed_messages += batch.records_count() as i64;
        }
        self.commit_if_unreplicated();
        Ok(())
    }

    /// Removes every record at or after `offset`, whole batches: a batch holding `offset`
    /// goes too, so the log may end below it (Kafka's `truncateTo`). Followers do this when
    /// their log diverges from the new leader's. Returns the new log end offset.
    pub fn truncate_to(&mut self, offset: i64) -> Result<i64, StorageError> {
        self.check_online()?;
        if offset >= self.log_end_offset() {
            return Ok(self.log_end_offset());
        }
        self.rewrites += 1;
        let result = self.truncate_inner(offset);
        // Also when it failed part way: the log end may have moved.
        self.offsets_changed();
        self.guard(result)
    }

    fn truncate_inner(&mut self, offset: i64) -> Result<i64, StorageError> {
        if offset <= self.log_start_offset {
            let start = offset.max(0);
            let now = crate::types::now_ms();
            self.reset_to(start, now)?;
            return Ok(start);
        }
        let doomed: Vec<i64> = self.segments.range(offset..).map(|(b, _)| *b).collect();
        // The segment holding `offset` is truncated; the ones starting after it go.
        // `offset` is above the log start, so the segment holding it starts below it.
        for base in doomed.iter().rev() {
            if let Some(segment) = self.segments.remove(base) {
                segment.delete()?;
            }
        }
        let end = match self.segments.values_mut().next_back() {
            Some(active) => {
                active.truncate_to(offset)?;
                active.reopen_for_append(self.config.segment_index_bytes)?;
                active.next_offset()
            }
            None => offset,
        };
        self.leader_epochs.truncate_from_end(end)?;
        // As Kafka does: the producer state (and the aborted transactions) as of the newest
        // snapshot at or below the new end, replayed to it.
        self.aborted_txns.truncate_from(end)?;
        self.load_producer_state(None)?;
        self.recovery_point = self.recovery_point.min(end);
        self.high_watermark = self.high_watermark.min(end);
        self.cleaned_up_to = self.cleaned_up_to.min(end);
        tracing::info!(partition = %self.tp, offset, log_end_offset = end, "truncated log");
        Ok(end)
    }

    /// Deletes everything and restarts the log, empty, at `offset` (a follower given a
    /// snapshot past its log, Kafka's `truncateFullyAndStartAt`).
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<(), StorageError> {
        self.check_online()?;
        self.rewrites += 1;
        let result = self.reset_to(offset, crate::types::now_ms());
        self.offsets_changed();
        self.guard(result)
    }

    /// Kafka's `shouldRoll`: size, age (less jitter), full indexes, or relative offsets that
    /// would no longer fit in the index's 32 bits.
    fn maybe_roll(
        &mut self,
        batch_size: usize,
        last_offset: i64,
        incoming_timestamp: i64,
        now_ms: i64,
    ) -> Result<(), StorageError> {
        let max_age = self
            .config
            .segment_ms
            .saturating_sub(self.config.segment_jitter_ms);
        let Some(active) = self.segments.values_mut().next_back() else {
            return Ok(());
        };
        if active.is_empty() {
            return Ok(());
        }
        let full = active.size() as u64 + batch_size as u64 > self.config.segment_bytes;
        let aged = active.time_waited_for_roll(now_ms, incoming_timestamp)? > max_age;
        let overflow = last_offset - active.base_offset() > u32::MAX as i64 - 1;
        if full || aged || active.indexes_full() || overflow {
            self.roll(now_ms)?;
        }
        Ok(())
    }

    /// Seals the active segment and starts a new one at the log end offset.
    pub fn roll(&mut self, now_ms: i64) -> Result<(), StorageError> {
        self.check_online()?;
        let result = self.roll_inner(now_ms);
        self.guard(result)
    }

    pub(super) fn roll_inner(&mut self, now_ms: i64) -> Result<(), StorageError> {
        let next = self.log_end_offset();
        if self.segments.contains_key(&next) {
            return Ok(()); // the active segment is empty already
        }
        if let Some(active) = self.segments.values_mut().next_back() {
            active.seal()?;
        }
        let created = new_segment(&self.dir, &self.config, next, now_ms);
        let segment = match created {
            Ok(segment) => segment,
            Err(e) => {
                // No new segment (no descriptor or space for it): the sealed one takes the
                // next append again, and files half-created are removed.
                if let Some(active) = self.segments.values_mut().next_back() {
                    active.reopen_for_append(self.config.segment_index_bytes)?;
                }
                for ext in ["log", "index", "timeindex"] {
                    let _ = std::fs::remove_file(self.dir.join(segment::file_name(next, ext)));
                }
                return Err(e);
            }
        };
        self.segments.insert(next, segment);
        // Kafka's snapshot at roll: an unclean restart replays at most the active segment.
        producer_state::write_snapshot(&self.dir, next, next, &self.producers)?;
        tracing::debug!(partition = %self.tp, base_offset = next, "rolled segment");
        Ok(())
    }

    /// Fsyncs everything appended so far and advances the recovery point, holding the log
    /// (used at close and by tests; the produce path uses prepare/complete instead).
    pub fn flush(&mut self, now_ms: i64) -> Result<(), StorageError> {
        let Some(job) = self.prepare_flush(now_ms)? else {
            return Ok(());
        };
        let synced = job.sync();
        self.complete_flush(&job, synced)
    }

    /// Takes a flush job covering everything appended so far, or `None` when it is all durable
    /// already. Resets the `flush.messages` / `flush.ms` counters: the job covers those
    /// messages.
    pub fn prepare_flush(&mut self, now_ms: i64) -> Result<Option<FlushJob>, StorageError> {
        self.check_online()?;
        let end_offset = self.log_end_offset();
        if end_offset <= self.recovery_point {
            return Ok(None);
        }
        let from = self
            .segments
            .range(..=self.recovery_point)
            .next_back()
            .map(|(b, _)| *b)
            .unwrap_or(0);
        let files: Result<Vec<_>, StorageError> = self
            .segments
            .range(from..)
            .map(|(_, segment)| segment.prepare_sync())
            .collect();
        let files = self.guard(files)?;
        self.unflushed_messages = 0;
        self.last_flush_ms = now_ms;
        Ok(Some(FlushJob::new(files, end_offset)))
    }

    /// Records the outcome of a job's fsync: success advances the recovery point; failure
    /// takes the log offline, since what reached the disk is unknown (unless it was only
    /// out of a resource: the next flush tries again).
    pub fn complete_flush(
        &mut self,
        job: &FlushJob,
        synced: std::io::Result<()>,
    ) -> Result<(), StorageError> {
        self.guard(synced.map_err(StorageError::from))?;
        self.recovery_point = self.recovery_point.max(job.end_offset());
        self.flushes += 1;
        self.offsets_changed();
        Ok(())
    }

    /// Fsyncs completed since this log was opened (for tests and metrics).
    pub fn flush_count(&self) -> u64 {
        self.flushes
    }

    /// A flush job if `flush.ms` has passed since the last flush with data waiting.
    pub fn prepare_flush_if_due(&mut self, now_ms: i64) -> Result<Option<FlushJob>, StorageError> {
        if self.failed
            || self.log_end_offset() <= self.recovery_point
            || now_ms - self.last_flush_ms < self.config.flush_ms
        {
            return Ok(None);
        }
        self.prepare_flush(now_ms)
    }

    /// Flushes and trims the active segment's indexes so the next start can trust them.
    pub fn close(&mut self, now_ms: i64) -> Result<(), StorageError> {
        self.flush(now_ms)?;
        if let Some(active) = self.segments.values_mut().next_back() {
            let result = active.seal();
            self.guard(result)?;
        }
        // So the next start need not replay anything to know its producers. Not when there is
        // nothing to replay or a snapshot at the end already (Kafka's `takeSnapshot` skips a
        // log with nothing new since its last): each is a file and two fsyncs, which for
        // 100,000 partitions made a clean stop outlast its 25 s.
        let end = self.log_end_offset();
        let nothing_to_replay = end == self.log_start_offset && self.producers.is_empty();
        if nothing_to_replay || producer_state::snapshot_path(&self.dir, end).exists() {
            return Ok(());
        }
        let active_base = self.active().map_or(0, Segment::base_offset);
        let result = producer_state::write_snapshot(&self.dir, end, active_base, &self.producers);
        self.guard(result)
    }
}
