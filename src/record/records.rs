//! Individual records inside a v2 batch with their keys and values, for the few readers that
//! need them (compaction, coordinator state, control records); walks that only need the
//! framing use [`super::walk`]. Layout of one record (varints are zig-zag encoded):
//!
//! ```text
//! length: varint | attributes: i8 | timestampDelta: varlong | offsetDelta: varint
//! keyLength: varint | key | valueLength: varint | value | headerCount: varint | headers
//! ```

use super::RecordError;
use bytes::BufMut;

/// One record of a batch, borrowed from the (decompressed) records section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    pub offset_delta: i32,
    pub timestamp_delta: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    /// The whole record as stored, length prefix included (for rewriting batches).
    pub raw: &'a [u8],
}

/// Parses keys and values of every record (headers are skipped).
pub fn parse_records(mut records: &[u8], count: i32) -> Result<Vec<RecordView<'_>>, RecordError> {
    let mut out = Vec::with_capacity(count.clamp(0, 4096) as usize);
    for _ in 0..count {
        let start = records;
        let length = read_varlong(&mut records)?;
        if length < 1 || length as usize > records.len() {
            return Err(RecordError::Corrupt("record length out of range"));
        }
        let (body, rest) = records.split_at(length as usize);
        let raw = &start[..start.len() - rest.len()];
        records = rest;
        let mut body = &body[1..]; // attributes
        let timestamp_delta = read_varlong(&mut body)?;
        let offset_delta = i32::try_from(read_varlong(&mut body)?)
            .map_err(|_| RecordError::Corrupt("record offset delta out of range"))?;
        let key = read_nullable_bytes(&mut body)?;
        let value = read_nullable_bytes(&mut body)?;
        out.push(RecordView {
            offset_delta,
            timestamp_delta,
            key,
            value,
            raw,
        });
    }
    Ok(out)
}

fn read_nullable_bytes<'a>(buf: &mut &'a [u8]) -> Result<Option<&'a [u8]>, RecordError> {
    let length = read_varlong(buf)?;
    if length < 0 {
        return Ok(None);
    }
    if length as usize > buf.len() {
        return Err(RecordError::Corrupt("record field longer than the record"));
    }
    let (field, rest) = buf.split_at(length as usize);
    *buf = rest;
    Ok(Some(field))
}

/// Reads one zig-zag varint of up to 64 bits.
pub fn read_varlong(buf: &mut &[u8]) -> Result<i64, RecordError> {
    let mut value: u64 = 0;
    for shift in (0..70).step_by(7) {
        let Some((&byte, rest)) = buf.split_first() else {
            return Err(RecordError::Corrupt("truncated varint"));
        };
        *buf = rest;
        if shift == 63 && byte > 1 {
            return Err(RecordError::Corrupt("varint overflows 64 bits"));
        }
        value |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return Ok(((value >> 1) as i64) ^ -((value & 1) as i64));
        }
    }
    Err(RecordError::Corrupt("varint too long"))
}

pub fn put_varlong(buf: &mut impl BufMut, value: i64) {
    let mut zigzag = ((value << 1) ^ (value >> 63)) as u64;
    while zigzag >= 0x80 {
        buf.put_u8((zigzag as u8) | 0x80);
        zigzag >>= 7;
    }
    buf.put_u8(zigzag as u8);
}

pub fn put_varint(buf: &mut impl BufMut, value: i32) {
    put_varlong(buf, value as i64);
}

/// One record with all a reader shows: its offset and timestamp, key, value and headers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FullRecord {
    pub offset: i64,
    pub timestamp: i64,
    /// Whether the timestamp is the broker's (LogAppendTime) rather than the producer's.
    pub log_append_time: bool,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
    pub headers: Vec<(String, Option<Vec<u8>>)>,
}

/// The decompressed bytes one batch may expand to when read for display.
pub const MAX_DISPLAYED_BATCH_BYTES: usize = 64 * 1024 * 1024;

/// Decodes the batches in `bytes` (as a fetch returns them, or as a segment holds them) into
/// `into`: records at or past `start` (a batch may begin before it), control batches skipped.
/// Returns the offset after the last whole batch; a partial batch at the end (a size limit
/// cut it) is left for the next read. Decompression stays within the codec's budget.
pub fn decode_batches(
    bytes: &[u8],
    start: i64,
    into: &mut Vec<FullRecord>,
) -> Result<Option<i64>, RecordError> {
    let mut next = None;
    for batch in super::BatchIter::new(bytes) {
        let batch = batch?;
        next = Some(batch.last_offset() + 1);
        if batch.is_control() {
            continue;
        }
        let payload = super::codec::decompress(batch.compression()?, batch.records_payload())?;
        if payload.len() > MAX_DISPLAYED_BATCH_BYTES {
            return Err(RecordError::Corrupt("records larger than 64 MiB"));
        }
        let mut rest: &[u8] = &payload;
        for _ in 0..batch.records_count().max(0) {
            let record = read_full_record(&mut rest)?;
            let offset = batch.base_offset() + i64::from(record.0);
            if offset < start {
                continue;
            }
            let (_, timestamp_delta, key, value, headers) = record;
            into.push(FullRecord {
                offset,
                timestamp: if batch.is_log_append_time() {
                    batch.max_timestamp()
                } else {
                    batch.base_timestamp() + timestamp_delta
                },
                log_append_time: batch.is_log_append_time(),
                key,
                value,
                headers,
            });
        }
    }
    Ok(next)
}

type Fields = (
    i32,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Option<Vec<u8>>)>,
);

/// One record of a decompressed records section, headers included: (offset delta, timestamp
/// delta, key, value, headers).
fn read_full_record(buf: &mut &[u8]) -> Result<Fields, RecordError> {
    let length = read_varlong(buf)?;
    if length < 1 || length as usize > buf.len() {
        return Err(RecordError::Corrupt("record length out of range"));
    }
    let (mut body, rest) = buf.split_at(length as usize);
    *buf = rest;
    body = &body[1..]; // attributes
    let timestamp_delta = read_varlong(&mut body)?;
    let offset_delta = i32::try_from(read_varlong(&mut body)?)
        .map_err(|_| RecordError::Corrupt("offset delta out of range"))?;
    let field = |body: &mut &[u8]| -> Result<Option<Vec<u8>>, RecordError> {
        let length = read_varlong(body)?;
        if length < 0 {
            return Ok(None);
        }
        if length as usize > body.len() {
            return Err(RecordError::Corrupt("record field longer than the record"));
        }
        let (value, rest) = body.split_at(length as usize);
        *body = rest;
        Ok(Some(value.to_vec()))
    };
    let key = field(&mut body)?;
    let value = field(&mut body)?;
    let count = read_varlong(&mut body)?;
    if count < 0 || count as usize > body.len() {
        return Err(RecordError::Corrupt("header count out of range"));
    }
    let mut headers = Vec::new();
    for _ in 0..count {
        let name = field(&mut body)?.ok_or(RecordError::Corrupt("a header without a key"))?;
        let value = field(&mut body)?;
        headers.push((String::from_utf8_lossy(&name).into_owned(), value));
    }
    Ok((offset_delta, timestamp_delta, key, value, headers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip() {
        for value in [
            0i64,
            1,
            -1,
            63,
            -64,
            64,
            300,
            i32::MAX as i64,
            i64::MIN,
            i64::MAX,
        ] {
            let mut buf = Vec::new();
            put_varlong(&mut buf, value);
            let mut slice = buf.as_slice();
            assert_eq!(read_varlong(&mut slice).unwrap(), value);
            assert!(slice.is_empty());
        }
    }

    #[test]
    fn truncated_varint_is_an_error() {
        let mut slice: &[u8] = &[0x80, 0x80];
        assert!(read_varlong(&mut slice).is_err());
    }

    #[test]
    fn built_batches_parse_back() {
        let records = [
            crate::record::NewRecord {
                key: Some(b"k1"),
                value: None,
                timestamp: 100,
            },
            crate::record::NewRecord {
                key: None,
                value: Some(b"value"),
                timestamp: 90,
            },
        ];
        let batch = crate::record::build_batch(&records);
        let view = crate::record::BatchView::new(&batch).unwrap();
        view.validate().unwrap();
        assert_eq!(view.max_timestamp(), 100);
        let parsed = parse_records(view.records_payload(), view.records_count()).unwrap();
        assert_eq!(parsed[0].key, Some(&b"k1"[..]));
        assert_eq!(parsed[0].value, None);
        assert_eq!(parsed[1].value, Some(&b"value"[..]));
        assert_eq!(view.base_timestamp() + parsed[1].timestamp_delta, 90);
    }
}
