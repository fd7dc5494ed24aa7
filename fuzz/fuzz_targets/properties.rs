//! A `.properties` file as `--config` reads it, then validated into the broker's settings:
//! any text is either a config or an error naming the bad property, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let text = String::from_utf8_lossy(bytes);
    if let Ok(properties) = sluice::config::parse_properties(&text) {
        let _ = sluice::config::BrokerConfig::from_properties(&properties);
    }
});
