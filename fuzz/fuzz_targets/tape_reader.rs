//! The tape reader: any bytes load as a tape or fail with an error, never a panic, and
//! every connection it finds indexes entries that exist.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::Tape;

fuzz_target!(|data: &[u8]| {
    let Ok(tape) = Tape::parse(std::path::Path::new("fuzz.ndjson"), data) else {
        return;
    };
    for conn in tape.connections() {
        for &i in &conn.entries {
            assert!(i < tape.entries.len());
        }
    }
    let _ = mcptape::trace(&tape, &tape.connections(), Some(80));
});
