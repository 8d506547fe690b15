//! `mcptape export`: a tape written in other tools' formats, from the tape alone.
//!
//! - [`jsonl`]: every entry as a plain JSON object per line (for jq);
//! - [`har`]: HAR 1.2 — an HTTP-recorded connection as the POSTs that carried it, a
//!   stdio one as one pseudo-request per JSON-RPC exchange;
//! - [`otlp`]: OTLP/JSON traces — a trace per connection, a span per request, following
//!   the OpenTelemetry semantic conventions for MCP;
//! - [`facts`]: what each connection's entries say about it (transport, URL, session,
//!   protocol version), which HAR and OTLP share.
//!
//! Every export is JSON written through [`crate::term`]'s escaping serialiser: the same
//! values, with C1 and bidi controls as `\u` escapes, so that a terminal showing it is
//! never driven by a tape. Nothing is redacted here: the tape already was when it was
//! recorded.

pub mod facts;
pub mod har;
pub mod jsonl;
pub mod otlp;

use crate::cli::ExportFormat;
use crate::exchange::Exchanges;
use crate::tape::Tape;

/// The tape in `format`, whole.
pub fn render(format: ExportFormat, tape: &Tape) -> String {
    match format {
        ExportFormat::Jsonl => jsonl::render(tape),
        ExportFormat::Har => {
            let x = Exchanges::of(tape);
            format!("{}\n", crate::term::json_pretty(&har::document(tape, &x)))
        }
        ExportFormat::Otlp => {
            let x = Exchanges::of(tape);
            format!("{}\n", crate::term::json_pretty(&otlp::document(tape, &x)))
        }
    }
}

/// `v` as JSON text, escaped as every export is: HAR entries and OTLP spans are kept so
/// as soon as each is made, and a large tape's export holds one entry's tree at a time.
fn raw(v: &serde_json::Value) -> Box<serde_json::value::RawValue> {
    let text = crate::term::json_compact(v);
    serde_json::value::RawValue::from_string(text).unwrap_or_else(|e| {
        // json_compact writes JSON (or a JSON string saying why it could not).
        serde_json::value::to_raw_value(&e.to_string()).unwrap_or_default()
    })
}

/// An entry's time as Unix nanoseconds, when it has one.
pub fn nanos(t: std::time::SystemTime) -> u128 {
    t.duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0)
}
