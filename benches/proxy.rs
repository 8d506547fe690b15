//! The proxy against the floor: direct pipes, a plain byte relay, and `mcptape proxy`
//! passing through, recording and replaying; `mcptape call` recording and replaying.
//!
//! Run: `cargo bench --bench proxy` (`-- --json` for JSON, `-- --smoke` for a tiny run).
//! The bench binary is also its own fast server and byte relay (`MCPTAPE_BENCH_ROLE`), so
//! that the figures measure the pipes and mcptape, not a slow peer. Modes run
//! interleaved, round after round, on the same machine at the same time.

use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

const ROLE: &str = "MCPTAPE_BENCH_ROLE";

/// The fast server: answers each request line at once; `bench/big` with `bytes` N
/// answers with a text of N bytes.
fn serve() {
    let stdin = std::io::stdin();
    let mut out = BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
    let mut line = String::new();
    let mut reader = stdin.lock();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let Some(at) = line.find("\"id\":") else {
            continue;
        };
        let rest = &line[at + 5..];
        let id = &rest[..rest.find([',', '}']).unwrap_or(rest.len())];
        let text = match line.find("\"bytes\":") {
            Some(b) if line.contains("bench/big") => {
                let n: usize = line[b + 8..]
                    .trim_start()
                    .split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(0);
                "x".repeat(n)
            }
            _ => "pong".to_owned(),
        };
        let _ = writeln!(
            out,
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
        );
        let _ = out.flush();
    }
}

/// The floor: a process that copies bytes both ways, nothing else.
fn relay(argv: &[String]) {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .env(ROLE, "server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut to = child.stdin.take().expect("stdin");
    let mut from = child.stdout.take().expect("stdout");
    let up = std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to);
    });
    let mut buf = vec![0u8; 1 << 16];
    let mut out = std::io::stdout().lock();
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if out.write_all(&buf[..n]).and_then(|()| out.flush()).is_err() {
                    break;
                }
            }
        }
    }
    drop(up);
    let _ = child.wait();
}

struct Sizes {
    rounds: usize,
    small: usize,
    mb1: usize,
    mb16: usize,
    calls: usize,
}

#[derive(Default, Clone)]
struct Figures {
    small_us: Vec<f64>,
    mb1_mbps: Vec<f64>,
    mb16_mbps: Vec<f64>,
    first_ms: Vec<f64>,
    rss_kb: u64,
}

fn peak_rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_owned)
        })
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

struct Session {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
    line: Vec<u8>,
}

impl Session {
    fn start(argv: &[String], env: &[(&str, String)]) -> Session {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::with_capacity(1 << 20, child.stdout.take().expect("stdout"));
        Session {
            child,
            stdin,
            stdout,
            line: Vec::with_capacity(1 << 20),
        }
    }

    fn round_trip(&mut self, request: &str) -> usize {
        self.stdin.write_all(request.as_bytes()).expect("write");
        self.stdin.write_all(b"\n").expect("write");
        self.stdin.flush().expect("flush");
        self.line.clear();
        let n = self.stdout.read_until(b'\n', &mut self.line).expect("read");
        assert!(n > 0, "the session ended early");
        n
    }

    fn finish(mut self) -> u64 {
        let rss = peak_rss_kb(self.child.id());
        drop(self.stdin);
        let _ = self.child.wait();
        rss
    }
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    if s.is_empty() {
        return f64::NAN;
    }
    s[((s.len() - 1) as f64 * p).round() as usize]
}

fn median(v: &[f64]) -> f64 {
    percentile(v, 0.5)
}

/// One session of the fixed script: initialize, small round trips, 1 MB and 16 MB answers.
fn script(argv: &[String], env: &[(&str, String)], sizes: &Sizes, fig: &mut Figures) {
    let start = Instant::now();
    let mut s = Session::start(argv, env);
    s.round_trip(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#);
    fig.first_ms.push(start.elapsed().as_secs_f64() * 1e3);
    let mut id = 1;
    for _ in 0..sizes.small {
        let req = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello, small world"}}}}}}"#
        );
        id += 1;
        let t = Instant::now();
        s.round_trip(&req);
        fig.small_us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    for (count, bytes, out) in [(sizes.mb1, 1usize << 20, 0), (sizes.mb16, 16 << 20, 1)] {
        for _ in 0..count {
            let req = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"bench/big","params":{{"bytes":{bytes}}}}}"#
            );
            id += 1;
            let t = Instant::now();
            let n = s.round_trip(&req);
            let mbps = n as f64 / t.elapsed().as_secs_f64() / 1e6;
            if out == 0 {
                fig.mb1_mbps.push(mbps)
            } else {
                fig.mb16_mbps.push(mbps)
            }
        }
    }
    fig.rss_kb = fig.rss_kb.max(s.finish());
}

fn time_call(argv: &[String]) -> f64 {
    let t = Instant::now();
    let status = Command::new(&argv[0])
        .args(&argv[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("call");
    assert!(status.success(), "{argv:?} failed");
    t.elapsed().as_secs_f64() * 1e3
}

fn main() {
    match std::env::var(ROLE).as_deref() {
        Ok("server") => return serve(),
        Ok("relay") => return relay(&std::env::args().skip(1).collect::<Vec<_>>()),
        _ => {}
    }
    let args: Vec<String> = std::env::args().collect();
    let json_out = args.iter().any(|a| a == "--json");
    let sizes = if args.iter().any(|a| a == "--smoke") {
        Sizes {
            rounds: 1,
            small: 20,
            mb1: 1,
            mb16: 1,
            calls: 2,
        }
    } else {
        Sizes {
            rounds: 3,
            small: 2000,
            mb1: 20,
            mb16: 4,
            calls: 15,
        }
    };
    let me = std::env::current_exe()
        .expect("bench path")
        .to_string_lossy()
        .into_owned();
    let mcptape = env!("CARGO_BIN_EXE_mcptape").to_owned();
    let dir = tempfile::tempdir().expect("tempdir");
    let tape: PathBuf = dir.path().join("bench.ndjson");
    let server = vec![me.clone()];
    let role = |r: &str| vec![(ROLE, r.to_owned())];
    let proxy = |extra: &[&str], server: &[String]| {
        let mut v = vec![
            mcptape.clone(),
            "proxy".into(),
            "--server".into(),
            "bench".into(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.push("--".into());
        v.extend(server.iter().cloned());
        v
    };
    let tape_s = tape.display().to_string();
    let modes: Vec<(&str, Vec<String>)> = vec![
        ("direct", server.clone()),
        ("relay", {
            let mut v = vec![me.clone()];
            v.extend(server.clone());
            v
        }),
        ("proxy", proxy(&[], &server)),
        ("proxy --record", proxy(&["--record", &tape_s], &server)),
        (
            "proxy --replay",
            proxy(&["--replay", &tape_s], &["/nonexistent".to_owned()]),
        ),
    ];
    let mut figures: Vec<Figures> = vec![Figures::default(); modes.len()];
    for _ in 0..sizes.rounds {
        let _ = std::fs::remove_file(&tape);
        for (i, (name, argv)) in modes.iter().enumerate() {
            // The relay and the server are this binary in a role; the proxy's server too.
            let env = match *name {
                "relay" => vec![(ROLE, "relay".to_owned())],
                _ => role("server"),
            };
            script(argv, &env, &sizes, &mut figures[i]);
        }
    }
    // `mcptape call`, whole process, recording then replaying.
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        json!({"mcpServers": {"bench": {"command": me, "env": {ROLE: "server"}}}}).to_string(),
    )
    .expect("config");
    let call_tape = dir.path().join("call.ndjson").display().to_string();
    let call = |mode: &str| {
        vec![
            mcptape.clone(),
            "call".into(),
            "bench.echo".into(),
            "message:hi".into(),
            "--config".into(),
            config.display().to_string(),
            mode.into(),
            call_tape.clone(),
        ]
    };
    let mut call_record = Vec::new();
    let mut call_replay = Vec::new();
    for _ in 0..sizes.calls {
        let _ = std::fs::remove_file(&call_tape);
        call_record.push(time_call(&call("--record")));
        call_replay.push(time_call(&call("--replay")));
    }
    report(
        &modes.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
        &figures,
        median(&call_record),
        median(&call_replay),
        json_out,
    );
}

fn report(names: &[&str], f: &[Figures], call_record_ms: f64, call_replay_ms: f64, json_out: bool) {
    let p = |i: usize, q: f64| percentile(&f[i].small_us, q);
    let rows: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({
                "mode": n,
                "small_rtt_us": {"p50": p(i, 0.5), "p90": p(i, 0.9), "p99": p(i, 0.99)},
                "mb1_mbps": median(&f[i].mb1_mbps),
                "mb16_mbps": median(&f[i].mb16_mbps),
                "first_answer_ms": median(&f[i].first_ms),
                "peak_rss_kb": f[i].rss_kb,
            })
        })
        .collect();
    let over = |i: usize, q: f64| p(i, q) - p(0, q);
    let relay = (over(1, 0.5), over(1, 0.99));
    let ratios = json!({
        "passthrough_overhead_vs_relay_p50": over(2, 0.5) / relay.0,
        "record_overhead_vs_relay_p50": over(3, 0.5) / relay.0,
        "record_overhead_vs_relay_p99": over(3, 0.99) / relay.1,
        "record_mb1_vs_relay": median(&f[3].mb1_mbps) / median(&f[1].mb1_mbps),
        "record_mb16_vs_relay": median(&f[3].mb16_mbps) / median(&f[1].mb16_mbps),
        "first_answer_proxy_minus_direct_ms": median(&f[2].first_ms) - median(&f[0].first_ms),
        "replay_latency_vs_direct_p50": p(4, 0.5) / p(0, 0.5),
        "call_record_ms": call_record_ms,
        "call_replay_ms": call_replay_ms,
    });
    if json_out {
        println!("{:#}", json!({"modes": rows, "ratios": ratios}));
        return;
    }
    println!(
        "{:<16} {:>9} {:>9} {:>9} {:>10} {:>10} {:>12} {:>10}",
        "mode", "p50 µs", "p90 µs", "p99 µs", "1MB MB/s", "16MB MB/s", "1st answer", "peak RSS"
    );
    for r in &rows {
        println!(
            "{:<16} {:>9.1} {:>9.1} {:>9.1} {:>10.0} {:>10.0} {:>10.2}ms {:>8}kB",
            r["mode"].as_str().unwrap_or(""),
            r["small_rtt_us"]["p50"].as_f64().unwrap_or(0.0),
            r["small_rtt_us"]["p90"].as_f64().unwrap_or(0.0),
            r["small_rtt_us"]["p99"].as_f64().unwrap_or(0.0),
            r["mb1_mbps"].as_f64().unwrap_or(0.0),
            r["mb16_mbps"].as_f64().unwrap_or(0.0),
            r["first_answer_ms"].as_f64().unwrap_or(0.0),
            r["peak_rss_kb"],
        );
    }
    println!("\nratios (targets in docs/PERFORMANCE.md):");
    for (k, v) in ratios.as_object().into_iter().flatten() {
        println!("  {k:<40} {:.2}", v.as_f64().unwrap_or(f64::NAN));
    }
}
