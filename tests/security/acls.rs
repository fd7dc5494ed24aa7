//! ACLs end to end: Kafka's StandardAuthorizer semantics over SASL principals and mapped
//! certificate principals (PKCS#12 stores), share groups under ACLs, and ACLs surviving a
//! restart.

use super::*;

/// The bound address of one of the broker's listeners, from its "listening on" line.
pub(super) fn listener_address(broker: &Broker, name: &str) -> String {
    let marker = format!("listener={name}");
    let mut found = None;
    common::wait_until(Duration::from_secs(20), || {
        found = broker.log_text().lines().find_map(|line| {
            let (address, listener) = line.split("listening on ").nth(1)?.split_once(' ')?;
            (listener.trim() == marker).then(|| address.to_string())
        });
        found.is_some()
    });
    found.unwrap_or_else(|| panic!("no {name} listener:\n{}", broker.log_text()))
}

/// A raw connection authenticated with SASL PLAIN.
pub(super) fn sasl_connect(address: &str, user: &str, password: &str) -> TcpStream {
    let mut stream = raw_connect(address);
    assert_eq!(handshake(&mut stream, "PLAIN", 1).error_code, 0);
    let token = SaslAuthenticateRequest::default()
        .with_auth_bytes(format!("\0{user}\0{password}").into_bytes().into());
    let response: SaslAuthenticateResponse = call(&mut stream, ApiKey::SaslAuthenticate, 2, &token);
    assert_eq!(response.error_code, 0, "{user} authenticates");
    stream
}

/// resource type, name, pattern, principal, operation, permission (Kafka's ids).
pub(super) type Acl<'a> = (i8, &'a str, i8, &'a str, i8, i8);

pub(super) fn create_acls(stream: &mut TcpStream, acls: &[Acl<'_>]) -> CreateAclsResponse {
    use create_acls_request::AclCreation;
    let creations = acls
        .iter()
        .map(
            |(resource_type, name, pattern, principal, operation, permission)| {
                AclCreation::default()
                    .with_resource_type(*resource_type)
                    .with_resource_name(StrBytes::from_string(name.to_string()))
                    .with_resource_pattern_type(*pattern)
                    .with_principal(StrBytes::from_string(principal.to_string()))
                    .with_host(StrBytes::from_static_str("*"))
                    .with_operation(*operation)
                    .with_permission_type(*permission)
            },
        )
        .collect();
    call(
        stream,
        ApiKey::CreateAcls,
        3,
        &CreateAclsRequest::default().with_creations(creations),
    )
}

pub(super) fn describe_all_acls(stream: &mut TcpStream) -> DescribeAclsResponse {
    call(
        stream,
        ApiKey::DescribeAcls,
        3,
        &DescribeAclsRequest::default()
            .with_resource_name_filter(None)
            .with_principal_filter(None)
            .with_host_filter(None)
            .with_resource_type_filter(1)
            .with_pattern_type_filter(1)
            .with_operation(1)
            .with_permission_type(1),
    )
}

pub(super) fn sasl_settings<'a>(user: &'a str, password: &'a str) -> [(&'a str, &'a str); 4] {
    [
        ("security.protocol", "sasl_plaintext"),
        ("sasl.mechanism", "PLAIN"),
        ("sasl.username", user),
        ("sasl.password", password),
    ]
}

pub(super) const TOPIC: i8 = 2;
pub(super) const GROUP: i8 = 3;
pub(super) const CLUSTER: i8 = 4;
pub(super) const LITERAL: i8 = 3;
pub(super) const PREFIXED: i8 = 4;
pub(super) const READ: i8 = 3;
pub(super) const WRITE: i8 = 4;
pub(super) const CREATE: i8 = 5;
pub(super) const DENY: i8 = 2;
pub(super) const ALLOW: i8 = 3;

#[test]
fn acls_allow_and_deny_as_kafkas_standard_authorizer_and_survive_a_restart() {
    let jaas = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";"#;
    let overrides = [
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        ),
        ("sasl.enabled.mechanisms", "PLAIN"),
        ("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:admin"),
    ];
    let mut broker = Broker::start(&overrides);
    let sasl_of = |broker: &Broker| listener_address(broker, "SASL_PLAINTEXT");
    let sasl = sasl_of(&broker);
    let alice = sasl_settings("alice", "alice-secret");
    let bob = sasl_settings("bob", "bob-secret");

    // Only APIs whose checks exist are offered (all of them now).
    let mut admin = sasl_connect(&sasl, "admin", "admin-secret");
    let versions: ApiVersionsResponse = call(
        &mut admin,
        ApiKey::ApiVersions,
        3,
        &ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("t"))
            .with_client_software_version(StrBytes::from_static_str("1")),
    );
    let offered: Vec<i16> = versions.api_keys.iter().map(|k| k.api_key).collect();
    assert!(offered.contains(&30) && offered.contains(&0) && offered.contains(&1));
    assert!(offered.contains(&24), "AddPartitionsToTxn is authorized");
    assert!(offered.contains(&78), "ShareFetch is authorized");

    // The super user creates a topic and ACLs: alice may read and write topics named
    // orders*, but not orders-secret, and use groups named g-orders*.
    let created: CreateTopicsResponse = call(
        &mut admin,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(
                ["orders-eu", "orders-secret"]
                    .iter()
                    .map(|name| {
                        create_topics_request::CreatableTopic::default()
                            .with_name(TopicName(StrBytes::from_static_str(name)))
                            .with_num_partitions(1)
                            .with_replication_factor(1)
                    })
                    .collect(),
            )
            .with_timeout_ms(10_000),
    );
    assert!(
        created.topics.iter().all(|t| t.error_code == 0),
        "{created:?}"
    );
    let acls = create_acls(
        &mut admin,
        &[
            (TOPIC, "orders", PREFIXED, "User:alice", READ, ALLOW),
            (TOPIC, "orders", PREFIXED, "User:alice", WRITE, ALLOW),
            (TOPIC, "orders-secret", LITERAL, "User:alice", WRITE, DENY),
            (GROUP, "g-orders", PREFIXED, "User:alice", READ, ALLOW),
        ],
    );
    assert!(acls.results.iter().all(|r| r.error_code == 0), "{acls:?}");
    let invalid = create_acls(
        &mut admin,
        &[(CLUSTER, "other", LITERAL, "User:x", CREATE, ALLOW)],
    );
    assert_eq!(invalid.results[0].error_code, 42);

    // Alice produces and consumes with a group; bob may do neither.
    round_trip(&sasl, &alice, "orders-eu", 20);
    let bob_producer: rdkafka::producer::FutureProducer = client(&sasl, &bob)
        .set("message.timeout.ms", "5000")
        .create()
        .unwrap();
    let delivery = tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(bob_producer.send(
            rdkafka::producer::FutureRecord::<(), str>::to("orders-eu").payload("x"),
            Duration::from_secs(5),
        ));
    let delivery = delivery.map(|_| ()).map_err(|(e, _)| e.to_string());
    let refused = delivery.unwrap_err();
    assert!(
        refused.contains("authorization"),
        "bob's produce: {refused}"
    );

    // Metadata lists only what the principal may describe.
    let topics_of = |settings: &[(&str, &str)]| -> Vec<String> {
        let consumer: BaseConsumer = client(&sasl, settings).create().unwrap();
        let metadata = consumer
            .fetch_metadata(None, Duration::from_secs(10))
            .unwrap();
        let mut names: Vec<String> = metadata
            .topics()
            .iter()
            .map(|t| t.name().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(topics_of(&alice), ["orders-eu", "orders-secret"]);
    assert!(topics_of(&bob).is_empty(), "bob sees no topic");
    // DENY wins over the prefixed ALLOW.
    let mut alice_raw = sasl_connect(&sasl, "alice", "alice-secret");
    let produced = common::raw::produce(
        &mut alice_raw,
        "orders-secret",
        1,
        common::raw::batch(1, 10).freeze(),
    )
    .unwrap();
    assert_eq!(produced.error_code, 29);
    // Admin APIs need the cluster permission.
    assert_eq!(describe_all_acls(&mut alice_raw).error_code, 31);
    assert_eq!(describe_all_acls(&mut admin).resources.len(), 3);
    // Auto-creation needs CREATE.
    let auto: MetadataResponse = call(
        &mut alice_raw,
        ApiKey::Metadata,
        12,
        &MetadataRequest::default()
            .with_allow_auto_topic_creation(true)
            .with_topics(Some(vec![
                metadata_request::MetadataRequestTopic::default()
                    .with_name(Some(TopicName(StrBytes::from_static_str("orders-new")))),
            ])),
    );
    assert_eq!(auto.topics[0].error_code, 29);
    // An anonymous PLAINTEXT client sees nothing.
    let consumer: BaseConsumer = client(&broker.bootstrap, &[]).create().unwrap();
    let anonymous = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    assert_eq!(anonymous.topics().len(), 0);
    drop(consumer);

    // ACLs come back after a restart.
    let dir = broker.dir().to_path_buf();
    broker.stop();
    let restarted = Broker::start_in(&dir, &overrides);
    let sasl = sasl_of(&restarted);
    let mut admin = sasl_connect(&sasl, "admin", "admin-secret");
    assert_eq!(describe_all_acls(&mut admin).resources.len(), 3);
    // Deleting alice's group ACL: her group requests are refused.
    let deleted: DeleteAclsResponse = call(
        &mut admin,
        ApiKey::DeleteAcls,
        3,
        &DeleteAclsRequest::default().with_filters(vec![
            delete_acls_request::DeleteAclsFilter::default()
                .with_resource_name_filter(None)
                .with_principal_filter(None)
                .with_host_filter(None)
                .with_resource_type_filter(GROUP)
                .with_pattern_type_filter(1)
                .with_operation(1)
                .with_permission_type(1),
        ]),
    );
    assert_eq!(deleted.filter_results[0].matching_acls.len(), 1);
    let mut alice_raw = sasl_connect(&sasl, "alice", "alice-secret");
    let coordinator: FindCoordinatorResponse = call(
        &mut alice_raw,
        ApiKey::FindCoordinator,
        3,
        &FindCoordinatorRequest::default().with_key(StrBytes::from_static_str("g-orders-eu")),
    );
    assert_eq!(coordinator.error_code, 30);
}

/// Share groups under ACLs (KIP-932's checks): READ on the group to join, fetch and
/// acknowledge, DESCRIBE on subscribed topics, READ on fetched topics, DESCRIBE / READ /
/// DELETE on the group for its offsets.
#[test]
fn share_groups_meet_the_acls() {
    let jaas = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret";"#;
    let broker = Broker::start(&[
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        ),
        ("sasl.enabled.mechanisms", "PLAIN"),
        ("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:admin"),
    ]);
    let sasl = listener_address(&broker, "SASL_PLAINTEXT");
    let mut admin = sasl_connect(&sasl, "admin", "admin-secret");
    let created: CreateTopicsResponse = call(
        &mut admin,
        ApiKey::CreateTopics,
        7,
        &CreateTopicsRequest::default()
            .with_topics(
                ["shared", "private"]
                    .iter()
                    .map(|name| {
                        create_topics_request::CreatableTopic::default()
                            .with_name(TopicName(StrBytes::from_static_str(name)))
                            .with_num_partitions(1)
                            .with_replication_factor(1)
                    })
                    .collect(),
            )
            .with_timeout_ms(10_000),
    );
    let id_of = |name: &str| {
        created
            .topics
            .iter()
            .find(|t| t.name.as_str() == name)
            .map(|t| t.topic_id)
            .unwrap()
    };
    let (shared, private) = (id_of("shared"), id_of("private"));
    let acls = create_acls(
        &mut admin,
        &[
            (TOPIC, "shared", LITERAL, "User:alice", READ, ALLOW),
            (GROUP, "sg", LITERAL, "User:alice", READ, ALLOW),
        ],
    );
    assert!(acls.results.iter().all(|r| r.error_code == 0), "{acls:?}");

    let s = |text: &str| StrBytes::from_string(text.to_string());
    let heartbeat = |stream: &mut TcpStream, group: &str, member: &str, topic: &str| {
        let request = ShareGroupHeartbeatRequest::default()
            .with_group_id(GroupId(s(group)))
            .with_member_id(s(member))
            .with_member_epoch(0)
            .with_subscribed_topic_names(Some(vec![TopicName(s(topic))]));
        let mut response = ShareGroupHeartbeatResponse::default();
        // The first use loads the coordinator's topics: retried meanwhile, as clients do.
        assert!(common::wait_until(Duration::from_secs(10), || {
            response = call(stream, ApiKey::ShareGroupHeartbeat, 1, &request);
            !matches!(response.error_code, 14 | 15)
        }));
        response
    };
    let mut alice = sasl_connect(&sasl, "alice", "alice-secret");
    let joined = heartbeat(&mut alice, "sg", "aaaaaaaaaaaaaaaaaaaaaa", "shared");
    assert_eq!(joined.error_code, 0, "{:?}", joined.error_message);
    assert!(joined.member_epoch > 0);
    let topic_refused = heartbeat(&mut alice, "sg", "bbbbbbbbbbbbbbbbbbbbbb", "private");
    assert_eq!(
        topic_refused.error_code, 29,
        "DESCRIBE on a subscribed topic"
    );
    let group_refused = heartbeat(&mut alice, "other", "cccccccccccccccccccccc", "shared");
    assert_eq!(group_refused.error_code, 30, "READ on the group");

    let fetch = |stream: &mut TcpStream, group: &str| -> ShareFetchResponse {
        use share_fetch_request::{FetchPartition, FetchTopic};
        let request = ShareFetchRequest::default()
            .with_group_id(Some(GroupId(s(group))))
            .with_member_id(Some(s("aaaaaaaaaaaaaaaaaaaaaa")))
            .with_share_session_epoch(0)
            .with_max_wait_ms(2000)
            .with_min_bytes(1)
            .with_max_records(10)
            .with_max_bytes(1 << 20)
            .with_topics(
                [shared, private]
                    .into_iter()
                    .map(|id| {
                        FetchTopic::default()
                            .with_topic_id(id)
                            .with_partitions(vec![
                                FetchPartition::default().with_partition_index(0),
                            ])
                    })
                    .collect(),
            );
        call(stream, ApiKey::ShareFetch, 1, &request)
    };
    // The first fetch starts the share partition at the end of the log
    // (share.auto.offset.reset=latest); what is produced after it is delivered.
    assert_eq!(fetch(&mut alice, "sg").error_code, 0);
    let produced =
        common::raw::produce(&mut admin, "shared", 1, common::raw::batch(3, 10).freeze()).unwrap();
    assert_eq!(produced.error_code, 0);
    let fetched = fetch(&mut alice, "sg");
    assert_eq!(fetched.error_code, 0, "{fetched:?}");
    let error_of = |id| {
        fetched
            .responses
            .iter()
            .find(|t| t.topic_id == id)
            .map(|t| t.partitions[0].error_code)
    };
    assert_eq!(error_of(shared), Some(0));
    let acquired: i64 = fetched
        .responses
        .iter()
        .filter(|t| t.topic_id == shared)
        .flat_map(|t| t.partitions[0].acquired_records.iter())
        .map(|r| r.last_offset - r.first_offset + 1)
        .sum();
    assert_eq!(acquired, 3, "alice reads the shared topic: {fetched:?}");
    assert_eq!(error_of(private), Some(29), "READ on a fetched topic");
    assert_eq!(fetch(&mut alice, "other").error_code, 30);

    // Offsets: DESCRIBE (implied by READ) to describe, READ to alter, DELETE to delete.
    let describe = |stream: &mut TcpStream| -> DescribeShareGroupOffsetsResponse {
        use describe_share_group_offsets_request::{
            DescribeShareGroupOffsetsRequestGroup, DescribeShareGroupOffsetsRequestTopic,
        };
        call(
            stream,
            ApiKey::DescribeShareGroupOffsets,
            0,
            &DescribeShareGroupOffsetsRequest::default().with_groups(vec![
                DescribeShareGroupOffsetsRequestGroup::default()
                    .with_group_id(GroupId(s("sg")))
                    .with_topics(Some(
                        ["shared", "private"]
                            .iter()
                            .map(|t| {
                                DescribeShareGroupOffsetsRequestTopic::default()
                                    .with_topic_name(TopicName(s(t)))
                                    .with_partitions(vec![0])
                            })
                            .collect(),
                    )),
            ]),
        )
    };
    let described = describe(&mut alice);
    let group = &described.groups[0];
    assert_eq!(group.error_code, 0, "{described:?}");
    let private_offsets = group
        .topics
        .iter()
        .find(|t| t.topic_name.as_str() == "private")
        .unwrap();
    assert_eq!(private_offsets.partitions[0].error_code, 29);
    let mut bob = sasl_connect(&sasl, "bob", "bob-secret");
    assert_eq!(describe(&mut bob).groups[0].error_code, 30);
    let altered: AlterShareGroupOffsetsResponse = call(
        &mut bob,
        ApiKey::AlterShareGroupOffsets,
        0,
        &AlterShareGroupOffsetsRequest::default().with_group_id(GroupId(s("sg"))),
    );
    assert_eq!(altered.error_code, 30);
    let deleted: DeleteShareGroupOffsetsResponse = call(
        &mut alice,
        ApiKey::DeleteShareGroupOffsets,
        0,
        &DeleteShareGroupOffsetsRequest::default().with_group_id(GroupId(s("sg"))),
    );
    assert_eq!(deleted.error_code, 30, "DELETE on the group");
    let described_groups = |stream: &mut TcpStream| -> ShareGroupDescribeResponse {
        call(
            stream,
            ApiKey::ShareGroupDescribe,
            1,
            &ShareGroupDescribeRequest::default().with_group_ids(vec![GroupId(s("sg"))]),
        )
    };
    assert_eq!(described_groups(&mut alice).groups[0].error_code, 0);
    assert_eq!(described_groups(&mut bob).groups[0].error_code, 30);
}

/// A PKCS12 store holding `key` with its chain, or (no key) the trusted certificates.
fn pkcs12(path: &Path, password: &str, key: Option<&[u8]>, certs: &[&[u8]]) {
    use p12_keystore::{Certificate, KeyStore, KeyStoreEntry, PrivateKey, PrivateKeyChain};
    let mut store = KeyStore::new();
    let certs: Vec<Certificate> = certs
        .iter()
        .map(|der| Certificate::from_der(der).unwrap())
        .collect();
    match key {
        Some(key) => store.add_entry(
            "broker",
            KeyStoreEntry::PrivateKeyChain(PrivateKeyChain::new(
                "broker-key",
                PrivateKey::from_der(key).unwrap(),
                certs,
            )),
        ),
        None => {
            for (i, cert) in certs.into_iter().enumerate() {
                store.add_entry(&format!("ca-{i}"), KeyStoreEntry::Certificate(cert));
            }
        }
    }
    std::fs::write(path, store.writer(password).write().unwrap()).unwrap();
}

/// PKCS12 keystore and truststore, client certificates required, and the principal a
/// certificate maps to seen through the ACLs it gets.
#[test]
fn pkcs12_stores_and_mapped_certificate_principals_meet_the_acls() {
    use rcgen::{
        BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType, IsCa,
        KeyPair,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let mut ca_name = DistinguishedName::new();
    ca_name.push(DnType::CommonName, "PKCS12 test CA");
    ca_params.distinguished_name = ca_name;
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
    std::fs::write(path("ca.pem"), ca.pem()).unwrap();
    let server_key = KeyPair::generate().unwrap();
    let server = CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()])
        .unwrap()
        .signed_by(&server_key, &ca)
        .unwrap();
    pkcs12(
        &path("broker.p12"),
        "store-secret",
        Some(&server_key.serialize_der()),
        &[server.der(), ca.der()],
    );
    pkcs12(&path("trust.p12"), "trust-secret", None, &[ca.der()]);
    for (user, common_name) in [("alice", "Alice"), ("bob", "Bob")] {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        let mut name = DistinguishedName::new();
        name.push(DnType::OrganizationName, "Acme");
        name.push(DnType::CommonName, common_name);
        params.distinguished_name = name;
        let cert = params.signed_by(&key, &ca).unwrap();
        std::fs::write(path(&format!("{user}.pem")), cert.pem()).unwrap();
        std::fs::write(path(&format!("{user}.key")), key.serialize_pem()).unwrap();
    }
    let keystore = path("broker.p12").display().to_string();
    let truststore = path("trust.p12").display().to_string();
    let broker = Broker::start(&[
        ("listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"),
        ("ssl.keystore.type", "PKCS12"),
        ("ssl.keystore.location", &keystore),
        ("ssl.keystore.password", "store-secret"),
        // keytool's default type name, holding PKCS12 as keytool writes it since Java 9.
        ("ssl.truststore.type", "JKS"),
        ("ssl.truststore.location", &truststore),
        ("ssl.truststore.password", "trust-secret"),
        ("ssl.client.auth", "required"),
        (
            "ssl.principal.mapping.rules",
            "RULE:^CN=([^,]+),O=Acme$/$1/L,DEFAULT",
        ),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:ANONYMOUS"),
    ]);
    let ssl = listener_address(&broker, "SSL");
    // The PLAINTEXT listener's anonymous super user grants alice (the mapped name of
    // "CN=Alice,O=Acme") the topic and group.
    let mut admin = raw_connect(&broker.bootstrap);
    let acls = create_acls(
        &mut admin,
        &[
            (TOPIC, "certs", LITERAL, "User:alice", WRITE, ALLOW),
            (TOPIC, "certs", LITERAL, "User:alice", READ, ALLOW),
            (TOPIC, "certs", LITERAL, "User:alice", CREATE, ALLOW),
            (GROUP, "g-certs", LITERAL, "User:alice", READ, ALLOW),
        ],
    );
    assert!(acls.results.iter().all(|r| r.error_code == 0), "{acls:?}");
    let ca_pem = path("ca.pem").display().to_string();
    let settings = |user: &str| -> Vec<(String, String)> {
        vec![
            ("security.protocol".into(), "ssl".into()),
            ("ssl.ca.location".into(), ca_pem.clone()),
            (
                "ssl.certificate.location".into(),
                path(&format!("{user}.pem")).display().to_string(),
            ),
            (
                "ssl.key.location".into(),
                path(&format!("{user}.key")).display().to_string(),
            ),
        ]
    };
    let alice = settings("alice");
    let alice: Vec<(&str, &str)> = alice
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    round_trip(&ssl, &alice, "certs", 10);
    let bob = settings("bob");
    let bob: Vec<(&str, &str)> = bob.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let consumer: BaseConsumer = client(&ssl, &bob).create().unwrap();
    let seen = consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .unwrap();
    assert!(
        seen.topics().iter().all(|t| t.name() != "certs"),
        "bob may not describe the topic"
    );
}
