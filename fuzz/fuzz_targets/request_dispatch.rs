//! A request frame through the whole broker in process (no sockets): decoded, handled by
//! the API layer and the core, answered. One broker lives for the whole run, in a temporary
//! directory, with a topic `t` to aim at; each request gets at most 20 ms (long polls,
//! acks=all and rebalance waits are cut short: what comes before a wait is what a frame can
//! reach, and a longer cut only idles the fuzzer). Nothing a frame holds may panic, abort or hang the broker.
#![no_main]

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use sluice::api::ApiContext;
use std::sync::OnceLock;
use std::time::Duration;

struct Harness {
    runtime: tokio::runtime::Runtime,
    ctx: ApiContext,
    _dir: tempfile::TempDir,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let ctx = runtime.block_on(async {
            let config = sluice::config::BrokerConfig::with_overrides(&[
                ("log.dirs", &dir.path().display().to_string()),
                ("auto.create.topics.enable", "false"),
                ("group.initial.rebalance.delay.ms", "0"),
            ])
            .expect("config");
            let broker = sluice::broker::Broker::open(config).expect("broker");
            let starting = broker.clone();
            tokio::task::spawn_blocking(move || {
                starting.start(vec![sluice::metadata::records::Endpoint {
                    name: "PLAINTEXT".into(),
                    host: "127.0.0.1".into(),
                    port: 9092,
                    security_protocol: 0,
                }])
            })
            .await
            .expect("start")
            .expect("start");
            let topic = sluice::broker::NewTopic {
                name: "t".into(),
                partitions: 2,
                replication_factor: 1,
                assignments: vec![],
                configs: Default::default(),
            };
            broker.create_topic(topic, false).await.expect("topic");
            ApiContext::new(broker, "PLAINTEXT", "127.0.0.1", 9092)
        });
        Harness {
            runtime,
            ctx,
            _dir: dir,
        }
    })
}

fuzz_target!(|frame: &[u8]| {
    let harness = harness();
    let frame = Bytes::copy_from_slice(frame);
    harness.runtime.block_on(async {
        let _ = tokio::time::timeout(
            Duration::from_millis(20),
            sluice::server::codec::handle_frame(&harness.ctx, frame),
        )
        .await;
    });
});
