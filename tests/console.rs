//! The web console in a real browser: headless Chromium (Debian's `chromium` and
//! `chromium-driver`, installed by `.ci/run`) driven over WebDriver, against a real broker that
//! real clients (librdkafka) write to and read from. Screenshots of each view go to
//! `target/console-screenshots/`.

mod common;

use common::{Broker, wait_until};
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A chromedriver process and one headless Chromium session in it.
struct Browser {
    driver: Child,
    endpoint: String,
    session: String,
}

impl Browser {
    fn start() -> Self {
        let port = common::free_port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver (Debian's chromium-driver; .ci/run installs it)");
        let endpoint = format!("http://127.0.0.1:{port}");
        let mut browser = Self {
            driver,
            endpoint,
            session: String::new(),
        };
        assert!(
            wait_until(Duration::from_secs(20), || {
                ureq::get(format!("{}/status", browser.endpoint))
                    .call()
                    .is_ok()
            }),
            "chromedriver did not come up"
        );
        let created = browser.call(
            "POST",
            "/session",
            json!({"capabilities": {"alwaysMatch": {
                "browserName": "chrome",
                "goog:chromeOptions": {
                    "binary": "/usr/bin/chromium",
                    "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1366,1000"]
                }
            }}}),
        );
        browser.session = created["sessionId"]
            .as_str()
            .expect("a WebDriver session")
            .to_string();
        browser
    }

    fn call(&self, method: &str, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.endpoint);
        let response = match method {
            "GET" => ureq::get(&url).call(),
            "DELETE" => ureq::delete(&url).call(),
            _ => ureq::post(&url)
                .header("content-type", "application/json")
                .send(body.to_string()),
        };
        let text = match response {
            Ok(mut r) => r.body_mut().read_to_string().unwrap_or_default(),
            Err(e) => panic!("WebDriver {method} {path}: {e}"),
        };
        let value: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        value.get("value").cloned().unwrap_or(value)
    }

    fn session_call(&self, method: &str, path: &str, body: Value) -> Value {
        self.call(method, &format!("/session/{}{path}", self.session), body)
    }

    fn open(&self, url: &str) {
        self.session_call("POST", "/url", json!({ "url": url }));
    }

    /// Runs `script` (a function body) in the page and returns its value.
    fn run(&self, script: &str) -> Value {
        self.session_call(
            "POST",
            "/execute/sync",
            json!({"script": script, "args": []}),
        )
    }

    /// Waits until the page's text contains `text`.
    fn wait_for_text(&self, text: &str) -> bool {
        wait_until(Duration::from_secs(20), || {
            self.run("return document.body.innerText;")
                .as_str()
                .is_some_and(|body| body.contains(text))
        })
    }

    fn text(&self) -> String {
        self.run("return document.body.innerText;")
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// Opens a view of the console and waits until it has rendered.
    fn view(&self, base: &str, hash: &str) {
        self.open(&format!("{base}/{hash}"));
        let ready = wait_until(Duration::from_secs(20), || {
            self.run("return document.body.dataset.ready || '';")
                .as_str()
                .is_some_and(|r| r == hash)
        });
        assert!(ready, "view {hash} did not render: {}", self.text());
    }

    fn screenshot(&self, name: &str) {
        let data = self.session_call("GET", "/screenshot", Value::Null);
        let Some(encoded) = data.as_str() else {
            return;
        };
        use base64::Engine;
        if let Ok(png) = base64::engine::general_purpose::STANDARD.decode(encoded) {
            let dir =
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console-screenshots");
            let _ = std::fs::create_dir_all(&dir);
            let _ = std::fs::write(dir.join(format!("{name}.png")), png);
        }
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = ureq::delete(format!("{}/session/{}", self.endpoint, self.session)).call();
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn broker_with_console() -> (Broker, String) {
    let broker = Broker::start(&[("http.listener", "127.0.0.1:0")]);
    let base = format!("http://{}", broker.http_address());
    (broker, base)
}

fn lag_of(browser: &Browser) -> Option<i64> {
    browser
        .run("const cells = [...document.querySelectorAll('#offsets td.lag')]; return cells.length ? cells.reduce((s, c) => s + Number(c.innerText), 0) : null;")
        .as_i64()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_shows_what_clients_do_and_creates_topics_they_use() {
    let (broker, base) = broker_with_console();
    let browser = Browser::start();

    // The overview.
    browser.view(&base, "#/");
    let overview = browser.text();
    for expected in ["Brokers", "Under-replicated", "Offline", "Controller"] {
        assert!(overview.contains(expected), "{overview}");
    }
    browser.screenshot("overview");

    // A topic a client created appears with its partitions.
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    let created = admin
        .create_topics(
            [&NewTopic::new("orders", 3, TopicReplication::Fixed(1))],
            &AdminOptions::new(),
        )
        .await
        .unwrap();
    assert!(created[0].is_ok(), "{:?}", created[0]);
    browser.view(&base, "#/topics");
    assert!(browser.wait_for_text("orders"), "{}", browser.text());
    browser.view(&base, "#/topics/orders");
    let partitions = browser
        .run("return document.querySelectorAll('#partitions tbody tr').length;")
        .as_i64();
    assert_eq!(partitions, Some(3));

    // A produced message shows in the message browser, key, value and header.
    let producer: FutureProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    producer
        .send(
            FutureRecord::to("orders")
                .partition(1)
                .key("order-17")
                .payload(r#"{"item":"lamp","qty":2}"#)
                .headers(OwnedHeaders::new().insert(Header {
                    key: "source",
                    value: Some("web"),
                })),
            Duration::from_secs(10),
        )
        .await
        .map_err(|(e, _)| e)
        .unwrap();
    browser.run(
        "const form = document.getElementById('browse'); form.partition.value = '1'; form.format.value = 'json'; form.requestSubmit(); return true;",
    );
    assert!(browser.wait_for_text("order-17"), "{}", browser.text());
    let page = browser.text();
    assert!(page.contains("\"item\": \"lamp\""), "shown as JSON: {page}");
    assert!(page.contains("source: web"), "{page}");
    browser.screenshot("topic");

    // A group's lag appears, and falls as it consumes.
    for i in 0..20 {
        producer
            .send(
                FutureRecord::<(), str>::to("orders")
                    .partition(0)
                    .payload(&format!("m{i}")),
                Duration::from_secs(10),
            )
            .await
            .map_err(|(e, _)| e)
            .unwrap();
    }
    let consumer: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", "shipping")
        .set("enable.auto.commit", "false")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    let mut assignment = rdkafka::TopicPartitionList::new();
    assignment
        .add_partition_offset("orders", 0, rdkafka::Offset::Beginning)
        .unwrap();
    consumer.assign(&assignment).unwrap();
    let mut read = 0;
    assert!(wait_until(Duration::from_secs(20), || {
        while read < 5 {
            match consumer.poll(Duration::from_millis(100)) {
                Some(message) => {
                    let message = message.unwrap();
                    consumer.commit_message(&message, CommitMode::Sync).unwrap();
                    read += 1;
                }
                None => break,
            }
        }
        read >= 5
    }));
    browser.view(&base, "#/groups/shipping");
    assert!(
        wait_until(Duration::from_secs(20), || lag_of(&browser) == Some(15)),
        "lag after 5 of 20: {:?} {}",
        lag_of(&browser),
        browser.text()
    );
    browser.screenshot("group");
    assert!(wait_until(Duration::from_secs(20), || {
        while let Some(message) = consumer.poll(Duration::from_millis(100)) {
            let message = message.unwrap();
            consumer.commit_message(&message, CommitMode::Sync).unwrap();
            read += 1;
        }
        read >= 20
    }));
    // The view refreshes itself every five seconds.
    assert!(
        wait_until(Duration::from_secs(20), || lag_of(&browser) == Some(0)),
        "lag after all 20: {:?}",
        lag_of(&browser)
    );
    drop(consumer);

    // A topic made in the console is one librdkafka can use.
    browser.view(&base, "#/topics");
    browser.run(
        "const form = document.getElementById('create-topic'); form.name.value = 'made-in-console'; form.partitions.value = '2'; form.requestSubmit(); return true;",
    );
    assert!(
        wait_until(Duration::from_secs(20), || {
            browser
                .run("return document.body.dataset.ready || '';")
                .as_str()
                .is_some_and(|r| r == "#/topics/made-in-console")
        }),
        "{}",
        browser.text()
    );
    assert_eq!(
        browser
            .run("return document.querySelectorAll('#partitions tbody tr').length;")
            .as_i64(),
        Some(2)
    );
    producer
        .send(
            FutureRecord::<(), str>::to("made-in-console")
                .partition(1)
                .payload("through the console's topic"),
            Duration::from_secs(10),
        )
        .await
        .map_err(|(e, _)| e)
        .unwrap();
    let reader: BaseConsumer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("group.id", "console-readers")
        .set("auto.offset.reset", "earliest")
        .create()
        .unwrap();
    reader.subscribe(&["made-in-console"]).unwrap();
    let mut got = None;
    assert!(wait_until(Duration::from_secs(30), || {
        if let Some(message) = reader.poll(Duration::from_millis(100)) {
            got = message.ok().and_then(|m| {
                rdkafka::Message::payload_view::<str>(&m)
                    .and_then(Result::ok)
                    .map(str::to_string)
            });
        }
        got.is_some()
    }));
    assert_eq!(got.as_deref(), Some("through the console's topic"));
}

/// A console over an HTTP listener that takes Basic credentials, with an authorizer: the super
/// user grants an ACL and sets a SCRAM user in the console's own forms and sees transactions;
/// alice, allowed to DESCRIBE one topic, sees that one and not the other.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_principal_sees_in_the_console_only_what_its_acls_allow() {
    let jaas = r#"org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret" user_alice="alice-secret";"#;
    let broker = Broker::start(&[
        ("http.listener", "127.0.0.1:0"),
        ("http.listener.security.protocol", "SASL_PLAINTEXT"),
        ("listener.name.http.sasl.enabled.mechanisms", "PLAIN"),
        ("listener.name.http.plain.sasl.jaas.config", jaas),
        (
            "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        ),
        // The test's own clients use the PLAINTEXT Kafka listener, as ANONYMOUS.
        ("super.users", "User:admin;User:ANONYMOUS"),
    ]);
    let address = broker.http_address();
    let admin_base = format!("http://admin:admin-secret@{address}");
    let alice_base = format!("http://alice:alice-secret@{address}");

    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .create()
        .unwrap();
    let created = admin
        .create_topics(
            [
                &NewTopic::new("open-topic", 2, TopicReplication::Fixed(1)),
                &NewTopic::new("secret-topic", 1, TopicReplication::Fixed(1)),
            ],
            &AdminOptions::new(),
        )
        .await
        .unwrap();
    assert!(created.iter().all(Result::is_ok), "{created:?}");
    // A transaction, for the transactions view.
    let producer: rdkafka::producer::BaseProducer = ClientConfig::new()
        .set("bootstrap.servers", &broker.bootstrap)
        .set("transactional.id", "invoicing")
        .create()
        .unwrap();
    rdkafka::producer::Producer::init_transactions(&producer, Duration::from_secs(30)).unwrap();
    rdkafka::producer::Producer::begin_transaction(&producer).unwrap();
    producer
        .send(rdkafka::producer::BaseRecord::<(), str>::to("open-topic").payload("invoice 1"))
        .map_err(|(e, _)| e)
        .unwrap();
    rdkafka::producer::Producer::commit_transaction(&producer, Duration::from_secs(30)).unwrap();

    let browser = Browser::start();
    browser.view(&admin_base, "#/");
    assert!(browser.wait_for_text("User:admin"), "{}", browser.text());
    browser.view(&admin_base, "#/transactions");
    assert!(browser.wait_for_text("invoicing"), "{}", browser.text());
    assert!(
        browser.text().contains("CompleteCommit"),
        "{}",
        browser.text()
    );
    browser.screenshot("transactions");
    browser.view(&admin_base, "#/topics/open-topic");
    assert!(
        browser.wait_for_text("Open transaction from"),
        "{}",
        browser.text()
    );

    // The super user grants alice DESCRIBE on one topic, and sets a SCRAM user, in the forms.
    browser.view(&admin_base, "#/security");
    browser.run(
        "const form = document.getElementById('create-acl'); form.resource_name.value = 'open-topic'; form.principal.value = 'User:alice'; form.operation.value = 'DESCRIBE'; form.requestSubmit(); return true;",
    );
    assert!(
        wait_until(Duration::from_secs(20), || {
            browser
                .run("return document.querySelectorAll('#acls tbody tr').length;")
                .as_i64()
                == Some(1)
        }),
        "{}",
        browser.text()
    );
    browser.run(
        "const form = document.getElementById('set-user'); form.user.value = 'carol'; form.password.value = 'carol-secret'; form.requestSubmit(); return true;",
    );
    assert!(
        wait_until(Duration::from_secs(20), || {
            browser
                .run("return document.querySelectorAll('#users tbody tr[data-user=\"carol\"]').length;")
                .as_i64()
                == Some(1)
        }),
        "{}",
        browser.text()
    );
    browser.screenshot("security");
    browser.view(&admin_base, "#/topics");
    let as_admin = browser.text();
    assert!(
        as_admin.contains("open-topic") && as_admin.contains("secret-topic"),
        "{as_admin}"
    );
    drop(browser);

    // alice sees the topic she may describe, and not the other.
    let browser = Browser::start();
    browser.view(&alice_base, "#/topics");
    assert!(browser.wait_for_text("open-topic"), "{}", browser.text());
    let as_alice = browser.text();
    assert!(!as_alice.contains("secret-topic"), "{as_alice}");
    assert!(as_alice.contains("User:alice") || browser.wait_for_text("User:alice"));
    browser.screenshot("topics-as-alice");
    browser.view(&alice_base, "#/topics/secret-topic");
    assert!(
        browser.wait_for_text("TOPIC_AUTHORIZATION_FAILED"),
        "{}",
        browser.text()
    );
    browser.view(&alice_base, "#/security");
    assert!(
        browser.wait_for_text("CLUSTER_AUTHORIZATION_FAILED"),
        "{}",
        browser.text()
    );
}
