//! The partitions this broker hosts and the two hot paths over them (Kafka's `Partition` apart
//! from `ReplicaManager`, with `DelayedProduce` / `DelayedFetch`): a client's batches enter
//! through ONE entry, [`ReplicaManager::append_records`] (checks, KIP-890 verification,
//! append, flush, the wait for acks), and reads through [`ReplicaManager::fetch`] (with the
//! `min_bytes`/`max_wait_ms` long-poll). `fetcher.rs` is the follower side.
//!
//! | file | owns |
//! |---|---|
//! | `partition.rs` | one partition: leadership, followers' progress, ISR, high watermark, waiters |
//! | `produce.rs` | the append path: the one produce entry, checks, verification, markers, group-committed fsyncs |
//! | `fetch.rs` | reads for consumers and followers, the long-poll |
//! | `manager.rs` | every hosted partition, by topic and partition |
//! | `fetcher.rs` | a follower's fetch loop per leader (Kafka's `ReplicaFetcherThread`) |
//! | `alter_partition.rs` | the leader's outstanding ISR change requests and their backoff |
//! | `throttle.rs` | the leader and follower replication throttles (KIP-73) |
//! | `list_offsets.rs` | ListOffsets on the leader (by special timestamps or time) |

pub mod alter_partition;
pub mod fetch;
pub mod fetcher;
pub mod list_offsets;
pub mod manager;
pub mod partition;
pub mod produce;
#[cfg(test)]
mod tests;
pub mod throttle;

pub use fetch::{FetchLimits, FetchRequestPartition, FetchedPartition};
pub use manager::ReplicaManager;
pub use partition::{ActiveProducer, FollowerProgress, Leadership, Partition};
pub use produce::{ProduceSettings, TransactionVerifier, TxnPartitionCheck};
