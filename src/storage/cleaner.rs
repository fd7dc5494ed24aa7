//! Log compaction (Kafka's `LogCleaner`), for logs whose `cleanup.policy` includes `compact`:
//! only the latest record of each key is kept. Works on sealed segments only (the active one is
//! never cleaned, as in Kafka):
//!
//! 1. map every key of the sealed section to the offset of its latest record;
//! 2. rewrite each sealed segment keeping a record when it is that latest one, or has no key;
//!    tombstones (null values) go once their batch is older than `delete.retention.ms`;
//!    batches newer than `min.compaction.lag.ms` are kept whole; records of aborted
//!    transactions count for no key and go (Kafka's cleaner does the same); transaction
//!    markers stay;
//! 3. swap each rewritten segment in crash-safely (`Segment::replace_data`).
//!
//! Rewritten batches keep their base offset, last offset delta, timestamps and producer fields,
//! so offsets never change and consumers see gaps, exactly as with Kafka. Records are stored
//! uncompressed after cleaning. Unlike Kafka, every pass recompacts the whole sealed section
//! (no dirty-ratio bookkeeping); a pass runs only when new sealed data appeared since the last.

use super::StorageError;
use super::txn_index::AbortedTxn;
use crate::record::{BatchIter, BatchView, codec, records, rewrite_batch};
use bytes::Bytes;
use std::collections::HashMap;

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CleanStats {
    pub segments_rewritten: usize,
    pub records_removed: usize,
}

/// Whether `batch` holds records of a transaction that was aborted.
fn is_aborted(batch: &BatchView<'_>, aborted: &[AbortedTxn]) -> bool {
    batch.is_transactional()
        && !batch.is_control()
        && aborted.iter().any(|t| {
            t.producer_id == batch.producer_id()
                && (t.first_offset..t.last_offset).contains(&batch.base_offset())
        })
}

/// Collects key -> offset of its latest record over `segments` (oldest first), leaving out
/// records of `aborted` transactions.
pub fn latest_offsets(
    segments: &[Bytes],
    aborted: &[AbortedTxn],
) -> Result<HashMap<Vec<u8>, i64>, StorageError> {
    let mut latest = HashMap::new();
    for data in segments {
        for batch in BatchIter::new(data) {
            let batch = batch?;
            if batch.is_control() || is_aborted(&batch, aborted) {
                continue;
            }
            let payload = codec::decompress(batch.compression()?, batch.records_payload())?;
            for record in records::parse_records(&payload, batch.records_count())? {
                if let Some(key) = record.key {
                    latest.insert(
                        key.to_vec(),
                        batch.base_offset() + record.offset_delta as i64,
                    );
                }
            }
        }
    }
    Ok(latest)
}

/// Rewrites one segment's batches against `latest`. Returns the new data and how many records
/// were removed; `None` when nothing would change.
pub fn clean_segment(
    data: &[u8],
    latest: &HashMap<Vec<u8>, i64>,
    aborted: &[AbortedTxn],
    now_ms: i64,
    delete_retention_ms: i64,
    min_compaction_lag_ms: i64,
) -> Result<Option<(Vec<u8>, usize)>, StorageError> {
    let mut out = Vec::with_capacity(data.len());
    let mut removed = 0;
    for batch in BatchIter::new(data) {
        let batch: BatchView<'_> = batch?;
        if is_aborted(&batch, aborted) {
            removed += batch.records_count().max(0) as usize;
            continue;
        }
        let too_recent = now_ms - batch.max_timestamp() < min_compaction_lag_ms;
        if batch.is_control() || too_recent {
            out.extend_from_slice(batch.bytes());
            continue;
        }
        let payload = codec::decompress(batch.compression()?, batch.records_payload())?;
        let parsed = records::parse_records(&payload, batch.records_count())?;
        let tombstones_expired = now_ms - batch.max_timestamp() > delete_retention_ms;
        let kept: Vec<&[u8]> = parsed
            .iter()
            .filter(|r| {
                let offset = batch.base_offset() + r.offset_delta as i64;
                match r.key {
                    None => true,
                    Some(key) => {
                        latest.get(key) == Some(&offset)
                            && !(r.value.is_none() && tombstones_expired)
                    }
                }
            })
            .map(|r| r.raw)
            .collect();
        removed += parsed.len() - kept.len();
        if kept.len() == parsed.len() {
            out.extend_from_slice(batch.bytes());
        } else if !kept.is_empty() {
            out.extend_from_slice(&rewrite_batch(&batch, &kept));
        }
    }
    Ok((removed > 0).then_some((out, removed)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{NewRecord, build_batch};

    fn keyed(offset: i64, entries: &[(&str, Option<&str>)], ts: i64) -> Vec<u8> {
        let records: Vec<NewRecord<'_>> = entries
            .iter()
            .map(|(k, v)| NewRecord {
                key: Some(k.as_bytes()),
                value: v.map(str::as_bytes),
                timestamp: ts,
            })
            .collect();
        let mut batch = build_batch(&records);
        crate::record::assign_offsets(&mut batch, offset, 0, None);
        batch.to_vec()
    }

    #[test]
    fn keeps_only_the_latest_record_per_key_and_preserves_offsets() {
        let mut data = keyed(
            0,
            &[("a", Some("1")), ("b", Some("1")), ("a", Some("2"))],
            1_000,
        );
        data.extend(keyed(3, &[("c", Some("1")), ("b", None)], 1_000));
        let latest = latest_offsets(&[Bytes::from(data.clone())], &[]).unwrap();
        assert_eq!(latest[&b"a".to_vec()], 2);
        let (cleaned, removed) = clean_segment(&data, &latest, &[], 2_000, 86_400_000, 0)
            .unwrap()
            .unwrap();
        assert_eq!(
            removed, 2,
            "a=1 and b=1 are gone; the b tombstone stays within delete.retention.ms"
        );
        let mut seen = Vec::new();
        for batch in BatchIter::new(&cleaned) {
            let batch = batch.unwrap();
            assert!(batch.crc_matches());
            for r in records::parse_records(batch.records_payload(), batch.records_count()).unwrap()
            {
                seen.push((
                    batch.base_offset() + r.offset_delta as i64,
                    String::from_utf8_lossy(r.key.unwrap()).into_owned(),
                    r.value.map(|v| String::from_utf8_lossy(v).into_owned()),
                ));
            }
            assert_eq!(
                batch.last_offset_delta(),
                if batch.base_offset() == 0 { 2 } else { 1 },
                "offset range kept"
            );
        }
        assert_eq!(
            seen,
            vec![
                (2, "a".into(), Some("2".into())),
                (3, "c".into(), Some("1".into())),
                (4, "b".into(), None)
            ]
        );
        // Once the tombstone is old enough it goes too; nothing to do on clean data otherwise.
        let (older, removed) =
            clean_segment(&cleaned, &latest, &[], 1_000 + 86_400_001, 86_400_000, 0)
                .unwrap()
                .unwrap();
        assert_eq!(removed, 1);
        assert!(
            clean_segment(&older, &latest, &[], 1_000 + 86_400_001, 86_400_000, 0)
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn recent_batches_respect_min_compaction_lag() {
        let data = keyed(0, &[("a", Some("1")), ("a", Some("2"))], 10_000);
        let latest = latest_offsets(&[Bytes::from(data.clone())], &[]).unwrap();
        assert!(
            clean_segment(&data, &latest, &[], 10_500, 86_400_000, 1_000)
                .unwrap()
                .is_none()
        );
        assert!(
            clean_segment(&data, &latest, &[], 12_000, 86_400_000, 1_000)
                .unwrap()
                .is_some()
        );
    }
}
