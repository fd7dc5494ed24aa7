//! A request frame (without its size prefix): header and body decoded for the API and
//! version it names, as the broker and controller listeners would. Bad input must be an
//! error; an allocation sized by the input (libFuzzer's malloc limit) or a panic is a crash.
#![no_main]

use bytes::Bytes;
use kafka_protocol::messages::{ApiKey, RequestHeader};
use kafka_protocol::protocol::Decodable;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|frame: &[u8]| {
    let Ok(summary) = sluice::server::codec::summarize(frame) else {
        return;
    };
    let Ok(api) = ApiKey::try_from(summary.api_key) else {
        return;
    };
    let mut body = Bytes::copy_from_slice(frame);
    if RequestHeader::decode(&mut body, api.request_header_version(summary.version)).is_err() {
        return;
    }
    let _ = sluice::api::decode_request(api, summary.version, body.clone());
    let _ = sluice::api::decode_controller_request(api, summary.version, body);
});
