//! Unit tests of the configuration: the properties format, Kafka's defaults and rules.

use super::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[test]
fn properties_format() {
    let text = "# comment\n! also\nkey1=value1\nkey2 : value two\nkey3 value3\n\
                long=a,\\\n   b\nesc=tab\\there\\u0041\n  \nempty=\n";
    let props = parse_properties(text).unwrap();
    assert_eq!(props["key1"], "value1");
    assert_eq!(props["key2"], "value two");
    assert_eq!(props["key3"], "value3");
    assert_eq!(props["long"], "a,b");
    assert_eq!(props["esc"], "tab\thereA");
    assert_eq!(props["empty"], "");
}

#[test]
fn defaults_are_kafkas() {
    let config = BrokerConfig::with_overrides(&[]).unwrap();
    assert_eq!(config.node_id, 1);
    assert_eq!(config.listeners[0].port, 9092);
    assert_eq!(config.log_dir, PathBuf::from("./data"));
    assert_eq!(config.socket_request_max_bytes, 104_857_600);
    let log = LogConfig::resolve(&config.topic_defaults, &BTreeMap::new());
    assert_eq!(log.segment_bytes, 1 << 30);
    assert_eq!(log.retention_ms, 168 * 3_600_000);
    assert_eq!(log.segment_ms, 168 * 3_600_000);
    assert_eq!(log.max_message_bytes, 1_048_588);
    assert_eq!(log.flush_messages, i64::MAX);
    assert!(log.cleanup_delete);
}

#[test]
fn retention_fallbacks_and_overrides() {
    let config = BrokerConfig::with_overrides(&[("log.retention.minutes", "2")]).unwrap();
    assert_eq!(
        config.topic_defaults["retention.ms"].value.as_deref(),
        Some("120000")
    );
    assert_eq!(
        config.topic_defaults["retention.ms"].source,
        ConfigSource::StaticBroker
    );
    let config =
        BrokerConfig::with_overrides(&[("log.retention.ms", "5"), ("log.retention.hours", "1")])
            .unwrap();
    let mut overrides = BTreeMap::new();
    assert_eq!(
        LogConfig::resolve(&config.topic_defaults, &overrides).retention_ms,
        5
    );
    overrides.insert("retention.ms".to_string(), "77".to_string());
    assert_eq!(
        LogConfig::resolve(&config.topic_defaults, &overrides).retention_ms,
        77
    );
}

#[test]
fn unknown_and_malformed_properties_are_named() {
    assert_eq!(
        BrokerConfig::with_overrides(&[("log.segmnt.bytes", "1")]).unwrap_err(),
        ConfigError::Unknown("log.segmnt.bytes".into())
    );
    let err = BrokerConfig::with_overrides(&[("num.partitions", "many")]).unwrap_err();
    assert!(err.to_string().contains("num.partitions"), "{err}");
    let err = BrokerConfig::with_overrides(&[("listeners", "127.0.0.1:9092")]).unwrap_err();
    assert!(err.to_string().contains("listeners"), "{err}");
    let err = BrokerConfig::with_overrides(&[("auto.create.topics.enable", "yes")]).unwrap_err();
    assert!(
        err.to_string().contains("auto.create.topics.enable"),
        "{err}"
    );
    assert!(BrokerConfig::with_overrides(&[("num.io.threads", "8")]).is_ok());
    let err = BrokerConfig::with_overrides(&[("log.dirs", "/a,/b,/a")]).unwrap_err();
    assert!(err.to_string().contains("listed twice"), "{err}");
    let one = BrokerConfig::with_overrides(&[("log.dirs", " /a, ")]).unwrap();
    assert_eq!(one.log_dir, PathBuf::from("/a"));
    let jbod = BrokerConfig::with_overrides(&[("log.dirs", "/a, /b")]).unwrap();
    assert_eq!(jbod.log_dir, PathBuf::from("/a"));
    assert_eq!(jbod.log_dirs, [PathBuf::from("/a"), PathBuf::from("/b")]);
}

#[test]
fn topic_overrides_are_validated() {
    let mut overrides = BTreeMap::new();
    overrides.insert("cleanup.policy".to_string(), "compact,delete".to_string());
    overrides.insert("segment.bytes".to_string(), "1024".to_string());
    assert!(validate_topic_overrides(&overrides).is_ok());
    overrides.insert("segment.bytes".to_string(), "10".to_string());
    assert!(validate_topic_overrides(&overrides).is_err());
    overrides.remove("segment.bytes");
    overrides.insert("retention.mss".to_string(), "1".to_string());
    assert_eq!(
        validate_topic_overrides(&overrides),
        Err(ConfigError::Unknown("retention.mss".into()))
    );
    let mut bad_enum = BTreeMap::new();
    bad_enum.insert("message.timestamp.type".to_string(), "Now".to_string());
    assert!(validate_topic_overrides(&bad_enum).is_err());
}

#[test]
fn environment_variables_follow_the_kafka_image_convention() {
    let vars = [
        ("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://broker:9092"),
        ("KAFKA_LOG_RETENTION_HOURS", "1"),
        ("KAFKA_SOME__WEIRD___NAME", "x"),
        ("KAFKA_HEAP_OPTS", "-Xmx1G"),
        ("KAFKA_NUM_PARTITIONS", "3"),
        ("SLUICE_NUM_PARTITIONS", "6"),
        ("KAFKA_PROCESS_ROLES", "broker,controller"),
        ("PATH", "/usr/bin"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()));
    let mut props = properties_from_env(vars);
    assert_eq!(props["advertised.listeners"], "PLAINTEXT://broker:9092");
    assert_eq!(props["log.retention.hours"], "1");
    assert_eq!(props["some_weird-name"], "x");
    assert_eq!(props["num.partitions"], "6", "SLUICE_* wins");
    assert!(
        !props.contains_key("heap.opts"),
        "JVM settings are not properties"
    );
    assert!(!props.contains_key("path"));
    props.remove("some_weird-name");
    let config = BrokerConfig::from_properties(&props).unwrap();
    assert_eq!(config.num_partitions, 6);
    assert!(config.without_effect.is_empty());
    assert!(config.cluster.broker_role && config.cluster.controller_role);
}

#[test]
fn kraft_settings_follow_kafkas_rules() {
    let single = BrokerConfig::with_overrides(&[]).unwrap();
    assert!(single.cluster.is_single_node());
    assert_eq!(single.cluster.offsets_topic_replication_factor, 1);
    assert_eq!(single.cluster.inter_broker_listener, "PLAINTEXT");

    let node = |extra: &[(&str, &str)]| {
        let mut pairs = vec![
            ("node.id", "2"),
            ("process.roles", "broker,controller"),
            (
                "controller.quorum.voters",
                "1@127.0.0.1:9101,2@127.0.0.1:9102,3@127.0.0.1:9103",
            ),
            (
                "listeners",
                "PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9102",
            ),
        ];
        pairs.extend_from_slice(extra);
        BrokerConfig::with_overrides(&pairs)
    };
    let config = node(&[("broker.rack", "r1")]).unwrap();
    assert!(!config.cluster.is_single_node());
    assert_eq!(config.cluster.voters.len(), 3);
    assert_eq!(config.cluster.voters[1].port, 9102);
    assert_eq!(config.cluster.offsets_topic_replication_factor, 3);
    assert_eq!(config.cluster.rack.as_deref(), Some("r1"));
    assert_eq!(config.cluster.controller_listener, "CONTROLLER");

    for bad in [
        vec![("node.id", "4")],
        vec![("process.roles", "broker")],
        vec![("listeners", "PLAINTEXT://127.0.0.1:9092")],
        vec![("inter.broker.listener.name", "CONTROLLER")],
        vec![("controller.quorum.voters", "1@h:1,1@h:2")],
        vec![("controller.quorum.voters", "one@h:1")],
    ] {
        assert!(node(&bad).is_err(), "{bad:?}");
    }
    // A broker-only node needs to know where the controllers are.
    let broker_only = [
        ("node.id", "4"),
        ("process.roles", "broker"),
        ("listeners", "PLAINTEXT://127.0.0.1:9092"),
    ];
    assert!(BrokerConfig::with_overrides(&broker_only).is_err());
    // ... through the voters, or servers to ask for them (KIP-853).
    let mut with_bootstrap = broker_only.to_vec();
    with_bootstrap.push(("controller.quorum.bootstrap.servers", "127.0.0.1:9101"));
    let config = BrokerConfig::with_overrides(&with_bootstrap).unwrap();
    assert_eq!(
        config.cluster.bootstrap_servers,
        vec![("127.0.0.1".to_string(), 9101)]
    );
    let mut with_voters = broker_only.to_vec();
    with_voters.push(("controller.quorum.voters", "1@127.0.0.1:9101"));
    let config = BrokerConfig::with_overrides(&with_voters).unwrap();
    assert!(config.cluster.broker_role && !config.cluster.controller_role);
    assert_eq!(config.cluster.voters[0].port, 9101);
    // A controller-only node serves no clients.
    assert!(
        BrokerConfig::with_overrides(&[
            ("node.id", "1"),
            ("process.roles", "controller"),
            ("controller.quorum.voters", "1@127.0.0.1:9101"),
            ("listeners", "PLAINTEXT://127.0.0.1:9092"),
        ])
        .is_err()
    );
}

#[test]
fn listeners_parse() {
    let config = BrokerConfig::with_overrides(&[
        ("listeners", "PLAINTEXT://127.0.0.1:0"),
        ("advertised.listeners", "PLAINTEXT://broker.example:19092"),
    ])
    .unwrap();
    assert_eq!(config.listeners[0].port, 0);
    assert_eq!(config.advertised_listeners[0].host, "broker.example");
    let tls = BrokerConfig::with_overrides(&[
        (
            "listeners",
            "SSL://127.0.0.1:9093,INTERNAL://127.0.0.1:9094",
        ),
        (
            "listener.security.protocol.map",
            "SSL:SSL,INTERNAL:SASL_PLAINTEXT",
        ),
    ])
    .unwrap();
    assert_eq!(tls.listeners[0].protocol, SecurityProtocol::Ssl);
    assert_eq!(tls.listeners[1].protocol, SecurityProtocol::SaslPlaintext);
    assert_eq!(
        tls.advertised_listeners[1].protocol,
        SecurityProtocol::SaslPlaintext
    );
    let chosen = BrokerConfig::with_overrides(&[
        ("listeners", "A://127.0.0.1:0,B://127.0.0.1:0"),
        ("listener.security.protocol.map", "A:SSL,B:SASL_SSL"),
        ("security.inter.broker.protocol", "SASL_SSL"),
    ])
    .unwrap();
    assert_eq!(chosen.cluster.inter_broker_listener, "B");
    for both in [
        vec![("security.inter.broker.protocol", "SSL")],
        vec![
            ("security.inter.broker.protocol", "PLAINTEXT"),
            ("inter.broker.listener.name", "PLAINTEXT"),
        ],
    ] {
        assert!(BrokerConfig::with_overrides(&both).is_err(), "{both:?}");
    }
}

mod readme_tests {
    /// The README's configuration reference must list every property this broker knows.
    #[test]
    fn readme_lists_every_property() {
        let readme = include_str!("../../README.md");
        let all = super::super::all_broker_configs().chain(super::super::TOPIC_CONFIGS);
        for def in all.chain(super::super::GROUP_CONFIGS) {
            assert!(
                readme.contains(&format!("| `{}` |", def.name)),
                "README is missing {}",
                def.name
            );
        }
    }
}

#[test]
fn the_images_cluster_id_variables_and_bitnamis_convention() {
    let vars = |pairs: &[(&str, &str)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Vec<_>>()
    };
    let props = properties_from_env(vars(&[
        ("CLUSTER_ID", "4L6g3nShT-eMCtK--X86sw"),
        ("KAFKA_NODE_ID", "1"),
        ("KAFKA_CREATE_TOPICS", "a:1:1"),
        ("KAFKA_JMX_PORT", "9101"),
    ]));
    assert_eq!(props["cluster.id"], "4L6g3nShT-eMCtK--X86sw");
    assert_eq!(props["node.id"], "1");
    assert!(
        !props.contains_key("create.topics"),
        "topics at startup are no property"
    );
    assert!(!props.contains_key("jmx.port"));

    // Any KAFKA_CFG_* variable makes the environment Bitnami's: its other KAFKA_* variables
    // configure the image, not the broker.
    let props = properties_from_env(vars(&[
        ("KAFKA_CFG_NODE_ID", "0"),
        (
            "KAFKA_CFG_LISTENER_NAME_SASL_SSL_PLAIN_SASL_JAAS_CONFIG",
            "x",
        ),
        ("KAFKA_CFG_NUM_PARTITIONS", ""),
        ("KAFKA_KRAFT_CLUSTER_ID", "abcdefghijklmnopqrstuv"),
        ("KAFKA_ENABLE_KRAFT", "yes"),
        ("CLUSTER_ID", "not-this-one"),
        ("SLUICE_NODE_ID", "3"),
    ]));
    assert_eq!(props["node.id"], "3", "SLUICE_* wins");
    assert_eq!(props["cluster.id"], "abcdefghijklmnopqrstuv");
    assert_eq!(props["listener.name.sasl_ssl.plain.sasl.jaas.config"], "x");
    assert!(
        !props.contains_key("num.partitions"),
        "empty values are skipped"
    );
    assert!(!props.contains_key("enable.kraft"));
}

#[test]
fn unknown_properties_from_the_environment_are_split_off() {
    let props: BTreeMap<String, String> = [
        ("rest.bootstrap.servers", "PLAINTEXT://0.0.0.0:9093"),
        ("confluent.support.metrics.enable", "false"),
        ("num.partitions", "3"),
        ("listener.name.secure.scram-sha-256.sasl.jaas.config", "x"),
        ("zookeeper.connect", "localhost:2181"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let (known, unknown) = BrokerConfig::split_unknown(props);
    assert_eq!(
        unknown,
        ["confluent.support.metrics.enable", "rest.bootstrap.servers"]
    );
    assert_eq!(known.len(), 3);
    let config = BrokerConfig::from_properties(&known).unwrap();
    assert_eq!(config.without_effect, ["zookeeper.connect"]);
}

#[test]
fn properties_text_reads_back_unchanged() {
    let props: BTreeMap<String, String> = [
        ("a.b", "plain"),
        ("path", "C:\\dir\\file"),
        ("lead", " space and = : # !"),
        ("multi", "line one\nline two"),
        ("empty", ""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let text = to_properties_text(&props);
    assert_eq!(parse_properties(&text).unwrap(), props);
}

#[test]
fn per_address_connection_overrides_are_parsed_and_resolved_as_kafka_reads_them() {
    let config = BrokerConfig::with_overrides(&[(
        "max.connections.per.ip.overrides",
        "127.0.0.2:5, ::1:3, [::2]:4",
    )])
    .unwrap();
    let overrides: Vec<(String, usize)> = config
        .max_connections_per_ip_overrides
        .iter()
        .map(|(ip, n)| (ip.to_string(), *n))
        .collect();
    assert_eq!(
        overrides,
        vec![
            ("127.0.0.2".to_string(), 5),
            ("::1".to_string(), 3),
            ("::2".to_string(), 4)
        ]
    );
    let named =
        BrokerConfig::with_overrides(&[("max.connections.per.ip.overrides", "localhost:9")])
            .unwrap();
    assert!(
        named
            .max_connections_per_ip_overrides
            .keys()
            .all(|ip| ip.is_loopback())
    );
    for bad in ["127.0.0.1", "127.0.0.1:many", "no-such-host.invalid:1"] {
        assert!(
            BrokerConfig::with_overrides(&[("max.connections.per.ip.overrides", bad)]).is_err(),
            "{bad}"
        );
    }
    let zero = BrokerConfig::with_overrides(&[("max.connections.per.ip", "0")]);
    assert_eq!(
        zero.err().map(|e| e.to_string()).as_deref(),
        Some(
            "requirement failed: max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set."
        )
    );
    assert!(
        BrokerConfig::with_overrides(&[
            ("max.connections.per.ip", "0"),
            ("max.connections.per.ip.overrides", "127.0.0.1:10"),
        ])
        .is_ok()
    );
}
