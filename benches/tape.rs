//! Big tapes: how long loading and picking take, what matching one client message costs
//! (which must not depend on the tape's length), and the peak memory of every command
//! that reads a tape.
//!
//! Timing, in process, on a tape of 2000 connections (~113 MB): the whole-tape load, the
//! replaying proxy's load of one server, picking a connection by content, matching.
//!
//! Memory, one child process per measurement (the `mcptape` binary under
//! `/usr/bin/time -f %M`, the peak RSS of it and what it waited for), on two generated
//! tapes: 6 million small entries of one server (~1 GB) and 100 000 large ones of two
//! servers taking turns (~0.8 GB). Measured:
//! `list`, `show --full`, the `replay` parent (`replay TAPE -- true`) and a replaying
//! proxy serving the connection in the middle of the tape.
//!
//! Run: `cargo bench --bench tape` (`-- --smoke` for small tapes, `-- --json`).
//! `MCPTAPE_BENCH_BIN=path/to/mcptape` measures another build of the binary.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use mcptape::Picker;
use mcptape::lines as format;
use mcptape::{Direction, Meta};
use mcptape::{Replay, ReplayOptions as Options, ServerFacts};
use mcptape::{ServerTape, Tape};

const CALLS_PER_CONNECTION: usize = 40;
const SERVER: &str = "bench";

fn request(id: usize, conn: usize) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "search", "arguments": {"query": format!("connection {conn} question {id}"), "limit": 10}}})
    .to_string()
}

fn answer(id: usize, repeat: usize) -> String {
    let text =
        "a result line of a search answer, long enough to look like real output. ".repeat(repeat);
    json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}})
        .to_string()
}

fn small_request(id: usize, conn: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get","arguments":{{"k":"c{conn}-{id}"}}}}}}"#
    )
}

fn small_answer(id: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"v{id}"}}]}}}}"#
    )
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;
const INIT_OK: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"bench","version":"1"}}}"#;

/// A generated tape: `conns` connections of `calls` calls each, of `servers` servers
/// taking turns (connection `c` is server `c % servers`'s; the first is `bench`).
struct Shape {
    conns: usize,
    servers: usize,
    calls: usize,
    request: fn(usize, usize) -> String,
    answer: fn(usize) -> String,
}

/// Writes the tape; returns its size and the size of server `bench`'s lines, in bytes.
fn generate(path: &Path, shape: &Shape) -> (u64, u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut served = 0;
    for c in 0..shape.conns {
        let server = match c % shape.servers {
            0 => SERVER.to_owned(),
            n => format!("other{n}"),
        };
        let meta = |dir| Meta {
            dir,
            server: server.clone(),
            ts: Some("2026-11-30T05:00:00.000Z".into()),
            conn: Some(format!("{c:08x}-1")),
            batch: None,
            stream: None,
            source: None,
        };
        let mut put = |text: &str, dir| {
            let line = format::encode(text.as_bytes(), &meta(dir));
            if c % shape.servers == 0 {
                served += line.len() as u64;
            }
            out.write_all(&line).expect("write");
        };
        put(INIT, Direction::Send);
        put(INIT_OK, Direction::Recv);
        for id in 1..=shape.calls {
            put(&(shape.request)(id, c), Direction::Send);
            put(&(shape.answer)(id), Direction::Recv);
        }
    }
    out.flush().expect("flush");
    (
        std::fs::metadata(path).map(|m| m.len()).unwrap_or(0),
        served,
    )
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

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// The in-process timings on a ~113 MB tape.
fn timings(dir: &Path, smoke: bool) -> Value {
    let conns = if smoke { 40 } else { 2000 };
    let shape = Shape {
        conns,
        servers: 1,
        calls: CALLS_PER_CONNECTION,
        request,
        answer: |id| answer(id, 14),
    };
    let big = dir.join("timing.ndjson");
    let small = dir.join("one.ndjson");
    let (bytes, _) = generate(&big, &shape);
    generate(&small, &Shape { conns: 1, ..shape });
    let t = Instant::now();
    let tape = Tape::load(&big).expect("load");
    let load_ms = ms(t);
    let t = Instant::now();
    let connections = tape.connections().len();
    let group_ms = ms(t);
    let t = Instant::now();
    let served = Arc::new(ServerTape::load(&big, SERVER).expect("load"));
    let served_ms = ms(t);
    let t = Instant::now();
    let mut picker = Picker::new(served, SERVER, None, &Options::default());
    picker.on_client(INIT.as_bytes());
    let picked = picker.on_client(request(1, conns / 2).as_bytes());
    let pick_ms = ms(t);
    assert_eq!(
        picked.len(),
        1,
        "the picker found the connection by content"
    );
    let small_tape = Tape::load(&small).expect("load");
    json!({
        "tape_bytes": bytes,
        "connections": connections,
        "entries": tape.entries.len(),
        "load_whole_tape_ms": load_ms,
        "group_into_connections_ms": group_ms,
        "load_one_server_ms": served_ms,
        "pick_among_all_connections_ms": pick_ms,
        "match_us_per_message_small_tape": match_cost(&small_tape, 0),
        "match_us_per_message_big_tape": match_cost(&tape, conns / 2),
    })
}

/// The binary to measure.
fn binary() -> PathBuf {
    std::env::var_os("MCPTAPE_BENCH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_mcptape")))
}

const TIME: &str = "/usr/bin/time";

/// `mcptape ARGS` under `/usr/bin/time`, with `MCPTAPE_HOME` at `home`; the peak RSS
/// file is `rss`.
fn measured(home: &Path, rss: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(TIME);
    cmd.args(["-f", "%M", "-o"])
        .arg(rss)
        .arg(binary())
        .args(args)
        .env("MCPTAPE_HOME", home)
        .env_remove("MCPTAPE_RECORD")
        .env_remove("MCPTAPE_REPLAY")
        .env_remove("MCPTAPE_REPORT")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    cmd
}

fn read_kb(rss: &Path) -> u64 {
    std::fs::read_to_string(rss)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
        .unwrap_or(0)
}

/// Peak RSS (KiB) and seconds of one command run to its end.
fn peak(home: &Path, args: &[&str]) -> (u64, f64) {
    let rss = home.join("rss");
    let t = Instant::now();
    let status = measured(home, &rss, args).status().expect("run");
    let secs = t.elapsed().as_secs_f64();
    // `replay` without a proxy under it fails (every connection unused): that is expected.
    assert!(status.code().is_some(), "{args:?} was killed");
    (read_kb(&rss), secs)
}

/// Peak RSS (KiB) and seconds of a replaying proxy that serves connection `conn`.
fn proxy_peak(
    home: &Path,
    tape: &Path,
    conn: usize,
    request: fn(usize, usize) -> String,
) -> (u64, f64) {
    let rss = home.join("rss");
    let t = Instant::now();
    let mut child = measured(
        home,
        &rss,
        &["proxy", "--server", SERVER, "--", "/nonexistent/server"],
    )
    .env("MCPTAPE_REPLAY", tape)
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .spawn()
    .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    for line in [INIT.to_owned(), request(1, conn)] {
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
        let mut answer = String::new();
        stdout.read_line(&mut answer).expect("read");
        assert!(
            answer.contains("\"result\""),
            "an answer from the tape: {answer}"
        );
    }
    drop(stdin);
    child.wait().expect("wait");
    (read_kb(&rss), t.elapsed().as_secs_f64())
}

/// Peak memory of each command on one generated tape.
fn memory(dir: &Path, name: &str, shape: &Shape) -> Value {
    let home = dir.join(name);
    let recordings = home.join("recordings");
    std::fs::create_dir_all(&recordings).expect("mkdir");
    let tape = recordings.join(format!("{name}.ndjson"));
    let t = Instant::now();
    let (bytes, served) = generate(&tape, shape);
    let gen_s = t.elapsed().as_secs_f64();
    let path = tape.to_string_lossy().into_owned();
    let list = peak(&home, &["list"]);
    let show = peak(&home, &["show", "--full", &path]);
    let parent = peak(&home, &["replay", &path, "--", "true"]);
    let proxy = proxy_peak(&home, &tape, shape.conns / 2, shape.request);
    std::fs::remove_file(&tape).expect("remove");
    let row = |(kb, secs): (u64, f64)| {
        json!({"peak_rss_kb": kb, "seconds": secs,
            "peak_rss_over_tape_size": (kb * 1024) as f64 / bytes as f64,
            "peak_rss_over_served_size": (kb * 1024) as f64 / served as f64})
    };
    json!({
        "tape_bytes": bytes,
        "servers": shape.servers,
        "served_bytes": served,
        "entries": shape.conns * (2 + 2 * shape.calls),
        "connections": shape.conns,
        "generate_seconds": gen_s,
        "list": row(list),
        "show": row(show),
        "replay_parent": row(parent),
        "replaying_proxy": row(proxy),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let smoke = args.iter().any(|a| a == "--smoke");
    let json_out = args.iter().any(|a| a == "--json");
    let dir = tempfile::tempdir().expect("tempdir");
    let timing = timings(dir.path(), smoke);
    // 6 M entries of ~180 bytes; 100 k entries, half of them ~20 KB answers.
    let (small_conns, large_conns) = if smoke { (200, 40) } else { (37_500, 10_000) };
    let small = Shape {
        conns: small_conns,
        servers: 1,
        calls: 79,
        request: small_request,
        answer: small_answer,
    };
    // Two servers: the replaying proxy holds only the half it serves.
    let large = Shape {
        conns: large_conns,
        servers: 2,
        calls: 4,
        request,
        answer: |id| answer(id, 280),
    };
    let have_time = Path::new(TIME).exists();
    let (small_mem, large_mem) = if have_time {
        (
            memory(dir.path(), "small", &small),
            memory(dir.path(), "large", &large),
        )
    } else {
        eprintln!("{TIME} is missing: peak memory not measured");
        (Value::Null, Value::Null)
    };
    let report = json!({"timing": timing, "small_entries": small_mem, "large_entries": large_mem});
    if json_out {
        println!("{report:#}");
        return;
    }
    let t = &report["timing"];
    let f = |v: &Value| v.as_f64().unwrap_or(0.0);
    println!(
        "tape: {:.1} MB, {} connections, {} entries",
        f(&t["tape_bytes"]) / 1e6,
        t["connections"],
        t["entries"]
    );
    println!(
        "  load the whole tape                 {:>9.1} ms",
        f(&t["load_whole_tape_ms"])
    );
    println!(
        "  group into connections              {:>9.1} ms",
        f(&t["group_into_connections_ms"])
    );
    println!(
        "  load one server (replaying proxy)   {:>9.1} ms",
        f(&t["load_one_server_ms"])
    );
    println!(
        "  pick a connection by content        {:>9.1} ms  (handshake + first call, {} candidates)",
        f(&t["pick_among_all_connections_ms"]),
        t["connections"]
    );
    println!(
        "  match, per client message, 1-connection tape  {:>7.2} µs",
        f(&t["match_us_per_message_small_tape"])
    );
    println!(
        "  match, per client message, this tape          {:>7.2} µs",
        f(&t["match_us_per_message_big_tape"])
    );
    for key in ["small_entries", "large_entries"] {
        let m = &report[key];
        if m.is_null() {
            continue;
        }
        println!(
            "peak RSS, {}: {:.1} MB tape, {} entries, {} connections of {} server(s), {:.1} MB of `bench`",
            key.replace('_', " "),
            f(&m["tape_bytes"]) / 1e6,
            m["entries"],
            m["connections"],
            m["servers"],
            f(&m["served_bytes"]) / 1e6
        );
        for (label, k) in [
            ("list", "list"),
            ("show --full", "show"),
            ("replay parent", "replay_parent"),
            ("replaying proxy", "replaying_proxy"),
        ] {
            let served = if k == "replaying_proxy" {
                format!(
                    ", {:.2} × `bench`'s lines",
                    f(&m[k]["peak_rss_over_served_size"])
                )
            } else {
                String::new()
            };
            println!(
                "  {label:<18} {:>9.1} MB  ({:.2} × the tape{served}, {:.1} s)",
                f(&m[k]["peak_rss_kb"]) / 1024.0,
                f(&m[k]["peak_rss_over_tape_size"]),
                f(&m[k]["seconds"])
            );
        }
    }
}
