use super::*;

#[test]
fn offset_index_lookup_finds_floor_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = OffsetIndex::open(&dir.path().join("a.index"), 100, 80, true).unwrap();
    assert_eq!(index.lookup(150).unwrap(), (100, 0));
    for i in 0..5 {
        assert!(index.append(100 + i * 10, (i * 1000) as u32).unwrap());
    }
    assert_eq!(index.lookup(99).unwrap(), (100, 0));
    assert_eq!(index.lookup(100).unwrap(), (100, 0));
    assert_eq!(index.lookup(125).unwrap(), (120, 2000));
    assert_eq!(index.lookup(140).unwrap(), (140, 4000));
    assert_eq!(index.lookup(10_000).unwrap(), (140, 4000));
    index.truncate_to(121).unwrap();
    assert_eq!(index.entries(), 3);
    index.truncate_to(120).unwrap();
    assert_eq!(index.entries(), 2);
    assert!(index.is_consistent(10_000).unwrap());
}

#[test]
fn lookups_across_the_warm_and_cold_sections_agree_with_a_full_scan() {
    let dir = tempfile::tempdir().unwrap();
    let entries = 3 * file::WARM_SECTION_BYTES / 8;
    let mut index =
        OffsetIndex::open(&dir.path().join("w.index"), 0, (entries * 8) as u64, true).unwrap();
    for i in 0..entries as i64 {
        assert!(index.append(1 + i * 3, (i * 100) as u32).unwrap());
    }
    for target in -1..(entries as i64 * 3 + 5) {
        let expected = (0..entries as i64)
            .map(|i| (1 + i * 3, (i * 100) as u32))
            .take_while(|&(offset, _)| offset <= target)
            .last()
            .unwrap_or((0, 0));
        assert_eq!(index.lookup(target).unwrap(), expected, "target {target}");
    }
}

#[test]
fn offset_index_fills_and_trims() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.index");
    let mut index = OffsetIndex::open(&path, 0, 20, true).unwrap();
    assert!(index.append(1, 10).unwrap());
    assert!(index.append(2, 20).unwrap());
    assert!(index.is_full());
    assert!(!index.append(3, 30).unwrap());
    index.trim().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 16);
    drop(index);
    let reopened = OffsetIndex::open(&path, 0, 20, false).unwrap();
    assert_eq!(reopened.entries(), 2);
    assert_eq!(reopened.lookup(5).unwrap(), (2, 20));
}

#[test]
fn a_writable_index_grows_on_its_first_append_not_when_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.index");
    let mut index = OffsetIndex::open(&path, 0, 80, true).unwrap();
    index.append(1, 10).unwrap();
    index.trim().unwrap();
    drop(index);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 8);

    // Reopened as the active segment's index (a restart): the file is left as it is.
    let mut index = OffsetIndex::open(&path, 0, 80, true).unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 8);
    assert!(
        !index.is_full(),
        "room to grow counts, not the current length"
    );
    assert_eq!(index.lookup(5).unwrap(), (1, 10));
    assert!(index.append(2, 20).unwrap());
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        80,
        "grown to the maximum"
    );
    for i in 3..=10 {
        assert!(index.append(i, i as u32 * 10).unwrap());
    }
    assert!(index.is_full());
    assert_eq!(index.lookup(7).unwrap(), (7, 70));
}

#[test]
fn time_index_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = TimeIndex::open(&dir.path().join("a.timeindex"), 0, 120, true).unwrap();
    assert_eq!(index.lookup(5).unwrap(), 0);
    index.maybe_append(1000, 10).unwrap();
    index.maybe_append(900, 20).unwrap(); // not increasing: ignored
    index.maybe_append(2000, 30).unwrap();
    assert_eq!(index.entries(), 2);
    assert_eq!(index.lookup(999).unwrap(), 0);
    assert_eq!(index.lookup(1000).unwrap(), 0);
    assert_eq!(index.lookup(1500).unwrap(), 10);
    assert_eq!(index.lookup(5000).unwrap(), 30);
    index.truncate_to(30).unwrap();
    assert_eq!(index.last_entry(), Some((1000, 10)));
}

#[test]
fn inconsistent_index_is_detected() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.index");
    std::fs::write(&path, [0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 1]).unwrap();
    let index = OffsetIndex::open(&path, 0, 64, false).unwrap();
    assert!(!index.is_consistent(100).unwrap());
}

fn leaked_set(capacity: usize) -> &'static IndexMaps {
    Box::leak(Box::new(IndexMaps::new(capacity)))
}

/// Maps of this process whose file name ends in `suffix`.
fn maps_of(suffix: &str) -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|line| line.trim_end().ends_with(suffix))
        .count()
}

#[test]
fn at_most_capacity_index_files_stay_mapped_and_an_unmapped_one_is_mapped_again_on_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let set = leaked_set(3);
    let suffix = format!("{}.bounded", std::process::id());
    let mut files: Vec<IndexFile> = (0..10)
        .map(|i| {
            let path = dir.path().join(format!("{i}.{suffix}"));
            let mut file = IndexFile::open_in(set, &path, 8, 800, true).unwrap();
            for n in 0..5u32 {
                let mut entry = [0u8; 8];
                entry[..4].copy_from_slice(&n.to_be_bytes());
                entry[4..].copy_from_slice(&(i * 1000 + n).to_be_bytes());
                assert!(file.push(&entry).unwrap());
            }
            file
        })
        .collect();
    assert!(set.stats().open <= 3, "{:?}", set.stats());
    assert!(maps_of(&suffix) <= 3, "{} mapped", maps_of(&suffix));
    for (i, file) in files.iter().enumerate() {
        let position = file
            .with_entries(|entries| u32_at(entries.get(2), 4))
            .unwrap();
        assert_eq!(position, i as u32 * 1000 + 2);
        assert!(set.stats().open <= 3, "{:?}", set.stats());
    }
    let stats = set.stats();
    assert!(stats.evictions >= 7 && stats.misses >= 10, "{stats:?}");
    // An unmapped file's entries are made durable by syncing the file.
    for file in &files {
        file.flush().unwrap();
    }
    for file in &mut files {
        file.trim().unwrap();
    }
    assert_eq!(set.stats().open, 0, "trimmed files are unmapped");
    drop(files);
    assert_eq!(maps_of(&suffix), 0);
}

#[test]
fn opening_an_index_maps_nothing_and_knows_its_last_entry() {
    let dir = tempfile::tempdir().unwrap();
    let set = leaked_set(10);
    let path = dir.path().join("d.index");
    std::fs::write(&path, [0, 0, 0, 1, 0, 0, 0, 10, 0, 0, 0, 4, 0, 0, 0, 40]).unwrap();
    let index = OffsetIndex {
        file: IndexFile::open_in(set, &path, OFFSET_ENTRY, 800, false).unwrap(),
        base_offset: 100,
    };
    assert_eq!(index.last_entry(), Some((104, 40)));
    assert!(index.last_entry_sane(41));
    assert_eq!(
        index.lookup(200).unwrap(),
        (104, 40),
        "the last entry, from memory"
    );
    assert_eq!(set.stats().open, 0);
    assert_eq!(index.lookup(103).unwrap(), (101, 10));
    assert_eq!(set.stats().open, 1);
}
