//! A produced partition's records, validated as the leader does (header checks, then every
//! record walked, all codecs, compressed payloads streamed within the bound; recompressed into a
//! topic's codec), and read as the coordinators' loaders read their topics. Refusing is fine; a panic, an abort or an
//! allocation the input sizes is not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice::record::validate::{ValidationPolicy, validate_records};
use sluice::record::{BatchView, Compression, codec, control, records};

fuzz_target!(|bytes: &[u8]| {
    for policy in [
        ValidationPolicy {
            compacted: false,
            log_append_time: false,
            timestamp_before_max_ms: i64::MAX,
            timestamp_after_max_ms: 3_600_000,
            compression: None,
        },
        ValidationPolicy {
            compacted: true,
            log_append_time: true,
            timestamp_before_max_ms: 0,
            timestamp_after_max_ms: 0,
            compression: Some((Compression::Lz4, 9)),
        },
    ] {
        if sluice::record::validate_produced(bytes, 1 << 20).is_ok()
            && let Ok(batch) = BatchView::new(bytes)
        {
            if validate_records(&batch, &policy, 1_700_000_000_000).is_ok()
                && let Some((codec, level)) = policy.compression
            {
                // A topic codec: the batch recompressed as the leader stores it.
                let _ = sluice::record::recompress(&batch, codec, level);
            }
        }
    }
    // Stored batches as the coordinators replay them (control records included).
    for batch in sluice::record::BatchIter::new(bytes).flatten() {
        let _ = control::read_marker(&batch);
        if let Ok(codec) = batch.compression()
            && let Ok(payload) = codec::decompress(codec, batch.records_payload())
        {
            let _ = records::parse_records(&payload, batch.records_count());
        }
    }
});
