//! Loading and replaying a big tape: a generated tape of many connections (100 MB by
//! default), its load time and peak RSS, and the cost of matching one client message —
//! which must not depend on the tape's length.
//!
//! Run: `cargo bench --bench tape` (`-- --smoke` for a small tape, `-- --json`).

use std::io::Write;
use std::time::Instant;

use serde_json::json;

use mcptape::tape::Tape;
use mcptape::tape::format::{self, Direction, Meta};
use mcptape::upstream::pick::Picker;
use mcptape::upstream::replay::{Options, Replay, ServerFacts};

const CALLS_PER_CONNECTION: usize = 40;

fn rss_kb(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn request(id: usize, conn: usize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": format!("connection {conn} question {id}"), "limit": 10}}})
    .to_string()
}

fn answer(id: usize) -> String {
    let text =
        "a result line of a search answer, long enough to look like real output. ".repeat(14);
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
        .to_string()
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}"#;

/// Writes a tape of `conns` connections of one server; returns its size in bytes.
fn generate(path: &std::path::Path, conns: usize) -> u64 {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    for c in 0..conns {
        let meta = |dir| Meta {
            dir,
            server: "bench".into(),
            ts: Some("2026-11-30T05:00:00.000Z".into()),
            conn: Some(format!("{c:08x}-1")),
            batch: None,
        };
        out.write_all(&format::encode(INIT.as_bytes(), &meta(Direction::Send)))
            .expect("write");
        out.write_all(&format::encode(INIT_OK.as_bytes(), &meta(Direction::Recv)))
            .expect("write");
        for id in 1..=CALLS_PER_CONNECTION {
            out.write_all(&format::encode(
                request(id, c).as_bytes(),
                &meta(Direction::Send),
            ))
            .expect("write");
            out.write_all(&format::encode(
                answer(id).as_bytes(),
                &meta(Direction::Recv),
            ))
            .expect("write");
        }
    }
    out.flush().expect("flush");
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// Microseconds per client message when replaying connection `conn` of the tape.
fn match_cost(tape: &Tape, conn: usize) -> f64 {
    let conns = tape.connections();
    let facts = ServerFacts::of(tape, &conns);
    let mut engine = Replay::new(tape, &conns[conn], &facts, Options::default());
    let requests: Vec<String> = (1..=CALLS_PER_CONNECTION)
        .map(|id| request(id, conn))
        .collect();
    let t = Instant::now();
    engine.on_client(INIT.as_bytes());
    for r in &requests {
        let out = engine.on_client(r.as_bytes());
        assert_eq!(out.len(), 1, "the recorded answer");
    }
    assert!(engine.finish().ok());
    t.elapsed().as_secs_f64() * 1e6 / (CALLS_PER_CONNECTION + 1) as f64
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let smoke = args.iter().any(|a| a == "--smoke");
    let json_out = args.iter().any(|a| a == "--json");
    // About 100 MB: each connection is ~50 KB.
    let conns = if smoke { 40 } else { 2000 };
    let dir = tempfile::tempdir().expect("tempdir");
    let big = dir.path().join("big.ndjson");
    let small = dir.path().join("small.ndjson");
    let bytes = generate(&big, conns);
    generate(&small, 1);

    let base_rss = rss_kb("VmRSS:");
    let t = Instant::now();
    let tape = std::sync::Arc::new(Tape::load(&big).expect("load"));
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let connections = tape.connections();
    let group_ms = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let mut picker = Picker::new(
        std::sync::Arc::clone(&tape),
        "bench",
        None,
        &Options::default(),
    );
    picker.on_client(INIT.as_bytes());
    let picker_out = picker.on_client(request(1, conns / 2).as_bytes());
    let pick_ms = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(
        picker_out.len(),
        1,
        "the picker found the connection by content"
    );
    let peak_kb = rss_kb("VmHWM:");

    let small_tape = Tape::load(&small).expect("load");
    let per_small = match_cost(&small_tape, 0);
    let per_big = match_cost(&tape, conns / 2);
    let report = json!({
        "tape_bytes": bytes,
        "connections": connections.len(),
        "entries": tape.entries.len(),
        "load_ms": load_ms,
        "group_into_connections_ms": group_ms,
        "peak_rss_kb": peak_kb,
        "rss_before_load_kb": base_rss,
        "peak_rss_over_tape_size": (peak_kb.saturating_sub(base_rss) * 1024) as f64 / bytes as f64,
        "pick_among_all_connections_ms": pick_ms,
        "match_us_per_message_small_tape": per_small,
        "match_us_per_message_big_tape": per_big,
    });
    if json_out {
        println!("{report:#}");
        return;
    }
    println!(
        "tape: {:.1} MB, {} connections, {} entries",
        bytes as f64 / 1e6,
        connections.len(),
        tape.entries.len()
    );
    println!("  load (read + parse every line)      {load_ms:>9.1} ms");
    println!("  group into connections              {group_ms:>9.1} ms");
    println!(
        "  peak RSS                            {:>9.1} MB  ({:.2} × the tape)",
        peak_kb as f64 / 1024.0,
        report["peak_rss_over_tape_size"].as_f64().unwrap_or(0.0)
    );
    println!(
        "  pick a connection by content        {pick_ms:>9.1} ms  (handshake + first call, {} candidates)",
        connections.len()
    );
    println!("  match, per client message, 1-connection tape  {per_small:>7.2} µs");
    println!("  match, per client message, this tape          {per_big:>7.2} µs");
}
