//! The fault rule language (`--fault`) and its files (`--faults`, JSON and TOML): any text
//! parses or fails with an error, never a panic, however deep or long.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::fault_rules::{FaultPlan, parse_file};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = FaultPlan::load(&[text.to_owned()], None);
    for name in ["rules.json", "rules.toml", "rules"] {
        let _ = parse_file(text, std::path::Path::new(name), name);
    }
});
