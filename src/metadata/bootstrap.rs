//! Records a new cluster starts with, written by `sluice format` (Kafka's `kafka-storage
//! format` writes them to `bootstrap.checkpoint`): today the SCRAM users of `--add-scram`, so
//! that brokers and clients can authenticate with SCRAM before anyone could create a user
//! through the admin API. The first active controller of a new quorum writes them to the
//! metadata log beside the cluster id; later starts ignore the file.
//!
//! ```text
//! {log.dirs}/bootstrap.records        one MetadataRecord per line, as JSON
//! ```

use super::records::MetadataRecord;
use crate::storage::StorageError;
use crate::storage::checkpoint::write_atomically;
use std::path::Path;

const FILE: &str = "bootstrap.records";

pub fn write(log_dir: &Path, records: &[MetadataRecord]) -> Result<(), StorageError> {
    let mut text = String::new();
    for record in records {
        let line = serde_json::to_string(record)
            .map_err(|e| StorageError::Corrupt(format!("cannot encode a bootstrap record: {e}")))?;
        text.push_str(&line);
        text.push('\n');
    }
    write_atomically(&log_dir.join(FILE), text.as_bytes())
}

/// The bootstrap records, none when the directory was not formatted with any.
pub fn read(log_dir: &Path) -> Result<Vec<MetadataRecord>, StorageError> {
    let path = log_dir.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e.into()),
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| {
                StorageError::Corrupt(format!("{} line {}: {e}", path.display(), i + 1))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metadata::records::ScramCredentialRecord;

    #[test]
    fn bootstrap_records_round_trip_and_a_damaged_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(dir.path()).unwrap().is_empty());
        let records = vec![MetadataRecord::UserScramCredential {
            name: "alice".into(),
            mechanism: 1,
            credential: ScramCredentialRecord {
                salt: vec![1, 2],
                stored_key: vec![3],
                server_key: vec![4],
                iterations: 4096,
            },
        }];
        write(dir.path(), &records).unwrap();
        assert_eq!(read(dir.path()).unwrap(), records);
        std::fs::write(dir.path().join(FILE), "{not json\n").unwrap();
        assert!(read(dir.path()).is_err());
    }
}
