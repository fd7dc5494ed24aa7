//! A partition directory whose segment (and its indexes) hold arbitrary bytes, loaded after a
//! clean and after an unclean shutdown: recovery must truncate what is not valid and leave a
//! log that takes an append and reads back. The input is split into the `.log` bytes and
//! the `.index` / `.timeindex` bytes by its first two bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice::config::{BrokerConfig, LogConfig};
use sluice::storage::log::Log;
use sluice::types::TopicPartition;
use std::sync::OnceLock;

fn log_config() -> &'static LogConfig {
    static CONFIG: OnceLock<LogConfig> = OnceLock::new();
    CONFIG.get_or_init(|| {
        let broker = BrokerConfig::with_overrides(&[]).expect("config");
        LogConfig::resolve(&broker.topic_defaults, &Default::default())
    })
}

fuzz_target!(|input: &[u8]| {
    let Some((&[a, b], rest)) = input.split_first_chunk::<2>().map(|(h, r)| (h, r)) else {
        return;
    };
    let split = (usize::from(a) << 8 | usize::from(b)).min(rest.len());
    let (log_bytes, index_bytes) = rest.split_at(split);
    let (offset_index, time_index) = index_bytes.split_at(index_bytes.len() / 2);
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("dir");
    let config = log_config();
    for clean in [true, false] {
        let partition = dir.path().join(format!("t-{}", u8::from(clean)));
        std::fs::create_dir_all(&partition).expect("dir");
        let name = "00000000000000000000";
        std::fs::write(partition.join(format!("{name}.log")), log_bytes).expect("write");
        std::fs::write(partition.join(format!("{name}.index")), offset_index).expect("write");
        std::fs::write(partition.join(format!("{name}.timeindex")), time_index).expect("write");
        let tp = TopicPartition::new("t", i32::from(clean));
        let Ok((mut log, _)) = Log::load(&partition, tp, config.clone(), 0, 0, clean, 0) else {
            continue;
        };
        let end = log.log_end_offset();
        let batch = sluice::record::produced::CheckedBatch::built(sluice::record::build_batch(&[
            sluice::record::NewRecord {
                key: Some(b"k"),
                value: Some(b"v"),
                timestamp: 1,
            },
        ]))
        .expect("a batch the broker builds");
        if log.append_as_leader(&batch, 0, 1).is_ok() {
            log.set_high_watermark(end + 1);
            let _ = log.read(end, 1 << 20, end + 1, true);
        }
        let _ = log.offset_for_timestamp(0);
        let _ = log.max_timestamp_record();
    }
});
