//! Transaction markers: the control batches that end a producer's transaction on a partition
//! (Kafka's `EndTransactionMarker`). A marker batch is transactional and control, carries the
//! producer id and epoch but no sequence, and holds one record:
//!
//! ```text
//! key   = version: i16 (0) | type: i16 (0 abort, 1 commit)
//! value = version: i16 (0) | coordinator_epoch: i32
//! ```

use super::{
    ATTRIBUTES, BatchView, CONTROL_BIT, NewRecord, RecordError, build_batch, make_transactional,
    read_i16, records,
};
use bytes::{BufMut, BytesMut};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MarkerKind {
    Abort,
    Commit,
}

/// What a marker says: how the transaction ended, and the epoch of the transaction
/// coordinator that decided it (a marker from an older coordinator is refused).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub kind: MarkerKind,
    pub coordinator_epoch: i32,
}

/// The marker batch (base offset 0, to be assigned on append).
pub fn build_marker(
    producer_id: i64,
    producer_epoch: i16,
    marker: Marker,
    timestamp: i64,
) -> BytesMut {
    let mut key = BytesMut::with_capacity(4);
    key.put_i16(0);
    key.put_i16(match marker.kind {
        MarkerKind::Abort => 0,
        MarkerKind::Commit => 1,
    });
    let mut value = BytesMut::with_capacity(6);
    value.put_i16(0);
    value.put_i32(marker.coordinator_epoch);
    let mut batch = build_batch(&[NewRecord {
        key: Some(&key),
        value: Some(&value),
        timestamp,
    }]);
    let attributes = read_i16(&batch, ATTRIBUTES) | CONTROL_BIT;
    batch[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attributes.to_be_bytes());
    // Transactional, the producer's, no sequence; the CRC is computed there.
    make_transactional(&mut batch, producer_id, producer_epoch);
    batch
}

/// The marker a control batch holds; `None` for a control record of another type (Kafka
/// ignores those).
pub fn read_marker(batch: &BatchView<'_>) -> Result<Option<Marker>, RecordError> {
    if !batch.is_control() {
        return Err(RecordError::Invalid("not a control batch".into()));
    }
    if batch.compression()? != super::Compression::None {
        return Err(RecordError::Invalid("compressed control batch".into()));
    }
    let parsed = records::parse_records(batch.records_payload(), batch.records_count())?;
    let Some(record) = parsed.first() else {
        return Err(RecordError::Corrupt("control batch without a record"));
    };
    let key = record
        .key
        .filter(|k| k.len() >= 4)
        .ok_or(RecordError::Corrupt("control record key too short"))?;
    let kind = match i16::from_be_bytes([key[2], key[3]]) {
        0 => MarkerKind::Abort,
        1 => MarkerKind::Commit,
        _ => return Ok(None),
    };
    let value = record
        .value
        .filter(|v| v.len() >= 6)
        .ok_or(RecordError::Corrupt("transaction marker value too short"))?;
    let coordinator_epoch = i32::from_be_bytes([value[2], value[3], value[4], value[5]]);
    Ok(Some(Marker {
        kind,
        coordinator_epoch,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_round_trip_and_validate() {
        for kind in [MarkerKind::Abort, MarkerKind::Commit] {
            let marker = Marker {
                kind,
                coordinator_epoch: 7,
            };
            let bytes = build_marker(42, 3, marker, 1_000);
            let batch = BatchView::new(&bytes).unwrap();
            batch.validate().unwrap();
            assert!(batch.is_control() && batch.is_transactional());
            assert_eq!((batch.producer_id(), batch.producer_epoch()), (42, 3));
            assert_eq!(batch.base_sequence(), -1);
            assert_eq!(read_marker(&batch).unwrap(), Some(marker));
        }
        let data = crate::record::test_support::batch(0, 1, 1, 3);
        assert!(read_marker(&BatchView::new(&data).unwrap()).is_err());
    }
}
