//! The stateless revision (2026-07-28) through the HTTP front and verify, against the
//! real Python SDK 2.3: its client in `auto` mode (`tests/peers/py_modern_client.py`)
//! and its server (`tests/peers/py_modern_server.py`), which speaks both eras.
//! Sessionless requests are forwarded and recorded one connection each, replayed each on
//! its own, verified clean against a fresh server (whose sealed `requestState` differs),
//! and cancelled by closing their stream.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use serde_json::Value;

use crate::http::Front;
use crate::support::*;

/// The Python SDK's modern server on a loopback port, its stderr lines readable.
struct ModernServer {
    child: Child,
    url: String,
    lines: mpsc::Receiver<String>,
}

impl ModernServer {
    fn start() -> ModernServer {
        let mut child = Command::new(python())
            .arg(peer("py_modern_server.py"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the modern server");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let mut server = ModernServer {
            child,
            url: String::new(),
            lines,
        };
        let said = server.wait_for("listening on port ");
        let port: u16 = said
            .rsplit(' ')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the modern server said `{said}`, not a port"));
        server.url = format!("http://127.0.0.1:{port}/mcp");
        server
    }

    /// The first line of its stderr (from now on) that has `needle`, within the deadline.
    fn wait_for(&self, needle: &str) -> String {
        let until = std::time::Instant::now() + DEADLINE;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => panic!("the modern server did not say `{needle}` on stderr"),
            }
        }
    }
}

impl Drop for ModernServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The modern client's run against `target` (a URL, or a stdio command line): its steps.
fn client(env: &Env, target: &[String]) -> Vec<Value> {
    let mut cmd = env.cmd(python());
    cmd.arg(peer("py_modern_client.py")).arg("--").args(target);
    steps(&run(cmd))
}

fn steps(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", text(out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON step"))
        .collect()
}

/// The client's steps as a run of the stateless revision gives them.
fn assert_modern(steps: &[Value], what: &str) {
    assert_eq!(
        steps[0]["protocolVersion"], "2026-07-28",
        "{what}: the client spoke the stateless revision: {steps:?}"
    );
    let confirmed = steps
        .iter()
        .find(|s| s["tool"] == "confirm")
        .unwrap_or_else(|| panic!("{what}: no confirm step: {steps:?}"));
    assert_eq!(
        confirmed["result"]["content"][0]["text"], "confirmed tape",
        "{what}: the multi-round-trip call ended"
    );
}

/// `verify TAPE --allow-writes --url URL`: its report, asserted clean.
fn assert_verifies_clean(env: &Env, tape: &str, url: &str) {
    let out = run(env.mcptape(["verify", tape, "--allow-writes", "--url", url]));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        report.contains(": 5 same, 0 changed") && !report.contains("error"),
        "discover, tools/list, echo, add and the confirm chain as one call: {report}"
    );
}

#[test]
fn the_http_front_forwards_records_replays_and_verifies_sessionless_requests() {
    let env = Env::new();
    let tape = env.path("front.ndjson").display().to_string();
    let server = ModernServer::start();
    let front = Front::start_as(&env, "py", &["--url", &server.url, "--record", &tape]);
    let recorded = client(&env, std::slice::from_ref(&front.url));
    assert!(front.stop().success());
    assert_modern(&recorded, "through the front");

    // Each exchange is a connection of its own: start, the request, its answer, close.
    let entries = tape_entries(std::path::Path::new(&tape));
    assert!(
        lifecycle(&entries, "$http/session").is_empty(),
        "no session"
    );
    // Exchanges overlap in the tape (one's close may come after the next one's start).
    let mut conns: Vec<&str> = Vec::new();
    for conn in entries.iter().filter_map(|e| e["_meta"]["conn"].as_str()) {
        if !conns.contains(&conn) {
            conns.push(conn);
        }
    }
    assert_eq!(
        conns.len(),
        6,
        "discover, list, echo, add, confirm and its retry"
    );
    for conn in &conns {
        let mine: Vec<&Value> = entries
            .iter()
            .filter(|e| e["_meta"]["conn"] == *conn)
            .collect();
        let dirs: Vec<&str> = mine
            .iter()
            .map(|e| e["_meta"]["dir"].as_str().unwrap_or("?"))
            .collect();
        assert_eq!(dirs, ["lifecycle", "send", "recv", "lifecycle"], "{mine:?}");
        assert_eq!(mine[0]["params"]["front"], "http");
        assert_eq!(mine[3]["params"]["reason"], "exchange done");
        assert_eq!(mine[1]["id"], mine[2]["id"]);
    }
    drop(server);

    let front = Front::start_as(&env, "py", &["--replay", &tape]);
    let replayed = client(&env, std::slice::from_ref(&front.url));
    assert!(front.stop().success(), "every exchange replayed, none left");
    assert_eq!(replayed, recorded, "the replay answers as the server did");

    // A fresh server seals its requestState with another key: the retry goes with its.
    let fresh = ModernServer::start();
    assert_verifies_clean(&env, &tape, &fresh.url);
}

#[test]
fn a_stateless_connection_recorded_through_the_stdio_front_replays_through_the_http_front() {
    let env = Env::new();
    let tape = env.path("stdio.ndjson").display().to_string();
    let server = ModernServer::start();
    let proxy = [
        bin().display().to_string(),
        "proxy".into(),
        "--server".into(),
        "py".into(),
        "--url".into(),
        server.url.clone(),
    ];
    let mut record = env.mcptape(["record", &tape, "--", &python()]);
    record
        .arg(peer("py_modern_client.py"))
        .arg("--")
        .args(&proxy);
    let recorded = steps(&run(record));
    assert_modern(&recorded, "through the stdio front");
    drop(server);

    let front = Front::start_as(&env, "py", &["--replay", &tape]);
    let replayed = client(&env, std::slice::from_ref(&front.url));
    assert!(front.stop().success(), "every exchange replayed, none left");
    assert_eq!(replayed, recorded);

    let fresh = ModernServer::start();
    assert_verifies_clean(&env, &tape, &fresh.url);
}

/// One POST to the front at `url`: the status line and the body.
fn post(url: &str, headers: &str, body: &str) -> (String, String) {
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut s = std::net::TcpStream::connect(authority).expect("connect to the front");
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let status = answer.lines().next().unwrap_or("").to_owned();
    (status, answer)
}

const MODERN_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[test]
fn in_replay_a_sessionless_request_is_matched_on_its_own_or_diverges() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let line = |conn: &str, dir: &str, msg: &str| {
        let meta = format!(
            r#""_meta":{{"dir":"{dir}","server":"py","ts":"2026-07-28T00:00:00.000Z","conn":"{conn}"}}}}"#
        );
        format!("{},{meta}\n", msg.strip_suffix('}').expect("object"))
    };
    let list =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#);
    let listed = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"resultType":"complete"}}"#;
    std::fs::write(&tape, line("a", "send", &list) + &line("a", "recv", listed)).expect("tape");
    let front = Front::start_as(&env, "py", &["--replay", &tape.display().to_string()]);

    // Another id, another _meta: matched on its own, answered with the live id.
    let live = list
        .replace(r#""id":1"#, r#""id":"q""#)
        .replace("{}}", r#"{"x":{}}}"#);
    let (status, body) = post(&front.url, "", &live);
    assert!(status.contains("200"), "{body}");
    assert!(
        body.contains(r#"data: {"jsonrpc":"2.0","id":"q","result":{"tools":[]"#),
        "{body}"
    );
    assert!(
        !body.to_ascii_lowercase().contains("mcp-session-id"),
        "no session"
    );
    // A stateless notification: accepted.
    let note = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":1,"progress":1,{MODERN_META}}}}}"#
    );
    let (status, body) = post(&front.url, "", &note);
    assert!(status.contains("202"), "{body}");
    // Without a version, a sessionless request still needs a session.
    let legacy = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, body) = post(&front.url, "", legacy);
    assert!(status.contains("400"), "{body}");
    // The header alone makes it stateless; nothing recorded matches this one.
    let call =
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#;
    let (status, body) = post(&front.url, "MCP-Protocol-Version: 2026-07-28\r\n", call);
    assert!(status.contains("200"), "{body}");
    assert!(
        body.contains("-32090") && body.contains("the tape holds no tools/call stateless request"),
        "{body}"
    );
    assert_eq!(
        front.stop().code(),
        Some(3),
        "the divergence fails the replay"
    );
}

#[test]
fn a_sessionless_request_whose_client_closes_its_stream_is_cancelled_and_recorded() {
    let env = Env::new();
    let tape = env.path("c.ndjson");
    let server = ModernServer::start();
    let front = Front::start_as(
        &env,
        "py",
        &[
            "--url",
            &server.url,
            "--record",
            &tape.display().to_string(),
        ],
    );
    let authority = front
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"wait","arguments":{{"seconds":120}},{MODERN_META}}}}}"#
    );
    let mut s = std::net::TcpStream::connect(&authority).expect("connect");
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    server.wait_for("wait started");
    drop(s);
    server.wait_for("wait cancelled");
    assert!(front.stop().success());
    let entries = tape_entries(&tape);
    let cancelled = lifecycle(&entries, "$http/cancelled");
    assert_eq!(cancelled.len(), 1, "{entries:?}");
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close.len(), 1);
    assert_eq!(close[0]["params"]["reason"], "exchange done");
    assert_eq!(close[0]["_meta"]["conn"], cancelled[0]["_meta"]["conn"]);
    assert_eq!(cancelled[0]["params"]["requestId"], 1, "{entries:?}");

    // Verify closes the call's stream at its recorded point, as the client did: the
    // call is cancelled, not waited for until --timeout.
    let tape = tape.display().to_string();
    let out = run(env.mcptape([
        "verify",
        &tape,
        "--allow-writes",
        "--timeout",
        "20",
        "--url",
        &server.url,
    ]));
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(
        report.contains("1 cancelled") || report.contains("cancelled "),
        "{report}"
    );
    assert!(report.contains("by closing its stream"), "{report}");
    server.wait_for("wait cancelled");
}

#[test]
fn call_speaks_the_stateless_revision_when_the_server_offers_it_and_replays_it() {
    let env = Env::new();
    let server = ModernServer::start();
    let config = format!(
        r#"{{"mcpServers":{{"py":{{"type":"http","url":"{}"}}}}}}"#,
        server.url
    );
    std::fs::write(env.path(".mcp.json"), config).expect("config");
    let tape = env.path("call.ndjson").display().to_string();
    let recorded = run(env.mcptape(["call", "py.echo", "message=hi", "--record", &tape]));
    assert!(recorded.status.success(), "{}", text(&recorded));
    assert!(
        String::from_utf8_lossy(&recorded.stdout).starts_with("hi\n"),
        "{}",
        text(&recorded)
    );
    let sends = tape_messages(std::path::Path::new(&tape), "send");
    let methods: Vec<Value> = sends
        .iter()
        .map(|s| serde_json::from_str::<Value>(s).expect("json")["method"].clone())
        .collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/list", "tools/call"],
        "no initialize"
    );
    let call: Value = serde_json::from_str(&sends[2]).expect("json");
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    drop(server);

    let replayed = run(env.mcptape(["call", "py.echo", "message=hi", "--replay", &tape]));
    assert!(replayed.status.success(), "{}", text(&replayed));
    assert_eq!(replayed.stdout, recorded.stdout);
}

/// [`post`], failing rather than waiting past the deadline for an answer that never ends.
fn post_within(url: &str, headers: &str, body: &str) -> (String, String) {
    let authority = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut s = std::net::TcpStream::connect(authority).expect("connect to the front");
    s.set_read_timeout(Some(DEADLINE)).expect("read timeout");
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut answer = Vec::new();
    if let Err(e) = s.read_to_end(&mut answer) {
        panic!(
            "the front did not finish its answer to {body} within {DEADLINE:?} ({e}); so far: {}",
            String::from_utf8_lossy(&answer)
        );
    }
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.lines().next().unwrap_or("").to_owned();
    (status, answer)
}

/// A tape of server `py` from (conn, dir, message) triples.
fn write_tape(path: &std::path::Path, lines: &[(&str, &str, &str)]) {
    let text: String = lines
        .iter()
        .map(|(conn, dir, msg)| {
            let meta = format!(
                r#""_meta":{{"dir":"{dir}","server":"py","ts":"2026-07-28T00:00:00.000Z","conn":"{conn}"}}}}"#
            );
            format!("{},{meta}\n", msg.strip_suffix('}').expect("object"))
        })
        .collect();
    std::fs::write(path, text).expect("tape");
}

const FRONT_START: &str = r#"{"jsonrpc":"2.0","method":"$transport/start","params":{"url":"http://127.0.0.1:1/mcp","front":"http"}}"#;
const EXCHANGE_DONE: &str =
    r#"{"jsonrpc":"2.0","method":"$transport/close","params":{"reason":"exchange done"}}"#;

fn discover(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"server/discover","params":{{{MODERN_META}}}}}"#
    )
}

/// Review of issue 13, item 1: a recorded refusal is answered with its status (it got no
/// answer at all, the POST waiting for ever).
#[test]
fn in_front_replay_a_refused_exchange_gets_its_recorded_status() {
    let env = Env::new();
    let tape = env.path("refused.ndjson");
    let probe = discover(1);
    let refused = r#"{"jsonrpc":"2.0","method":"$http/status","params":{"status":400,"body":"Bad Request: Missing session ID"}}"#;
    write_tape(
        &tape,
        &[
            ("a", "lifecycle", FRONT_START),
            ("a", "send", &probe),
            ("a", "lifecycle", refused),
            ("a", "lifecycle", EXCHANGE_DONE),
        ],
    );
    let front = Front::start_as(&env, "py", &["--replay", &tape.display().to_string()]);
    let (status, body) = post_within(&front.url, "", &discover(5));
    assert!(status.contains("400"), "{body}");
    assert!(body.contains("Missing session ID"), "{body}");
    assert!(front.stop().success(), "replayed as recorded");
}

/// Review of issue 13, item 1: an exchange whose answer a cut recording lost gets the
/// tape-end error and fails the replay (it got no answer, and the run passed).
#[test]
fn in_front_replay_an_exchange_a_cut_recording_lost_gets_the_tape_end_error_and_fails() {
    let env = Env::new();
    let cut = env.path("cut.ndjson");
    let list =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN_META}}}}}"#);
    write_tape(
        &cut,
        &[("b", "lifecycle", FRONT_START), ("b", "send", &list)],
    );
    let front = Front::start_as(&env, "py", &["--replay", &cut.display().to_string()]);
    let (status, body) = post_within(&front.url, "", &list);
    assert!(status.contains("200"), "{body}");
    assert!(
        body.contains("-32090") && body.contains("the tape ends here"),
        "{body}"
    );
    assert_eq!(
        front.stop().code(),
        Some(3),
        "the lost answer fails the replay"
    );
}

/// Review of issue 13, item 2: a sessionless probe against a tape of the other era only
/// gets method-not-found (so its client falls back to `initialize`), a note, not a
/// divergence (it used to fail the run).
#[test]
fn in_front_replay_a_probe_the_tape_lacks_gets_method_not_found_and_the_run_passes() {
    let env = Env::new();
    let tape = env.path("legacy.ndjson");
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
    let answer = r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}"#;
    write_tape(
        &tape,
        &[
            ("s", "lifecycle", FRONT_START),
            ("s", "send", init),
            ("s", "recv", answer),
        ],
    );
    let front = Front::start_as(&env, "py", &["--replay", &tape.display().to_string()]);
    let (status, body) = post_within(&front.url, "", &discover(1));
    assert!(status.contains("200"), "{body}");
    assert!(body.contains("-32601"), "method not found: {body}");
    let (status, body) = post(&front.url, "", init);
    assert!(status.contains("200"), "{body}");
    assert!(body.contains("serverInfo"), "{body}");
    assert!(front.stop().success(), "the probe is no divergence");
}

/// Review of issue 13, item 3: a stateless session recorded through the HTTP front (one
/// connection per exchange) replays through the stdio front for the same client: every
/// request is matched on its own (only the first was: one live connection got one
/// recorded connection), and every exchange counts as replayed.
#[test]
fn a_stateless_session_recorded_through_the_http_front_replays_through_the_stdio_front() {
    let env = Env::new();
    let tape = env.path("front.ndjson").display().to_string();
    let server = ModernServer::start();
    let front = Front::start_as(&env, "py", &["--url", &server.url, "--record", &tape]);
    let recorded = client(&env, std::slice::from_ref(&front.url));
    assert!(front.stop().success());
    assert_modern(&recorded, "through the front");
    let url = server.url.clone();
    drop(server);

    let mut replay = env.mcptape(["replay", &tape, "--", &python()]);
    replay.arg(peer("py_modern_client.py")).arg("--").args([
        bin().display().to_string(),
        "proxy".into(),
        "--server".into(),
        "py".into(),
        "--url".into(),
        url,
    ]);
    let out = run(replay);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(!said.contains("UNUSED"), "every exchange replayed: {said}");
    assert_eq!(
        steps(&out),
        recorded,
        "the replay answers as the server did"
    );
}
