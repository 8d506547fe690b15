//! The proxy against the floor: direct pipes, the fastest byte relay, and `mcptape proxy`
//! passing through, recording and replaying (byte mode, and line mode where the binary
//! reads `MCPTAPE_RELAY`); `mcptape call` recording and replaying.
//!
//! Run: `cargo bench --bench proxy` (`-- --json` for JSON, `-- --smoke` for a tiny run).
//! `MCPTAPE_BENCH_BEFORE=/path/to/old/mcptape` runs every mcptape mode with that binary
//! too, interleaved with this build's round after round, and shows them side by side.
//!
//! The bench binary is also its own fast server and byte relay (`MCPTAPE_BENCH_ROLE`), so
//! that the figures measure the pipes and mcptape, not a slow peer. Modes run
//! interleaved, round after round, on the same machine at the same time.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, ErrorKind, Read, Write};
use std::os::fd::AsFd;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Instant;

use serde_json::json;

#[path = "proxy/report.rs"]
mod report;

const ROLE: &str = "MCPTAPE_BENCH_ROLE";
/// The "before" binary, measured interleaved with this build's.
const BEFORE: &str = "MCPTAPE_BENCH_BEFORE";
/// The proxy's diagnostic switch to line mode (`lines`; default `bytes`).
const RELAY_MODE: &str = "MCPTAPE_RELAY";
/// The floor relay's one read: more than a pipe ever holds at once.
const RELAY_READ_BYTES: usize = 1 << 20;

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

/// The floor: two blocking threads, each writing what it read at once, with no line
/// handling and no buffer beyond the one read (stdio as unbuffered files).
fn relay(argv: &[String]) {
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .env(ROLE, "server")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn the relayed server");
    let to = child.stdin.take().expect("the server's stdin");
    let from = child.stdout.take().expect("the server's stdout");
    let stdin = File::from(
        std::io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .expect("dup stdin"),
    );
    let stdout = File::from(
        std::io::stdout()
            .as_fd()
            .try_clone_to_owned()
            .expect("dup stdout"),
    );
    // Detached: it ends when the client closes stdin, which also ends the server.
    drop(std::thread::spawn(move || copy(stdin, to)));
    copy(from, stdout);
    let _ = child.wait();
}

/// Reads and writes at once until either side ends.
fn copy(mut from: impl Read, mut to: impl Write) {
    let mut buf = vec![0u8; RELAY_READ_BYTES];
    loop {
        match from.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
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
    /// The small round trips, one list per session (round).
    small_us: Vec<Vec<f64>>,
    mb1_mbps: Vec<f64>,
    mb16_mbps: Vec<f64>,
    first_ms: Vec<f64>,
    rss_kb: u64,
    call_record_ms: Vec<f64>,
    call_replay_ms: Vec<f64>,
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
    request: Vec<u8>,
}

impl Session {
    fn start(argv: &[String], env: &[(&str, String)]) -> Session {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..])
            .env_remove(RELAY_MODE)
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
            request: Vec::with_capacity(1 << 10),
        }
    }

    /// Sends one request line in one write and reads one answer line.
    fn round_trip(&mut self, request: &str) -> usize {
        self.request.clear();
        self.request.extend_from_slice(request.as_bytes());
        self.request.push(b'\n');
        self.stdin.write_all(&self.request).expect("write");
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

impl Figures {
    /// The small round trips' `q` percentile: the median over the rounds of each round's,
    /// so that a round another process disturbed does not decide it.
    fn small(&self, q: f64) -> f64 {
        let rounds: Vec<f64> = self.small_us.iter().map(|r| percentile(r, q)).collect();
        median(&rounds)
    }
}

/// One session of the fixed script: initialize, small round trips, 1 MB and 16 MB answers.
fn script(argv: &[String], env: &[(&str, String)], sizes: &Sizes, fig: &mut Figures) {
    let start = Instant::now();
    let mut s = Session::start(argv, env);
    s.round_trip(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#);
    fig.first_ms.push(start.elapsed().as_secs_f64() * 1e3);
    let mut id = 1;
    let mut small = Vec::with_capacity(sizes.small);
    for _ in 0..sizes.small {
        let req = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hello, small world"}}}}}}"#
        );
        id += 1;
        let t = Instant::now();
        s.round_trip(&req);
        small.push(t.elapsed().as_secs_f64() * 1e6);
    }
    fig.small_us.push(small);
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

/// One mcptape binary under measurement.
struct Bin {
    label: &'static str,
    path: String,
    /// Whether it reads `MCPTAPE_RELAY` (its name is in the binary): line modes run.
    lines: bool,
}

impl Bin {
    fn new(label: &'static str, path: String) -> Bin {
        let lines = std::fs::read(&path)
            .map(|b| memchr::memmem::find(&b, RELAY_MODE.as_bytes()).is_some())
            .unwrap_or_else(|e| panic!("cannot read the mcptape binary `{path}`: {e}"));
        Bin { label, path, lines }
    }
}

/// What a session runs: the two floors, then mcptape's modes, each with every binary.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Direct,
    Relay,
    Proxy,
    Record,
    Replay,
    Lines,
    LinesRecord,
}

impl Kind {
    const ALL: [Kind; 7] = [
        Kind::Direct,
        Kind::Relay,
        Kind::Proxy,
        Kind::Record,
        Kind::Replay,
        Kind::Lines,
        Kind::LinesRecord,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::Direct => "direct",
            Kind::Relay => "relay",
            Kind::Proxy => "proxy",
            Kind::Record => "proxy --record",
            Kind::Replay => "proxy --replay",
            Kind::Lines => "proxy lines",
            Kind::LinesRecord => "lines --record",
        }
    }

    /// The floors do not involve mcptape: one run per round, shared by every binary.
    fn floor(self) -> bool {
        matches!(self, Kind::Direct | Kind::Relay)
    }

    fn lines(self) -> bool {
        matches!(self, Kind::Lines | Kind::LinesRecord)
    }
}

/// Where the bench keeps its files and finds its programs.
struct Plan {
    me: String,
    dir: tempfile::TempDir,
    bins: Vec<Bin>,
}

impl Plan {
    fn tape(&self, bin: usize, kind: Kind) -> String {
        let suffix = if kind.lines() { "-lines" } else { "" };
        let name = format!("{}{suffix}.ndjson", self.bins[bin].label);
        self.dir.path().join(name).display().to_string()
    }

    /// The command line and environment of one session.
    fn session(&self, kind: Kind, bin: Option<usize>) -> (Vec<String>, Vec<(&str, String)>) {
        let server = vec![self.me.clone()];
        let Some(b) = bin else {
            return match kind {
                Kind::Relay => (vec![self.me.clone(), self.me.clone()], role("relay")),
                _ => (server, role("server")),
            };
        };
        let tape = self.tape(b, kind);
        let (extra, server) = match kind {
            Kind::Record | Kind::LinesRecord => (vec!["--record", &tape], server),
            Kind::Replay => (vec!["--replay", &tape], vec!["/nonexistent".to_owned()]),
            _ => (vec![], server),
        };
        let mut argv = vec![self.bins[b].path.clone(), "proxy".into()];
        argv.extend(["--server", "bench"].map(String::from));
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv.push("--".into());
        argv.extend(server);
        let mut env = role("server");
        if kind.lines() {
            env.push((RELAY_MODE, "lines".to_owned()));
        }
        (argv, env)
    }

    fn call_tape(&self, bin: usize) -> std::path::PathBuf {
        let name = format!("call-{}.ndjson", self.bins[bin].label);
        self.dir.path().join(name)
    }

    /// `mcptape call` with `mode` (`--record`/`--replay`) and its tape.
    fn call(&self, bin: usize, mode: &str) -> Vec<String> {
        let tape = self.call_tape(bin);
        let mut argv = vec![self.bins[bin].path.clone()];
        argv.extend(["call", "bench.echo", "message:hi", "--config"].map(String::from));
        argv.push(self.dir.path().join("mcp.json").display().to_string());
        argv.push(mode.into());
        argv.push(tape.display().to_string());
        argv
    }
}

fn role(r: &str) -> Vec<(&'static str, String)> {
    vec![(ROLE, r.to_owned())]
}

/// The binaries of one round, in turn: the order flips every round.
fn order(bins: usize, round: usize) -> Vec<usize> {
    let mut v: Vec<usize> = (0..bins).collect();
    if round % 2 == 1 {
        v.reverse();
    }
    v
}

/// Figures per mode and binary (`None` for the floors, which serve every binary).
type Table = Vec<(Kind, Option<usize>, Figures)>;

fn measure(plan: &Plan, sizes: &Sizes) -> Table {
    let mut table: Table = Vec::new();
    for kind in Kind::ALL {
        if kind.floor() {
            table.push((kind, None, Figures::default()));
        } else {
            for (b, bin) in plan.bins.iter().enumerate() {
                if bin.lines || !kind.lines() {
                    table.push((kind, Some(b), Figures::default()));
                }
            }
        }
    }
    for round in 0..sizes.rounds {
        for b in 0..plan.bins.len() {
            let _ = std::fs::remove_file(plan.tape(b, Kind::Record));
            let _ = std::fs::remove_file(plan.tape(b, Kind::LinesRecord));
        }
        for kind in Kind::ALL {
            let bins: Vec<Option<usize>> = if kind.floor() {
                vec![None]
            } else {
                order(plan.bins.len(), round)
                    .into_iter()
                    .map(Some)
                    .collect()
            };
            for bin in bins {
                let Some(cell) = table.iter_mut().find(|c| c.0 == kind && c.1 == bin) else {
                    continue;
                };
                let (argv, env) = plan.session(kind, bin);
                script(&argv, &env, sizes, &mut cell.2);
            }
        }
    }
    table
}

/// `mcptape call`, whole process, recording then replaying, binaries in turn.
fn measure_calls(plan: &Plan, sizes: &Sizes, table: &mut Table) {
    std::fs::write(
        plan.dir.path().join("mcp.json"),
        json!({"mcpServers": {"bench": {"command": plan.me, "env": {ROLE: "server"}}}}).to_string(),
    )
    .expect("config");
    for round in 0..sizes.calls {
        for b in order(plan.bins.len(), round) {
            let _ = std::fs::remove_file(plan.call_tape(b));
            let record = time_call(&plan.call(b, "--record"));
            let replay = time_call(&plan.call(b, "--replay"));
            let cell = table
                .iter_mut()
                .find(|c| c.0 == Kind::Proxy && c.1 == Some(b))
                .expect("the proxy row of every binary");
            cell.2.call_record_ms.push(record);
            cell.2.call_replay_ms.push(replay);
        }
    }
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
            rounds: 9,
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
    let mut bins = Vec::new();
    if let Some(before) = std::env::var_os(BEFORE) {
        bins.push(Bin::new("before", before.to_string_lossy().into_owned()));
    }
    bins.push(Bin::new("after", env!("CARGO_BIN_EXE_mcptape").to_owned()));
    let plan = Plan {
        me,
        dir: tempfile::tempdir().expect("tempdir"),
        bins,
    };
    let mut table = measure(&plan, &sizes);
    measure_calls(&plan, &sizes, &mut table);
    let doc = report::summarize(&plan.bins, &table);
    if json_out {
        println!("{doc:#}");
    } else {
        report::print_text(&plan.bins, &doc);
    }
}
