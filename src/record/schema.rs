//! Field encodings of the record schemas Kafka uses in its internal topics
//! (`__consumer_offsets`, `__transaction_state`): classic fields (i16-length strings,
//! i32-length bytes, -1 for null) and flexible ones (unsigned-varint lengths stored + 1,
//! tagged-field sections). All big-endian. Readers return [`SchemaError`] instead of reading
//! past the record.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use thiserror::Error;

#[derive(Debug, Error, PartialEq, Eq)]
#[error("malformed internal-topic record: {0}")]
pub struct SchemaError(pub &'static str);

pub fn put_uvarint(buf: &mut BytesMut, mut value: u64) {
    while value >= 0x80 {
        buf.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    buf.put_u8(value as u8);
}

pub fn get_uvarint(buf: &mut &[u8]) -> Result<u64, SchemaError> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        if buf.remaining() < 1 {
            return Err(SchemaError("truncated varint"));
        }
        let byte = buf.get_u8();
        value |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(SchemaError("varint too long"))
}

/// A compact length (stored + 1); `None` for null.
pub fn get_compact_len(buf: &mut &[u8]) -> Result<Option<usize>, SchemaError> {
    match get_uvarint(buf)? {
        0 => Ok(None),
        n => {
            let len = (n - 1) as usize;
            if len > buf.remaining() {
                return Err(SchemaError("length beyond the record"));
            }
            Ok(Some(len))
        }
    }
}

pub fn put_compact_nullable_string(buf: &mut BytesMut, text: Option<&str>) {
    match text {
        Some(text) => {
            put_uvarint(buf, text.len() as u64 + 1);
            buf.put_slice(text.as_bytes());
        }
        None => put_uvarint(buf, 0),
    }
}

pub fn get_compact_nullable_string(buf: &mut &[u8]) -> Result<Option<String>, SchemaError> {
    let Some(len) = get_compact_len(buf)? else {
        return Ok(None);
    };
    let text =
        String::from_utf8(buf[..len].to_vec()).map_err(|_| SchemaError("string is not UTF-8"))?;
    buf.advance(len);
    Ok(Some(text))
}

pub fn skip_tagged_fields(buf: &mut &[u8]) -> Result<(), SchemaError> {
    if buf.is_empty() {
        return Ok(());
    }
    let count = get_uvarint(buf)?;
    for _ in 0..count {
        get_uvarint(buf)?;
        let size = get_uvarint(buf)? as usize;
        if size > buf.remaining() {
            return Err(SchemaError("tagged field beyond the record"));
        }
        buf.advance(size);
    }
    Ok(())
}

/// Reads a tagged-field section, handing each field's tag and bytes to `field` (which reads
/// the tags it knows and ignores the others).
pub fn get_tagged_fields(
    buf: &mut &[u8],
    mut field: impl FnMut(u64, &[u8]) -> Result<(), SchemaError>,
) -> Result<(), SchemaError> {
    if buf.is_empty() {
        return Ok(());
    }
    let count = get_uvarint(buf)?;
    for _ in 0..count {
        let tag = get_uvarint(buf)?;
        let size = get_uvarint(buf)? as usize;
        if size > buf.remaining() {
            return Err(SchemaError("tagged field beyond the record"));
        }
        field(tag, &buf[..size])?;
        buf.advance(size);
    }
    Ok(())
}

/// A compact int32 array (`None`: null).
pub fn get_compact_i32_array(buf: &mut &[u8]) -> Result<Option<Vec<i32>>, SchemaError> {
    let Some(len) = get_compact_len(buf)? else {
        return Ok(None);
    };
    if len.saturating_mul(4) > buf.remaining() {
        return Err(SchemaError("truncated int32 array"));
    }
    Ok(Some((0..len).map(|_| buf.get_i32()).collect()))
}

pub fn put_compact_i32_array(buf: &mut BytesMut, values: &[i32]) {
    put_uvarint(buf, values.len() as u64 + 1);
    for value in values {
        buf.put_i32(*value);
    }
}

/// One tagged field: its tag, its size, then `body`.
pub fn put_tagged_field(buf: &mut BytesMut, tag: u64, body: &[u8]) {
    put_uvarint(buf, tag);
    put_uvarint(buf, body.len() as u64);
    buf.put_slice(body);
}

pub fn put_string(buf: &mut BytesMut, text: &str) {
    buf.put_i16(text.len() as i16);
    buf.put_slice(text.as_bytes());
}

pub fn put_nullable_string(buf: &mut BytesMut, text: Option<&str>) {
    match text {
        Some(text) => put_string(buf, text),
        None => buf.put_i16(-1),
    }
}

pub fn put_bytes(buf: &mut BytesMut, bytes: &[u8]) {
    buf.put_i32(bytes.len() as i32);
    buf.put_slice(bytes);
}

pub fn get_i16(buf: &mut &[u8]) -> Result<i16, SchemaError> {
    if buf.remaining() < 2 {
        return Err(SchemaError("truncated"));
    }
    Ok(buf.get_i16())
}

pub fn get_i32(buf: &mut &[u8]) -> Result<i32, SchemaError> {
    if buf.remaining() < 4 {
        return Err(SchemaError("truncated"));
    }
    Ok(buf.get_i32())
}

pub fn get_i64(buf: &mut &[u8]) -> Result<i64, SchemaError> {
    if buf.remaining() < 8 {
        return Err(SchemaError("truncated"));
    }
    Ok(buf.get_i64())
}

pub fn get_nullable_string(buf: &mut &[u8]) -> Result<Option<String>, SchemaError> {
    let len = get_i16(buf)?;
    if len < 0 {
        return Ok(None);
    }
    if buf.remaining() < len as usize {
        return Err(SchemaError("truncated string"));
    }
    let text = String::from_utf8(buf[..len as usize].to_vec())
        .map_err(|_| SchemaError("string is not UTF-8"))?;
    buf.advance(len as usize);
    Ok(Some(text))
}

pub fn get_string(buf: &mut &[u8]) -> Result<String, SchemaError> {
    get_nullable_string(buf)?.ok_or(SchemaError("null where a string is required"))
}

pub fn get_bytes(buf: &mut &[u8]) -> Result<Bytes, SchemaError> {
    let len = get_i32(buf)?;
    if len < 0 {
        return Ok(Bytes::new());
    }
    if buf.remaining() < len as usize {
        return Err(SchemaError("truncated bytes"));
    }
    let bytes = Bytes::copy_from_slice(&buf[..len as usize]);
    buf.advance(len as usize);
    Ok(bytes)
}

/// Kafka's placement of a group (or transactional id) on a partition of its internal topic:
/// `Utils.abs(key.hashCode()) % partitions`, with Java's `String.hashCode` over UTF-16 code
/// units.
pub fn partition_for(group: &str, partitions: i32) -> i32 {
    let hash = group
        .encode_utf16()
        .fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(unit as i32));
    let positive = if hash == i32::MIN { 0 } else { hash.abs() };
    positive % partitions.max(1)
}
