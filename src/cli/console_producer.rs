//! `sluice produce`, and `kafka-console-producer` / `kafka-console-producer.sh` in the image:
//! lines of standard input as records of a topic, read as Kafka's `LineMessageReader` reads
//! them (`--property parse.key=true`, `key.separator`, `parse.headers`, `null.marker`,
//! `ignore.error`), sent to each partition's leader with `acks` from
//! `--request-required-acks` (default all). Keyed records go to Kafka's default partition
//! for the key (murmur2, as the Java client's partitioner); records without a key fill one
//! partition per batch, as its sticky partitioner does. Lines read together go in one batch
//! per partition, so a piped file is sent in large batches and a typed line at once. A record
//! the broker refuses is reported on standard error as Kafka's producer logs it, and the run
//! goes on; a bad line stops the run with exit code 1. Not built: `--compression-codec`
//! (batches are sent uncompressed), transactions and idempotence.

use super::client::{AdminClient, AdminError, java_exception};
use super::cluster::ConnectArgs;
use crate::record::{NewRecord, RecordHeader, build_batch_with_headers};
use bytes::Bytes;
use clap::Args;
use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::PathBuf;

#[derive(Args, Debug, Clone, Default)]
#[command(about = "Write lines of standard input to a topic (Kafka's kafka-console-producer)")]
pub struct ProduceArgs {
    #[command(flatten)]
    pub connect: ConnectArgs,
    /// REQUIRED: The topic id to produce messages to.
    #[arg(long)]
    pub topic: Option<String>,
    /// A mechanism to pass user-defined properties to the message reader: parse.key,
    /// key.separator, parse.headers, headers.delimiter, headers.separator,
    /// headers.key.separator, null.marker, ignore.error (repeatable).
    #[arg(long = "reader-property", value_name = "prop")]
    pub reader_property: Vec<String>,
    /// Deprecated (Kafka 4.4): --reader-property.
    #[arg(long = "property", value_name = "prop")]
    pub property: Vec<String>,
    /// Producer properties (Kafka client names; the security ones are used) (repeatable).
    #[arg(
        long = "producer-property",
        alias = "command-property",
        value_name = "producer_prop"
    )]
    pub producer_property: Vec<String>,
    /// Producer config properties file (Kafka client names; the security ones are used).
    #[arg(long = "producer.config", value_name = "config file")]
    pub producer_config: Option<PathBuf>,
    /// The required acks of the producer requests: -1/all, 0 or 1.
    #[arg(
        long = "request-required-acks",
        default_value = "-1",
        value_name = "request required acks"
    )]
    pub acks: String,
    /// Send each line synchronously, one request per line.
    #[arg(long)]
    pub sync: bool,
}

/// How lines become records (`LineMessageReader`'s settings).
#[derive(Debug, Clone)]
struct LineReader {
    parse_key: bool,
    key_separator: String,
    parse_headers: bool,
    headers_delimiter: String,
    headers_separator: String,
    headers_key_separator: String,
    null_marker: Option<String>,
    ignore_error: bool,
}

/// One record read from a line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LineRecord {
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
}

fn properties(items: &[String]) -> Result<BTreeMap<String, String>, String> {
    items
        .iter()
        .map(|item| {
            item.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .ok_or_else(|| format!("Invalid property: {item}: expected key=value"))
        })
        .collect()
}

impl LineReader {
    fn from_properties(props: &BTreeMap<String, String>) -> Result<Self, String> {
        let flag = |name: &str| {
            props
                .get(name)
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        };
        let text = |name: &str, default: &str| {
            props
                .get(name)
                .cloned()
                .unwrap_or_else(|| default.to_string())
        };
        let reader = Self {
            parse_key: flag("parse.key"),
            key_separator: text("key.separator", "\t"),
            parse_headers: flag("parse.headers"),
            headers_delimiter: text("headers.delimiter", "\t"),
            headers_separator: text("headers.separator", ","),
            headers_key_separator: text("headers.key.separator", ":"),
            null_marker: props.get("null.marker").cloned(),
            ignore_error: flag("ignore.error"),
        };
        let pairs = [
            (
                &reader.headers_delimiter,
                &reader.headers_separator,
                "headers.delimiter and headers.separator",
            ),
            (
                &reader.headers_delimiter,
                &reader.headers_key_separator,
                "headers.delimiter and headers.key.separator",
            ),
            (
                &reader.headers_separator,
                &reader.headers_key_separator,
                "headers.separator and headers.key.separator",
            ),
        ];
        for (a, b, names) in pairs {
            if a == b {
                return Err(format!("{names} may not be equal"));
            }
        }
        if let Some(marker) = &reader.null_marker {
            for (other, name) in [
                (&reader.key_separator, "key.separator"),
                (&reader.headers_separator, "headers.separator"),
                (&reader.headers_delimiter, "headers.delimiter"),
                (&reader.headers_key_separator, "headers.key.separator"),
            ] {
                if marker == other {
                    return Err(format!("null.marker and {name} may not be equal"));
                }
            }
        }
        Ok(reader)
    }

    /// Kafka's `parse`: the text before `demarcation` from `start`; none when not asked for,
    /// or (with ignore.error) when the line lacks it.
    fn part<'a>(
        &self,
        enabled: bool,
        line: &'a str,
        start: usize,
        demarcation: &str,
        name: &str,
        number: u64,
    ) -> Result<Option<&'a str>, String> {
        if !enabled {
            return Ok(None);
        }
        match line[start..].find(demarcation) {
            Some(at) => Ok(Some(&line[start..start + at])),
            None if self.ignore_error => Ok(None),
            None => Err(format!("No {name} found on line number {number}: '{line}'")),
        }
    }

    fn nullable(&self, text: &str) -> Option<Vec<u8>> {
        if self.null_marker.as_deref() == Some(text) {
            None
        } else {
            Some(text.as_bytes().to_vec())
        }
    }

    fn read(&self, line: &str, number: u64) -> Result<LineRecord, String> {
        let headers = self.part(
            self.parse_headers,
            line,
            0,
            &self.headers_delimiter,
            "headers delimiter",
            number,
        )?;
        let header_end = headers.map_or(0, |h| h.len() + self.headers_delimiter.len());
        let key = self.part(
            self.parse_key,
            line,
            header_end,
            &self.key_separator,
            "key separator",
            number,
        )?;
        let key_end = key.map_or(0, |k| k.len() + self.key_separator.len());
        let value = &line[header_end + key_end..];
        let mut record = LineRecord {
            key: key.and_then(|k| self.nullable(k)),
            value: self.nullable(value),
            headers: Vec::new(),
        };
        if let Some(headers) = headers.filter(|h| self.null_marker.as_deref() != Some(*h)) {
            for pair in headers.split(self.headers_separator.as_str()) {
                match pair.split_once(self.headers_key_separator.as_str()) {
                    Some((name, value)) => {
                        if self.null_marker.as_deref() == Some(name) {
                            return Err(format!(
                                "Header keys should not be equal to the null marker '{name}' as they can't be null"
                            ));
                        }
                        record
                            .headers
                            .push((name.to_string(), self.nullable(value)));
                    }
                    None if self.ignore_error => record.headers.push((pair.to_string(), None)),
                    None => {
                        return Err(format!(
                            "No header key separator found in pair '{pair}' on line number {number}"
                        ));
                    }
                }
            }
        }
        Ok(record)
    }
}

/// Kafka's `Utils.murmur2` (the Java client's default partitioner hashes keys with it).
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let length = data.len() as u32;
    let mut h = SEED ^ length;
    let chunks = data.chunks_exact(4);
    let tail = chunks.remainder();
    for chunk in chunks {
        let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    match tail.len() {
        3 => {
            h ^= u32::from(tail[2]) << 16;
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        2 => {
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        1 => {
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        _ => {}
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// The partition Kafka's default partitioner picks for a key.
fn partition_for_key(key: &[u8], partitions: usize) -> i32 {
    ((murmur2(key) & 0x7fff_ffff) as usize % partitions.max(1)) as i32
}

/// Runs the command; the exit code.
pub fn run(args: &ProduceArgs) -> i32 {
    match super::output::block_on(produce(args)) {
        Ok(()) => 0,
        Err(message) => {
            eprintln!("{message}");
            1
        }
    }
}

/// The connection security from the producer/consumer config file and inline properties
/// (inline ones over the file's), falling back to --command-config.
pub(super) fn security_of(
    connect: &ConnectArgs,
    config: Option<&PathBuf>,
    inline: &[String],
) -> Result<crate::net::PeerSecurity, String> {
    let mut props = BTreeMap::new();
    for path in [connect.command_config.as_ref(), config]
        .into_iter()
        .flatten()
    {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{} (No such file or directory): {e}", path.display()))?;
        props.extend(crate::config::parse_properties(&text).map_err(|e| e.to_string())?);
    }
    props.extend(properties(inline)?);
    super::command_config::security_from(&props)
}

async fn produce(args: &ProduceArgs) -> Result<(), String> {
    let topic = args
        .topic
        .clone()
        .ok_or_else(|| "Missing required argument \"[topic]\"".to_string())?;
    let bootstrap = args
        .connect
        .bootstrap_server
        .clone()
        .ok_or_else(|| "Missing required argument \"[bootstrap-server]\"".to_string())?;
    if !args.property.is_empty() {
        // Kafka's tool says so on standard output.
        println!(
            "Warning: --property is deprecated and will be removed in a future version. Use --reader-property instead."
        );
    }
    let mut reader_properties = properties(&args.property)?;
    reader_properties.extend(properties(&args.reader_property)?);
    let reader = LineReader::from_properties(&reader_properties)?;
    let acks: i16 = match args.acks.trim() {
        "all" | "-1" => -1,
        "0" => 0,
        "1" => 1,
        other => {
            return Err(format!(
                "Invalid value {other} for configuration acks: String must be one of: all, -1, 0, 1"
            ));
        }
    };
    let security = security_of(
        &args.connect,
        args.producer_config.as_ref(),
        &args.producer_property,
    )?;
    let mut client = AdminClient::connect(&bootstrap, &security)
        .await
        .map_err(|e| e.to_string())?;
    // Lines come from a thread of their own, so that lines typed one by one are sent at once
    // and a piped file is sent in batches.
    let (lines_tx, mut lines_rx) = tokio::sync::mpsc::channel::<std::io::Result<String>>(4096);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            if lines_tx.blocking_send(line).is_err() {
                break;
            }
        }
    });
    let mut layout = None;
    let mut number = 0u64;
    let mut sticky = 0usize;
    let limit = if args.sync { 1 } else { 10_000 };
    while let Some(first) = lines_rx.recv().await {
        let mut lines = vec![first];
        while lines.len() < limit {
            match lines_rx.try_recv() {
                Ok(line) => lines.push(line),
                Err(_) => break,
            }
        }
        let mut records = Vec::with_capacity(lines.len());
        for line in lines {
            let line = line.map_err(|e| format!("cannot read standard input: {e}"))?;
            number += 1;
            records.push(
                reader
                    .read(&line, number)
                    .map_err(|e| format!("org.apache.kafka.common.KafkaException: {e}"))?,
            );
        }
        if layout.is_none() {
            layout = Some(
                client
                    .topic_layout(&topic, true)
                    .await
                    .map_err(|e| e.to_string())?,
            );
        }
        let partitions: Vec<i32> = layout
            .as_ref()
            .map(|l| l.leaders.keys().copied().collect())
            .unwrap_or_default();
        if partitions.is_empty() {
            return Err(format!("Topic {topic} not present in metadata."));
        }
        sticky = (sticky + 1) % partitions.len();
        let mut by_partition: BTreeMap<i32, Vec<LineRecord>> = BTreeMap::new();
        for record in records {
            let partition = match &record.key {
                Some(key) => partition_for_key(key, partitions.len()),
                None => partitions[sticky],
            };
            by_partition.entry(partition).or_default().push(record);
        }
        for (partition, records) in by_partition {
            let leader = layout
                .as_ref()
                .and_then(|l| l.leaders.get(&partition).copied().flatten());
            let result = match leader {
                Some(leader) => {
                    client
                        .produce(leader, &topic, partition, batch_of(&records), acks)
                        .await
                }
                None => Err(AdminError::Kafka {
                    code: 5,
                    message: super::client::default_message(5).into(),
                }),
            };
            if let Err(e) = result {
                for record in &records {
                    report_failure(&topic, record, &e);
                }
                // A leader may have moved: ask again before the next batch.
                layout = None;
            }
        }
    }
    Ok(())
}

/// Kafka's `ErrorLoggingCallback` line for a record that was not written.
fn report_failure(topic: &str, record: &LineRecord, error: &AdminError) {
    let key = record.key.as_ref().map_or("null".to_string(), |k| {
        String::from_utf8_lossy(k).into_owned()
    });
    let size = record.value.as_ref().map_or(-1, |v| v.len() as i64);
    let cause = match error {
        AdminError::Kafka { code, message } => format!("{}: {message}", java_exception(*code)),
        other => other.to_string(),
    };
    eprintln!(
        "ERROR Error when sending message to topic {topic} with key: {key}, value: {size} bytes with error: {cause} (org.apache.kafka.clients.producer.internals.ErrorLoggingCallback)"
    );
}

/// One uncompressed batch of the records, stamped now.
fn batch_of(records: &[LineRecord]) -> Bytes {
    let now = crate::types::now_ms();
    let new: Vec<NewRecord<'_>> = records
        .iter()
        .map(|r| NewRecord {
            key: r.key.as_deref(),
            value: r.value.as_deref(),
            timestamp: now,
        })
        .collect();
    let headers: Vec<Vec<RecordHeader<'_>>> = records
        .iter()
        .map(|r| {
            r.headers
                .iter()
                .map(|(key, value)| RecordHeader {
                    key,
                    value: value.as_deref(),
                })
                .collect()
        })
        .collect();
    build_batch_with_headers(&new, &headers).freeze()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(pairs: &[(&str, &str)]) -> LineReader {
        let props = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        LineReader::from_properties(&props).unwrap()
    }

    #[test]
    fn lines_read_as_kafkas_line_message_reader() {
        let plain = reader(&[]);
        assert_eq!(
            plain.read("a\tb", 1).unwrap(),
            LineRecord {
                key: None,
                value: Some(b"a\tb".to_vec()),
                headers: vec![]
            }
        );
        let keyed = reader(&[("parse.key", "true"), ("key.separator", ":")]);
        let record = keyed.read("k:v:w", 1).unwrap();
        assert_eq!(record.key.as_deref(), Some(&b"k"[..]));
        assert_eq!(record.value.as_deref(), Some(&b"v:w"[..]));
        assert_eq!(
            keyed.read("novalue", 3).unwrap_err(),
            "No key separator found on line number 3: 'novalue'"
        );
        let lenient = reader(&[("parse.key", "true"), ("ignore.error", "true")]);
        assert_eq!(lenient.read("novalue", 1).unwrap().key, None);
        let nulls = reader(&[("parse.key", "true"), ("null.marker", "<null>")]);
        let record = nulls.read("<null>\t<null>", 1).unwrap();
        assert_eq!((record.key, record.value), (None, None));
        let headers = reader(&[("parse.headers", "true"), ("parse.key", "true")]);
        let record = headers.read("h1:v1,h2:v2\tk\tv", 1).unwrap();
        assert_eq!(record.headers.len(), 2);
        assert_eq!(record.key.as_deref(), Some(&b"k"[..]));
        assert!(
            LineReader::from_properties(
                &[("null.marker".to_string(), "\t".to_string())]
                    .into_iter()
                    .collect()
            )
            .is_err()
        );
    }

    #[test]
    fn keys_go_to_the_java_clients_partitions() {
        // Values from Kafka's own UtilsTest / DefaultPartitioner for these inputs.
        assert_eq!(murmur2(b"21"), -973932308);
        assert_eq!(murmur2(b"foobar"), -790332482);
        assert_eq!(murmur2(b"a-little-bit-long-string"), -985981536);
        assert_eq!(murmur2(b"a-little-bit-longer-string"), -1486304829);
        assert_eq!(
            murmur2(b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8"),
            -58897971
        );
        assert_eq!(murmur2(b"abc"), 479470107);
    }
}
