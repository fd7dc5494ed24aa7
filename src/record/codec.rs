//! Decompression of a batch's records section, for the few places that must read records.
//! The produce and fetch paths never call this: batches are stored and served as produced.

use super::{Compression, RecordError};
use std::io::Read;

/// Upper bound on a decompressed records section, so a hostile batch cannot exhaust memory.
const MAX_DECOMPRESSED: u64 = 256 * 1024 * 1024;

/// Java clients frame snappy data with xerial's stream header; librdkafka writes raw snappy.
const XERIAL_MAGIC: &[u8] = b"\x82SNAPPY\x00";

pub fn decompress(codec: Compression, payload: &[u8]) -> Result<Vec<u8>, RecordError> {
    let mut out = Vec::new();
    let failed = |e: std::io::Error| RecordError::Compression(format!("{codec:?}: {e}"));
    match codec {
        Compression::None => out.extend_from_slice(payload),
        Compression::Gzip => {
            flate2::read::GzDecoder::new(payload)
                .take(MAX_DECOMPRESSED)
                .read_to_end(&mut out)
                .map_err(failed)?;
        }
        Compression::Lz4 => {
            lz4_flex::frame::FrameDecoder::new(payload)
                .take(MAX_DECOMPRESSED)
                .read_to_end(&mut out)
                .map_err(failed)?;
        }
        Compression::Zstd => {
            zstd::stream::read::Decoder::new(payload)
                .map_err(failed)?
                .take(MAX_DECOMPRESSED)
                .read_to_end(&mut out)
                .map_err(failed)?;
        }
        Compression::Snappy => out = decompress_snappy(payload)?,
    }
    Ok(out)
}

fn decompress_snappy(payload: &[u8]) -> Result<Vec<u8>, RecordError> {
    let failed = |e: snap::Error| RecordError::Compression(format!("snappy: {e}"));
    if !payload.starts_with(XERIAL_MAGIC) {
        return snap::raw::Decoder::new()
            .decompress_vec(payload)
            .map_err(failed);
    }
    // xerial: 8-byte magic, 4-byte version, 4-byte compatible version, then blocks of
    // (4-byte big-endian length, raw snappy block).
    let mut rest = payload
        .get(16..)
        .ok_or(RecordError::Corrupt("short xerial header"))?;
    let mut out = Vec::new();
    while !rest.is_empty() {
        let len_bytes: [u8; 4] = rest
            .get(..4)
            .and_then(|s| s.try_into().ok())
            .ok_or(RecordError::Corrupt("short xerial block header"))?;
        let len = u32::from_be_bytes(len_bytes) as usize;
        let block = rest
            .get(4..4 + len)
            .ok_or(RecordError::Corrupt("short xerial block"))?;
        out.extend(
            snap::raw::Decoder::new()
                .decompress_vec(block)
                .map_err(failed)?,
        );
        if out.len() as u64 > MAX_DECOMPRESSED {
            return Err(RecordError::Compression("snappy: too large".into()));
        }
        rest = &rest[4 + len..];
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn codecs_round_trip() {
        let data = b"hello hello hello hello".repeat(20);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&data).unwrap();
        assert_eq!(
            decompress(Compression::Gzip, &gz.finish().unwrap()).unwrap(),
            data
        );

        let mut lz = lz4_flex::frame::FrameEncoder::new(Vec::new());
        lz.write_all(&data).unwrap();
        assert_eq!(
            decompress(Compression::Lz4, &lz.finish().unwrap()).unwrap(),
            data
        );

        let zs = zstd::encode_all(data.as_slice(), 1).unwrap();
        assert_eq!(decompress(Compression::Zstd, &zs).unwrap(), data);

        let raw = snap::raw::Encoder::new().compress_vec(&data).unwrap();
        assert_eq!(decompress(Compression::Snappy, &raw).unwrap(), data);
        let mut xerial = XERIAL_MAGIC.to_vec();
        xerial.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1]);
        xerial.extend_from_slice(&(raw.len() as u32).to_be_bytes());
        xerial.extend_from_slice(&raw);
        assert_eq!(decompress(Compression::Snappy, &xerial).unwrap(), data);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            assert!(decompress(codec, b"\x82SNAPPY\x00garbage-garbage").is_err());
        }
    }
}
