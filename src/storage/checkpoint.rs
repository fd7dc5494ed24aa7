//! Kafka's text checkpoint files (`recovery-point-offset-checkpoint`,
//! `log-start-offset-checkpoint`), written atomically: tmp file -> fsync -> rename -> fsync dir.
//!
//! ```text
//! 0                      <- version
//! 2                      <- entry count
//! orders 0 1532          <- topic partition offset
//! orders 1 977
//! ```

use super::StorageError;
use crate::types::TopicPartition;
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

/// Writes `contents` to `path` so that a crash leaves either the old or the new file.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<(), StorageError> {
    let tmp = path.with_extension("tmp");
    {
        let mut file = File::create(&tmp)?;
        file.write_all(contents)?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}

/// Fsyncs a directory, so renames and creations in it survive a crash.
pub fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// Writes a checkpoint of `offsets`, in the order given (readers take any order, as
/// Kafka's, which writes its map's).
pub fn write_offsets<'a>(
    path: &Path,
    offsets: impl ExactSizeIterator<Item = (&'a TopicPartition, i64)>,
) -> Result<(), StorageError> {
    use std::fmt::Write as _;
    let mut text = String::with_capacity(16 + offsets.len() * 32);
    let _ = write!(text, "0\n{}\n", offsets.len());
    for (tp, offset) in offsets {
        let _ = writeln!(text, "{} {} {}", tp.topic, tp.partition, offset);
    }
    write_atomically(path, text.as_bytes())
}

/// Reads a checkpoint; a missing file is empty. A malformed one is an error naming the file.
pub fn read_offsets(path: &Path) -> Result<BTreeMap<TopicPartition, i64>, StorageError> {
    let text = match fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
        Err(e) => return Err(e.into()),
    };
    let malformed =
        || StorageError::Corrupt(format!("malformed checkpoint file {}", path.display()));
    let mut lines = text.lines();
    if lines.next().map(str::trim) != Some("0") {
        return Err(malformed());
    }
    let count: usize = lines
        .next()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(malformed)?;
    let mut out = BTreeMap::new();
    for line in lines.take(count) {
        let mut parts = line.rsplitn(3, ' ');
        let offset = parts
            .next()
            .and_then(|p| p.parse::<i64>().ok())
            .ok_or_else(malformed)?;
        let partition = parts
            .next()
            .and_then(|p| p.parse::<i32>().ok())
            .ok_or_else(malformed)?;
        let topic = parts.next().ok_or_else(malformed)?;
        out.insert(TopicPartition::new(topic, partition), offset);
    }
    if out.len() != count {
        return Err(malformed());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_malformed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recovery-point-offset-checkpoint");
        assert!(read_offsets(&path).unwrap().is_empty());
        let mut offsets = BTreeMap::new();
        offsets.insert(TopicPartition::new("a", 0), 10);
        offsets.insert(TopicPartition::new("b.c_d-e", 3), 77);
        write_offsets(&path, offsets.iter().map(|(tp, o)| (tp, *o))).unwrap();
        assert_eq!(read_offsets(&path).unwrap(), offsets);
        std::fs::write(&path, "0\n2\na 0 1\n").unwrap();
        assert!(read_offsets(&path).is_err());
    }
}
