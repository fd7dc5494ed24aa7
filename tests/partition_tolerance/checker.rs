//! The checker over a run's full history, in the spirit of Jepsen's Kafka workload: what the
//! clients were told (acknowledged sends, committed and aborted transactions, polled records)
//! against what the logs hold at the end.

use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A record's place: (topic, partition, offset).
pub type Place = (String, i32, i64);

/// What one send of the idempotent producer ended with.
#[derive(Debug, Clone)]
pub enum SendOutcome {
    /// Acknowledged at this place.
    Acked(Place),
    /// Failed or timed out: it may be in the log or not.
    Unknown,
}

/// One transaction of the transactional producer: its values and how it ended.
#[derive(Debug, Clone)]
pub struct Txn {
    pub values: Vec<String>,
    pub outcome: TxnOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnOutcome {
    Committed,
    Aborted,
    /// The commit or abort failed: all or nothing of it may be visible.
    Unknown,
}

/// A record a group consumer polled, with the consumer and its assignment generation (a
/// rebalance starts a new one, and positions may go back to the committed offset then).
#[derive(Debug, Clone)]
pub struct Polled {
    pub consumer: usize,
    pub generation: u64,
    pub place: Place,
    pub value: String,
}

/// Everything the run observed.
#[derive(Debug, Default)]
pub struct History {
    /// Value sent -> outcome (values are unique).
    pub sends: Vec<(String, SendOutcome)>,
    pub txns: Vec<Txn>,
    pub polled: Vec<Polled>,
    /// The final contents of each partition of the idempotent producer's topic
    /// (read_uncommitted), by (topic, partition), in offset order.
    pub final_log: BTreeMap<(String, i32), Vec<(i64, String)>>,
    /// The same for the transactional topic, read_committed.
    pub final_committed: BTreeMap<(String, i32), Vec<(i64, String)>>,
}

impl History {
    /// How many operations the history holds (sends, transactions, polls).
    pub fn len(&self) -> usize {
        self.sends.len() + self.txns.len() + self.polled.len()
    }
}

/// What the checker found; every count must be 0.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Anomalies {
    /// Acknowledged sends missing from the final log.
    pub lost: Vec<String>,
    /// Acknowledged sends found at another offset than the one acknowledged.
    pub moved: Vec<String>,
    /// Values in the final logs more than once.
    pub duplicates: Vec<String>,
    /// Values of one producer out of their send order within a partition.
    pub reordered: Vec<String>,
    /// Values of committed transactions missing from the read_committed final read.
    pub lost_committed: Vec<String>,
    /// Values of aborted transactions read by read_committed readers (final or group).
    pub aborted_read: Vec<String>,
    /// Transactions of unknown outcome partly visible.
    pub torn_txns: Vec<String>,
    /// A consumer's position going back within one assignment generation.
    pub nonmonotonic: Vec<String>,
}

impl Anomalies {
    /// Each kind's count and its first few instances.
    pub fn summary(&self) -> String {
        let kinds: [(&str, &Vec<String>); 8] = [
            ("lost", &self.lost),
            ("moved", &self.moved),
            ("duplicates", &self.duplicates),
            ("reordered", &self.reordered),
            ("lost_committed", &self.lost_committed),
            ("aborted_read", &self.aborted_read),
            ("torn_txns", &self.torn_txns),
            ("nonmonotonic", &self.nonmonotonic),
        ];
        kinds
            .iter()
            .map(|(name, found)| {
                let first: Vec<&String> = found.iter().take(3).collect();
                if found.is_empty() {
                    format!("{name} 0")
                } else {
                    format!("{name} {} (first {first:?})", found.len())
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub fn total(&self) -> usize {
        self.lost.len()
            + self.moved.len()
            + self.duplicates.len()
            + self.reordered.len()
            + self.lost_committed.len()
            + self.aborted_read.len()
            + self.torn_txns.len()
            + self.nonmonotonic.len()
    }
}

/// The producer's sequence within a value `w{sequence}` or `t{txn}-{i}`.
fn sequence(value: &str) -> Option<u64> {
    value.strip_prefix('w')?.parse().ok()
}

pub fn check(history: &History) -> Anomalies {
    let mut anomalies = Anomalies::default();

    // Where every value ended up.
    let mut found: HashMap<&str, Vec<Place>> = HashMap::new();
    for ((topic, partition), records) in history.final_log.iter().chain(&history.final_committed) {
        for (offset, value) in records {
            found
                .entry(value.as_str())
                .or_default()
                .push((topic.clone(), *partition, *offset));
        }
    }
    anomalies.duplicates = found
        .iter()
        .filter(|(_, places)| places.len() > 1)
        .map(|(value, places)| format!("{value} at {places:?}"))
        .collect();

    for (value, outcome) in &history.sends {
        if let SendOutcome::Acked(place) = outcome {
            match found.get(value.as_str()) {
                None => anomalies
                    .lost
                    .push(format!("{value} acknowledged at {place:?}")),
                Some(places) if !places.contains(place) => anomalies.moved.push(format!(
                    "{value} acknowledged at {place:?}, found at {places:?}"
                )),
                Some(_) => {}
            }
        }
    }

    for ((topic, partition), records) in &history.final_log {
        let mut last: Option<(u64, &str)> = None;
        for (_, value) in records {
            let Some(seq) = sequence(value) else { continue };
            if let Some((before, before_value)) = last
                && seq <= before
            {
                anomalies
                    .reordered
                    .push(format!("{topic}-{partition}: {value} after {before_value}"));
            }
            last = Some((seq, value));
        }
    }

    let committed_values: BTreeSet<&str> = history
        .final_committed
        .values()
        .flatten()
        .map(|(_, v)| v.as_str())
        .collect();
    let mut aborted: BTreeSet<&str> = BTreeSet::new();
    for txn in &history.txns {
        let visible = txn
            .values
            .iter()
            .filter(|v| committed_values.contains(v.as_str()))
            .count();
        match txn.outcome {
            TxnOutcome::Committed => anomalies.lost_committed.extend(
                txn.values
                    .iter()
                    .filter(|v| !committed_values.contains(v.as_str()))
                    .cloned(),
            ),
            TxnOutcome::Aborted => {
                aborted.extend(txn.values.iter().map(String::as_str));
                anomalies.aborted_read.extend(
                    txn.values
                        .iter()
                        .filter(|v| committed_values.contains(v.as_str()))
                        .map(|v| format!("{v} (final read)")),
                );
            }
            TxnOutcome::Unknown => {
                if visible != 0 && visible != txn.values.len() {
                    anomalies
                        .torn_txns
                        .push(format!("{:?}: {visible} visible", txn.values));
                }
            }
        }
    }

    let mut positions: HashMap<(usize, u64, &str, i32), i64> = HashMap::new();
    for polled in &history.polled {
        if aborted.contains(polled.value.as_str()) {
            anomalies
                .aborted_read
                .push(format!("{} (consumer {})", polled.value, polled.consumer));
        }
        let (topic, partition, offset) = &polled.place;
        let key = (
            polled.consumer,
            polled.generation,
            topic.as_str(),
            *partition,
        );
        if let Some(before) = positions.insert(key, *offset)
            && *offset <= before
        {
            anomalies.nonmonotonic.push(format!(
                "consumer {} {topic}-{partition}: offset {offset} after {before}",
                polled.consumer
            ));
        }
    }
    anomalies
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(values: &[(i64, &str)]) -> Vec<(i64, String)> {
        values.iter().map(|(o, v)| (*o, v.to_string())).collect()
    }

    fn place(partition: i32, offset: i64) -> Place {
        ("log".into(), partition, offset)
    }

    #[test]
    fn a_clean_history_has_no_anomalies() {
        let mut history = History {
            sends: vec![
                ("w1".into(), SendOutcome::Acked(place(0, 0))),
                ("w2".into(), SendOutcome::Unknown),
                ("w3".into(), SendOutcome::Acked(place(0, 1))),
            ],
            ..History::default()
        };
        history
            .final_log
            .insert(("log".into(), 0), log(&[(0, "w1"), (1, "w3")]));
        history.txns = vec![
            Txn {
                values: vec!["t1-0".into(), "t1-1".into()],
                outcome: TxnOutcome::Committed,
            },
            Txn {
                values: vec!["t2-0".into()],
                outcome: TxnOutcome::Aborted,
            },
        ];
        history
            .final_committed
            .insert(("txn".into(), 0), log(&[(0, "t1-0"), (3, "t1-1")]));
        history.polled = vec![Polled {
            consumer: 0,
            generation: 1,
            place: place(0, 0),
            value: "w1".into(),
        }];
        assert_eq!(check(&history), Anomalies::default());
        assert_eq!(history.len(), 6);
    }

    #[test]
    fn each_anomaly_is_found() {
        let mut history = History {
            sends: vec![
                ("w1".into(), SendOutcome::Acked(place(0, 0))),
                ("w2".into(), SendOutcome::Acked(place(0, 1))),
                ("w3".into(), SendOutcome::Acked(place(0, 2))),
                ("w4".into(), SendOutcome::Acked(place(0, 5))),
            ],
            ..History::default()
        };
        // w2 lost, w1 and w4 moved, w3 twice, w1 after w3.
        history.final_log.insert(
            ("log".into(), 0),
            log(&[(0, "w3"), (1, "w1"), (2, "w3"), (3, "w4")]),
        );
        history.txns = vec![
            Txn {
                values: vec!["t1-0".into()],
                outcome: TxnOutcome::Committed,
            },
            Txn {
                values: vec!["t2-0".into()],
                outcome: TxnOutcome::Aborted,
            },
            Txn {
                values: vec!["t3-0".into(), "t3-1".into()],
                outcome: TxnOutcome::Unknown,
            },
        ];
        history
            .final_committed
            .insert(("txn".into(), 0), log(&[(0, "t2-0"), (1, "t3-0")]));
        history.polled = vec![
            Polled {
                consumer: 0,
                generation: 1,
                place: place(0, 4),
                value: "w1".into(),
            },
            Polled {
                consumer: 0,
                generation: 1,
                place: place(0, 3),
                value: "t2-0".into(),
            },
            // A new generation may start over.
            Polled {
                consumer: 0,
                generation: 2,
                place: place(0, 0),
                value: "w3".into(),
            },
        ];
        let found = check(&history);
        assert_eq!(found.lost.len(), 1, "{found:?}");
        assert_eq!(found.moved.len(), 2, "{found:?}");
        assert_eq!(found.duplicates.len(), 1, "{found:?}");
        assert_eq!(found.reordered.len(), 1, "{found:?}");
        assert_eq!(found.lost_committed, vec!["t1-0".to_string()]);
        assert_eq!(found.aborted_read.len(), 2, "{found:?}");
        assert_eq!(found.torn_txns.len(), 1, "{found:?}");
        assert_eq!(found.nonmonotonic.len(), 1, "{found:?}");
    }
}
