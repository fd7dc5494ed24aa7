//! One share-partition (KIP-932, Kafka's `SharePartition`): which records of a topic partition
//! a share group has delivered, to whom, and how each delivery ended.
//!
//! Records between the share-partition start offset (SPSO) and end offset (SPEO) are *in
//! flight*, each in one state: AVAILABLE (to be delivered, again), ACQUIRED (locked by one
//! member until it acknowledges or the lock times out), ACKNOWLEDGED or ARCHIVED (done). Below
//! the SPSO every record is done; at and above the SPEO none has been delivered. The SPSO moves
//! up over done records; acquisition stops while the in-flight window is full
//! (`group.share.partition.max.record.locks`). A record delivered `delivery count limit` times
//! is archived instead of being made available again.
//!
//! Synchronous and free of I/O: the coordinator reads the log, persists snapshots and runs the
//! clock.

use std::collections::BTreeMap;
use tokio::time::Instant;

/// Kafka's delivery states (RecordState ids, as in the persisted state batches).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordState {
    Available = 0,
    Acquired = 1,
    Acknowledged = 2,
    Archived = 4,
}

impl RecordState {
    pub fn from_id(id: i8) -> Option<Self> {
        match id {
            0 => Some(Self::Available),
            1 => Some(Self::Acquired),
            2 => Some(Self::Acknowledged),
            4 => Some(Self::Archived),
            _ => None,
        }
    }

    pub fn is_done(self) -> bool {
        matches!(self, Self::Acknowledged | Self::Archived)
    }
}

/// Acknowledgement types of ShareFetch / ShareAcknowledge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckType {
    /// The offset holds no record (a gap the client saw, e.g. a control batch).
    Gap = 0,
    Accept = 1,
    Release = 2,
    Reject = 3,
    /// KIP-1222: keep the records acquired, with a fresh lock.
    Renew = 4,
}

impl AckType {
    pub fn from_id(id: i8) -> Option<Self> {
        match id {
            0 => Some(Self::Gap),
            1 => Some(Self::Accept),
            2 => Some(Self::Release),
            3 => Some(Self::Reject),
            4 => Some(Self::Renew),
            _ => None,
        }
    }
}

#[derive(Debug, Clone)]
struct InFlight {
    state: RecordState,
    delivery_count: i16,
    owner: Option<String>,
    lock_deadline: Option<Instant>,
}

/// A run of acquired offsets with one delivery count, as ShareFetch returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcquiredRange {
    pub first_offset: i64,
    pub last_offset: i64,
    pub delivery_count: i16,
}

/// The persisted form (Kafka's `ShareSnapshotValue` state batches): ranges of the in-flight
/// window with their state and delivery count; acquired records are saved as available, since
/// no lock outlives its broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateBatch {
    pub first_offset: i64,
    pub last_offset: i64,
    pub state: RecordState,
    pub delivery_count: i16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AckError {
    /// Kafka's INVALID_RECORD_STATE: not acquired by this member (or not in flight).
    #[error("the records are not acquired by this member")]
    InvalidRecordState,
    /// INVALID_REQUEST: a malformed acknowledgement batch.
    #[error("malformed acknowledgement batch")]
    InvalidRequest,
}

/// How many records one acquisition may take: `max`, as whole batches unless `exact`.
#[derive(Debug, Clone, Copy)]
pub struct RecordLimit {
    pub max: usize,
    pub exact: bool,
}

/// The limits a share-partition works within (from the group's configs).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub delivery_count_limit: i16,
    pub max_in_flight: usize,
    pub lock_duration: std::time::Duration,
    /// `share.renew.acknowledge.enable`: whether RENEW acknowledgements are taken.
    pub renew_enabled: bool,
}

#[derive(Debug, Clone)]
pub struct SharePartition {
    start_offset: i64,
    end_offset: i64,
    /// Every offset of `[start_offset, end_offset)`.
    in_flight: BTreeMap<i64, InFlight>,
    /// Bumped when the state is reset (AlterShareGroupOffsets), as Kafka's state epoch.
    pub state_epoch: i32,
    /// When the state was created (ms since the epoch), as persisted.
    pub created_ms: i64,
}

impl SharePartition {
    /// A share-partition whose first record to deliver is `start_offset`.
    pub fn new(start_offset: i64, state_epoch: i32) -> Self {
        Self {
            start_offset,
            end_offset: start_offset,
            in_flight: BTreeMap::new(),
            state_epoch,
            created_ms: 0,
        }
    }

    /// Whether any record is acquired (locked by a member) now.
    pub fn holds_acquired(&self) -> bool {
        self.in_flight
            .values()
            .any(|r| r.state == RecordState::Acquired)
    }

    /// Restores a persisted state. Offsets the batches leave out were not in the log (or are
    /// done). At most `max_entries` offsets are restored: a state batch read from disk cannot
    /// make this allocate without bound (what lies beyond is delivered as new).
    pub fn restore(
        start_offset: i64,
        state_epoch: i32,
        batches: &[StateBatch],
        max_entries: usize,
    ) -> Self {
        let mut partition = Self::new(start_offset, state_epoch);
        let mut end = start_offset;
        'batches: for batch in batches {
            for offset in batch.first_offset.max(start_offset)..=batch.last_offset {
                if partition.in_flight.len() >= max_entries {
                    break 'batches;
                }
                let state = match batch.state {
                    RecordState::Acquired => RecordState::Available,
                    other => other,
                };
                partition.in_flight.insert(
                    offset,
                    InFlight {
                        state,
                        delivery_count: batch.delivery_count,
                        owner: None,
                        lock_deadline: None,
                    },
                );
                end = end.max(offset + 1);
            }
        }
        partition.end_offset = end;
        partition.advance_start();
        partition
    }

    pub fn start_offset(&self) -> i64 {
        self.start_offset
    }

    pub fn end_offset(&self) -> i64 {
        self.end_offset
    }

    /// Records in flight (delivered at least once and not yet below the start offset).
    pub fn in_flight_len(&self) -> usize {
        self.in_flight.len()
    }

    /// Whether the records before `log_start` are gone (retention, DeleteRecords): they can no
    /// longer be delivered, so the window moves up to it.
    pub fn skip_to_log_start(&mut self, log_start: i64) -> bool {
        if log_start <= self.start_offset {
            return false;
        }
        self.in_flight = self.in_flight.split_off(&log_start);
        self.start_offset = log_start;
        self.end_offset = self.end_offset.max(log_start);
        true
    }

    /// Releases every lock that has timed out; returns whether any did.
    pub fn expire_locks(&mut self, now: Instant, limits: &Limits) -> bool {
        let mut expired = false;
        for record in self.in_flight.values_mut() {
            if record.state == RecordState::Acquired
                && record.lock_deadline.is_some_and(|d| d <= now)
            {
                release(record, limits.delivery_count_limit);
                expired = true;
            }
        }
        if expired {
            self.advance_start();
        }
        expired
    }

    /// The earliest lock deadline, for waking a waiting fetch when records come back.
    pub fn next_lock_deadline(&self) -> Option<Instant> {
        self.in_flight
            .values()
            .filter(|r| r.state == RecordState::Acquired)
            .filter_map(|r| r.lock_deadline)
            .min()
    }

    /// Where a fetch should read from: the first record available again, else the end offset
    /// (new records) unless the window is full. `None`: nothing can be acquired now.
    pub fn next_fetch_offset(&self, limits: &Limits) -> Option<i64> {
        if let Some((&offset, _)) = self
            .in_flight
            .iter()
            .find(|(_, r)| r.state == RecordState::Available)
        {
            return Some(offset);
        }
        (self.in_flight.len() < limits.max_in_flight).then_some(self.end_offset)
    }

    /// Acquires for `member` what it may take from the batches a fetch read from `read_from`
    /// (each `(first, last, deliverable)` of a log batch, in order): available records in
    /// flight, then new records from the end offset on. Available offsets the read passed over
    /// are no longer in the log (compacted, or never there) and are archived. Batches that are not deliverable (control batches,
    /// aborted transactions under read_committed) are archived instead. Whole batches are
    /// taken until `max_records` are acquired, as Kafka's batch-optimized mode does; new
    /// records stop at the in-flight limit.
    pub fn acquire(
        &mut self,
        read_from: i64,
        batches: &[(i64, i64, bool)],
        member: &str,
        now: Instant,
        max_records: usize,
        limits: &Limits,
    ) -> Vec<AcquiredRange> {
        let limit = RecordLimit {
            max: max_records,
            exact: false,
        };
        self.acquire_limited(read_from, batches, member, now, limit, limits)
    }

    /// [`SharePartition::acquire`]; with `exact` (KIP-1206's record-limit mode) never more
    /// than `max_records`, stopping inside a batch if need be.
    pub fn acquire_limited(
        &mut self,
        read_from: i64,
        batches: &[(i64, i64, bool)],
        member: &str,
        now: Instant,
        limit: RecordLimit,
        limits: &Limits,
    ) -> Vec<AcquiredRange> {
        let RecordLimit {
            max: max_records,
            exact,
        } = limit;
        let mut ranges: Vec<AcquiredRange> = Vec::new();
        let mut acquired = 0usize;
        let deadline = now + limits.lock_duration;
        let take = |offset: i64, record: &mut InFlight, ranges: &mut Vec<AcquiredRange>| {
            record.state = RecordState::Acquired;
            record.delivery_count = record.delivery_count.saturating_add(1);
            record.owner = Some(member.to_string());
            record.lock_deadline = Some(deadline);
            match ranges.last_mut() {
                Some(last)
                    if last.last_offset + 1 == offset
                        && last.delivery_count == record.delivery_count =>
                {
                    last.last_offset = offset;
                }
                _ => ranges.push(AcquiredRange {
                    first_offset: offset,
                    last_offset: offset,
                    delivery_count: record.delivery_count,
                }),
            }
        };
        let mut cursor = read_from;
        'batches: for &(first, last, deliverable) in batches {
            let (low, high) = (cursor.max(self.start_offset), first);
            if low < high {
                let gone: Vec<i64> = self
                    .in_flight
                    .range(low..high)
                    .filter(|(_, r)| r.state == RecordState::Available)
                    .map(|(o, _)| *o)
                    .collect();
                for offset in gone {
                    self.in_flight.insert(offset, done(RecordState::Archived));
                }
            }
            cursor = cursor.max(last + 1);
            if acquired >= max_records.max(1) {
                break;
            }
            if last < self.start_offset {
                continue;
            }
            for offset in first.max(self.start_offset)..=last {
                if offset < self.end_offset {
                    if let Some(record) = self.in_flight.get_mut(&offset)
                        && record.state == RecordState::Available
                    {
                        if deliverable {
                            if exact && acquired >= max_records.max(1) {
                                break 'batches;
                            }
                            take(offset, record, &mut ranges);
                            acquired += 1;
                        } else {
                            *record = done(RecordState::Archived);
                        }
                    }
                    continue;
                }
                if self.in_flight.len() >= limits.max_in_flight
                    || (exact && deliverable && acquired >= max_records.max(1))
                {
                    break 'batches;
                }
                let mut record = done(RecordState::Archived);
                if deliverable {
                    take(offset, &mut record, &mut ranges);
                    acquired += 1;
                }
                self.in_flight.insert(offset, record);
                self.end_offset = offset + 1;
            }
        }
        self.advance_start();
        ranges
    }

    /// Applies one acknowledgement batch of `member`: `types` holds one type for the whole
    /// range or one per offset. Nothing changes unless every offset is acquired by `member`.
    pub fn acknowledge(
        &mut self,
        member: &str,
        first: i64,
        last: i64,
        types: &[i8],
        now: Instant,
        limits: &Limits,
    ) -> Result<(), AckError> {
        if last < first || types.is_empty() {
            return Err(AckError::InvalidRequest);
        }
        let span = (last - first) as u64 + 1;
        if types.len() != 1 && types.len() as u64 != span {
            return Err(AckError::InvalidRequest);
        }
        let kinds: Vec<AckType> = types
            .iter()
            .map(|t| AckType::from_id(*t).ok_or(AckError::InvalidRequest))
            .collect::<Result<_, _>>()?;
        // Kafka: "Renewing acquisition locks is not enabled for the group."
        if !limits.renew_enabled && kinds.contains(&AckType::Renew) {
            return Err(AckError::InvalidRecordState);
        }
        if first < self.start_offset || last >= self.end_offset {
            return Err(AckError::InvalidRecordState);
        }
        // Offsets without an entry hold no record in the log (a client may cover them with
        // its range); every one that does must be acquired by this member.
        let owned = self
            .in_flight
            .range(first..=last)
            .all(|(_, r)| r.state == RecordState::Acquired && r.owner.as_deref() == Some(member));
        if !owned || self.in_flight.range(first..=last).next().is_none() {
            return Err(AckError::InvalidRecordState);
        }
        for (&offset, record) in self.in_flight.range_mut(first..=last) {
            let kind = match kinds.as_slice() {
                [one] => *one,
                per_offset => per_offset[(offset - first) as usize],
            };
            match kind {
                AckType::Accept => *record = done(RecordState::Acknowledged),
                AckType::Gap | AckType::Reject => *record = done(RecordState::Archived),
                AckType::Release => release(record, limits.delivery_count_limit),
                AckType::Renew => record.lock_deadline = Some(now + limits.lock_duration),
            }
        }
        self.advance_start();
        Ok(())
    }

    /// Releases everything `member` holds (it left, or its share session closed).
    pub fn release_member(&mut self, member: &str, limits: &Limits) -> bool {
        let mut released = false;
        for record in self.in_flight.values_mut() {
            if record.state == RecordState::Acquired && record.owner.as_deref() == Some(member) {
                release(record, limits.delivery_count_limit);
                released = true;
            }
        }
        if released {
            self.advance_start();
        }
        released
    }

    /// The state to persist: the start offset and the in-flight window as runs.
    pub fn snapshot(&self) -> (i64, Vec<StateBatch>) {
        let mut batches: Vec<StateBatch> = Vec::new();
        for (&offset, record) in &self.in_flight {
            let state = match record.state {
                RecordState::Acquired => RecordState::Available,
                other => other,
            };
            match batches.last_mut() {
                Some(last)
                    if last.last_offset + 1 == offset
                        && last.state == state
                        && last.delivery_count == record.delivery_count =>
                {
                    last.last_offset = offset;
                }
                _ => batches.push(StateBatch {
                    first_offset: offset,
                    last_offset: offset,
                    state,
                    delivery_count: record.delivery_count,
                }),
            }
        }
        (self.start_offset, batches)
    }

    /// Offsets at or above the start offset whose delivery is complete (KIP-1226's
    /// DeliveryCompleteCount): the lag is the rest of the log up to the high watermark.
    pub fn delivery_complete_count(&self) -> i64 {
        self.in_flight
            .values()
            .filter(|r| r.state.is_done())
            .count() as i64
    }

    /// Moves the start offset over done records (and the offsets between them that hold no
    /// record), up to the first one still to be delivered.
    fn advance_start(&mut self) {
        while let Some(entry) = self.in_flight.first_entry() {
            if !entry.get().state.is_done() {
                self.start_offset = self.start_offset.max(*entry.key());
                break;
            }
            let offset = *entry.key();
            entry.remove();
            self.start_offset = offset + 1;
        }
        if self.in_flight.is_empty() {
            self.start_offset = self.start_offset.max(self.end_offset);
            self.end_offset = self.start_offset;
        }
    }
}

fn done(state: RecordState) -> InFlight {
    InFlight {
        state,
        delivery_count: 0,
        owner: None,
        lock_deadline: None,
    }
}

/// An acquired record goes back: available again, or archived at the delivery limit.
fn release(record: &mut InFlight, delivery_count_limit: i16) {
    record.state = if record.delivery_count >= delivery_count_limit {
        RecordState::Archived
    } else {
        RecordState::Available
    };
    record.owner = None;
    record.lock_deadline = None;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn limits() -> Limits {
        Limits {
            delivery_count_limit: 3,
            max_in_flight: 100,
            lock_duration: Duration::from_secs(30),
            renew_enabled: true,
        }
    }

    #[test]
    fn a_renewal_needs_the_group_to_allow_it() {
        let now = Instant::now();
        let mut p = SharePartition::new(0, 0);
        p.acquire(0, &[(0, 1, true)], "a", now, 100, &limits());
        let later = now + Duration::from_secs(10);
        let off = Limits {
            renew_enabled: false,
            ..limits()
        };
        assert_eq!(
            p.acknowledge("a", 0, 1, &[4], later, &off),
            Err(AckError::InvalidRecordState),
            "share.renew.acknowledge.enable=false"
        );
        p.acknowledge("a", 0, 1, &[4], later, &limits()).unwrap();
        // Renewed: still acquired by a, past the first lock's end.
        assert!(
            p.acquire(
                0,
                &[(0, 1, true)],
                "b",
                now + Duration::from_secs(35),
                100,
                &limits()
            )
            .is_empty()
        );
    }

    #[test]
    fn acquired_records_are_locked_to_one_member_until_acknowledged() {
        let now = Instant::now();
        let mut p = SharePartition::new(0, 0);
        let got = p.acquire(0, &[(0, 4, true), (5, 9, true)], "a", now, 100, &limits());
        assert_eq!(
            got,
            vec![AcquiredRange {
                first_offset: 0,
                last_offset: 9,
                delivery_count: 1
            }]
        );
        assert_eq!(p.next_fetch_offset(&limits()), Some(10));
        // Another member reading the same batches gets nothing: all are locked.
        assert!(
            p.acquire(0, &[(0, 9, true)], "b", now, 100, &limits())
                .is_empty()
        );
        assert_eq!(
            p.acknowledge("b", 0, 4, &[1], now, &limits()),
            Err(AckError::InvalidRecordState)
        );
        p.acknowledge("a", 0, 4, &[1], now, &limits()).unwrap();
        assert_eq!(p.start_offset(), 5);
        p.acknowledge("a", 5, 9, &[1], now, &limits()).unwrap();
        assert_eq!((p.start_offset(), p.end_offset()), (10, 10));
        assert_eq!(p.in_flight_len(), 0);
    }

    #[test]
    fn released_and_timed_out_records_are_delivered_again_until_the_limit() {
        let now = Instant::now();
        let l = limits();
        let mut p = SharePartition::new(0, 0);
        p.acquire(0, &[(0, 1, true)], "a", now, 100, &l);
        // Per-offset types: accept 0, release 1.
        p.acknowledge("a", 0, 1, &[1, 2], now, &l).unwrap();
        assert_eq!(p.next_fetch_offset(&l), Some(1));
        let again = p.acquire(0, &[(0, 1, true)], "b", now, 100, &l);
        assert_eq!(
            again,
            vec![AcquiredRange {
                first_offset: 1,
                last_offset: 1,
                delivery_count: 2
            }]
        );
        // The lock runs out: available again, then the third delivery is the last.
        assert!(p.expire_locks(now + Duration::from_secs(31), &l));
        let third = p.acquire(0, &[(0, 1, true)], "c", now, 100, &l);
        assert_eq!(third[0].delivery_count, 3);
        p.acknowledge("c", 1, 1, &[2], now, &l).unwrap();
        assert_eq!(p.start_offset(), 2, "archived at the delivery count limit");
    }

    #[test]
    fn acquisition_stops_at_the_in_flight_limit_and_max_records() {
        let now = Instant::now();
        let mut l = limits();
        l.max_in_flight = 5;
        let mut p = SharePartition::new(0, 0);
        let got = p.acquire(0, &[(0, 9, true)], "a", now, 100, &l);
        assert_eq!(got[0].last_offset, 4);
        assert_eq!(p.next_fetch_offset(&l), None, "window full");
        let mut p = SharePartition::new(0, 0);
        let got = p.acquire(
            0,
            &[(0, 2, true), (3, 5, true), (6, 8, true)],
            "a",
            now,
            4,
            &limits(),
        );
        assert_eq!(got[0].last_offset, 5, "whole batches up to max_records");
    }

    #[test]
    fn the_record_limit_mode_stops_inside_a_batch() {
        let now = Instant::now();
        let mut p = SharePartition::new(0, 0);
        let exact = |max| RecordLimit { max, exact: true };
        let got = p.acquire_limited(0, &[(0, 9, true)], "a", now, exact(4), &limits());
        assert_eq!(got[0].last_offset, 3);
        assert_eq!(p.next_fetch_offset(&limits()), Some(4));
        let rest = p.acquire_limited(4, &[(0, 9, true)], "b", now, exact(100), &limits());
        assert_eq!((rest[0].first_offset, rest[0].last_offset), (4, 9));
    }

    #[test]
    fn malformed_acknowledgements_change_nothing() {
        let now = Instant::now();
        let l = limits();
        let mut p = SharePartition::new(0, 0);
        p.acquire(0, &[(0, 3, true)], "a", now, 100, &l);
        for (first, last, types) in [
            (2, 1, vec![1]),
            (0, 3, vec![1, 1]),
            (0, 3, vec![]),
            (0, 0, vec![9]),
        ] {
            assert_eq!(
                p.acknowledge("a", first, last, &types, now, &l),
                Err(AckError::InvalidRequest)
            );
        }
        assert_eq!(
            p.acknowledge("a", 0, 7, &[1], now, &l),
            Err(AckError::InvalidRecordState)
        );
        assert_eq!(p.in_flight_len(), 4);
    }

    #[test]
    fn a_snapshot_restores_the_window_without_locks() {
        let now = Instant::now();
        let l = limits();
        let mut p = SharePartition::new(10, 0);
        p.acquire(10, &[(10, 19, true)], "a", now, 100, &l);
        p.acknowledge("a", 10, 11, &[1], now, &l).unwrap();
        p.acknowledge("a", 13, 13, &[3], now, &l).unwrap();
        let (start, batches) = p.snapshot();
        assert_eq!(start, 12);
        let restored = SharePartition::restore(start, 0, &batches, 100);
        assert_eq!(restored.start_offset(), 12);
        assert_eq!(restored.end_offset(), 20);
        assert_eq!(restored.next_fetch_offset(&l), Some(12));
        let mut restored = restored;
        let again = restored.acquire(10, &[(10, 19, true)], "b", now, 100, &l);
        assert_eq!(
            again,
            vec![
                AcquiredRange {
                    first_offset: 12,
                    last_offset: 12,
                    delivery_count: 2
                },
                AcquiredRange {
                    first_offset: 14,
                    last_offset: 19,
                    delivery_count: 2
                }
            ]
        );
    }

    #[test]
    fn offsets_gone_from_the_log_are_archived_not_waited_for() {
        let now = Instant::now();
        let l = limits();
        let mut p = SharePartition::new(0, 0);
        // Batches 0..=4 and 10..=14 (5..=9 compacted away) and a control batch at 15.
        p.acquire(
            0,
            &[(0, 4, true), (10, 14, true), (15, 15, false)],
            "a",
            now,
            100,
            &l,
        );
        assert_eq!(
            p.in_flight_len(),
            11,
            "no entries for offsets the log does not hold"
        );
        p.acknowledge("a", 0, 4, &[1], now, &l).unwrap();
        assert_eq!(p.start_offset(), 10, "the hole is passed over");
        // 10..=14 released, then compacted away before they are read again.
        p.acknowledge("a", 10, 14, &[2], now, &l).unwrap();
        assert_eq!(p.next_fetch_offset(&l), Some(10));
        assert!(p.acquire(10, &[(20, 20, true)], "b", now, 100, &l).len() == 1);
        assert_eq!(
            p.start_offset(),
            20,
            "records no longer in the log are archived"
        );
    }

    #[test]
    fn a_restored_state_is_bounded() {
        let huge = [StateBatch {
            first_offset: 0,
            last_offset: i64::MAX,
            state: RecordState::Available,
            delivery_count: 1,
        }];
        let p = SharePartition::restore(0, 0, &huge, 1000);
        assert_eq!(p.in_flight_len(), 1000);
    }

    #[test]
    fn records_deleted_from_the_log_leave_the_window() {
        let now = Instant::now();
        let l = limits();
        let mut p = SharePartition::new(0, 0);
        p.acquire(0, &[(0, 9, true)], "a", now, 100, &l);
        assert!(p.skip_to_log_start(5));
        assert_eq!((p.start_offset(), p.in_flight_len()), (5, 5));
        assert_eq!(
            p.acknowledge("a", 0, 4, &[1], now, &l),
            Err(AckError::InvalidRecordState)
        );
    }
}
