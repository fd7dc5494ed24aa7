//! A streaming walk over the records of one v2 batch, compressed or not, that reads each
//! record's framing and skips its key, value and headers without copying them (Kafka's
//! `skipKeyValueIterator`). Memory stays bounded whatever the batch claims: a compressed
//! records section is decompressed as it is read, never held whole, and the walk stops with an
//! error once more than the caller's budget of decompressed bytes went by (a compression bomb).
//!
//! Layout of one record (varints are zig-zag encoded; lengths of -1 mean null):
//!
//! ```text
//! length: varint | attributes: i8 | timestampDelta: varlong | offsetDelta: varint
//! keyLength: varint | key | valueLength: varint | value
//! headerCount: varint | [headerKeyLength: varint | headerKey | headerValueLength: varint | headerValue]
//! ```
//!
//! After the declared number of records the section must end: bytes left over (or records
//! missing) are Kafka's "Incorrect declared batch size".

use super::codec::{CodecError, MAX_DECOMPRESSED_BYTES};
use super::{BatchView, Compression};
use std::io::{BufRead, BufReader, Read};
use std::ops::ControlFlow;

/// What the walk learns of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordInfo {
    /// The record's position in its batch (0-based), as `record_errors` name it.
    pub index: i32,
    pub offset_delta: i32,
    pub timestamp_delta: i64,
    pub has_key: bool,
}

/// Why a walk stopped short.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WalkError {
    /// The records' framing is broken at record `index` (Kafka's InvalidRecordException).
    #[error("record {index}: {reason}")]
    Structure { index: i32, reason: &'static str },
    /// The compressed payload does not decode.
    #[error("{0}")]
    Compression(String),
    /// Decompressing produced more than the budget allows.
    #[error("the decompressed records exceed {limit} bytes")]
    TooLarge { limit: u64 },
}

impl From<CodecError> for WalkError {
    fn from(e: CodecError) -> Self {
        match e {
            CodecError::Undecodable(reason) => WalkError::Compression(reason),
            CodecError::TooLarge { limit } => WalkError::TooLarge { limit },
        }
    }
}

impl From<WalkError> for super::RecordError {
    fn from(e: WalkError) -> Self {
        match e {
            WalkError::Structure { reason, .. } => super::RecordError::Corrupt(reason),
            WalkError::Compression(e) => super::RecordError::Compression(e),
            e @ WalkError::TooLarge { .. } => super::RecordError::Invalid(e.to_string()),
        }
    }
}

/// Walks every record of `batch`, calling `visit` for each until it breaks. `budget` caps the
/// decompressed bytes read (uncompressed batches are bounded by their own size).
pub fn walk_records(
    batch: &BatchView<'_>,
    budget: u64,
    visit: impl FnMut(RecordInfo) -> ControlFlow<()>,
) -> Result<(), WalkError> {
    let payload = batch.records_payload();
    let count = batch.records_count();
    let codec = batch
        .compression()
        .map_err(|e| WalkError::Compression(e.to_string()))?;
    let failed = |e: std::io::Error| WalkError::Compression(format!("{codec:?}: {e}"));
    match codec {
        Compression::None => walk(
            &mut SliceSource {
                rest: payload,
                total: payload.len(),
            },
            count,
            visit,
        ),
        Compression::Gzip => walk(
            &mut stream(flate2::read::GzDecoder::new(payload), budget),
            count,
            visit,
        ),
        Compression::Lz4 => walk(
            &mut stream(lz4_flex::frame::FrameDecoder::new(payload), budget),
            count,
            visit,
        ),
        Compression::Zstd => walk(
            &mut stream(
                zstd::stream::read::Decoder::with_buffer(payload).map_err(failed)?,
                budget,
            ),
            count,
            visit,
        ),
        Compression::Snappy => walk(
            &mut stream(super::codec::SnappyReader::new(payload, budget)?, budget),
            count,
            visit,
        ),
    }
}

fn stream<R: Read>(reader: R, budget: u64) -> StreamSource<BufReader<R>> {
    StreamSource {
        reader: BufReader::with_capacity(64 * 1024, reader),
        consumed: 0,
        budget,
    }
}

/// A faulty read: the records end early, or the stream failed.
enum Fault {
    End,
    Walk(WalkError),
}

/// Where record bytes come from: a slice (uncompressed) or a decompressing stream.
trait Source {
    /// The next byte; `Fault::End` at the end of the records section.
    fn byte(&mut self) -> Result<u8, Fault>;
    /// Skips `n` bytes; `Fault::End` if fewer are left.
    fn skip(&mut self, n: usize) -> Result<(), Fault>;
    /// Bytes read so far.
    fn position(&self) -> u64;
    /// True when nothing is left.
    fn at_end(&mut self) -> Result<bool, Fault>;
    /// Refuses at once a record that would end past what this source can give.
    fn check_reach(&self, end: u64) -> Result<(), Fault>;
}

struct SliceSource<'a> {
    rest: &'a [u8],
    total: usize,
}

impl Source for SliceSource<'_> {
    #[inline]
    fn byte(&mut self) -> Result<u8, Fault> {
        let (&b, rest) = self.rest.split_first().ok_or(Fault::End)?;
        self.rest = rest;
        Ok(b)
    }
    #[inline]
    fn skip(&mut self, n: usize) -> Result<(), Fault> {
        self.rest = self.rest.get(n..).ok_or(Fault::End)?;
        Ok(())
    }
    #[inline]
    fn position(&self) -> u64 {
        (self.total - self.rest.len()) as u64
    }
    fn at_end(&mut self) -> Result<bool, Fault> {
        Ok(self.rest.is_empty())
    }
    fn check_reach(&self, end: u64) -> Result<(), Fault> {
        if end > self.total as u64 {
            return Err(Fault::End);
        }
        Ok(())
    }
}

struct StreamSource<R> {
    reader: R,
    consumed: u64,
    budget: u64,
}

impl<R: BufRead> StreamSource<R> {
    fn fill(&mut self) -> Result<&[u8], Fault> {
        if self.consumed > self.budget {
            return Err(Fault::Walk(WalkError::TooLarge { limit: self.budget }));
        }
        let buf = self.reader.fill_buf().map_err(|e| {
            // A reader of ours may say why in a CodecError (the snappy block budget).
            let codec = e
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<CodecError>());
            Fault::Walk(
                codec
                    .cloned()
                    .map_or(WalkError::Compression(e.to_string()), WalkError::from),
            )
        })?;
        if buf.is_empty() {
            return Err(Fault::End);
        }
        Ok(buf)
    }
}

impl<R: BufRead> Source for StreamSource<R> {
    fn byte(&mut self) -> Result<u8, Fault> {
        let b = self.fill()?[0];
        self.reader.consume(1);
        self.consumed += 1;
        Ok(b)
    }
    fn skip(&mut self, mut n: usize) -> Result<(), Fault> {
        while n > 0 {
            let step = self.fill()?.len().min(n);
            self.reader.consume(step);
            self.consumed += step as u64;
            n -= step;
        }
        Ok(())
    }
    fn position(&self) -> u64 {
        self.consumed
    }
    fn at_end(&mut self) -> Result<bool, Fault> {
        match self.fill() {
            Ok(_) => Ok(false),
            Err(Fault::End) => Ok(true),
            Err(e) => Err(e),
        }
    }
    fn check_reach(&self, end: u64) -> Result<(), Fault> {
        if end > self.budget {
            return Err(Fault::Walk(WalkError::TooLarge { limit: self.budget }));
        }
        Ok(())
    }
}

fn walk(
    source: &mut impl Source,
    count: i32,
    mut visit: impl FnMut(RecordInfo) -> ControlFlow<()>,
) -> Result<(), WalkError> {
    for index in 0..count.max(0) {
        let structure = |reason| WalkError::Structure { index, reason };
        // Faults found inside a record are named by the record's index.
        let fault = |f: Fault, end_reason| match f {
            Fault::End => structure(end_reason),
            Fault::Walk(WalkError::Structure { reason, .. }) => structure(reason),
            Fault::Walk(e) => e,
        };
        let length = read_varint(source)
            .map_err(|f| fault(f, "the batch ends before its declared record count"))?;
        if length < 1 {
            return Err(structure("record length is not positive"));
        }
        let start = source.position();
        let end = start + length as u64;
        source
            .check_reach(end)
            .map_err(|f| fault(f, "record extends past the end of the batch"))?;
        let mut record = Record {
            source: &mut *source,
            end,
        };
        let info = record
            .read(index)
            .map_err(|f| fault(f, "record extends past the end of the batch"))?;
        if source.position() != end {
            return Err(structure(
                "record length disagrees with the fields it contains",
            ));
        }
        if visit(info).is_break() {
            return Ok(());
        }
    }
    match source.at_end() {
        Ok(true) => Ok(()),
        Ok(false) => Err(WalkError::Structure {
            index: count,
            reason: "bytes remain after the declared record count",
        }),
        Err(Fault::Walk(e)) => Err(e),
        Err(Fault::End) => Ok(()),
    }
}

/// One record being read: no field may reach past `end`, its declared length.
struct Record<'s, S> {
    source: &'s mut S,
    end: u64,
}

impl<S: Source> Record<'_, S> {
    fn read(&mut self, index: i32) -> Result<RecordInfo, Fault> {
        self.source.byte()?; // attributes: none are defined for v2 records
        let timestamp_delta = read_varlong(self.source)?;
        let offset_delta = read_varint(self.source)?;
        let has_key = self.nullable_field()?;
        self.nullable_field()?;
        let headers = read_varint(self.source)?;
        if headers < 0 {
            return Err(invalid("negative header count"));
        }
        for _ in 0..headers {
            let key_length = read_varint(self.source)?;
            if key_length < 0 {
                return Err(invalid("negative header key length"));
            }
            self.skip_within(key_length as usize)?;
            self.nullable_field()?;
        }
        Ok(RecordInfo {
            index,
            offset_delta,
            timestamp_delta,
            has_key,
        })
    }

    /// A length-prefixed field that may be null (-1); true when present.
    fn nullable_field(&mut self) -> Result<bool, Fault> {
        match read_varint(self.source)? {
            -1 => Ok(false),
            length if length < -1 => Err(invalid("negative field length")),
            length => {
                self.skip_within(length as usize)?;
                Ok(true)
            }
        }
    }

    fn skip_within(&mut self, n: usize) -> Result<(), Fault> {
        if self.source.position() + n as u64 > self.end {
            return Err(invalid("field longer than its record"));
        }
        self.source.skip(n)
    }
}

fn invalid(reason: &'static str) -> Fault {
    Fault::Walk(WalkError::Structure { index: -1, reason })
}

/// A zig-zag varint of at most 5 bytes that fits 32 bits (Kafka's `readVarint`).
fn read_varint(source: &mut impl Source) -> Result<i32, Fault> {
    let mut value: u32 = 0;
    for shift in (0..35).step_by(7) {
        let byte = source.byte()?;
        if shift == 28 && byte > 0x0f {
            return Err(invalid("varint overflows 32 bits"));
        }
        value |= u32::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(((value >> 1) as i32) ^ -((value & 1) as i32));
        }
    }
    Err(invalid("varint overflows 32 bits"))
}

/// A zig-zag varint of at most 10 bytes that fits 64 bits.
fn read_varlong(source: &mut impl Source) -> Result<i64, Fault> {
    let mut value: u64 = 0;
    for shift in (0..70).step_by(7) {
        let byte = source.byte()?;
        if shift == 63 && byte > 1 {
            return Err(invalid("varlong overflows 64 bits"));
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
        }
    }
    Err(invalid("varlong overflows 64 bits"))
}

/// ListOffsets by timestamp in one batch: the first record at or after `timestamp` and at or
/// after `min_offset` (the log start), as (offset, timestamp). A LogAppendTime batch has one
/// timestamp for all its records.
pub fn first_at_or_after(
    batch: &BatchView<'_>,
    timestamp: i64,
    min_offset: i64,
) -> Result<Option<(i64, i64)>, WalkError> {
    if batch.is_log_append_time() {
        return Ok(Some((
            batch.base_offset().max(min_offset),
            batch.max_timestamp(),
        )));
    }
    let mut found = None;
    walk_records(batch, MAX_DECOMPRESSED_BYTES, |record| {
        let offset = batch.base_offset() + i64::from(record.offset_delta);
        let record_ts = batch
            .base_timestamp()
            .saturating_add(record.timestamp_delta);
        if record_ts >= timestamp && offset >= min_offset {
            found = Some((offset, record_ts));
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })?;
    Ok(found)
}

/// ListOffsets -3 in one batch: the record with the largest timestamp (the first of equals).
pub fn max_timestamp_record(batch: &BatchView<'_>) -> Result<Option<(i64, i64)>, WalkError> {
    if batch.is_log_append_time() {
        return Ok(Some((batch.last_offset(), batch.max_timestamp())));
    }
    let mut best: Option<(i64, i64)> = None;
    walk_records(batch, MAX_DECOMPRESSED_BYTES, |record| {
        let offset = batch.base_offset() + i64::from(record.offset_delta);
        let record_ts = batch
            .base_timestamp()
            .saturating_add(record.timestamp_delta);
        if best.is_none_or(|(_, t)| record_ts > t) {
            best = Some((offset, record_ts));
        }
        ControlFlow::Continue(())
    })?;
    Ok(best)
}
