//! Two settings side by side in one run (`--against KEY=VALUE`): the benchmark starts one
//! broker with the usual overrides (A) and one with these on top (B), both running for the
//! whole run, and plays the throughput scenarios on each in turn for `--rounds` rounds, the
//! order swapped every round, so drift of the machine falls on both alike. It prints each round
//! and the medians: msgs/s of A and B, their ratio B/A, and each broker's CPU seconds per
//! million messages. With `--scrape`, every broker that has an HTTP listener is read while the
//! scenarios run as Prometheus and an open console would read it: `/metrics` every second and
//! the console's overview calls (`/api/v1/cluster`, `/api/v1/topics`, `/api/v1/throughput`)
//! every five.
//!
//! The cost of metrics and the console on the data path:
//! `cargo bench --bench broker -- --scenarios produce,consume --messages 2000000 --rounds 5
//! --override http.listener= --against http.listener=127.0.0.1:0 --scrape`.

use super::*;

/// One broker of the comparison and what its scenarios measured.
struct Side {
    label: &'static str,
    broker: OwnedBroker,
    probe: ProcessProbe,
    /// Where its HTTP listener is, if it has one.
    http: Option<String>,
    /// Per scenario: (msgs/s, broker CPU seconds per million messages) of each round.
    results: Vec<(String, f64, f64)>,
}

/// A free port on loopback (released for the broker to bind).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The overrides with an `http.listener` on port 0 given a free port, so the scraper knows
/// the address; and that address, if the listener is on.
fn with_http_address(overrides: &[String]) -> (Vec<String>, Option<String>) {
    let mut address = None;
    let overrides = overrides
        .iter()
        .map(|o| match o.strip_prefix("http.listener=") {
            Some(value) if value.trim().is_empty() => {
                address = None;
                o.clone()
            }
            Some(value) => {
                let fixed = match value.rsplit_once(':') {
                    Some((host, "0")) => format!("{host}:{}", free_port()),
                    _ => value.to_string(),
                };
                address = Some(fixed.clone());
                format!("http.listener={fixed}")
            }
            None => o.clone(),
        })
        .collect();
    (overrides, address)
}

/// Reads the HTTP listeners at `addresses` until `stop`, as Prometheus and a console would;
/// returns how many reads succeeded.
fn scrape(addresses: Vec<String>, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    std::thread::spawn(move || {
        let mut reads = 0u64;
        let mut tick = 0u64;
        while !stop.load(Ordering::Relaxed) {
            for address in &addresses {
                let mut paths = vec!["/metrics"];
                if tick.is_multiple_of(5) {
                    paths.extend(["/api/v1/cluster", "/api/v1/topics", "/api/v1/throughput"]);
                }
                for path in paths {
                    if let Ok(mut response) = ureq::get(format!("http://{address}{path}")).call()
                        && response.body_mut().read_to_vec().is_ok()
                    {
                        reads += 1;
                    }
                }
            }
            tick += 1;
            std::thread::sleep(Duration::from_secs(1));
        }
        reads
    })
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

pub(super) fn run(options: &Options) {
    let binary = options
        .broker_bin
        .clone()
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_sluice")));
    let mut b_overrides = options.overrides.clone();
    b_overrides.extend(options.against.iter().cloned());
    let mut sides = Vec::new();
    for (label, overrides) in [("A", options.overrides.clone()), ("B", b_overrides)] {
        let (overrides, http) = with_http_address(&overrides);
        let broker = OwnedBroker::start(binary.clone(), &overrides);
        let probe = ProcessProbe::new(broker.child.id());
        println!("{label}: {}", overrides.join(" "));
        sides.push(Side {
            label,
            broker,
            probe,
            http,
            results: Vec::new(),
        });
    }
    let stop = Arc::new(AtomicBool::new(false));
    let scraper = options.scrape.then(|| {
        let addresses: Vec<String> = sides.iter().filter_map(|s| s.http.clone()).collect();
        println!("scraping {}", addresses.join(", "));
        scrape(addresses, stop.clone())
    });
    let scenarios: Vec<&str> = options.scenarios.split(',').map(str::trim).collect();
    let run_id = unix_nanos() % 1_000_000_007;
    for round in 0..options.rounds {
        let order: Vec<usize> = if round % 2 == 0 {
            vec![0, 1]
        } else {
            vec![1, 0]
        };
        for index in order {
            let side = &mut sides[index];
            let bootstrap = side.broker.bootstrap.clone();
            let topic = format!("bench-{run_id}-{round}-{}", side.label);
            let mut produced = false;
            for scenario in &scenarios {
                let before = side.probe.cpu_seconds();
                let outcome = match *scenario {
                    "produce" => {
                        create_topic(&bootstrap, &topic, options.partitions, &[]);
                        produced = true;
                        produce(options, &bootstrap, &topic)
                    }
                    "consume" if produced => consume(options, &bootstrap, &topic),
                    other => {
                        eprintln!(
                            "--against runs produce and consume (produce first), not {other}"
                        );
                        continue;
                    }
                };
                let cpu = side.probe.cpu_seconds() - before;
                let rate = outcome.messages as f64 / outcome.seconds;
                let cpu_per_million = cpu / (outcome.messages.max(1) as f64 / 1e6);
                println!(
                    "round {round} {} {scenario:<8} {rate:>12.0} msgs/s  broker cpu {cpu:.2} s ({cpu_per_million:.2} s per M msgs){}",
                    side.label,
                    if outcome.failed > 0 {
                        format!("  {} FAILED", outcome.failed)
                    } else {
                        String::new()
                    }
                );
                side.results
                    .push((scenario.to_string(), rate, cpu_per_million));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    if let Some(reads) = scraper.and_then(|s| s.join().ok()) {
        println!("HTTP reads while the scenarios ran: {reads}");
    }
    println!(
        "{:<9} {:>14} {:>14} {:>8} {:>16} {:>16}",
        "scenario", "A msgs/s", "B msgs/s", "B/A", "A cpu s/M msgs", "B cpu s/M msgs"
    );
    let mut seen = Vec::new();
    for scenario in &scenarios {
        if seen.contains(scenario) {
            continue;
        }
        seen.push(*scenario);
        let of = |side: &Side, pick: fn(&(String, f64, f64)) -> f64| -> Vec<f64> {
            side.results
                .iter()
                .filter(|r| r.0 == *scenario)
                .map(pick)
                .collect()
        };
        let (a_rate, b_rate) = (
            median(of(&sides[0], |r| r.1)),
            median(of(&sides[1], |r| r.1)),
        );
        let (a_cpu, b_cpu) = (
            median(of(&sides[0], |r| r.2)),
            median(of(&sides[1], |r| r.2)),
        );
        println!(
            "{scenario:<9} {a_rate:>14.0} {b_rate:>14.0} {:>8.3} {a_cpu:>16.2} {b_cpu:>16.2}",
            b_rate / a_rate
        );
        println!(
            "{}",
            serde_json::json!({"scenario": scenario, "rounds": options.rounds,
                "a_msgs_per_sec": a_rate, "b_msgs_per_sec": b_rate, "ratio": b_rate / a_rate,
                "a_cpu_seconds_per_million": a_cpu, "b_cpu_seconds_per_million": b_cpu})
        );
    }
}
