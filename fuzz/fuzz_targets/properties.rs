//! A `.properties` file as `--config` reads it, then validated into the broker's settings:
//! any text is either a config or an error naming the bad property, never a panic.
//! Listener hosts are resolved during validation; a fuzzed host name would be a DNS query (a
//! network round trip, or its timeout, per input), so `listeners` naming anything but an IP
//! address is checked with its hosts replaced by 127.0.0.1.
#![no_main]

use libfuzzer_sys::fuzz_target;

/// `listeners` with every host that is not an IP address (or empty) replaced by 127.0.0.1.
fn without_host_names(listeners: &str) -> String {
    listeners
        .split(',')
        .map(|listener| {
            let Some((name, address)) = listener.split_once("://") else {
                return listener.to_string();
            };
            let Some((host, port)) = address.rsplit_once(':') else {
                return listener.to_string();
            };
            let literal = host.trim_start_matches('[').trim_end_matches(']');
            if host.is_empty() || literal.parse::<std::net::IpAddr>().is_ok() {
                listener.to_string()
            } else {
                format!("{name}://127.0.0.1:{port}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fuzz_target!(|bytes: &[u8]| {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(mut properties) = sluice::config::parse_properties(&text) {
        if let Some(listeners) = properties.get_mut("listeners") {
            *listeners = without_host_names(listeners);
        }
        let _ = sluice::config::BrokerConfig::from_properties(&properties);
    }
});
