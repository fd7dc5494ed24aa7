//! The HTTP listener's `/metrics`: a real broker, real clients, and the series Kafka's
//! dashboards read, checked against what the workload did.

mod common;

use common::{Broker, wait_until};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::producer::{FutureProducer, FutureRecord};
use std::time::Duration;

/// A broker with its HTTP listener on a free port, and that listener's address.
fn broker_with_http() -> (Broker, String) {
    let broker = Broker::start(&[("http.listener", "127.0.0.1:0")]);
    let address = broker.http_address();
    (broker, address)
}

/// (content type, body) of `/metrics`.
fn scrape(address: &str, accept: Option<&str>) -> (String, String) {
    let mut request = ureq::get(format!("http://{address}/metrics"));
    if let Some(accept) = accept {
        request = request.header("Accept", accept);
    }
    let mut response = request.call().expect("scrape");
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = response.body_mut().read_to_string().expect("body");
    (content_type, body)
}

/// The value of the series written exactly as `series` (name and labels).
fn value(body: &str, series: &str) -> Option<f64> {
    body.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_what_clients_did_under_kafkas_names() {
    let (broker, address) = broker_with_http();
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    let created = admin
        .create_topics(
            [&NewTopic::new("observed", 3, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}: {}", broker.log_text()));
    assert!(created[0].is_ok(), "{:?}", created[0]);

    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("linger.ms", "5")
        .create()
        .unwrap();
    let payload = "x".repeat(100);
    for i in 0..300 {
        producer
            .send(
                FutureRecord::<(), str>::to("observed")
                    .partition(i % 3)
                    .payload(&payload),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .unwrap();
    }

    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", "watchers")
        .set("auto.offset.reset", "earliest")
        .set("enable.auto.commit", "false")
        .create()
        .unwrap();
    consumer.subscribe(&["observed"]).unwrap();
    let mut consumed = 0;
    assert!(
        wait_until(Duration::from_secs(30), || {
            while let Some(message) = consumer.poll(Duration::from_millis(100)) {
                message.unwrap();
                consumed += 1;
            }
            consumed >= 300
        }),
        "consumed {consumed} of 300"
    );
    consumer.commit_consumer_state(CommitMode::Sync).unwrap();

    let (content_type, body) = scrape(&address, None);
    assert!(
        content_type.starts_with("text/plain; version=0.0.4"),
        "{content_type}"
    );
    let messages_in = r#"kafka_server_brokertopicmetrics_messagesin_total{topic="observed"}"#;
    assert_eq!(value(&body, messages_in), Some(300.0), "{body}");
    assert!(body.contains("# TYPE kafka_server_brokertopicmetrics_messagesin_total counter"));
    let bytes_in = value(
        &body,
        r#"kafka_server_brokertopicmetrics_bytesin_total{topic="observed"}"#,
    )
    .unwrap_or_default();
    assert!(bytes_in > 300.0 * 100.0, "bytes in {bytes_in}");
    let bytes_out = value(
        &body,
        r#"kafka_server_brokertopicmetrics_bytesout_total{topic="observed"}"#,
    )
    .unwrap_or_default();
    assert!(
        bytes_out >= bytes_in,
        "every byte read once: out {bytes_out}, in {bytes_in}"
    );
    let produced: f64 = body
        .lines()
        .filter(|l| {
            l.starts_with(r#"kafka_network_requestmetrics_requests_total{request="Produce","#)
        })
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(produced >= 1.0, "produce requests counted");
    assert!(
        value(
            &body,
            r#"kafka_network_requestmetrics_errors_total{error="NONE",request="Produce"}"#
        )
        .is_some_and(|n| n >= 300.0 / 3.0 - 100.0),
        "produce error codes counted"
    );
    assert!(
        value(
            &body,
            r#"kafka_network_requestmetrics_totaltimems_count_total{request="Produce"}"#
        )
        .is_some_and(|n| n >= 1.0)
    );
    assert!(body.contains(
        r#"kafka_network_requestmetrics_totaltimems{quantile="0.99",request="Produce"}"#
    ));
    let end_offsets: f64 = (0..3)
        .filter_map(|p| {
            value(
                &body,
                &format!(r#"kafka_log_log_logendoffset{{partition="{p}",topic="observed"}}"#),
            )
        })
        .sum();
    assert_eq!(end_offsets, 300.0);
    assert_eq!(
        value(
            &body,
            r#"kafka_consumergroup_lag_sum{consumergroup="watchers",topic="observed"}"#
        ),
        Some(0.0),
        "the group committed everything it read"
    );
    assert_eq!(
        value(
            &body,
            r#"kafka_consumergroup_current_offset_sum{consumergroup="watchers",topic="observed"}"#
        ),
        Some(300.0)
    );
    assert_eq!(
        value(
            &body,
            r#"kafka_consumergroup_members{consumergroup="watchers"}"#
        ),
        Some(1.0),
        "the consumer is still in its group"
    );
    assert_eq!(
        value(
            &body,
            "kafka_controller_kafkacontroller_activecontrollercount"
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &body,
            "kafka_server_replicamanager_underreplicatedpartitions"
        ),
        Some(0.0)
    );
    assert!(value(&body, "process_open_fds").is_some_and(|n| n > 0.0));

    // The lag shows what is still to be read.
    for _ in 0..30 {
        producer
            .send(
                FutureRecord::<(), str>::to("observed")
                    .partition(0)
                    .payload("more"),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .unwrap();
    }
    let (_, body) = scrape(&address, None);
    assert_eq!(
        value(
            &body,
            r#"kafka_consumergroup_lag{consumergroup="watchers",partition="0",topic="observed"}"#
        ),
        Some(30.0)
    );

    // OpenMetrics for a scraper that asks for it (Prometheus does).
    let (content_type, body) = scrape(
        &address,
        Some("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"),
    );
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    assert!(body.ends_with("# EOF\n"));
    assert!(body.contains("# TYPE kafka_server_brokertopicmetrics_messagesin counter"));
    assert_eq!(value(&body, messages_in), Some(330.0));
}

#[test]
fn an_http_listener_that_was_asked_for_and_cannot_bind_stops_the_start() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sluice"))
        .args(["--override", "listeners=PLAINTEXT://127.0.0.1:0"])
        .args(["--override", &format!("log.dirs={}", dir.path().display())])
        .args(["--override", &format!("http.listener={address}")])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "cannot bind the HTTP listener (http.listener={address})"
        )),
        "{stderr}"
    );
}

/// Lints promtool raises that Kafka's own names force, each raised by Kafka's exporter output
/// too: its histograms are gauges with a `quantile` label (the JMX exporter's rules),
/// `..._connection_count` is Kafka's metric name, `..._sum` is kafka_exporter's.
const NAMING_LINTS: [&str; 3] = [
    r#"non-summary metrics should not have "quantile" label"#,
    r#"non-histogram and non-summary metrics should not have "_count" suffix"#,
    r#"non-histogram and non-summary metrics should not have "_sum" suffix"#,
];

/// A real Prometheus (Debian's, installed by `.ci/run`) scrapes the broker (in OpenMetrics, as
/// it asks first), and promtool parses and lints the 0.0.4 text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prometheus_scrapes_the_broker_and_promtool_accepts_its_output() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let (broker, address) = broker_with_http();
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    for _ in 0..7 {
        producer
            .send(
                FutureRecord::<(), str>::to("scraped").payload("m"),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .unwrap();
    }

    // promtool reads the 0.0.4 text format; the OpenMetrics one is what Prometheus itself
    // asks for, below.
    {
        let accept = "text/plain";
        let (_, body) = scrape(&address, Some(accept));
        let mut promtool = Command::new("promtool")
            .args(["check", "metrics"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("promtool (Debian's prometheus package; .ci/run installs it)");
        promtool
            .stdin
            .take()
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        let output = promtool.wait_with_output().unwrap();
        let report = String::from_utf8_lossy(&output.stdout).to_string()
            + &String::from_utf8_lossy(&output.stderr);
        // 0: clean; 3: lint problems only (1 would be a format error).
        assert!(
            matches!(output.status.code(), Some(0 | 3)),
            "{accept}: {report}"
        );
        let unexpected: Vec<&str> = report
            .lines()
            .filter(|line| !NAMING_LINTS.iter().any(|lint| line.ends_with(lint)))
            .collect();
        assert!(unexpected.is_empty(), "{accept}: {unexpected:#?}");
    }

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: kafka\n    static_configs:\n      - targets: [\"{address}\"]\n"
        ),
    )
    .unwrap();
    let web = format!("127.0.0.1:{}", common::free_port());
    let mut prometheus = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={web}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus (Debian's prometheus package; .ci/run installs it)");
    let query = format!(
        "http://{web}/api/v1/query?query=kafka_server_brokertopicmetrics_messagesin_total%7Btopic%3D%22scraped%22%7D"
    );
    let mut last = String::new();
    let seen = wait_until(Duration::from_secs(60), || {
        last = ureq::get(&query)
            .call()
            .ok()
            .and_then(|mut r| r.body_mut().read_to_string().ok())
            .unwrap_or_default();
        last.contains(r#""value":["#) && last.contains(r#","7"]"#)
    });
    let _ = prometheus.kill();
    let _ = prometheus.wait();
    assert!(seen, "Prometheus never had the series: {last}");
}

/// With an authorizer, a request on a PLAINTEXT HTTP listener is `User:ANONYMOUS` and meets
/// the ACLs as a PLAINTEXT Kafka listener's clients do: no topic to see, no metrics.
#[test]
fn with_an_authorizer_the_anonymous_principal_meets_the_acls() {
    let broker = Broker::start(&[
        ("http.listener", "127.0.0.1:0"),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        ("super.users", "User:ANONYMOUS-not"),
    ]);
    let address = broker.http_address();
    let status = |path: &str| match ureq::get(format!("http://{address}{path}")).call() {
        Ok(response) => response.status().as_u16(),
        Err(ureq::Error::StatusCode(code)) => code,
        Err(e) => panic!("{path}: {e}"),
    };
    assert_eq!(status("/"), 200, "the page itself shows nothing");
    assert_eq!(status("/metrics"), 403);
    assert_eq!(status("/api/v1/acls"), 403);
    assert_eq!(status("/api/v1/topics/__consumer_offsets"), 403);
    let mut topics = ureq::get(format!("http://{address}/api/v1/topics"))
        .call()
        .unwrap();
    assert_eq!(topics.body_mut().read_to_string().unwrap(), "[]");
}

/// SaslHandshake and SaslAuthenticate, which the connection's SASL gate answers itself, are
/// counted among the requests as Kafka counts them.
#[test]
fn sasl_requests_are_counted_with_the_rest() {
    let jaas = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";"#;
    let broker = Broker::start(&[
        ("http.listener", "127.0.0.1:0"),
        (
            "listeners",
            "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        ),
        ("sasl.enabled.mechanisms", "PLAIN"),
        ("listener.name.sasl_plaintext.plain.sasl.jaas.config", jaas),
    ]);
    let address = broker.http_address();
    let mut sasl = None;
    assert!(wait_until(Duration::from_secs(20), || {
        sasl = broker.log_text().lines().find_map(|line| {
            let (address, listener) = line.split("listening on ").nth(1)?.split_once(' ')?;
            (listener.trim() == "listener=SASL_PLAINTEXT").then(|| address.to_string())
        });
        sasl.is_some()
    }));
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", sasl.unwrap_or_default())
        .set("security.protocol", "SASL_PLAINTEXT")
        .set("sasl.mechanism", "PLAIN")
        .set("sasl.username", "alice")
        .set("sasl.password", "alice-secret")
        .create()
        .unwrap();
    consumer
        .fetch_metadata(None, Duration::from_secs(10))
        .expect("metadata over SASL");
    let counted = |request: &str| -> f64 {
        let (_, body) = scrape(&address, None);
        let prefix =
            format!(r#"kafka_network_requestmetrics_requests_total{{request="{request}","#);
        body.lines()
            .filter(|l| l.starts_with(&prefix))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum()
    };
    assert!(counted("SaslHandshake") >= 1.0);
    assert!(counted("SaslAuthenticate") >= 1.0);
    assert!(counted("Metadata") >= 1.0);
}
