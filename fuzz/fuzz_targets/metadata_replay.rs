//! Metadata log entries as a broker replays them at startup: decoded as metadata record
//! batches and applied to an image, one entry after another. Refusing an entry is fine; a
//! panic or an abort is not.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sluice::metadata::image::MetadataImage;
use sluice::metadata::records::decode_batch;

fuzz_target!(|input: &[u8]| {
    let mut image = MetadataImage::default();
    // Entries separated by a two-byte length, as many as the input holds.
    let mut rest = input;
    let mut offset = 0;
    while let Some((length, tail)) = rest.split_first_chunk::<2>() {
        let length = (usize::from(length[0]) << 8 | usize::from(length[1])).min(tail.len());
        let (entry, tail) = tail.split_at(length);
        rest = tail;
        offset += 1;
        if let Ok(records) = decode_batch(entry) {
            let _ = image.apply(offset, &records);
        }
    }
});
