//! A response frame as the connection writes it: encoded bytes, with record data that stays
//! in segment files (`FileSlice`) in between, so fetched records go from the page cache to
//! the socket without passing through the process (Kafka's `FileRecords.writeTo`).

use crate::storage::StorageError;
use crate::storage::segment::FileSlice;
use bytes::{BufMut, Bytes, BytesMut};

/// One piece of a response frame, in wire order.
#[derive(Debug)]
pub enum FramePart {
    Encoded(Bytes),
    File(FileSlice),
}

/// A complete size-prefixed response frame.
#[derive(Debug)]
pub struct ResponseFrame {
    parts: Vec<FramePart>,
}

impl ResponseFrame {
    pub fn parts(&self) -> &[FramePart] {
        &self.parts
    }

    /// Total bytes on the wire, size prefix included.
    pub fn len(&self) -> usize {
        self.parts
            .iter()
            .map(|part| match part {
                FramePart::Encoded(bytes) => bytes.len(),
                FramePart::File(slice) => slice.len(),
            })
            .sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The whole frame in memory (file slices read), for transports that cannot send from a
    /// file and for tests.
    pub fn into_bytes(self) -> Result<Bytes, StorageError> {
        if let [FramePart::Encoded(bytes)] = self.parts.as_slice() {
            return Ok(bytes.clone());
        }
        let mut out = BytesMut::with_capacity(self.len());
        for part in &self.parts {
            match part {
                FramePart::Encoded(bytes) => out.put_slice(bytes),
                FramePart::File(slice) => out.put_slice(&slice.read()?),
            }
        }
        Ok(out.freeze())
    }
}

impl From<BytesMut> for ResponseFrame {
    /// A frame already encoded whole, size prefix included.
    fn from(frame: BytesMut) -> Self {
        Self {
            parts: vec![FramePart::Encoded(frame.freeze())],
        }
    }
}

/// Builds a frame whose size is only known at the end: starts with a size placeholder that
/// `finish` fills in.
#[derive(Debug)]
pub struct FrameBuilder {
    done: Vec<PendingPart>,
    current: BytesMut,
}

#[derive(Debug)]
enum PendingPart {
    Encoded(BytesMut),
    File(FileSlice),
}

impl FrameBuilder {
    /// `capacity`: expected encoded bytes (file slices excluded).
    pub fn with_capacity(capacity: usize) -> Self {
        let mut current = BytesMut::with_capacity(4 + capacity);
        current.put_i32(0);
        Self {
            done: Vec::new(),
            current,
        }
    }

    /// Where the next encoded bytes go.
    pub fn buf(&mut self) -> &mut BytesMut {
        &mut self.current
    }

    pub fn put_file(&mut self, slice: FileSlice) {
        let encoded = std::mem::take(&mut self.current);
        self.done.push(PendingPart::Encoded(encoded));
        self.done.push(PendingPart::File(slice));
    }

    pub fn finish(mut self) -> ResponseFrame {
        self.done.push(PendingPart::Encoded(self.current));
        let total: usize = self
            .done
            .iter()
            .map(|part| match part {
                PendingPart::Encoded(bytes) => bytes.len(),
                PendingPart::File(slice) => slice.len(),
            })
            .sum();
        let parts = self
            .done
            .into_iter()
            .enumerate()
            .filter_map(|(i, part)| match part {
                PendingPart::Encoded(mut bytes) => {
                    if i == 0 {
                        bytes[..4].copy_from_slice(&((total - 4) as i32).to_be_bytes());
                    }
                    (!bytes.is_empty()).then(|| FramePart::Encoded(bytes.freeze()))
                }
                PendingPart::File(slice) => Some(FramePart::File(slice)),
            })
            .collect();
        ResponseFrame { parts }
    }
}
