//! Kafka record batches (magic v2) as zero-copy views over bytes.
//!
//! The produce path validates a batch and patches a handful of header fields in place; it never
//! decodes individual records. Byte layout of the batch header (all big-endian):
//!
//! ```text
//! offset  width  field
//!  0      8      baseOffset
//!  8      4      batchLength            (bytes after this field)
//! 12      4      partitionLeaderEpoch
//! 16      1      magic                  (2)
//! 17      4      crc                    (CRC32C of bytes 21..end)
//! 21      2      attributes             (bits 0-2 codec, 3 timestamp type, 4 transactional, 5 control)
//! 23      4      lastOffsetDelta
//! 27      8      baseTimestamp
//! 35      8      maxTimestamp
//! 43      8      producerId
//! 51      2      producerEpoch
//! 53      4      baseSequence
//! 57      4      recordsCount
//! 61      ...    records
//! ```
//!
//! Patching baseOffset and partitionLeaderEpoch leaves the CRC valid (they precede it);
//! patching maxTimestamp or attributes (LogAppendTime) requires recomputing it.
//!
//! | file | owns |
//! |---|---|
//! | `mod.rs` | `BatchView`, the header layout, header checks and stamping, batches the broker builds |
//! | `produced.rs` | a produced batch parsed once (`ProducedBatch`) and checked (`CheckedBatch`) |
//! | `validate.rs` | record-level validation (Kafka's `LogValidator`) |
//! | `walk.rs` | streaming walks over a batch's records |
//! | `codec.rs` | decompression, bounded |
//! | `records.rs` | individual records with keys and values |
//! | `control.rs` | transaction markers |
//! | `schema.rs` | field encodings of internal-topic record schemas |

pub mod codec;
pub mod control;
pub mod produced;
pub mod records;
pub mod schema;
pub mod validate;
pub mod walk;

use bytes::{Bytes, BytesMut};
use thiserror::Error;

/// Size of the fixed v2 batch header.
pub const HEADER_LEN: usize = 61;
/// Bytes before and including `batchLength`: the part of the header not counted by it.
pub const LOG_OVERHEAD: usize = 12;
/// The only record format this broker stores.
pub const MAGIC_V2: i8 = 2;

const BASE_OFFSET: usize = 0;
const BATCH_LENGTH: usize = 8;
const LEADER_EPOCH: usize = 12;
const MAGIC: usize = 16;
const CRC: usize = 17;
const ATTRIBUTES: usize = 21;
const LAST_OFFSET_DELTA: usize = 23;
const BASE_TIMESTAMP: usize = 27;
const MAX_TIMESTAMP: usize = 35;
const PRODUCER_ID: usize = 43;
const PRODUCER_EPOCH: usize = 51;
const BASE_SEQUENCE: usize = 53;
const RECORDS_COUNT: usize = 57;

const TIMESTAMP_TYPE_BIT: i16 = 1 << 3;
const TRANSACTIONAL_BIT: i16 = 1 << 4;
const CONTROL_BIT: i16 = 1 << 5;
const COMPRESSION_MASK: i16 = 0x07;

/// Why a batch was rejected. Each variant maps to the Kafka error code a client expects.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum RecordError {
    /// Truncated data, a length that disagrees with the bytes present, or a CRC mismatch.
    #[error("corrupt record batch: {0}")]
    Corrupt(&'static str),
    /// Structurally readable but semantically invalid (count/offset mismatch, control batch
    /// from a client, several batches where one is required).
    #[error("invalid record batch: {0}")]
    Invalid(String),
    /// A magic byte other than 2.
    #[error("unsupported record format magic {0}")]
    UnsupportedMagic(i8),
    /// The batch exceeds `max.message.bytes`.
    #[error("record batch of {size} bytes exceeds the limit of {limit}")]
    TooLarge { size: usize, limit: usize },
    /// A compression codec id outside 0..=4, or a payload the codec cannot decode.
    #[error("unsupported or undecodable compression: {0}")]
    Compression(String),
    /// A codec the produce request's version may not use (zstd before Produce v7).
    #[error("{0}")]
    CodecNotAllowed(String),
    /// Records that are not acceptable, named by index (`record_errors`); `total` counts all
    /// of them, `issues` holds the first few.
    #[error(
        "One or more records have been rejected due to {total} record errors in total, and only showing the first three errors at most: {}",
        first_three(issues)
    )]
    InvalidRecords {
        total: usize,
        issues: Vec<RecordIssue>,
    },
    /// As `InvalidRecords`, where at least one record's timestamp is out of range.
    #[error("One or more records have been rejected due to invalid timestamp")]
    InvalidTimestamps {
        total: usize,
        issues: Vec<RecordIssue>,
    },
}

/// One rejected record of a batch: its index in the batch and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordIssue {
    pub index: i32,
    pub message: String,
}

impl RecordError {
    /// The records named in a rejection (the produce response's `record_errors`).
    pub fn record_issues(&self) -> &[RecordIssue] {
        match self {
            RecordError::InvalidRecords { issues, .. }
            | RecordError::InvalidTimestamps { issues, .. } => issues,
            _ => &[],
        }
    }
}

fn first_three(issues: &[RecordIssue]) -> String {
    let shown: Vec<String> = issues
        .iter()
        .take(3)
        .map(|i| format!("record {}: {}", i.index, i.message))
        .collect();
    format!("[{}]", shown.join("; "))
}

/// Compression codecs as numbered in the batch attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Snappy,
    Lz4,
    Zstd,
}

impl Compression {
    /// The codec's id in a batch's attributes.
    pub fn id(self) -> i16 {
        match self {
            Self::None => 0,
            Self::Gzip => 1,
            Self::Snappy => 2,
            Self::Lz4 => 3,
            Self::Zstd => 4,
        }
    }

    /// A `compression.type` value's codec (`None`: `producer`, keep the producer's).
    pub fn of_topic_config(value: &str) -> Option<Self> {
        match value.trim() {
            "uncompressed" => Some(Self::None),
            "gzip" => Some(Self::Gzip),
            "snappy" => Some(Self::Snappy),
            "lz4" => Some(Self::Lz4),
            "zstd" => Some(Self::Zstd),
            _ => None,
        }
    }

    fn from_attributes(attributes: i16) -> Result<Self, RecordError> {
        match attributes & COMPRESSION_MASK {
            0 => Ok(Self::None),
            1 => Ok(Self::Gzip),
            2 => Ok(Self::Snappy),
            3 => Ok(Self::Lz4),
            4 => Ok(Self::Zstd),
            other => Err(RecordError::Compression(format!("codec id {other}"))),
        }
    }
}

/// Reads the fields needed to walk a log: base offset and total size of the batch starting at
/// `buf[0]`, from the first 12 bytes. Returns `None` when fewer than 12 bytes are present.
pub fn peek_offset_and_size(buf: &[u8]) -> Option<(i64, usize, i32)> {
    if buf.len() < LOG_OVERHEAD {
        return None;
    }
    let base_offset = read_i64(buf, BASE_OFFSET);
    let batch_length = read_i32(buf, BATCH_LENGTH);
    let size = (batch_length as i64 + LOG_OVERHEAD as i64).max(0) as usize;
    Some((base_offset, size, batch_length))
}

/// The first batch of a produced partition's records as Kafka frames it before anything else
/// is checked (`ByteBufferLogInputStream.nextBatch`): `Ok(None)` when no whole batch is there
/// (fewer bytes than a header up to the magic byte, or than the declared length), an error
/// when the declared length is below the smallest record of any format.
pub fn frame_first_batch(buf: &[u8]) -> Result<Option<FramedBatch>, RecordError> {
    /// Kafka's `HEADER_SIZE_UP_TO_MAGIC`.
    const UP_TO_MAGIC: usize = MAGIC + 1;
    /// Kafka's `LegacyRecord.RECORD_OVERHEAD_V0`.
    const SMALLEST_RECORD: i32 = 14;
    if buf.len() < UP_TO_MAGIC {
        return Ok(None);
    }
    let length = read_i32(buf, BATCH_LENGTH);
    if length < SMALLEST_RECORD {
        return Err(RecordError::Corrupt(
            "record size is less than the minimum record overhead (14)",
        ));
    }
    let size = length as usize + LOG_OVERHEAD;
    if buf.len() < size {
        return Ok(None);
    }
    let attributes = (size > ATTRIBUTES + 1).then(|| read_i16(buf, ATTRIBUTES));
    Ok(Some(FramedBatch {
        size,
        magic: buf[MAGIC] as i8,
        compression: attributes.and_then(|a| Compression::from_attributes(a).ok()),
    }))
}

/// What [`frame_first_batch`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramedBatch {
    pub size: usize,
    pub magic: i8,
    /// The codec in a v2 header's attributes, when the batch is long enough to have them.
    pub compression: Option<Compression>,
}

/// A borrowed view of one complete record batch (header + records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchView<'a> {
    bytes: &'a [u8],
}

impl<'a> BatchView<'a> {
    /// Wraps `bytes`, which must hold exactly one batch, checking only that the header fits
    /// and the declared length matches. Use [`BatchView::validate`] for the full check.
    pub fn new(bytes: &'a [u8]) -> Result<Self, RecordError> {
        if bytes.len() < HEADER_LEN {
            return Err(RecordError::Corrupt("batch shorter than its header"));
        }
        let batch_length = read_i32(bytes, BATCH_LENGTH);
        if batch_length < (HEADER_LEN - LOG_OVERHEAD) as i32 {
            return Err(RecordError::Corrupt("batch length smaller than the header"));
        }
        if batch_length as usize + LOG_OVERHEAD != bytes.len() {
            return Err(RecordError::Corrupt(
                "batch length disagrees with the bytes present",
            ));
        }
        Ok(Self { bytes })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    pub fn size(&self) -> usize {
        self.bytes.len()
    }
    pub fn base_offset(&self) -> i64 {
        read_i64(self.bytes, BASE_OFFSET)
    }
    pub fn last_offset_delta(&self) -> i32 {
        read_i32(self.bytes, LAST_OFFSET_DELTA)
    }
    pub fn last_offset(&self) -> i64 {
        self.base_offset() + self.last_offset_delta() as i64
    }
    pub fn partition_leader_epoch(&self) -> i32 {
        read_i32(self.bytes, LEADER_EPOCH)
    }
    pub fn magic(&self) -> i8 {
        self.bytes[MAGIC] as i8
    }
    pub fn crc(&self) -> u32 {
        read_i32(self.bytes, CRC) as u32
    }
    pub fn attributes(&self) -> i16 {
        read_i16(self.bytes, ATTRIBUTES)
    }
    pub fn compression(&self) -> Result<Compression, RecordError> {
        Compression::from_attributes(self.attributes())
    }
    pub fn is_log_append_time(&self) -> bool {
        self.attributes() & TIMESTAMP_TYPE_BIT != 0
    }
    pub fn is_transactional(&self) -> bool {
        self.attributes() & TRANSACTIONAL_BIT != 0
    }
    pub fn is_control(&self) -> bool {
        self.attributes() & CONTROL_BIT != 0
    }
    pub fn base_timestamp(&self) -> i64 {
        read_i64(self.bytes, BASE_TIMESTAMP)
    }
    pub fn max_timestamp(&self) -> i64 {
        read_i64(self.bytes, MAX_TIMESTAMP)
    }
    pub fn producer_id(&self) -> i64 {
        read_i64(self.bytes, PRODUCER_ID)
    }
    pub fn producer_epoch(&self) -> i16 {
        read_i16(self.bytes, PRODUCER_EPOCH)
    }
    pub fn base_sequence(&self) -> i32 {
        read_i32(self.bytes, BASE_SEQUENCE)
    }
    pub fn records_count(&self) -> i32 {
        read_i32(self.bytes, RECORDS_COUNT)
    }
    /// The records section (compressed as a whole when a codec is set).
    pub fn records_payload(&self) -> &'a [u8] {
        &self.bytes[HEADER_LEN..]
    }

    pub fn crc_matches(&self) -> bool {
        crc32c::crc32c(&self.bytes[ATTRIBUTES..]) == self.crc()
    }

    /// Everything that can be checked without decoding records: magic, CRC32C, a known codec,
    /// and a record count consistent with the offset range.
    pub fn validate(&self) -> Result<(), RecordError> {
        if self.magic() != MAGIC_V2 {
            return Err(RecordError::UnsupportedMagic(self.magic()));
        }
        if !self.crc_matches() {
            return Err(RecordError::Corrupt("CRC32C mismatch"));
        }
        self.compression()?;
        let count = self.records_count();
        if count <= 0 {
            return Err(RecordError::Invalid(format!(
                "invalid reported record count {count}"
            )));
        }
        let delta = self.last_offset_delta();
        if delta < 0 || delta as i64 + 1 != count as i64 {
            return Err(RecordError::Invalid(format!(
                "inconsistent batch offset range (last offset delta {delta}) and record count {count}"
            )));
        }
        Ok(())
    }
}

/// Validates the records of one partition in a produce request: exactly one v2 batch, not a
/// control batch, within `max_message_bytes`. Nothing is modified; the batch's view is returned.
pub fn validate_produced(
    bytes: &[u8],
    max_message_bytes: usize,
) -> Result<BatchView<'_>, RecordError> {
    let Some((_, size, batch_length)) = peek_offset_and_size(bytes) else {
        return Err(RecordError::Corrupt("batch shorter than its header"));
    };
    if batch_length < 0 {
        return Err(RecordError::Corrupt("negative batch length"));
    }
    if size > bytes.len() {
        return Err(RecordError::Corrupt(
            "batch length exceeds the bytes present",
        ));
    }
    if size < bytes.len() {
        return Err(RecordError::Invalid(
            "produce requests must contain exactly one record batch per partition".into(),
        ));
    }
    let batch = BatchView::new(bytes)?;
    check_produced_header(&batch, max_message_bytes)?;
    Ok(batch)
}

/// The checks of [`validate_produced`] that need the parsed header: magic, CRC32C, codec and
/// counts ([`BatchView::validate`]), base offset 0, not a control batch, within
/// `max_message_bytes`.
pub(crate) fn check_produced_header(
    batch: &BatchView<'_>,
    max_message_bytes: usize,
) -> Result<(), RecordError> {
    batch.validate()?;
    if batch.base_offset() != 0 {
        return Err(RecordError::Invalid(format!(
            "the base offset of a produced batch must be 0, not {}",
            batch.base_offset()
        )));
    }
    if batch.is_control() {
        return Err(RecordError::Invalid(
            "clients may not produce control batches".into(),
        ));
    }
    if batch.size() > max_message_bytes {
        return Err(RecordError::TooLarge {
            size: batch.size(),
            limit: max_message_bytes,
        });
    }
    Ok(())
}

/// Assigns log-side header fields to a validated batch, in place: the base offset, the
/// partition leader epoch and, for LogAppendTime topics, the timestamp type and max timestamp
/// (followed by a CRC recomputation, since those fields are covered by it).
pub fn assign_offsets(
    batch: &mut BytesMut,
    base_offset: i64,
    leader_epoch: i32,
    log_append_time: Option<i64>,
) {
    batch[BASE_OFFSET..BASE_OFFSET + 8].copy_from_slice(&base_offset.to_be_bytes());
    batch[LEADER_EPOCH..LEADER_EPOCH + 4].copy_from_slice(&leader_epoch.to_be_bytes());
    if let Some(now) = log_append_time {
        let attributes = read_i16(batch, ATTRIBUTES) | TIMESTAMP_TYPE_BIT;
        batch[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attributes.to_be_bytes());
        batch[MAX_TIMESTAMP..MAX_TIMESTAMP + 8].copy_from_slice(&now.to_be_bytes());
        let crc = crc32c::crc32c(&batch[ATTRIBUTES..]);
        batch[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    }
}

/// The maximum timestamp a leader writes into a produced batch's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTimestamp {
    /// Keep the producer's.
    AsProduced,
    /// LogAppendTime: the broker's clock, and the timestamp type bit set.
    LogAppendTime(i64),
    /// CreateTime, corrected to the largest record timestamp the validator found.
    Create(i64),
}

impl MaxTimestamp {
    /// The timestamp written, unless the producer's is kept.
    pub fn value(self) -> Option<i64> {
        match self {
            MaxTimestamp::AsProduced => None,
            MaxTimestamp::LogAppendTime(t) | MaxTimestamp::Create(t) => Some(t),
        }
    }
}

/// The header of a produced batch as the log stores it: [`assign_offsets`]' changes applied to
/// a copy of the first [`HEADER_LEN`] bytes, so the records after it are written exactly as
/// they arrived, without copying the batch. When the max timestamp (or the timestamp type) is
/// rewritten the CRC is recomputed over the new header fields and the untouched records.
pub fn stamped_header(
    batch: &[u8],
    base_offset: i64,
    leader_epoch: i32,
    max_timestamp: MaxTimestamp,
) -> Result<[u8; HEADER_LEN], RecordError> {
    let mut header: [u8; HEADER_LEN] = batch
        .get(..HEADER_LEN)
        .and_then(|h| h.try_into().ok())
        .ok_or(RecordError::Corrupt("batch shorter than its header"))?;
    header[BASE_OFFSET..BASE_OFFSET + 8].copy_from_slice(&base_offset.to_be_bytes());
    header[LEADER_EPOCH..LEADER_EPOCH + 4].copy_from_slice(&leader_epoch.to_be_bytes());
    if let MaxTimestamp::LogAppendTime(_) = max_timestamp {
        let attributes = read_i16(&header, ATTRIBUTES) | TIMESTAMP_TYPE_BIT;
        header[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attributes.to_be_bytes());
    }
    if let Some(timestamp) = max_timestamp.value() {
        header[MAX_TIMESTAMP..MAX_TIMESTAMP + 8].copy_from_slice(&timestamp.to_be_bytes());
        let crc =
            crc32c::crc32c_append(crc32c::crc32c(&header[ATTRIBUTES..]), &batch[HEADER_LEN..]);
        header[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    }
    Ok(header)
}

/// Base offset, last offset and max timestamp from a batch header.
pub fn header_offsets_and_max_timestamp(header: &[u8; HEADER_LEN]) -> (i64, i64, i64) {
    let base_offset = read_i64(header, BASE_OFFSET);
    let last_offset = base_offset + read_i32(header, LAST_OFFSET_DELTA) as i64;
    (base_offset, last_offset, read_i64(header, MAX_TIMESTAMP))
}

/// Iterates the complete batches at the front of `buf`, stopping at the first incomplete one.
pub struct BatchIter<'a> {
    buf: &'a [u8],
    position: usize,
}

impl<'a> BatchIter<'a> {
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, position: 0 }
    }
    /// Bytes consumed by the batches returned so far.
    pub fn position(&self) -> usize {
        self.position
    }
}

impl<'a> Iterator for BatchIter<'a> {
    type Item = Result<BatchView<'a>, RecordError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = &self.buf[self.position..];
        let (_, size, batch_length) = peek_offset_and_size(rest)?;
        if batch_length < (HEADER_LEN - LOG_OVERHEAD) as i32 {
            // Nothing after it can be framed: the iteration ends with this error (a caller
            // that skips errors must not get the same one for ever).
            self.position = self.buf.len();
            return Some(Err(RecordError::Corrupt(
                "batch length smaller than header",
            )));
        }
        if size > rest.len() {
            return None;
        }
        let view = BatchView::new(&rest[..size]);
        self.position += size;
        Some(view)
    }
}

/// Splits `bytes` into the owned `Bytes` of each batch (shares the buffer, no copy).
pub fn split_batches(bytes: &Bytes) -> Vec<Bytes> {
    let mut out = Vec::new();
    let mut position = 0;
    while let Some((_, size, _)) = peek_offset_and_size(&bytes[position..]) {
        if size < HEADER_LEN || position + size > bytes.len() {
            break;
        }
        out.push(bytes.slice(position..position + size));
        position += size;
    }
    out
}

pub(crate) fn read_i64(buf: &[u8], at: usize) -> i64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&buf[at..at + 8]);
    i64::from_be_bytes(raw)
}

pub(crate) fn read_i32(buf: &[u8], at: usize) -> i32 {
    let mut raw = [0u8; 4];
    raw.copy_from_slice(&buf[at..at + 4]);
    i32::from_be_bytes(raw)
}

pub(crate) fn read_i16(buf: &[u8], at: usize) -> i16 {
    i16::from_be_bytes([buf[at], buf[at + 1]])
}

/// One record to put in a batch built by the broker itself.
#[derive(Debug, Clone, Copy)]
pub struct NewRecord<'a> {
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub timestamp: i64,
}

/// One header of a record to put in a batch.
#[derive(Debug, Clone, Copy)]
pub struct RecordHeader<'a> {
    pub key: &'a str,
    pub value: Option<&'a [u8]>,
}

/// Builds an uncompressed, non-transactional v2 batch (base offset 0, producer id -1) for
/// records the broker writes itself, such as coordinator state. Record timestamps are
/// relative to the first record's.
pub fn build_batch(records: &[NewRecord<'_>]) -> BytesMut {
    build_batch_with_headers(records, &[])
}

/// [`build_batch`], record `i` carrying `headers[i]` (records past the end of `headers` carry
/// none).
pub fn build_batch_with_headers(
    records: &[NewRecord<'_>],
    headers: &[Vec<RecordHeader<'_>>],
) -> BytesMut {
    use bytes::BufMut;
    let base_timestamp = records.first().map(|r| r.timestamp).unwrap_or(-1);
    let max_timestamp = records.iter().map(|r| r.timestamp).max().unwrap_or(-1);
    let mut body = BytesMut::new();
    for (i, record) in records.iter().enumerate() {
        let mut one = BytesMut::new();
        one.put_i8(0); // attributes
        records::put_varlong(&mut one, record.timestamp - base_timestamp);
        records::put_varint(&mut one, i as i32);
        for field in [record.key, record.value] {
            match field {
                Some(bytes) => {
                    records::put_varint(&mut one, bytes.len() as i32);
                    one.put_slice(bytes);
                }
                None => records::put_varint(&mut one, -1),
            }
        }
        let record_headers = headers.get(i).map(Vec::as_slice).unwrap_or_default();
        records::put_varint(&mut one, record_headers.len() as i32);
        for header in record_headers {
            records::put_varint(&mut one, header.key.len() as i32);
            one.put_slice(header.key.as_bytes());
            match header.value {
                Some(value) => {
                    records::put_varint(&mut one, value.len() as i32);
                    one.put_slice(value);
                }
                None => records::put_varint(&mut one, -1),
            }
        }
        records::put_varint(&mut body, one.len() as i32);
        body.put_slice(&one);
    }
    let count = records.len() as i32;
    let mut buf = BytesMut::with_capacity(HEADER_LEN + body.len());
    buf.put_i64(0);
    buf.put_i32((HEADER_LEN - LOG_OVERHEAD + body.len()) as i32);
    buf.put_i32(-1);
    buf.put_i8(MAGIC_V2);
    buf.put_u32(0);
    buf.put_i16(0);
    buf.put_i32(count - 1);
    buf.put_i64(base_timestamp);
    buf.put_i64(max_timestamp);
    buf.put_i64(-1);
    buf.put_i16(-1);
    buf.put_i32(-1);
    buf.put_i32(count);
    buf.put_slice(&body);
    let crc = crc32c::crc32c(&buf[ATTRIBUTES..]);
    buf[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    buf
}

/// Puts a batch the broker builds ([`build_batch`]) in `producer_id`'s transaction, as the
/// group coordinator writes TxnOffsetCommit records: transactional, the producer's id and
/// epoch, no sequence (the coordinator's writes are not deduplicated by sequence).
pub fn make_transactional(batch: &mut BytesMut, producer_id: i64, producer_epoch: i16) {
    let attributes = read_i16(batch, ATTRIBUTES) | TRANSACTIONAL_BIT;
    batch[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attributes.to_be_bytes());
    batch[PRODUCER_ID..PRODUCER_ID + 8].copy_from_slice(&producer_id.to_be_bytes());
    batch[PRODUCER_EPOCH..PRODUCER_EPOCH + 2].copy_from_slice(&producer_epoch.to_be_bytes());
    batch[BASE_SEQUENCE..BASE_SEQUENCE + 4].copy_from_slice(&(-1i32).to_be_bytes());
    let crc = crc32c::crc32c(&batch[ATTRIBUTES..]);
    batch[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
}

/// `batch` with its records section in `target`'s codec (Kafka's recompression for a topic
/// whose `compression.type` names one): decompressed within the usual bound, compressed at
/// `level`; every header field but the length, the codec bits and the CRC stays.
pub fn recompress(
    batch: &BatchView<'_>,
    target: Compression,
    level: i32,
) -> Result<BytesMut, RecordError> {
    use bytes::BufMut;
    let records = codec::decompress(batch.compression()?, &batch.bytes()[HEADER_LEN..])?;
    let body = codec::compress(target, level, &records)?;
    let mut out = BytesMut::with_capacity(HEADER_LEN + body.len());
    out.put_slice(&batch.bytes()[..HEADER_LEN]);
    out.put_slice(&body);
    out[BATCH_LENGTH..BATCH_LENGTH + 4]
        .copy_from_slice(&((HEADER_LEN - LOG_OVERHEAD + body.len()) as i32).to_be_bytes());
    let attributes = (batch.attributes() & !COMPRESSION_MASK) | target.id();
    out[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attributes.to_be_bytes());
    let crc = crc32c::crc32c(&out[ATTRIBUTES..]);
    out[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    Ok(out)
}

/// Rewrites `batch` keeping only `records` (raw records of that batch, in order), as the log
/// cleaner does: base offset, last offset delta, timestamps and producer fields stay, so offsets
/// and producer state are unchanged; the records are stored uncompressed.
pub fn rewrite_batch(batch: &BatchView<'_>, records: &[&[u8]]) -> BytesMut {
    use bytes::BufMut;
    let body_len: usize = records.iter().map(|r| r.len()).sum();
    let mut out = BytesMut::with_capacity(HEADER_LEN + body_len);
    out.put_slice(&batch.bytes()[..HEADER_LEN]);
    for record in records {
        out.put_slice(record);
    }
    out[BATCH_LENGTH..BATCH_LENGTH + 4]
        .copy_from_slice(&((HEADER_LEN - LOG_OVERHEAD + body_len) as i32).to_be_bytes());
    let attributes = batch.attributes() & !COMPRESSION_MASK;
    out[ATTRIBUTES..ATTRIBUTES + 2].copy_from_slice(&attributes.to_be_bytes());
    out[RECORDS_COUNT..RECORDS_COUNT + 4].copy_from_slice(&(records.len() as i32).to_be_bytes());
    let crc = crc32c::crc32c(&out[ATTRIBUTES..]);
    out[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    out
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// `batch` as the log takes it ([`produced::CheckedBatch::built`]).
    pub fn checked(batch: BytesMut) -> produced::CheckedBatch {
        produced::CheckedBatch::built(batch).expect("a valid test batch")
    }

    /// Makes `batch` idempotent (producer id, epoch, base sequence) and fixes its CRC.
    pub fn set_producer_fields(
        batch: &mut BytesMut,
        producer_id: i64,
        epoch: i16,
        base_sequence: i32,
    ) {
        batch[PRODUCER_ID..PRODUCER_ID + 8].copy_from_slice(&producer_id.to_be_bytes());
        batch[PRODUCER_EPOCH..PRODUCER_EPOCH + 2].copy_from_slice(&epoch.to_be_bytes());
        batch[BASE_SEQUENCE..BASE_SEQUENCE + 4].copy_from_slice(&base_sequence.to_be_bytes());
        let crc = crc32c::crc32c(&batch[ATTRIBUTES..]);
        batch[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
    }

    /// A batch of `count` records in `producer_id`'s transaction (epoch 0, sequence `seq`).
    pub fn transactional(count: i32, producer_id: i64, seq: i32) -> BytesMut {
        let mut b = batch(0, count, 1_000, 8);
        make_transactional(&mut b, producer_id, seq);
        b
    }

    /// Puts `batch` in `producer_id`'s transaction as a producer writes it (epoch 0,
    /// sequence `seq`).
    pub fn make_transactional(batch: &mut BytesMut, producer_id: i64, seq: i32) {
        super::make_transactional(batch, producer_id, 0);
        set_producer_fields(batch, producer_id, 0, seq);
    }

    /// An uncompressed v2 batch of `count` records with `value_len`-byte values, null keys and
    /// timestamps `base_timestamp + i`, at `base_offset`. Used by unit tests throughout.
    pub fn batch(base_offset: i64, count: i32, base_timestamp: i64, value_len: usize) -> BytesMut {
        let value = vec![b'v'; value_len];
        let records: Vec<NewRecord<'_>> = (0..count as i64)
            .map(|i| NewRecord {
                key: None,
                value: Some(&value),
                timestamp: base_timestamp + i,
            })
            .collect();
        let mut batch = build_batch(&records);
        batch[BASE_OFFSET..BASE_OFFSET + 8].copy_from_slice(&base_offset.to_be_bytes());
        batch
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::batch;
    use super::*;

    #[test]
    fn valid_batch_passes_and_reports_fields() {
        let b = batch(0, 3, 1000, 10);
        validate_produced(&b, 1 << 20).unwrap();
        let view = BatchView::new(&b).unwrap();
        assert_eq!(view.records_count(), 3);
        assert_eq!(view.last_offset(), 2);
        assert_eq!(view.max_timestamp(), 1002);
    }

    #[test]
    fn crc_mismatch_is_corrupt() {
        let mut b = batch(0, 1, 0, 10);
        let last = b.len() - 1;
        b[last] ^= 0xff;
        assert_eq!(
            validate_produced(&b, 1 << 20),
            Err(RecordError::Corrupt("CRC32C mismatch"))
        );
    }

    #[test]
    fn truncated_and_overlong_batches_are_rejected() {
        let b = batch(0, 2, 0, 10);
        assert!(matches!(
            validate_produced(&b[..b.len() - 1], 1 << 20),
            Err(RecordError::Corrupt(_))
        ));
        assert!(matches!(
            validate_produced(&b[..20], 1 << 20),
            Err(RecordError::Corrupt(_))
        ));
        let mut two = b.clone();
        two.extend_from_slice(&b);
        assert!(matches!(
            validate_produced(&two, 1 << 20),
            Err(RecordError::Invalid(_))
        ));
    }

    #[test]
    fn count_and_offset_delta_must_agree() {
        let mut b = batch(0, 2, 0, 10);
        b[LAST_OFFSET_DELTA..LAST_OFFSET_DELTA + 4].copy_from_slice(&5i32.to_be_bytes());
        let crc = crc32c::crc32c(&b[ATTRIBUTES..]);
        b[CRC..CRC + 4].copy_from_slice(&crc.to_be_bytes());
        assert!(matches!(
            validate_produced(&b, 1 << 20),
            Err(RecordError::Invalid(_))
        ));
    }

    #[test]
    fn wrong_magic_and_oversize() {
        let mut b = batch(0, 1, 0, 10);
        b[MAGIC] = 1;
        assert_eq!(
            validate_produced(&b, 1 << 20),
            Err(RecordError::UnsupportedMagic(1))
        );
        let b = batch(0, 1, 0, 100);
        assert!(matches!(
            validate_produced(&b, 50),
            Err(RecordError::TooLarge { .. })
        ));
    }

    #[test]
    fn stamped_header_matches_assign_offsets() {
        for append_time in [None, Some(999_999)] {
            let original = test_support::batch(0, 3, 1_000, 10);
            let mut whole = original.clone();
            assign_offsets(&mut whole, 42, 7, append_time);
            let stamp = append_time.map_or(MaxTimestamp::AsProduced, MaxTimestamp::LogAppendTime);
            let header = stamped_header(&original, 42, 7, stamp).unwrap();
            assert_eq!(&whole[..HEADER_LEN], &header[..], "{append_time:?}");
            assert_eq!(&whole[HEADER_LEN..], &original[HEADER_LEN..]);
            assert_eq!(header_offsets_and_max_timestamp(&header).0, 42);
        }
        assert!(stamped_header(&[0u8; 10], 0, 0, MaxTimestamp::AsProduced).is_err());
    }

    #[test]
    fn assign_offsets_keeps_crc_valid() {
        let mut b = batch(0, 4, 100, 10);
        assign_offsets(&mut b, 42, 7, None);
        let view = BatchView::new(&b).unwrap();
        assert_eq!((view.base_offset(), view.partition_leader_epoch()), (42, 7));
        assert!(view.crc_matches());
        assign_offsets(&mut b, 42, 7, Some(999_999));
        let view = BatchView::new(&b).unwrap();
        assert!(view.is_log_append_time());
        assert_eq!(view.max_timestamp(), 999_999);
        assert!(view.crc_matches());
    }

    #[test]
    fn iterator_stops_at_incomplete_batch() {
        let mut buf = batch(0, 1, 0, 10);
        buf.extend_from_slice(&batch(1, 1, 0, 10));
        let full = buf.len();
        buf.extend_from_slice(&batch(2, 1, 0, 10)[..30]);
        let mut it = BatchIter::new(&buf);
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().unwrap().is_ok());
        assert!(it.next().is_none());
        assert_eq!(it.position(), full);
    }

    /// Found by the `record_batch` fuzz target: a length smaller than a header was returned
    /// as an error again and again, so a caller skipping errors never finished.
    #[test]
    fn iterator_ends_after_an_unframeable_batch() {
        let mut buf = batch(0, 1, 0, 10);
        buf.extend_from_slice(&[0u8; 8]);
        buf.extend_from_slice(&5i32.to_be_bytes());
        buf.extend_from_slice(&[0u8; 60]);
        let results: Vec<_> = BatchIter::new(&buf).take(10).collect();
        assert_eq!(results.len(), 2);
        assert!(results[0].is_ok() && results[1].is_err());
    }
}
