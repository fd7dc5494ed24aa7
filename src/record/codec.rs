//! Decompression of a batch's records section, for the few places that must read records,
//! and compression for a topic whose `compression.type` names a codec (Kafka's recompression
//! on produce). Batches are otherwise stored and served as produced.

use super::{Compression, RecordError};
use std::io::Read;

/// The most decompressed bytes one batch may hold, so a hostile batch cannot exhaust memory.
/// Streaming keeps memory flat; this bounds the CPU a compression bomb can cost (about a
/// quarter of a second of zstd).
pub const MAX_DECOMPRESSED_BYTES: u64 = 256 * 1024 * 1024;

/// Why a compressed payload could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    /// The payload does not decode.
    #[error("{0}")]
    Undecodable(String),
    /// Decompressing produced more than the budget allows.
    #[error("the decompressed records exceed {limit} bytes")]
    TooLarge { limit: u64 },
}

/// Java clients frame snappy data with xerial's stream header; librdkafka writes raw snappy.
const XERIAL_MAGIC: &[u8] = b"\x82SNAPPY\x00";

/// Compresses a records section as Kafka's broker does (its `Compression` implementations):
/// gzip at `level` (-1: zlib's default), snappy in xerial's framing with 32 KiB blocks (what
/// Java's `SnappyOutputStream` writes), an LZ4 frame of independent 64 KiB blocks, zstd at
/// `level`. lz4_flex has one level: `compression.lz4.level` does not change its output.
pub fn compress(codec: Compression, level: i32, data: &[u8]) -> Result<Vec<u8>, RecordError> {
    use std::io::Write;
    let failed = |e: std::io::Error| RecordError::Compression(format!("{codec:?}: {e}"));
    Ok(match codec {
        Compression::None => data.to_vec(),
        Compression::Gzip => {
            let level = match level {
                1..=9 => flate2::Compression::new(level as u32),
                _ => flate2::Compression::default(),
            };
            let mut encoder = flate2::write::GzEncoder::new(Vec::new(), level);
            encoder.write_all(data).map_err(failed)?;
            encoder.finish().map_err(failed)?
        }
        Compression::Snappy => {
            const BLOCK: usize = 32 * 1024;
            let mut out = XERIAL_MAGIC.to_vec();
            out.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 1]);
            let mut encoder = snap::raw::Encoder::new();
            for chunk in data.chunks(BLOCK) {
                let block = encoder
                    .compress_vec(chunk)
                    .map_err(|e| RecordError::Compression(format!("snappy: {e}")))?;
                out.extend_from_slice(&(block.len() as u32).to_be_bytes());
                out.extend_from_slice(&block);
            }
            out
        }
        Compression::Lz4 => {
            let mut info = lz4_flex::frame::FrameInfo::new();
            info.block_mode = lz4_flex::frame::BlockMode::Independent;
            let mut encoder = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
            encoder.write_all(data).map_err(failed)?;
            encoder
                .finish()
                .map_err(|e| RecordError::Compression(format!("lz4: {e}")))?
        }
        Compression::Zstd => zstd::encode_all(data, level).map_err(failed)?,
    })
}

pub fn decompress(codec: Compression, payload: &[u8]) -> Result<Vec<u8>, RecordError> {
    let mut out = Vec::new();
    let failed = |e: std::io::Error| RecordError::Compression(format!("{codec:?}: {e}"));
    match codec {
        Compression::None => out.extend_from_slice(payload),
        Compression::Gzip => {
            flate2::read::GzDecoder::new(payload)
                .take(MAX_DECOMPRESSED_BYTES)
                .read_to_end(&mut out)
                .map_err(failed)?;
        }
        Compression::Lz4 => {
            lz4_flex::frame::FrameDecoder::new(payload)
                .take(MAX_DECOMPRESSED_BYTES)
                .read_to_end(&mut out)
                .map_err(failed)?;
        }
        Compression::Zstd => {
            zstd::stream::read::Decoder::new(payload)
                .map_err(failed)?
                .take(MAX_DECOMPRESSED_BYTES)
                .read_to_end(&mut out)
                .map_err(failed)?;
        }
        Compression::Snappy => out = decompress_snappy(payload)?,
    }
    Ok(out)
}

fn decompress_snappy(payload: &[u8]) -> Result<Vec<u8>, RecordError> {
    let mut out = Vec::new();
    SnappyReader::new(payload, MAX_DECOMPRESSED_BYTES)
        .map_err(|e| RecordError::Compression(format!("snappy: {e}")))?
        .take(MAX_DECOMPRESSED_BYTES)
        .read_to_end(&mut out)
        .map_err(|e| RecordError::Compression(format!("snappy: {e}")))?;
    Ok(out)
}

/// Snappy as Kafka clients write it, as a reader: raw snappy (librdkafka), or xerial's
/// framing (Java: 8-byte magic, 4-byte version, 4-byte compatible version, then blocks of a
/// 4-byte big-endian length and a raw snappy block), decoded one block at a time. A block
/// whose header claims more than `budget` bytes is refused before it is decoded.
pub(crate) struct SnappyReader<'a> {
    /// Xerial blocks not read yet; empty for raw snappy.
    blocks: &'a [u8],
    block: std::io::Cursor<Vec<u8>>,
    budget: u64,
    produced: u64,
}

impl<'a> SnappyReader<'a> {
    pub(crate) fn new(payload: &'a [u8], budget: u64) -> Result<Self, CodecError> {
        let mut reader = Self {
            blocks: &[],
            block: std::io::Cursor::new(Vec::new()),
            budget,
            produced: 0,
        };
        if payload.starts_with(XERIAL_MAGIC) {
            reader.blocks = payload
                .get(16..)
                .ok_or_else(|| CodecError::Undecodable("snappy: short xerial header".into()))?;
        } else {
            reader.decode_block(payload)?;
        }
        Ok(reader)
    }

    fn decode_block(&mut self, block: &[u8]) -> Result<(), CodecError> {
        let failed = |e: snap::Error| CodecError::Undecodable(format!("snappy: {e}"));
        let length = snap::raw::decompress_len(block).map_err(failed)? as u64;
        self.produced += length;
        if self.produced > self.budget {
            return Err(CodecError::TooLarge { limit: self.budget });
        }
        let data = snap::raw::Decoder::new()
            .decompress_vec(block)
            .map_err(failed)?;
        self.block = std::io::Cursor::new(data);
        Ok(())
    }

    fn next_block(&mut self) -> Result<bool, CodecError> {
        if self.blocks.is_empty() {
            return Ok(false);
        }
        let short = || CodecError::Undecodable("snappy: short xerial block".into());
        let length: [u8; 4] = self
            .blocks
            .get(..4)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(short)?;
        let length = u32::from_be_bytes(length) as usize;
        let block = self.blocks.get(4..4 + length).ok_or_else(short)?;
        self.blocks = &self.blocks[4 + length..];
        self.decode_block(block)?;
        Ok(true)
    }
}

impl Read for SnappyReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.block.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            match self.next_block() {
                Ok(true) => continue,
                Ok(false) => return Ok(0),
                Err(e) => return Err(std::io::Error::other(e)),
            }
        }
    }
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
    fn what_is_compressed_reads_back() {
        let data = b"a record, another record, and more records".repeat(3_000);
        for (codec, level) in [
            (Compression::Gzip, -1),
            (Compression::Gzip, 9),
            (Compression::Snappy, 0),
            (Compression::Lz4, 9),
            (Compression::Zstd, 3),
            (Compression::Zstd, -5),
        ] {
            let packed = compress(codec, level, &data).unwrap();
            assert!(packed.len() < data.len(), "{codec:?}");
            assert_eq!(decompress(codec, &packed).unwrap(), data, "{codec:?}");
        }
        // Xerial framing in 32 KiB blocks, as Java's SnappyOutputStream writes.
        let snappy = compress(Compression::Snappy, 0, &data).unwrap();
        assert!(snappy.starts_with(XERIAL_MAGIC));
        assert_eq!(compress(Compression::None, 0, b"raw").unwrap(), b"raw");
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
