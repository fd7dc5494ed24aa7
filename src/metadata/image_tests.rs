//! Unit tests of the metadata image: replaying records, snapshots, local changes.
use super::*;

fn topic_records(name: &str, id: Uuid, assignment: &[&[i32]]) -> Vec<MetadataRecord> {
    let mut records = vec![MetadataRecord::Topic {
        name: name.into(),
        topic_id: id,
    }];
    for (p, replicas) in assignment.iter().enumerate() {
        records.push(MetadataRecord::Partition {
            topic_id: id,
            partition_id: p as i32,
            replicas: replicas.to_vec(),
            isr: replicas.to_vec(),
            leader: replicas[0],
            leader_epoch: 0,
            partition_epoch: 0,
            reassignment: None,
        });
    }
    records
}

#[test]
fn partition_changes_bump_epochs_and_deltas_name_local_roles() {
    let id = Uuid::new_v4();
    let mut image = MetadataImage::default();
    image
        .apply(1, &topic_records("t", id, &[&[1, 2, 3], &[2, 3, 1]]))
        .unwrap();
    let before = image.clone();
    image
        .apply(
            2,
            &[MetadataRecord::PartitionChange {
                topic_id: id,
                partition_id: 0,
                leader: Some(2),
                isr: Some(vec![2, 3]),
                replicas: None,
                reassignment: None,
            }],
        )
        .unwrap();
    let p0 = image.partition("t", 0).unwrap();
    assert_eq!((p0.leader, p0.leader_epoch, p0.partition_epoch), (2, 1, 1));
    assert_eq!(p0.isr, vec![2, 3]);
    assert_eq!(image.offset, 2);
    // An ISR-only change keeps the leader epoch.
    image
        .apply(
            3,
            &[MetadataRecord::PartitionChange {
                topic_id: id,
                partition_id: 0,
                leader: None,
                isr: Some(vec![2, 3, 1]),
                replicas: None,
                reassignment: None,
            }],
        )
        .unwrap();
    let p0 = image.partition("t", 0).unwrap();
    assert_eq!((p0.leader_epoch, p0.partition_epoch), (1, 2));

    let changes = local_changes(&before, &image, 2);
    assert_eq!(changes.len(), 1);
    assert!(matches!(
        &changes[0],
        LocalChange::Lead { partition: 0, .. }
    ));
    let changes = local_changes(&before, &image, 1);
    assert!(
        matches!(&changes[0], LocalChange::Follow { partition: 0, registration, .. } if registration.leader == 2)
    );
    // Broker 1 learns of both partitions from an empty image.
    assert_eq!(local_changes(&MetadataImage::default(), &image, 1).len(), 2);
    // Removing the topic removes both partitions on every replica.
    let mut removed = image.clone();
    removed
        .apply(4, &[MetadataRecord::RemoveTopic { topic_id: id }])
        .unwrap();
    assert_eq!(local_changes(&image, &removed, 3).len(), 2);
    assert!(removed.topic_by_id(id).is_none());
}

#[test]
fn an_image_rebuilt_from_its_records_is_the_same_image() {
    let id = Uuid::new_v4();
    let mut image = MetadataImage::default();
    let mut records = vec![
        MetadataRecord::ClusterId {
            cluster_id: "c".into(),
        },
        MetadataRecord::RegisterBroker {
            broker_id: 1,
            incarnation_id: Uuid::new_v4(),
            broker_epoch: 2,
            endpoints: Vec::new(),
            rack: Some("r".into()),
            fenced: false,
            log_dirs: vec![Uuid::from_u128(1), Uuid::from_u128(2)],
        },
        MetadataRecord::BrokerRegistrationChange {
            broker_id: 1,
            broker_epoch: 2,
            fenced: None,
            in_controlled_shutdown: Some(true),
            log_dirs: Some(vec![Uuid::from_u128(1)]),
        },
    ];
    records.extend(topic_records("t", id, &[&[1], &[1]]));
    records.push(MetadataRecord::ReplicaDirectory {
        topic_id: id,
        partition_id: 0,
        broker_id: 1,
        directory_id: Uuid::from_u128(2),
    });
    records.push(MetadataRecord::PartitionChange {
        topic_id: id,
        partition_id: 1,
        leader: Some(NO_LEADER),
        isr: None,
        replicas: None,
        reassignment: None,
    });
    records.push(MetadataRecord::Config {
        resource: ConfigResource::Topic,
        resource_name: "t".into(),
        name: "retention.ms".into(),
        value: Some("5".into()),
    });
    records.push(MetadataRecord::ProducerIds {
        broker_id: 1,
        broker_epoch: 2,
        next_producer_id: 3000,
    });
    for controller_id in [5, 6] {
        records.push(MetadataRecord::RegisterController {
            controller_id,
            incarnation_id: Uuid::new_v4(),
            endpoints: Vec::new(),
        });
    }
    records.push(MetadataRecord::UnregisterController { controller_id: 6 });
    image.apply(9, &records).unwrap();
    assert_eq!(image.controllers.keys().collect::<Vec<_>>(), [&5]);
    let partition = image.partition("t", 0).unwrap();
    assert!(
        image.replica_dir_offline(partition, 1),
        "its directory is no longer online"
    );
    assert!(!image.replica_dir_offline(image.partition("t", 1).unwrap(), 1));
    let mut rebuilt = MetadataImage::default();
    rebuilt.apply(9, &image.to_records()).unwrap();
    assert_eq!(rebuilt, image);
}

#[test]
fn a_record_that_does_not_apply_leaves_the_image_unchanged() {
    let id = Uuid::new_v4();
    let mut image = MetadataImage::default();
    image.apply(1, &topic_records("t", id, &[&[1]])).unwrap();
    let before = image.clone();
    let bad = [
        MetadataRecord::Config {
            resource: ConfigResource::Topic,
            resource_name: "t".into(),
            name: "retention.ms".into(),
            value: Some("1".into()),
        },
        MetadataRecord::PartitionChange {
            topic_id: id,
            partition_id: 5,
            leader: None,
            isr: None,
            replicas: None,
            reassignment: None,
        },
    ];
    assert!(image.apply(2, &bad).is_err());
    assert_eq!(image, before);
    assert!(image.apply(2, &topic_records("t", id, &[&[1]])).is_err());
}

#[test]
fn local_changes_name_only_what_changed_among_many_topics_and_a_recreated_topic_is_replaced() {
    let mut image = MetadataImage::default();
    let mut offset = 0;
    let mut ids = Vec::new();
    for t in 0..2_000 {
        let id = Uuid::new_v4();
        offset += 1;
        image
            .apply(offset, &topic_records(&format!("t{t}"), id, &[&[1, 2]]))
            .unwrap();
        ids.push(id);
    }
    let before = image.clone();
    offset += 1;
    image
        .apply(
            offset,
            &[MetadataRecord::PartitionChange {
                topic_id: ids[1_234],
                partition_id: 0,
                leader: Some(2),
                isr: None,
                replicas: None,
                reassignment: None,
            }],
        )
        .unwrap();
    let changes = local_changes(&before, &image, 2);
    assert!(
        matches!(&changes[..], [LocalChange::Lead { topic, partition: 0, .. }] if &**topic == "t1234"),
        "{changes:?}"
    );
    assert!(local_changes(&image, &image.clone(), 2).is_empty());

    // "t7" deleted and created again (a new id) in one step: broker 1 removes the old log
    // and leads the new one (the publisher takes removals first).
    let before = image.clone();
    offset += 1;
    image
        .apply(offset, &[MetadataRecord::RemoveTopic { topic_id: ids[7] }])
        .unwrap();
    offset += 1;
    image
        .apply(offset, &topic_records("t7", Uuid::new_v4(), &[&[1, 2]]))
        .unwrap();
    let changes = local_changes(&before, &image, 1);
    assert!(
        matches!(
            &changes[..],
            [
                LocalChange::Lead { topic: lead, .. },
                LocalChange::Remove { topic: removed, partition: 0 },
            ] if &**lead == "t7" && &**removed == "t7"
        ),
        "{changes:?}"
    );
}
