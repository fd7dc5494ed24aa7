//! DescribeLogDirs and AlterReplicaLogDirs over one log directory and over several (JBOD).

use super::*;

#[tokio::test]
async fn log_dir_apis_describe_the_one_directory_and_refuse_others() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).await;
    let canonical = dir.path().canonicalize().unwrap().display().to_string();

    let all: DescribeLogDirsResponse = call(
        &ctx,
        ApiKey::DescribeLogDirs,
        4,
        &DescribeLogDirsRequest::default().with_topics(None),
    )
    .await;
    assert_eq!(all.results.len(), 1);
    let result = &all.results[0];
    assert_eq!(result.error_code, 0);
    assert_eq!(result.log_dir.as_str(), canonical);
    assert!(result.total_bytes > 0 && result.usable_bytes <= result.total_bytes);
    let t = result
        .topics
        .iter()
        .find(|t| t.name.as_str() == "t")
        .unwrap();
    let sizes: Vec<(i32, bool, i64)> = t
        .partitions
        .iter()
        .map(|p| (p.partition_index, p.partition_size > 0, p.offset_lag))
        .collect();
    assert_eq!(sizes, vec![(0, true, 0), (1, false, 0)]);

    let one: DescribeLogDirsResponse = call(
        &ctx,
        ApiKey::DescribeLogDirs,
        4,
        &DescribeLogDirsRequest::default().with_topics(Some(vec![
            describe_log_dirs_request::DescribableLogDirTopic::default()
                .with_topic(topic_name("t"))
                .with_partitions(vec![1, 7]),
        ])),
    )
    .await;
    let listed: Vec<(String, Vec<i32>)> = one.results[0]
        .topics
        .iter()
        .map(|t| {
            let partitions = t.partitions.iter().map(|p| p.partition_index).collect();
            (t.name.to_string(), partitions)
        })
        .collect();
    assert_eq!(listed, vec![("t".to_string(), vec![1])]);

    let elsewhere = tempfile::tempdir().unwrap();
    let alter = |path: String, partitions: Vec<i32>| {
        AlterReplicaLogDirsRequest::default().with_dirs(vec![
            alter_replica_log_dirs_request::AlterReplicaLogDir::default()
                .with_path(s(&path))
                .with_topics(vec![
                    alter_replica_log_dirs_request::AlterReplicaLogDirTopic::default()
                        .with_name(topic_name("t"))
                        .with_partitions(partitions),
                ]),
        ])
    };
    let codes = |r: AlterReplicaLogDirsResponse| -> Vec<(i32, i16)> {
        r.results[0]
            .partitions
            .iter()
            .map(|p| (p.partition_index, p.error_code))
            .collect()
    };
    let same: AlterReplicaLogDirsResponse = call(
        &ctx,
        ApiKey::AlterReplicaLogDirs,
        2,
        &alter(canonical.clone(), vec![0, 9]),
    )
    .await;
    assert_eq!(
        codes(same),
        vec![(0, 0), (9, 9)],
        "NONE; REPLICA_NOT_AVAILABLE"
    );
    let other: AlterReplicaLogDirsResponse = call(
        &ctx,
        ApiKey::AlterReplicaLogDirs,
        2,
        &alter(elsewhere.path().display().to_string(), vec![0]),
    )
    .await;
    assert_eq!(codes(other), vec![(0, 57)], "LOG_DIR_NOT_FOUND");
}

#[tokio::test]
async fn several_log_dirs_are_described_and_a_replica_moves_between_them() {
    let root = tempfile::tempdir().unwrap();
    let (a, b) = (root.path().join("a"), root.path().join("b"));
    let dirs = format!("{},{}", a.display(), b.display());
    let ctx = context_with(&a, &[("log.dirs", &dirs)]).await;
    let (a, b) = (a.canonicalize().unwrap(), b.canonicalize().unwrap());
    let describe = || async {
        let all: DescribeLogDirsResponse = call(
            &ctx,
            ApiKey::DescribeLogDirs,
            4,
            &DescribeLogDirsRequest::default().with_topics(None),
        )
        .await;
        all.results
            .iter()
            .map(|r| {
                assert_eq!(r.error_code, 0);
                let partitions: Vec<(i32, bool)> = r
                    .topics
                    .iter()
                    .filter(|t| t.name.as_str() == "t")
                    .flat_map(|t| {
                        t.partitions
                            .iter()
                            .map(|p| (p.partition_index, p.is_future_key))
                    })
                    .collect();
                (r.log_dir.to_string(), partitions)
            })
            .collect::<Vec<_>>()
    };
    let text = |p: &std::path::Path| p.display().to_string();
    // One partition in each directory: the one holding fewest logs takes the next.
    assert_eq!(
        describe().await,
        vec![(text(&a), vec![(0, false)]), (text(&b), vec![(1, false)])]
    );
    // Each directory carries the node's identity with a directory id of its own.
    let ids = [&a, &b].map(|d| crate::metadata::read_directory_id(d).unwrap());
    assert_ne!(ids[0], ids[1]);

    let moved: AlterReplicaLogDirsResponse = call(
        &ctx,
        ApiKey::AlterReplicaLogDirs,
        2,
        &AlterReplicaLogDirsRequest::default().with_dirs(vec![
            alter_replica_log_dirs_request::AlterReplicaLogDir::default()
                .with_path(s(&text(&b)))
                .with_topics(vec![
                    alter_replica_log_dirs_request::AlterReplicaLogDirTopic::default()
                        .with_name(topic_name("t"))
                        .with_partitions(vec![0]),
                ]),
        ]),
    )
    .await;
    assert_eq!(moved.results[0].partitions[0].error_code, 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while describe().await != vec![(text(&a), vec![]), (text(&b), vec![(0, false), (1, false)])] {
        assert!(
            std::time::Instant::now() < deadline,
            "t-0 did not move: {:?}",
            describe().await
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The moved replica keeps its records and takes new ones.
    let tp = TopicPartition::new("t", 0);
    let partition = ctx.broker.replicas().get(&tp).unwrap();
    assert_eq!(
        crate::storage::manager::lock(partition.log()).log_end_offset(),
        3
    );
    partition
        .append(
            &crate::record::test_support::checked(crate::record::test_support::batch(
                0, 2, 1_000, 10,
            )),
            1,
        )
        .unwrap();
    assert_eq!(
        crate::storage::manager::lock(partition.log()).log_end_offset(),
        5
    );
    assert!(b.join("t-0").join("00000000000000000000.log").exists());
    assert!(!a.join("t-0").exists());
}
