//! Matching and normalization: two messages (split at the first newline) compare, diff
//! and list their differences without a panic; a message always matches itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::Message;
use mcptape::compare as matcher;
use mcptape::{Glob, Matcher};

fuzz_target!(|data: &[u8]| {
    let (a, b) = match memchr(data) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, data),
    };
    let (ra, rb) = (Message::new(a.to_vec()), Message::new(b.to_vec()));
    let m = Matcher::default();
    let _ = m.matches(&ra, &rb);
    if ra.is_object() {
        assert!(m.matches(&ra, &ra), "a message does not match itself");
    }
    let (mut na, mut nb) = (m.normalize(&ra), m.normalize(&rb));
    matcher::expand_json_text(&mut na);
    matcher::expand_json_text(&mut nb);
    let _ = matcher::differences(&na, &nb, "");
    let _ = matcher::diff(&na, &nb, "a", "b");
    if let Ok(glob) = Glob::parse(std::str::from_utf8(b).unwrap_or("x")) {
        glob.remove(&mut na);
    }
});

fn memchr(data: &[u8]) -> Option<usize> {
    data.iter().position(|&b| b == b'\n')
}
