//! Exhausted resources: half-sent requests and the request pool's memory, idle and stalled
//! connections, the per-IP connection limit, a full disk, and no file descriptors left — each
//! refused or closed for the one client, no log taken offline, everyone else still served.

use super::*;

fn rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// Opens `connections` connections that each declare a `frame_mib` MiB frame, send up to
/// `sent_mib` MiB of it (as far as the broker reads) and stall; returns them with the
/// broker's memory growth half a second later.
fn stall_frames(
    broker: &Broker,
    connections: usize,
    frame_mib: i32,
    sent_mib: usize,
) -> (Vec<std::net::TcpStream>, u64) {
    use std::time::Duration;
    let baseline = rss_bytes(broker.pid());
    let chunk = vec![0u8; 1 << 20];
    let stalled: Vec<_> = (0..connections)
        .map(|_| {
            let mut stream = connect(broker);
            stream
                .set_write_timeout(Some(Duration::from_millis(100)))
                .unwrap();
            let _ = stream.write_all(&(frame_mib << 20).to_be_bytes());
            for _ in 0..sent_mib {
                if stream.write_all(&chunk).is_err() {
                    break;
                }
            }
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let held = rss_bytes(broker.pid()).saturating_sub(baseline);
    eprintln!(
        "{connections} connections stalled {sent_mib} MiB into {frame_mib} MiB frames: {} MiB over the baseline",
        held >> 20
    );
    (stalled, held)
}

/// Defect 7, the case with the default settings: 40 connections each sending 60 MiB
/// of a declared 100 MiB frame and stalling held 2.49 GB on b1a30df. The request memory pool
/// (`queued.max.request.bytes`, 512 MiB by default) takes in five such frames; the others
/// wait, unread, in TCP flow control. The broker's memory stays within the pool and small
/// requests are still served.
#[test]
fn half_received_requests_hold_bounded_memory() {
    let broker = Broker::start(&[]);
    let (stalled, held) = stall_frames(&broker, 40, 100, 60);
    assert!(held < 600 << 20, "{} MiB", held >> 20);
    api_versions_ok(&broker);
    drop(stalled);
}

/// The same with a small pool: 64 MiB takes in one 50 MiB frame.
#[test]
fn a_small_request_pool_holds_one_large_frame() {
    let broker = Broker::start(&[("queued.max.request.bytes", "67108864")]);
    let (stalled, held) = stall_frames(&broker, 20, 50, 10);
    assert!(held < 100 << 20, "{} MiB", held >> 20);
    api_versions_ok(&broker);
    drop(stalled);
}

/// Defect 6/7: `connections.max.idle.ms` closes a connection that sends nothing, and one that
/// stops in the middle of a frame (b1a30df kept both for ever).
#[test]
fn idle_and_stalled_connections_are_closed() {
    use std::time::{Duration, Instant};
    let broker = Broker::start(&[("connections.max.idle.ms", "1000")]);
    let mut idle = connect(&broker);
    let mut half = connect(&broker);
    half.write_all(&1_000i32.to_be_bytes()).unwrap();
    half.write_all(&[0u8; 10]).unwrap();
    let started = Instant::now();
    for stream in [&mut idle, &mut half] {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        assert!(is_closed(stream));
    }
    let took = started.elapsed();
    assert!(took < Duration::from_secs(8), "{took:?}");
    api_versions_ok(&broker);
}

/// Defect 6: `max.connections.per.ip` (Kafka's connection quota): a connection over the
/// limit of its address is closed at once; the others are served.
#[test]
fn connections_over_the_per_ip_limit_are_closed() {
    let broker = Broker::start(&[("max.connections.per.ip", "3")]);
    let mut open: Vec<_> = (0..3).map(|_| connect(&broker)).collect();
    for stream in &mut open {
        let _: ApiVersionsResponse = call(
            stream,
            ApiKey::ApiVersions,
            0,
            &ApiVersionsRequest::default(),
        );
    }
    let mut fourth = connect(&broker);
    assert!(
        is_closed(&mut fourth),
        "a fourth connection from 127.0.0.1 was served"
    );
    drop(open.pop());
    assert!(common::wait_until(
        std::time::Duration::from_secs(5),
        || {
            let mut again = connect(&broker);
            again
                .write_all(&frame(
                    ApiKey::ApiVersions,
                    0,
                    1,
                    &ApiVersionsRequest::default(),
                ))
                .is_ok()
                && read_frame(&mut again).is_some()
        }
    ));
}

/// Defect 5: a full disk. On b1a30df the broker died with SIGBUS writing a mapped index page
/// (3 of 3 runs), the quorum gave up, and DeleteTopics on the full disk killed it at once, so
/// space could never be freed. Now: producers get KAFKA_STORAGE_ERROR, reads go on, the
/// metadata log keeps working (its space reserve), DeleteTopics frees the space, and writes
/// resume without a restart.
#[test]
fn a_full_disk_refuses_writes_keeps_reads_and_recovers_when_space_is_freed() {
    use std::time::Duration;
    const KAFKA_STORAGE_ERROR: i16 = 56;
    let disk = common::Tmpfs::mount(48);
    let data = disk.path().join("data");
    let mut broker = Broker::start_in(&data, &[("log.segment.bytes", "8388608")]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "filler", 1, &[]);
    create_topic(&mut stream, "kept", 1, &[]);
    let small = || keyed(&[Some("k")], Codec::None);
    assert_eq!(
        produce(&mut stream, "kept", 1, small()).unwrap().error_code,
        0
    );
    let value = Bytes::from(vec![7u8; 512 * 1024]);
    let big = encode_batch(&[record(0, 1_000, None, Some(value))], Compression::None).freeze();
    let mut refused = false;
    for _ in 0..200 {
        let response = produce(&mut stream, "filler", 1, big.clone()).unwrap();
        if response.error_code == KAFKA_STORAGE_ERROR {
            refused = true;
            break;
        }
        assert_eq!(response.error_code, 0);
    }
    assert!(refused, "48 MiB never filled up");
    // Full: every producer is refused, reads and metadata go on.
    assert_eq!(
        produce(&mut stream, "kept", 1, small()).unwrap().error_code,
        KAFKA_STORAGE_ERROR
    );
    assert_eq!(fetch(&mut stream, "kept", 0, 1 << 20).error_code, 0);
    api_versions_ok(&broker);
    let response: DeleteTopicsResponse = call(
        &mut stream,
        ApiKey::DeleteTopics,
        4,
        &DeleteTopicsRequest::default()
            .with_topic_names(vec![TopicName(StrBytes::from_static_str("filler"))])
            .with_timeout_ms(30_000),
    );
    assert_eq!(response.responses[0].error_code, 0, "{response:?}");
    assert!(
        common::wait_until(Duration::from_secs(20), || {
            produce(&mut stream, "kept", 1, small()).unwrap().error_code == 0
        }),
        "writes did not resume once the space was freed"
    );
    create_topic(&mut stream, "after", 1, &[]);
    assert_eq!(latest_offset(&mut stream, "kept"), 2);
    assert!(broker.is_running());
    assert_eq!(broker.stop(), Some(0));
    let log = broker.log_text();
    assert!(
        !log.contains("panicked") && !log.contains("quorum failed"),
        "{log}"
    );
}

/// Sends a CreateTopics of the 50-partition topic `during` without waiting for its answer
/// (which may take until descriptors return).
fn send_create_of_during(stream: &mut std::net::TcpStream) {
    stream
        .write_all(&frame(
            ApiKey::CreateTopics,
            7,
            9,
            &CreateTopicsRequest::default()
                .with_topics(vec![topic_named("during", 50)])
                .with_timeout_ms(30_000),
        ))
        .unwrap();
}

/// Connections until the broker has no descriptor left to accept one with (a connect into a
/// full listen backlog waits for a SYN retry: those are given up after 2 s).
fn exhaust_descriptors(broker: &Broker) -> Vec<std::net::TcpStream> {
    use std::time::Duration;
    let address: std::net::SocketAddr = broker.bootstrap.parse().unwrap();
    let mut flood = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !broker.log_text().contains("accept failed")
        && std::time::Instant::now() < deadline
        && flood.len() < 2_000
    {
        if let Ok(s) = std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)) {
            flood.push(s);
        }
    }
    assert!(
        broker.log_text().contains("accept failed"),
        "{} connections did not exhaust the descriptors",
        flood.len()
    );
    flood
}

/// Defect 10 as the issue met it, without a crash point: b1a30df's controller quorum failed
/// when a topic was created while the descriptors were exhausted ("controller quorum failed;
/// this node no longer takes part in it"), and the broker then ignored SIGTERM. Now the
/// quorum survives that, and SIGTERM stops the broker in bounded time either way.
#[test]
fn sigterm_stops_a_broker_after_a_descriptor_flood_during_a_create() {
    use std::time::{Duration, Instant};
    let mut broker = Broker::start_with_fd_limit(256, &[]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "before", 1, &[]);
    let flood = exhaust_descriptors(&broker);
    send_create_of_during(&mut stream);
    std::thread::sleep(Duration::from_secs(2));
    drop(flood);
    std::thread::sleep(Duration::from_secs(1));
    let quorum_failed = broker.log_text().contains("controller quorum failed");
    let started = Instant::now();
    let code = broker.stop();
    let took = started.elapsed();
    eprintln!("quorum failed: {quorum_failed}; stopped in {took:?} with {code:?}");
    assert!(!quorum_failed, "the quorum gave up for want of descriptors");
    assert!(took < Duration::from_secs(29), "{took:?}");
}

/// Defect 6: running out of file descriptors is not a disk failure. On b1a30df, with a
/// 512-descriptor limit, 600 idle connections made produce answer KAFKA_STORAGE_ERROR and
/// took logs offline until a restart. Here, with a 256 limit, 400 connections exhaust the
/// descriptors while a topic of 50 partitions is created; once the connections close, every
/// partition (those whose logs could not be opened meanwhile too) takes writes, and no log
/// went offline.
#[test]
fn running_out_of_descriptors_takes_no_log_offline() {
    use std::time::Duration;
    let broker = Broker::start_with_fd_limit(256, &[]);
    let mut stream = connect(&broker);
    create_topic(&mut stream, "steady", 1, &[]);
    let small = || keyed(&[Some("k")], Codec::None);
    assert_eq!(
        produce(&mut stream, "steady", 1, small())
            .unwrap()
            .error_code,
        0
    );
    let flood = exhaust_descriptors(&broker);
    // The descriptors are gone: the existing log still takes writes.
    assert_eq!(
        produce(&mut stream, "steady", 1, small())
            .unwrap()
            .error_code,
        0
    );
    // Created meanwhile; not waited for (the answer may take until descriptors return).
    send_create_of_during(&mut stream);
    std::thread::sleep(Duration::from_millis(500));
    drop(flood);
    let produce_to = |stream: &mut std::net::TcpStream, partition: i32| {
        use kafka_protocol::messages::produce_request::{PartitionProduceData, TopicProduceData};
        let request = ProduceRequest::default()
            .with_acks(1)
            .with_timeout_ms(10_000)
            .with_topic_data(vec![
                TopicProduceData::default()
                    .with_name(TopicName(StrBytes::from_static_str("during")))
                    .with_partition_data(vec![
                        PartitionProduceData::default()
                            .with_index(partition)
                            .with_records(Some(small())),
                    ]),
            ]);
        let response: ProduceResponse = call(stream, ApiKey::Produce, 9, &request);
        response.responses[0].partition_responses[0].error_code
    };
    let mut stream = connect(&broker);
    for partition in 0..50 {
        assert!(
            common::wait_until(Duration::from_secs(20), || produce_to(
                &mut stream,
                partition
            ) == 0),
            "partition {partition} of the topic created without descriptors takes no writes"
        );
    }
    assert_eq!(
        produce(&mut stream, "steady", 1, small())
            .unwrap()
            .error_code,
        0
    );
    assert_eq!(latest_offset(&mut stream, "steady"), 3);
    let log = broker.log_text();
    assert!(!log.contains("log taken offline"), "{log}");
}
