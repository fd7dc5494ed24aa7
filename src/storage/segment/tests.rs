use super::*;
use crate::record::test_support::batch;

fn filled_segment(dir: &Path, batches: i64, per_batch: i32) -> Segment {
    let mut segment = Segment::create(dir, 0, 4096, 100, 0).unwrap();
    for i in 0..batches {
        let mut b = batch(0, per_batch, 1000 + i * 10, 50);
        record::assign_offsets(&mut b, i * per_batch as i64, 0, None);
        segment.append(&b).unwrap();
    }
    segment
}

#[test]
fn read_from_inside_a_batch_returns_the_whole_batch() {
    let dir = tempfile::tempdir().unwrap();
    let segment = filled_segment(dir.path(), 10, 5);
    let read = segment.read(12, 1, i64::MAX, true).unwrap().unwrap();
    let bytes = read.records.read().unwrap();
    let view = BatchView::new(&bytes).unwrap();
    assert_eq!(view.base_offset(), 10);
    assert_eq!(read.next_offset, 15);
    let read = segment.read(0, 1 << 20, 23, true).unwrap().unwrap();
    assert_eq!(
        read.next_offset, 20,
        "stops before the batch crossing max_offset"
    );
    assert!(segment.read(50, 1 << 20, i64::MAX, true).unwrap().is_none());
}

/// Every read agrees with a plain walk over all batches: the index shortcuts at both ends
/// of the range change nothing.
#[test]
fn reads_match_a_walk_over_every_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = Segment::create(dir.path(), 0, 4096, 300, 0).unwrap();
    let mut all = Vec::new();
    let mut next = 0i64;
    for i in 0..60i64 {
        let count = 1 + (i % 4) as i32;
        let mut b = batch(0, count, 1000 + i, 20 + (i as usize * 37) % 400);
        record::assign_offsets(&mut b, next, 0, None);
        segment.append(&b).unwrap();
        all.push(
            segment
                .read_location(segment.size() - b.len() as u32)
                .unwrap()
                .unwrap(),
        );
        next += count as i64;
    }
    assert!(
        segment.offset_index.entries() > 5,
        "the test needs index entries"
    );
    let expected = |offset: i64, max_bytes: usize, max_offset: i64, min_one: bool| {
        let first = all.iter().position(|b| b.last_offset >= offset)?;
        if all[first].last_offset >= max_offset {
            return None;
        }
        let start = all[first].position;
        let mut end = start;
        let mut next_offset = 0;
        for b in &all[first..] {
            if b.last_offset >= max_offset
                || ((b.position + b.size - start) as usize > max_bytes
                    && !(min_one && end == start))
            {
                break;
            }
            end = b.position + b.size;
            next_offset = b.last_offset + 1;
        }
        (end > start).then_some((start as u64, (end - start) as usize, next_offset))
    };
    for offset in (0..next + 2).step_by(3) {
        for max_bytes in [1, 100, 500, 1000, 3000, 7000, 100_000] {
            for max_offset in [next / 3, next / 2 + 1, next - 1, next, i64::MAX] {
                for min_one in [false, true] {
                    let got = segment
                        .read(offset, max_bytes, max_offset, min_one)
                        .unwrap()
                        .map(|r| (r.records.position(), r.records.len(), r.next_offset));
                    assert_eq!(
                        got,
                        expected(offset, max_bytes, max_offset, min_one),
                        "offset {offset} max_bytes {max_bytes} max_offset {max_offset} min_one {min_one}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_reloaded_segment_ages_from_its_first_batch_read_on_demand() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = filled_segment(dir.path(), 40, 2);
    assert!(
        segment.offset_index.entries() > 0,
        "loaded from an index entry on"
    );
    assert_eq!(segment.time_waited_for_roll(0, 5000).unwrap(), 5000 - 1001);
    segment.seal().unwrap();
    drop(segment);
    let mut reloaded = Segment::open(dir.path(), 0, true, 4096, 100, 0).unwrap();
    assert!(reloaded.first_batch_unread, "not read at load");
    assert_eq!(reloaded.time_waited_for_roll(0, 5000).unwrap(), 5000 - 1001);
    assert!(!reloaded.first_batch_unread);
    assert_eq!(reloaded.next_offset(), 80);
    assert_eq!(reloaded.max_timestamp(), 1000 + 39 * 10 + 1);
}

#[test]
fn index_lookup_and_timestamp_search() {
    let dir = tempfile::tempdir().unwrap();
    let segment = filled_segment(dir.path(), 40, 2);
    assert!(segment.offset_index.entries() > 3);
    for target in [0, 1, 37, 38, 79] {
        let found = segment.find_batch(target).unwrap().unwrap();
        assert!(found.base_offset <= target && target <= found.last_offset);
    }
    let batch = segment.find_batch_by_timestamp(1205).unwrap().unwrap();
    assert_eq!(batch.base_offset, 42); // batch 20 ends at 1201; batch 21 starts at 1210
    assert_eq!(segment.max_timestamp(), 1000 + 39 * 10 + 1);
}

#[test]
fn recovery_truncates_torn_tail_and_rebuilds_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let segment = filled_segment(dir.path(), 20, 3);
    let good_size = segment.size();
    let entries = segment.offset_index.entries();
    segment
        .log
        .get()
        .unwrap()
        .write_all_at(
            b"garbage that is not a batch at all, not even close......................",
            good_size as u64,
        )
        .unwrap();
    segment.flush().unwrap();
    drop(segment);
    let mut reopened = Segment::open(dir.path(), 0, true, 4096, 100, 0).unwrap();
    let dropped = reopened.recover(1 << 20).unwrap();
    assert_eq!(reopened.size(), good_size);
    assert!(dropped > 0);
    assert_eq!(reopened.next_offset(), 60);
    assert_eq!(reopened.offset_index.entries(), entries);
}

#[test]
fn recovery_stops_at_corrupt_crc() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = filled_segment(dir.path(), 5, 1);
    let third = segment.find_batch(2).unwrap().unwrap();
    segment
        .log
        .get()
        .unwrap()
        .write_all_at(b"X", (third.position + 70) as u64)
        .unwrap();
    segment.recover(1 << 20).unwrap();
    assert_eq!(segment.next_offset(), 2);
    assert_eq!(segment.size(), third.position);
}

#[test]
fn truncate_and_seal() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = filled_segment(dir.path(), 10, 2);
    segment.truncate_to(8).unwrap();
    assert_eq!(segment.next_offset(), 8);
    segment.seal().unwrap();
    let reopened = Segment::open(dir.path(), 0, false, 4096, 100, 0).unwrap();
    assert_eq!(reopened.next_offset(), 8);
    assert!(reopened.indexes_consistent(true).unwrap());
}

/// A stamped batch goes to the file as its header followed by its records, at the end, for
/// records small and large (one `pwritev` each).
#[test]
fn a_stamped_batch_is_its_header_then_its_records_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = Segment::create(dir.path(), 0, 4096, 4096, 0).unwrap();
    let mut expected = Vec::new();
    for (i, value_size) in [10usize, 40_000, 300].into_iter().enumerate() {
        let mut b = batch(0, 3, 1000 + i as i64, value_size);
        record::assign_offsets(&mut b, i as i64 * 3, 0, None);
        let header: [u8; HEADER_LEN] = b[..HEADER_LEN].try_into().unwrap();
        segment.append_stamped(&header, &b[HEADER_LEN..]).unwrap();
        expected.extend_from_slice(&b);
    }
    assert_eq!(segment.size() as usize, expected.len());
    assert_eq!(&segment.read_all().unwrap()[..], &expected[..]);
    assert_eq!(segment.next_offset(), 9);
}

fn allocated_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().blocks() * 512
}

/// `preallocate`: the blocks are reserved past the data, the file's length is the data's end
/// all along, and sealing gives back what was not used.
#[test]
fn a_preallocated_segment_keeps_its_length_and_gives_the_rest_back_when_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = Segment::create(dir.path(), 0, 4096, 4096, 0).unwrap();
    segment.preallocate(8 << 20);
    let path = segment.log_path().to_path_buf();
    let mut b = batch(0, 5, 1000, 100);
    record::assign_offsets(&mut b, 0, 0, None);
    segment.append(&b).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), b.len() as u64);
    assert!(
        allocated_bytes(&path) >= 8 << 20,
        "{}",
        allocated_bytes(&path)
    );
    segment.seal().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), b.len() as u64);
    assert!(
        allocated_bytes(&path) < 64 << 10,
        "{}",
        allocated_bytes(&path)
    );
    assert_eq!(&segment.read_all().unwrap()[..], &b[..]);
}

/// A preallocated segment the broker never sealed (a crash) is known for one when opened, and
/// sealing it then gives the reserved blocks back too.
#[test]
fn a_preallocated_segment_left_by_a_crash_is_trimmed_when_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let mut segment = Segment::create(dir.path(), 0, 4096, 4096, 0).unwrap();
    segment.preallocate(8 << 20);
    let mut b = batch(0, 5, 1000, 100);
    record::assign_offsets(&mut b, 0, 0, None);
    segment.append(&b).unwrap();
    let path = segment.log_path().to_path_buf();
    assert!(
        allocated_bytes(&path) >= 8 << 20,
        "{}",
        allocated_bytes(&path)
    );
    drop(segment);
    let mut reopened = Segment::open(dir.path(), 0, true, 4096, 4096, 0).unwrap();
    assert_eq!(reopened.size() as usize, b.len());
    reopened.seal().unwrap();
    assert!(
        allocated_bytes(&path) < 64 << 10,
        "{}",
        allocated_bytes(&path)
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), b.len() as u64);
}

#[test]
fn appends_start_write_back_once_a_chunk_accumulated_and_truncation_moves_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let chunk = file_io::writeback_bytes();
    assert_eq!(chunk, DEFAULT_WRITEBACK_BYTES);
    let mut segment = Segment::create(dir.path(), 0, 4096, 4096, 0).unwrap();
    let append = |segment: &mut Segment| {
        let offset = segment.next_offset();
        let mut b = batch(0, 1, 1000 + offset, (chunk / 4) as usize);
        record::assign_offsets(&mut b, offset, 0, None);
        segment.append(&b).unwrap();
    };
    for _ in 0..3 {
        append(&mut segment);
    }
    assert_eq!(segment.written_back, 0, "less than a chunk appended");
    append(&mut segment);
    assert_eq!(
        segment.written_back,
        segment.size(),
        "a chunk: started for all appended"
    );
    let started_at = segment.written_back;
    append(&mut segment);
    assert_eq!(segment.written_back, started_at, "less than a chunk since");
    segment.truncate_to(2).unwrap();
    assert!(segment.size() < started_at);
    append(&mut segment);
    assert!(segment.written_back <= segment.size());
    for _ in 0..4 {
        append(&mut segment);
    }
    assert_eq!(segment.written_back, segment.size());
    assert_eq!(segment.next_offset(), 7);
    assert!(segment.tail_is_valid().unwrap());
}
