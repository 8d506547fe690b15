//! The redactor, with an oracle: redacting a valid JSON line keeps it valid JSON, and
//! redacting twice changes nothing more than redacting once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcptape::Redactor;
use serde_json::value::RawValue;
use std::sync::LazyLock;

/// Built once: its rules are compiled regular expressions.
static REDACTOR: LazyLock<Redactor> =
    LazyLock::new(|| Redactor::new(&["hunter2-literal".to_owned()]));

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let r = &*REDACTOR;
    let once = r.message(text);
    let _ = r.findings(text);
    // The redactor's contract is on JSON texts (every caller passes one); on anything
    // else it must only not panic.
    if serde_json::from_str::<&RawValue>(text).is_ok() {
        assert!(
            serde_json::from_str::<&RawValue>(&once).is_ok(),
            "redaction made valid JSON invalid: {once}"
        );
        let twice = r.message(&once);
        assert_eq!(once, twice, "redaction is not idempotent");
    }
});
