//! Reading an internal topic back from its start: what a coordinator (groups, transactions,
//! share state) does when it is elected for a partition.

use super::{SharedLog, lock};
use crate::storage::StorageError;

/// What [`replay_records`] visits: a record (with the producer that wrote it, for records
/// written in a transaction), or a transaction marker.
#[derive(Debug, Clone, Copy)]
pub enum Replayed<'a> {
    Record {
        producer_id: i64,
        transactional: bool,
        key: Option<&'a [u8]>,
        value: Option<&'a [u8]>,
    },
    Marker {
        producer_id: i64,
        commit: bool,
    },
}

/// Visits every record and transaction marker of `log`, from its start to its current end (a
/// coordinator rebuilding its state from an internal topic). The log is locked only for each
/// read, so writers are never waited on while a coordinator loads. Returns how many records
/// were visited.
pub fn replay_records(
    log: &SharedLog,
    mut visit: impl FnMut(Replayed<'_>),
) -> Result<usize, StorageError> {
    use crate::record::control::{MarkerKind, read_marker};
    use crate::record::{BatchIter, codec, records};
    let (start, end) = {
        let log = lock(log);
        (log.log_start_offset(), log.log_end_offset())
    };
    let mut visited = 0;
    let mut offset = start;
    while offset < end {
        let Some(read) = lock(log).read(offset, 1 << 20, end, true)? else {
            break;
        };
        let bytes = read.records.read()?;
        for batch in BatchIter::new(&bytes) {
            let batch = match batch {
                Ok(batch) => batch,
                Err(e) => {
                    // Framing the log's recovery let through: the rest of this read is
                    // unreadable, the next read starts after it.
                    tracing::warn!(%offset, error = %e, "skipping an unreadable batch while replaying an internal topic");
                    break;
                }
            };
            if batch.is_control() {
                if let Ok(Some(marker)) = read_marker(&batch) {
                    visit(Replayed::Marker {
                        producer_id: batch.producer_id(),
                        commit: marker.kind == MarkerKind::Commit,
                    });
                }
                continue;
            }
            // One bad batch (written before clients were kept out of internal topics) is
            // logged and skipped: every other record still loads.
            let skip = |e: crate::record::RecordError| {
                tracing::warn!(offset = batch.base_offset(), error = %e, "skipping an unreadable batch while replaying an internal topic");
            };
            let payload = match batch
                .compression()
                .and_then(|codec| codec::decompress(codec, batch.records_payload()))
            {
                Ok(payload) => payload,
                Err(e) => {
                    skip(e);
                    continue;
                }
            };
            let parsed = match records::parse_records(&payload, batch.records_count()) {
                Ok(parsed) => parsed,
                Err(e) => {
                    skip(e);
                    continue;
                }
            };
            for record in parsed {
                visit(Replayed::Record {
                    producer_id: batch.producer_id(),
                    transactional: batch.is_transactional(),
                    key: record.key,
                    value: record.value,
                });
                visited += 1;
            }
        }
        offset = read.next_offset;
    }
    Ok(visited)
}
