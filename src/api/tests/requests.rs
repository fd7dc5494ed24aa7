//! The example request of every API for the every-version tests: one that reaches the
//! handler's success and error paths (the streams group APIs' are in `streams.rs`).

use super::*;

pub(super) fn request(ctx: &ApiContext, api: ApiKey, v: i16) -> Bytes {
    let topic_id = ctx.broker.topic("t").unwrap().id;
    match api {
        ApiKey::Produce => {
            let records = Bytes::from(crate::record::test_support::batch(0, 2, 5, 10).to_vec());
            let partitions = vec![
                produce_request::PartitionProduceData::default()
                    .with_index(0)
                    .with_records(Some(records.clone())),
                produce_request::PartitionProduceData::default()
                    .with_index(9)
                    .with_records(Some(records)),
            ];
            let mut topic =
                produce_request::TopicProduceData::default().with_partition_data(partitions);
            topic = if v >= 13 {
                topic.with_topic_id(topic_id)
            } else {
                topic.with_name(topic_name("t"))
            };
            encode(
                &ProduceRequest::default()
                    .with_acks(1)
                    .with_timeout_ms(1000)
                    .with_topic_data(vec![topic]),
                v,
                "produce",
            )
        }
        ApiKey::Fetch => {
            let partitions = vec![
                fetch_request::FetchPartition::default()
                    .with_partition(0)
                    .with_fetch_offset(0)
                    .with_partition_max_bytes(1 << 20),
                fetch_request::FetchPartition::default()
                    .with_partition(1)
                    .with_fetch_offset(99)
                    .with_partition_max_bytes(1 << 20),
            ];
            let mut topic = fetch_request::FetchTopic::default().with_partitions(partitions);
            topic = if v >= 13 {
                topic.with_topic_id(topic_id)
            } else {
                topic.with_topic(topic_name("t"))
            };
            let mut request = FetchRequest::default()
                .with_replica_id(BrokerId(-1))
                .with_max_wait_ms(0)
                .with_min_bytes(0)
                .with_max_bytes(1 << 20)
                .with_topics(vec![topic]);
            if v >= 4 {
                request = request.with_isolation_level(1);
            }
            if v >= 7 {
                request = request.with_session_epoch(-1);
            }
            encode(&request, v, "fetch")
        }
        ApiKey::ListOffsets => {
            let mut partitions = vec![
                list_offsets_request::ListOffsetsPartition::default()
                    .with_partition_index(0)
                    .with_timestamp(-1),
                list_offsets_request::ListOffsetsPartition::default()
                    .with_partition_index(1)
                    .with_timestamp(0),
                list_offsets_request::ListOffsetsPartition::default()
                    .with_partition_index(9)
                    .with_timestamp(-2),
            ];
            if v >= 7 {
                partitions.push(
                    list_offsets_request::ListOffsetsPartition::default()
                        .with_partition_index(0)
                        .with_timestamp(-3),
                );
            }
            let topic = list_offsets_request::ListOffsetsTopic::default()
                .with_name(topic_name("t"))
                .with_partitions(partitions);
            encode(
                &ListOffsetsRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_topics(vec![topic]),
                v,
                "list_offsets",
            )
        }
        ApiKey::Metadata => {
            let topics = ["t", "missing"]
                .iter()
                .map(|n| {
                    metadata_request::MetadataRequestTopic::default()
                        .with_name(Some(topic_name(n)))
                })
                .collect();
            let mut request = MetadataRequest::default().with_topics(Some(topics));
            if (8..=10).contains(&v) {
                request = request.with_include_cluster_authorized_operations(true);
            }
            if v >= 8 {
                request = request.with_include_topic_authorized_operations(true);
            }
            encode(&request, v, "metadata")
        }
        ApiKey::ApiVersions => {
            let mut request = ApiVersionsRequest::default();
            if v >= 3 {
                request = request
                    .with_client_software_name(s("test"))
                    .with_client_software_version(s("1.0"));
            }
            encode(&request, v, "api_versions")
        }
        ApiKey::CreateTopics => {
            let config = create_topics_request::CreatableTopicConfig::default()
                .with_name(s("retention.ms"))
                .with_value(Some(s("1000")));
            let topics = vec![
                create_topics_request::CreatableTopic::default()
                    .with_name(topic_name(&format!("new-{v}")))
                    .with_num_partitions(1)
                    .with_replication_factor(1)
                    .with_configs(vec![config]),
                create_topics_request::CreatableTopic::default()
                    .with_name(topic_name("t"))
                    .with_num_partitions(1)
                    .with_replication_factor(1),
            ];
            encode(
                &CreateTopicsRequest::default()
                    .with_topics(topics)
                    .with_timeout_ms(1000),
                v,
                "create_topics",
            )
        }
        ApiKey::DeleteTopics => {
            let request = if v >= 6 {
                DeleteTopicsRequest::default().with_topics(vec![
                    delete_topics_request::DeleteTopicState::default()
                        .with_name(Some(topic_name("nope"))),
                ])
            } else {
                DeleteTopicsRequest::default().with_topic_names(vec![topic_name("nope")])
            };
            encode(&request, v, "delete_topics")
        }
        ApiKey::DeleteRecords => {
            let partitions = vec![
                delete_records_request::DeleteRecordsPartition::default()
                    .with_partition_index(0)
                    .with_offset(1),
                delete_records_request::DeleteRecordsPartition::default()
                    .with_partition_index(9)
                    .with_offset(0),
            ];
            let topic = delete_records_request::DeleteRecordsTopic::default()
                .with_name(topic_name("t"))
                .with_partitions(partitions);
            encode(
                &DeleteRecordsRequest::default().with_topics(vec![topic]),
                v,
                "delete_records",
            )
        }
        ApiKey::DescribeConfigs => {
            let resources = vec![
                describe_configs_request::DescribeConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("t"))
                    .with_configuration_keys(None),
                describe_configs_request::DescribeConfigsResource::default()
                    .with_resource_type(4)
                    .with_resource_name(s("1"))
                    .with_configuration_keys(None),
                describe_configs_request::DescribeConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("missing"))
                    .with_configuration_keys(None),
            ];
            let mut request = DescribeConfigsRequest::default()
                .with_resources(resources)
                .with_include_synonyms(true);
            if v >= 3 {
                request = request.with_include_documentation(true);
            }
            encode(&request, v, "describe_configs")
        }
        ApiKey::AlterConfigs => {
            let config = alter_configs_request::AlterableConfig::default()
                .with_name(s("retention.ms"))
                .with_value(Some(s("5000")));
            let resources = vec![
                alter_configs_request::AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("t"))
                    .with_configs(vec![config]),
                alter_configs_request::AlterConfigsResource::default()
                    .with_resource_type(4)
                    .with_resource_name(s("1")),
            ];
            encode(
                &AlterConfigsRequest::default().with_resources(resources),
                v,
                "alter_configs",
            )
        }
        ApiKey::IncrementalAlterConfigs => {
            let config = incremental_alter_configs_request::AlterableConfig::default()
                .with_name(s("retention.ms"))
                .with_config_operation(0)
                .with_value(Some(s("6000")));
            let resources = vec![
                incremental_alter_configs_request::AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(s("t"))
                    .with_configs(vec![config]),
            ];
            encode(
                &IncrementalAlterConfigsRequest::default().with_resources(resources),
                v,
                "incremental_alter_configs",
            )
        }
        ApiKey::CreatePartitions => {
            let topics = vec![
                create_partitions_request::CreatePartitionsTopic::default()
                    .with_name(topic_name("t"))
                    .with_count(1),
                create_partitions_request::CreatePartitionsTopic::default()
                    .with_name(topic_name("missing"))
                    .with_count(3),
            ];
            encode(
                &CreatePartitionsRequest::default().with_topics(topics),
                v,
                "create_partitions",
            )
        }
        ApiKey::OffsetForLeaderEpoch => {
            let partitions = vec![
                offset_for_leader_epoch_request::OffsetForLeaderPartition::default()
                    .with_partition(0)
                    .with_current_leader_epoch(-1)
                    .with_leader_epoch(0),
                offset_for_leader_epoch_request::OffsetForLeaderPartition::default()
                    .with_partition(9)
                    .with_current_leader_epoch(-1)
                    .with_leader_epoch(0),
            ];
            let topic = offset_for_leader_epoch_request::OffsetForLeaderTopic::default()
                .with_topic(topic_name("t"))
                .with_partitions(partitions);
            encode(
                &OffsetForLeaderEpochRequest::default()
                    .with_replica_id(BrokerId(-1))
                    .with_topics(vec![topic]),
                v,
                "offset_for_leader_epoch",
            )
        }
        ApiKey::AddPartitionsToTxn => {
            let topic = add_partitions_to_txn_request::AddPartitionsToTxnTopic::default()
                .with_name(topic_name("t"))
                .with_partitions(vec![0]);
            let request = if v <= 3 {
                AddPartitionsToTxnRequest::default()
                    .with_v3_and_below_transactional_id(TransactionalId(s("tx")))
                    .with_v3_and_below_producer_id(ProducerId(5))
                    .with_v3_and_below_producer_epoch(0)
                    .with_v3_and_below_topics(vec![topic])
            } else {
                AddPartitionsToTxnRequest::default().with_transactions(vec![
                    add_partitions_to_txn_request::AddPartitionsToTxnTransaction::default()
                        .with_transactional_id(TransactionalId(s("tx")))
                        .with_producer_id(ProducerId(5))
                        .with_producer_epoch(0)
                        .with_verify_only(true)
                        .with_topics(vec![topic]),
                ])
            };
            encode(&request, v, "add_partitions_to_txn")
        }
        ApiKey::AddOffsetsToTxn => encode(
            &AddOffsetsToTxnRequest::default()
                .with_transactional_id(TransactionalId(s("tx")))
                .with_producer_id(ProducerId(5))
                .with_producer_epoch(0)
                .with_group_id(GroupId(s("g"))),
            v,
            "add_offsets_to_txn",
        ),
        ApiKey::EndTxn => encode(
            &EndTxnRequest::default()
                .with_transactional_id(TransactionalId(s("tx")))
                .with_producer_id(ProducerId(5))
                .with_producer_epoch(0)
                .with_committed(true),
            v,
            "end_txn",
        ),
        ApiKey::TxnOffsetCommit => {
            let partition =
                txn_offset_commit_request::TxnOffsetCommitRequestPartition::default()
                    .with_partition_index(0)
                    .with_committed_offset(3);
            let topic = txn_offset_commit_request::TxnOffsetCommitRequestTopic::default()
                .with_name(topic_name("t"))
                .with_partitions(vec![partition]);
            encode(
                &TxnOffsetCommitRequest::default()
                    .with_transactional_id(TransactionalId(s("tx")))
                    .with_group_id(GroupId(s("g")))
                    .with_producer_id(ProducerId(5))
                    .with_producer_epoch(0)
                    .with_topics(vec![topic]),
                v,
                "txn_offset_commit",
            )
        }
        ApiKey::DescribeTransactions => encode(
            &DescribeTransactionsRequest::default()
                .with_transactional_ids(vec![TransactionalId(s("tx"))]),
            v,
            "describe_transactions",
        ),
        ApiKey::ListTransactions => encode(
            &ListTransactionsRequest::default()
                .with_state_filters(vec![s("Ongoing"), s("Sleeping")])
                .with_duration_filter(if v >= 1 { 1_000 } else { -1 })
                .with_transactional_id_pattern((v >= 2).then(|| s("tx.*"))),
            v,
            "list_transactions",
        ),
        ApiKey::DescribeProducers => {
            let topic = describe_producers_request::TopicRequest::default()
                .with_name(topic_name("t"))
                .with_partition_indexes(vec![0, 9]);
            encode(
                &DescribeProducersRequest::default().with_topics(vec![topic]),
                v,
                "describe_producers",
            )
        }
        ApiKey::WriteTxnMarkers => {
            let topic = write_txn_markers_request::WritableTxnMarkerTopic::default()
                .with_name(topic_name("t"))
                .with_partition_indexes(vec![0, 9]);
            let marker = write_txn_markers_request::WritableTxnMarker::default()
                .with_producer_id(ProducerId(5))
                .with_producer_epoch(0)
                .with_transaction_result(false)
                .with_topics(vec![topic])
                .with_coordinator_epoch(0);
            encode(
                &WriteTxnMarkersRequest::default().with_markers(vec![marker]),
                v,
                "write_txn_markers",
            )
        }
        ApiKey::DescribeCluster => encode(
            &DescribeClusterRequest::default().with_include_cluster_authorized_operations(true),
            v,
            "describe_cluster",
        ),
        ApiKey::FindCoordinator => {
            let request = if v >= 4 {
                FindCoordinatorRequest::default().with_coordinator_keys(vec![s("g"), s("t-id")])
            } else {
                FindCoordinatorRequest::default().with_key(s("g"))
            };
            encode(&request, v, "find_coordinator")
        }
        ApiKey::JoinGroup => {
            // Unknown member of an unknown group: answered at once (MEMBER_ID_REQUIRED from v4,
            // else parked; a bad session timeout keeps it immediate for every version).
            let protocol = join_group_request::JoinGroupRequestProtocol::default()
                .with_name(s("range"))
                .with_metadata(Bytes::from_static(b"m"));
            let mut request = JoinGroupRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_session_timeout_ms(1)
                .with_protocol_type(s("consumer"))
                .with_protocols(vec![protocol]);
            if v >= 1 {
                request = request.with_rebalance_timeout_ms(1000);
            }
            encode(&request, v, "join_group")
        }
        ApiKey::SyncGroup => {
            let mut request = SyncGroupRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_generation_id(1)
                .with_member_id(s("nobody"));
            if v >= 5 {
                request = request
                    .with_protocol_type(Some(s("consumer")))
                    .with_protocol_name(Some(s("range")));
            }
            encode(&request, v, "sync_group")
        }
        ApiKey::Heartbeat => encode(
            &HeartbeatRequest::default()
                .with_group_id(GroupId(s("g")))
                .with_generation_id(1)
                .with_member_id(s("nobody")),
            v,
            "heartbeat",
        ),
        ApiKey::LeaveGroup => {
            let request = if v >= 3 {
                LeaveGroupRequest::default()
                    .with_group_id(GroupId(s("simple")))
                    .with_members(vec![
                        leave_group_request::MemberIdentity::default()
                            .with_member_id(s("nobody")),
                    ])
            } else {
                LeaveGroupRequest::default()
                    .with_group_id(GroupId(s("simple")))
                    .with_member_id(s("nobody"))
            };
            encode(&request, v, "leave_group")
        }
        ApiKey::OffsetCommit => {
            let partition = offset_commit_request::OffsetCommitRequestPartition::default()
                .with_partition_index(0)
                .with_committed_offset(2)
                .with_committed_metadata(Some(s("meta")));
            let mut topic = offset_commit_request::OffsetCommitRequestTopic::default()
                .with_partitions(vec![partition]);
            topic = topic.with_name(topic_name("t"));
            encode(
                &OffsetCommitRequest::default()
                    .with_group_id(GroupId(s("simple")))
                    .with_generation_id_or_member_epoch(-1)
                    .with_topics(vec![topic]),
                v,
                "offset_commit",
            )
        }
        ApiKey::OffsetFetch => {
            let request = if v >= 8 {
                let topic = offset_fetch_request::OffsetFetchRequestTopics::default()
                    .with_name(topic_name("t"))
                    .with_partition_indexes(vec![0, 1]);
                OffsetFetchRequest::default().with_groups(vec![
                    offset_fetch_request::OffsetFetchRequestGroup::default()
                        .with_group_id(GroupId(s("simple")))
                        .with_topics(Some(vec![topic])),
                    offset_fetch_request::OffsetFetchRequestGroup::default()
                        .with_group_id(GroupId(s("simple")))
                        .with_topics(None),
                ])
            } else {
                let topic = offset_fetch_request::OffsetFetchRequestTopic::default()
                    .with_name(topic_name("t"))
                    .with_partition_indexes(vec![0, 1]);
                OffsetFetchRequest::default()
                    .with_group_id(GroupId(s("simple")))
                    .with_topics(Some(vec![topic]))
            };
            encode(&request, v, "offset_fetch")
        }
        ApiKey::ListGroups => encode(&ListGroupsRequest::default(), v, "list_groups"),
        ApiKey::DescribeGroups => encode(
            &DescribeGroupsRequest::default()
                .with_groups(vec![GroupId(s("simple")), GroupId(s("missing"))]),
            v,
            "describe_groups",
        ),
        ApiKey::DeleteGroups => encode(
            &DeleteGroupsRequest::default().with_groups_names(vec![GroupId(s("missing"))]),
            v,
            "delete_groups",
        ),
        ApiKey::OffsetDelete => {
            let topic = offset_delete_request::OffsetDeleteRequestTopic::default()
                .with_name(topic_name("t"))
                .with_partitions(vec![
                    offset_delete_request::OffsetDeleteRequestPartition::default()
                        .with_partition_index(0),
                ]);
            encode(
                &OffsetDeleteRequest::default()
                    .with_group_id(GroupId(s("simple")))
                    .with_topics(vec![topic]),
                v,
                "offset_delete",
            )
        }
        ApiKey::ConsumerGroupHeartbeat => {
            let request = ConsumerGroupHeartbeatRequest::default()
                .with_group_id(GroupId(s(&format!("kip848-{v}"))))
                .with_member_id(s(&format!("member-{v}")))
                .with_member_epoch(0)
                .with_rebalance_timeout_ms(5000)
                .with_subscribed_topic_names(Some(vec![topic_name("t")]))
                .with_topic_partitions(Some(vec![]));
            encode(&request, v, "consumer_group_heartbeat")
        }
        ApiKey::ConsumerGroupDescribe => encode(
            &ConsumerGroupDescribeRequest::default()
                .with_group_ids(vec![GroupId(s("kip848-0")), GroupId(s("simple"))]),
            v,
            "consumer_group_describe",
        ),
        ApiKey::InitProducerId => {
            let mut request = InitProducerIdRequest::default()
                .with_transactional_id(None)
                .with_transaction_timeout_ms(60_000);
            if v >= 3 {
                request = request
                    .with_producer_id(ProducerId(-1))
                    .with_producer_epoch(-1);
            }
            encode(&request, v, "init_producer_id")
        }
        ApiKey::DescribeLogDirs => encode(
            &DescribeLogDirsRequest::default().with_topics(None),
            v,
            "describe_log_dirs",
        ),
        ApiKey::AlterReplicaLogDirs => {
            let dir = ctx.broker.config().log_dir.display().to_string();
            let topic = alter_replica_log_dirs_request::AlterReplicaLogDirTopic::default()
                .with_name(topic_name("t"))
                .with_partitions(vec![0]);
            let request = AlterReplicaLogDirsRequest::default().with_dirs(vec![
                alter_replica_log_dirs_request::AlterReplicaLogDir::default()
                    .with_path(s(&dir))
                    .with_topics(vec![topic]),
            ]);
            encode(&request, v, "alter_replica_log_dirs")
        }
        ApiKey::ElectLeaders => encode(
            &ElectLeadersRequest::default().with_topic_partitions(Some(vec![
                elect_leaders_request::TopicPartitions::default()
                    .with_topic(topic_name("t"))
                    .with_partitions(vec![0, 1]),
            ])),
            v,
            "elect_leaders",
        ),
        ApiKey::AlterPartitionReassignments => {
            let node = BrokerId(ctx.broker.node_id());
            let topic = alter_partition_reassignments_request::ReassignableTopic::default()
                .with_name(topic_name("t"))
                .with_partitions(vec![
                    alter_partition_reassignments_request::ReassignablePartition::default()
                        .with_partition_index(0)
                        .with_replicas(Some(vec![node])),
                ]);
            encode(
                &AlterPartitionReassignmentsRequest::default().with_topics(vec![topic]),
                v,
                "alter_partition_reassignments",
            )
        }
        ApiKey::ListPartitionReassignments => encode(
            &ListPartitionReassignmentsRequest::default().with_topics(None),
            v,
            "list_partition_reassignments",
        ),
        ApiKey::DescribeTopicPartitions => encode(
            &DescribeTopicPartitionsRequest::default()
                .with_topics(vec![
                    describe_topic_partitions_request::TopicRequest::default()
                        .with_name(topic_name("t")),
                ])
                .with_response_partition_limit(2000),
            v,
            "describe_topic_partitions",
        ),
        ApiKey::ListConfigResources => encode(
            &ListConfigResourcesRequest::default(),
            v,
            "list_config_resources",
        ),
        ApiKey::ShareGroupHeartbeat => encode(
            &ShareGroupHeartbeatRequest::default()
                .with_group_id(GroupId(s("sg")))
                .with_member_id(s("member-1"))
                .with_member_epoch(0)
                .with_subscribed_topic_names(Some(vec![topic_name("t")])),
            v,
            "share_group_heartbeat",
        ),
        ApiKey::ShareGroupDescribe => encode(
            &ShareGroupDescribeRequest::default()
                .with_group_ids(vec![GroupId(s("sg")), GroupId(s("none"))]),
            v,
            "share_group_describe",
        ),
        ApiKey::StreamsGroupHeartbeat
        | ApiKey::StreamsGroupDescribe
        | ApiKey::StreamsGroupTopologyDescriptionUpdate => streams::request(api, v),
        ApiKey::ShareFetch => {
            let partitions = vec![
                share_fetch_request::FetchPartition::default().with_partition_index(0),
                share_fetch_request::FetchPartition::default().with_partition_index(9),
            ];
            let mut request = ShareFetchRequest::default()
                .with_group_id(Some(GroupId(s("sg"))))
                .with_member_id(Some(s(&format!("fetcher-{v}"))))
                .with_share_session_epoch(0)
                .with_max_wait_ms(0)
                .with_max_records(10)
                .with_topics(vec![
                    share_fetch_request::FetchTopic::default()
                        .with_topic_id(topic_id)
                        .with_partitions(partitions),
                ]);
            request.share_acquire_mode = 0;
            encode(&request, v, "share_fetch")
        }
        ApiKey::ShareAcknowledge => encode(
            &ShareAcknowledgeRequest::default()
                .with_group_id(Some(GroupId(s("sg"))))
                .with_member_id(Some(s("nobody")))
                .with_share_session_epoch(1),
            v,
            "share_acknowledge",
        ),
        ApiKey::DescribeShareGroupOffsets => encode(
            &DescribeShareGroupOffsetsRequest::default().with_groups(vec![
                describe_share_group_offsets_request::DescribeShareGroupOffsetsRequestGroup::default()
                    .with_group_id(GroupId(s("sg")))
                    .with_topics(None),
            ]),
            v,
            "describe_share_group_offsets",
        ),
        ApiKey::AlterShareGroupOffsets => encode(
            &AlterShareGroupOffsetsRequest::default()
                .with_group_id(GroupId(s("empty-share-group")))
                .with_topics(vec![
                    alter_share_group_offsets_request::AlterShareGroupOffsetsRequestTopic::default()
                        .with_topic_name(topic_name("t"))
                        .with_partitions(vec![
                            alter_share_group_offsets_request::AlterShareGroupOffsetsRequestPartition::default()
                                .with_partition_index(0)
                                .with_start_offset(1),
                        ]),
                ]),
            v,
            "alter_share_group_offsets",
        ),
        ApiKey::DeleteShareGroupOffsets => encode(
            &DeleteShareGroupOffsetsRequest::default()
                .with_group_id(GroupId(s("empty-share-group")))
                .with_topics(vec![
                    delete_share_group_offsets_request::DeleteShareGroupOffsetsRequestTopic::default()
                        .with_topic_name(topic_name("t")),
                ]),
            v,
            "delete_share_group_offsets",
        ),
        ApiKey::InitializeShareGroupState => encode(
            &InitializeShareGroupStateRequest::default()
                .with_group_id(s("state-group"))
                .with_topics(vec![
                    initialize_share_group_state_request::InitializeStateData::default()
                        .with_topic_id(topic_id)
                        .with_partitions(vec![
                            initialize_share_group_state_request::PartitionData::default()
                                .with_partition(0)
                                .with_state_epoch(1)
                                .with_start_offset(0),
                        ]),
                ]),
            v,
            "initialize_share_group_state",
        ),
        ApiKey::ReadShareGroupState => encode(
            &ReadShareGroupStateRequest::default()
                .with_group_id(s("state-group"))
                .with_topics(vec![
                    read_share_group_state_request::ReadStateData::default()
                        .with_topic_id(topic_id)
                        .with_partitions(vec![
                            read_share_group_state_request::PartitionData::default()
                                .with_partition(0)
                                .with_leader_epoch(0),
                        ]),
                ]),
            v,
            "read_share_group_state",
        ),
        ApiKey::WriteShareGroupState => encode(
            &WriteShareGroupStateRequest::default()
                .with_group_id(s("state-group"))
                .with_topics(vec![
                    write_share_group_state_request::WriteStateData::default()
                        .with_topic_id(topic_id)
                        .with_partitions(vec![
                            write_share_group_state_request::PartitionData::default()
                                .with_partition(0)
                                .with_state_epoch(0)
                                .with_leader_epoch(0)
                                .with_start_offset(0)
                                .with_state_batches(vec![
                                    write_share_group_state_request::StateBatch::default()
                                        .with_first_offset(0)
                                        .with_last_offset(1)
                                        .with_delivery_state(9)
                                        .with_delivery_count(1),
                                ]),
                        ]),
                ]),
            v,
            "write_share_group_state",
        ),
        ApiKey::DeleteShareGroupState => encode(
            &DeleteShareGroupStateRequest::default()
                .with_group_id(s("state-group"))
                .with_topics(vec![
                    delete_share_group_state_request::DeleteStateData::default()
                        .with_topic_id(topic_id)
                        .with_partitions(vec![
                            delete_share_group_state_request::PartitionData::default()
                                .with_partition(0),
                        ]),
                ]),
            v,
            "delete_share_group_state",
        ),
        ApiKey::ReadShareGroupStateSummary => encode(
            &ReadShareGroupStateSummaryRequest::default()
                .with_group_id(s("state-group"))
                .with_topics(vec![
                    read_share_group_state_summary_request::ReadStateSummaryData::default()
                        .with_topic_id(topic_id)
                        .with_partitions(vec![
                            read_share_group_state_summary_request::PartitionData::default()
                                .with_partition(0)
                                .with_leader_epoch(-1),
                        ]),
                ]),
            v,
            "read_share_group_state_summary",
        ),
        ApiKey::SaslHandshake => encode(
            &SaslHandshakeRequest::default().with_mechanism(s("PLAIN")),
            v,
            "sasl_handshake",
        ),
        ApiKey::SaslAuthenticate => encode(
            &SaslAuthenticateRequest::default(),
            v,
            "sasl_authenticate",
        ),
        ApiKey::DescribeUserScramCredentials => encode(
            &DescribeUserScramCredentialsRequest::default(),
            v,
            "describe_user_scram_credentials",
        ),
        ApiKey::AlterUserScramCredentials => encode(
            &AlterUserScramCredentialsRequest::default(),
            v,
            "alter_user_scram_credentials",
        ),
        ApiKey::DescribeClientQuotas => encode(
            &DescribeClientQuotasRequest::default(),
            v,
            "describe_client_quotas",
        ),
        ApiKey::AlterClientQuotas => encode(
            &AlterClientQuotasRequest::default(),
            v,
            "alter_client_quotas",
        ),
        ApiKey::UpdateFeatures => encode(
            &crate::api::update_features::request_for(
                &[crate::metadata::features::FeatureUpdate {
                    name: "transaction.version".into(),
                    level: 2,
                    upgrade: crate::metadata::features::UpgradeType::Upgrade,
                }],
                // v0 has no validate-only: it sets the level the feature runs at already.
                v >= 1,
            ),
            v,
            "update_features",
        ),
        ApiKey::CreateDelegationToken => encode(
            &CreateDelegationTokenRequest::default().with_max_lifetime_ms(60_000),
            v,
            "create_delegation_token",
        ),
        ApiKey::RenewDelegationToken => encode(
            &RenewDelegationTokenRequest::default()
                .with_hmac(Bytes::from_static(b"no such token"))
                .with_renew_period_ms(1_000),
            v,
            "renew_delegation_token",
        ),
        ApiKey::ExpireDelegationToken => encode(
            &ExpireDelegationTokenRequest::default()
                .with_hmac(Bytes::from_static(b"no such token"))
                .with_expiry_time_period_ms(-1),
            v,
            "expire_delegation_token",
        ),
        ApiKey::DescribeDelegationToken => encode(
            &DescribeDelegationTokenRequest::default().with_owners(None),
            v,
            "describe_delegation_token",
        ),
        ApiKey::CreateAcls => encode(&CreateAclsRequest::default(), v, "create_acls"),
        ApiKey::DescribeAcls => encode(&DescribeAclsRequest::default(), v, "describe_acls"),
        ApiKey::DeleteAcls => encode(&DeleteAclsRequest::default(), v, "delete_acls"),
        ApiKey::DescribeQuorum => encode(
            &crate::api::describe_quorum::request_for(),
            v,
            "describe_quorum",
        ),
        ApiKey::AssignReplicasToDirs => encode(
            &crate::api::assign_replicas_to_dirs::request_for(
                99,
                1,
                &[crate::controller::control::DirectoryAssignment {
                    topic_id,
                    partition: 0,
                    directory_id: uuid::Uuid::new_v4(),
                }],
            ),
            v,
            "assign_replicas_to_dirs",
        ),
        ApiKey::UnregisterBroker => encode(
            &crate::api::unregister_broker::request_for(99),
            v,
            "unregister_broker",
        ),
        ApiKey::UnregisterController => encode(
            &crate::api::unregister_controller::request_for(99),
            v,
            "unregister_controller",
        ),
        ApiKey::ControllerRegistration => encode(
            &crate::api::controller_registration::request_for(
                &crate::controller::control::ControllerRegistrationRequest {
                    controller_id: 9,
                    incarnation_id: uuid::Uuid::new_v4(),
                    endpoints: Vec::new(),
                },
            ),
            v,
            "controller_registration",
        ),
        ApiKey::AddRaftVoter => encode(
            &crate::api::add_raft_voter::request_for(
                &crate::controller::ops::NewVoter {
                    node: 9,
                    directory_id: uuid::Uuid::new_v4(),
                    endpoints: Vec::new(),
                    timeout_ms: 10,
                },
                None,
            ),
            v,
            "add_raft_voter",
        ),
        ApiKey::RemoveRaftVoter => encode(
            &crate::api::remove_raft_voter::request_for(9, uuid::Uuid::new_v4()),
            v,
            "remove_raft_voter",
        ),
        ApiKey::UpdateRaftVoter => encode(
            &crate::api::update_raft_voter::request_for(
                &crate::controller::ops::NewVoter {
                    node: 9,
                    directory_id: uuid::Uuid::new_v4(),
                    endpoints: Vec::new(),
                    timeout_ms: 0,
                },
                None,
            ),
            v,
            "update_raft_voter",
        ),
        ApiKey::FetchSnapshot => encode(
            &crate::api::fetch_snapshot::request_for(7, 5, 1, 0),
            v,
            "fetch_snapshot",
        ),
        other => panic!("no test request for {other:?}: add one when adding the API"),
    }
}
