//! A client's batch on its way into a log, parsed once and carried down. The produce request
//! wraps each partition's records in a [`ProducedBatch`], which parses the first batch's
//! header; the request's own rules are checked on it ([`ProducedBatch::check_request`],
//! Kafka's `ProduceRequest.validateRecords`); the partition's leader checks it against the
//! topic ([`ProducedBatch::check`]: the header checks of [`super::validate_produced`], then
//! every record, as Kafka's `LogValidator`); the log appends the [`CheckedBatch`] that comes
//! out. Nothing below the produce request parses the header again.

use super::validate::{ValidationPolicy, validate_records};
use super::{
    BatchView, Compression, MAGIC_V2, RecordError, check_produced_header, frame_first_batch,
    peek_offset_and_size, validate_produced,
};
use bytes::Bytes;

/// The records of one partition of a produce request, as they arrived, with the first
/// batch's header parsed.
#[derive(Debug, Clone)]
pub struct ProducedBatch {
    bytes: Bytes,
    /// The size of the first batch when its header parses ([`BatchView::new`] over it).
    header_size: Option<usize>,
}

impl ProducedBatch {
    /// Wraps a partition's records and parses the header of the first batch in them.
    pub fn new(bytes: Bytes) -> Self {
        let header_size = peek_offset_and_size(&bytes)
            .map(|(_, size, _)| size)
            .filter(|size| {
                bytes
                    .get(..*size)
                    .is_some_and(|b| BatchView::new(b).is_ok())
            });
        Self { bytes, header_size }
    }

    /// The first batch's header, when it parses.
    pub fn header(&self) -> Option<BatchView<'_>> {
        self.header_size.map(|size| BatchView {
            bytes: &self.bytes[..size],
        })
    }

    /// Whether the first batch is transactional (Kafka's `hasTransactionalRecords`, which a
    /// request without a transactional id may not have).
    pub fn is_transactional(&self) -> bool {
        self.header().is_some_and(|h| h.is_transactional())
    }

    /// The records' size in bytes.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// How many records the first batch's header says it holds (0 when the header does not
    /// parse). A claim, not a count: walking the batch checks it, and a walk never goes
    /// further than it, so it bounds what the walk costs.
    pub fn records_claimed(&self) -> usize {
        self.header()
            .map_or(0, |h| usize::try_from(h.records_count()).unwrap_or(0))
    }

    /// Whether the records are compressed (a batch whose header does not parse is not: its
    /// check fails at once).
    pub fn is_compressed(&self) -> bool {
        self.header()
            .is_some_and(|h| h.compression().is_ok_and(|c| c != Compression::None))
    }

    /// What Kafka checks of a partition's records before the log sees them
    /// (`ProduceRequest.validateRecords`, in its order): one whole batch is there
    /// (INVALID_RECORD, or CORRUPT_MESSAGE for a length below any record's), of magic 2 (every
    /// version served is v3+), zstd only from v7 on, and no second batch.
    pub fn check_request(&self, version: i16) -> Result<(), RecordError> {
        let bytes = &self.bytes[..];
        let Some(first) = frame_first_batch(bytes)? else {
            return Err(RecordError::Invalid(format!(
                "Produce requests with version {version} must have at least one record batch per partition"
            )));
        };
        if first.magic != MAGIC_V2 {
            return Err(RecordError::Invalid(format!(
                "Produce requests with version {version} are only allowed to contain record batches with magic version 2"
            )));
        }
        if version < 7 && first.compression == Some(Compression::Zstd) {
            return Err(RecordError::CodecNotAllowed(format!(
                "Produce requests with version {version} are not allowed to use ZStandard compression"
            )));
        }
        if frame_first_batch(&bytes[first.size..])?.is_some() {
            return Err(RecordError::Invalid(format!(
                "Produce requests with version {version} are only allowed to contain exactly one record batch per partition"
            )));
        }
        Ok(())
    }

    /// The leader's checks against the topic's configuration (Kafka's `LogValidator`): the
    /// header ([`super::validate_produced`]), then every record
    /// ([`super::validate::validate_records`]). Compressed batches are decompressed to walk
    /// their records, so callers run large or compressed ones off the async workers.
    pub fn check(
        self,
        max_message_bytes: usize,
        policy: &ValidationPolicy,
        now_ms: i64,
    ) -> Result<CheckedBatch, RecordError> {
        let max_timestamp = match self.header() {
            Some(view) if view.size() == self.bytes.len() => {
                check_produced_header(&view, max_message_bytes)?;
                validate_records(&view, policy, now_ms)?
            }
            // Not exactly one batch whose header parses: refused, with the reason the full
            // check gives.
            _ => {
                let view = validate_produced(&self.bytes, max_message_bytes)?;
                validate_records(&view, policy, now_ms)?
            }
        };
        let bytes = match (policy.compression, self.header()) {
            (Some((target, level)), Some(view)) if view.compression()? != target => {
                // Kafka's LogValidator recompresses into the topic's codec, then checks the
                // new size against max.message.bytes.
                let recompressed = super::recompress(&view, target, level)?;
                if recompressed.len() > max_message_bytes {
                    return Err(RecordError::TooLarge {
                        size: recompressed.len(),
                        limit: max_message_bytes,
                    });
                }
                recompressed.freeze()
            }
            _ => self.bytes,
        };
        Ok(CheckedBatch {
            bytes,
            max_timestamp,
        })
    }

    /// Whether [`ProducedBatch::check`] will recompress the batch into `target`.
    pub fn needs_recompression(&self, target: Option<Compression>) -> bool {
        match (target, self.header().map(|h| h.compression())) {
            (Some(target), Some(Ok(codec))) => codec != target,
            _ => false,
        }
    }
}

/// A batch ready for the log: a client's that passed every check, or one this broker built.
#[derive(Debug, Clone)]
pub struct CheckedBatch {
    bytes: Bytes,
    max_timestamp: i64,
}

impl CheckedBatch {
    /// A batch this broker built itself (coordinator state, group offsets): its header is
    /// checked (CRC32C, codec, counts); its records are the broker's own.
    pub fn built(bytes: impl Into<Bytes>) -> Result<Self, RecordError> {
        let bytes = bytes.into();
        let view = BatchView::new(&bytes)?;
        view.validate()?;
        let max_timestamp = view.max_timestamp();
        Ok(Self {
            bytes,
            max_timestamp,
        })
    }

    /// The batch, whose header was parsed and checked when it was made.
    pub fn view(&self) -> BatchView<'_> {
        BatchView { bytes: &self.bytes }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The largest record timestamp the checks found (-1 when no record has one).
    pub fn max_timestamp(&self) -> i64 {
        self.max_timestamp
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::test_support::batch;

    fn policy() -> ValidationPolicy {
        ValidationPolicy {
            compacted: false,
            log_append_time: false,
            timestamp_before_max_ms: i64::MAX,
            timestamp_after_max_ms: i64::MAX,
            compression: None,
        }
    }

    #[test]
    fn a_topic_codec_recompresses_what_the_producer_sent() {
        let produced = batch(0, 50, 1_000, 200);
        let original = BatchView::new(&produced).unwrap();
        let records = original.bytes()[super::super::HEADER_LEN..].to_vec();
        for target in [
            Compression::Zstd,
            Compression::Gzip,
            Compression::Lz4,
            Compression::Snappy,
        ] {
            let topic = ValidationPolicy {
                compression: Some((target, 3)),
                ..policy()
            };
            let checked = ProducedBatch::new(produced.clone().freeze())
                .check(1 << 20, &topic, 2_000)
                .unwrap();
            let view = checked.view();
            view.validate().unwrap();
            assert_eq!(view.compression().unwrap(), target);
            assert!(checked.bytes().len() < produced.len(), "{target:?}");
            assert_eq!(view.records_count(), 50);
            assert_eq!(checked.max_timestamp(), 1_049);
            let body = &view.bytes()[super::super::HEADER_LEN..];
            assert_eq!(
                super::super::codec::decompress(target, body).unwrap(),
                records
            );
            // And back to uncompressed.
            let plain = ValidationPolicy {
                compression: Some((Compression::None, 0)),
                ..policy()
            };
            let back = ProducedBatch::new(bytes::Bytes::copy_from_slice(checked.bytes()))
                .check(1 << 20, &plain, 2_000)
                .unwrap();
            assert_eq!(back.bytes(), &produced[..]);
        }
        // Recompressed bigger than max.message.bytes: MESSAGE_TOO_LARGE, as Kafka re-checks.
        let small = ValidationPolicy {
            compression: Some((Compression::Gzip, 1)),
            ..policy()
        };
        let tiny = batch(0, 1, 0, 10);
        let limit = tiny.len();
        let incompressible = ProducedBatch::new(tiny.freeze());
        assert!(matches!(
            incompressible.check(limit, &small, 0),
            Err(RecordError::TooLarge { .. })
        ));
    }

    #[test]
    fn a_produced_batch_is_checked_once_and_keeps_its_max_timestamp() {
        let produced = ProducedBatch::new(batch(0, 3, 1_000, 10).freeze());
        assert!(!produced.is_transactional() && !produced.is_compressed());
        produced.check_request(9).unwrap();
        let checked = produced.check(1 << 20, &policy(), 2_000).unwrap();
        assert_eq!(checked.max_timestamp(), 1_002);
        assert_eq!(checked.view().records_count(), 3);
    }

    #[test]
    fn what_is_not_one_whole_batch_is_refused_with_the_full_checks_reason() {
        let one = batch(0, 2, 0, 10);
        let mut trailing = one.clone();
        trailing.extend_from_slice(&[0u8; 5]);
        let produced = ProducedBatch::new(trailing.freeze());
        assert!(produced.header().is_some(), "the first batch parses");
        produced.check_request(9).unwrap();
        assert_eq!(
            produced.check(1 << 20, &policy(), 0).err(),
            validate_produced(&[&one[..], &[0u8; 5]].concat(), 1 << 20).err()
        );
        let short = ProducedBatch::new(bytes::Bytes::copy_from_slice(&one[..40]));
        assert!(short.header().is_none());
        assert!(matches!(
            short.check(1 << 20, &policy(), 0),
            Err(RecordError::Corrupt(_))
        ));
    }

    #[test]
    fn a_built_batch_needs_a_valid_header() {
        let mut b = batch(0, 1, 5, 10);
        assert_eq!(CheckedBatch::built(b.clone()).unwrap().max_timestamp(), 5);
        let last = b.len() - 1;
        b[last] ^= 1;
        assert_eq!(
            CheckedBatch::built(b).err(),
            Some(RecordError::Corrupt("CRC32C mismatch"))
        );
    }
}
