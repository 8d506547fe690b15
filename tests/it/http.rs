//! Streamable HTTP: a stdio front for a remote server, recorded and replayed into the
//! same tapes as stdio servers, against the reference server-everything over HTTP.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use crate::support::*;

/// What follows `needle` on the first line of `child`'s stderr that has it, waited for
/// with a deadline (stderr keeps being drained after it).
pub(crate) fn after_stderr_line(child: &mut Child, needle: &'static str, what: &str) -> String {
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Some(rest) = line.split(needle).nth(1) {
                let _ = tx.send(rest.to_owned());
            }
        }
    });
    rx.recv_timeout(DEADLINE)
        .unwrap_or_else(|_| panic!("{what} did not say `{needle}` on stderr"))
}

/// server-everything listening on a loopback port, stopped when dropped.
pub(crate) struct HttpServer {
    child: Child,
    pub(crate) url: String,
}

impl HttpServer {
    pub(crate) fn start() -> HttpServer {
        let argv = everything_server();
        // It prints the port it was given, not the one it got: the preload says that.
        let mut cmd = Command::new(&argv[0]);
        cmd.arg("--require")
            .arg(peer("listening_port.cjs"))
            .arg(&argv[1])
            .arg("streamableHttp");
        HttpServer::launch(cmd, "bound to port ")
    }

    /// Runs `cmd` with `PORT=0` (the kernel picks a free port, so nothing can take it in
    /// between) and reads the port from the stderr line that follows `said`.
    pub(crate) fn launch(mut cmd: Command, said: &'static str) -> HttpServer {
        let mut child = cmd
            .env("PORT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the HTTP server");
        let rest = after_stderr_line(&mut child, said, "the HTTP server");
        let port: u16 = rest
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("the HTTP server said `{said}{rest}`, not a port"));
        assert_ne!(
            port, 0,
            "the HTTP server said the port it was given, not its own"
        );
        HttpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

/// A loopback port that refuses connections for as long as this lives: a socket bound
/// there that does not listen, so no other process can take the port meanwhile.
pub(crate) struct RefusingPort {
    _socket: tokio::net::TcpSocket,
    pub(crate) addr: std::net::SocketAddr,
}

impl RefusingPort {
    pub(crate) fn bind() -> RefusingPort {
        let socket = tokio::net::TcpSocket::new_v4().expect("a TCP socket");
        socket
            .bind(([127, 0, 0, 1], 0).into())
            .expect("bind a loopback port");
        let addr = socket.local_addr().expect("its address");
        RefusingPort {
            _socket: socket,
            addr,
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const TOKEN: &str = "supersecret-header-token-0123456789";

fn front(url: &str) -> Vec<String> {
    vec![
        bin().display().to_string(),
        "proxy".into(),
        "--server".into(),
        "everything".into(),
        "--header".into(),
        format!("Authorization: Bearer {TOKEN}"),
        "--url".into(),
        url.into(),
    ]
}

#[test]
fn a_remote_server_records_and_replays_to_a_stdio_client() {
    let env = Env::new();
    let server = HttpServer::start();
    let client = [
        python(),
        peer("py_client.py"),
        "replayable".into(),
        "--".into(),
    ];
    let recorded = run(env
        .mcptape(["record", "s", "--"])
        .args(&client)
        .args(front(&server.url)));
    assert!(recorded.status.success(), "{}", text(&recorded));
    drop(server);

    let tape = std::fs::read_to_string(env.tape("s")).expect("tape");
    assert!(
        !tape.contains(TOKEN),
        "request headers never reach the tape"
    );
    let entries = tape_entries(&env.tape("s"));
    let session = lifecycle(&entries, "$http/session");
    assert_eq!(session.len(), 1);
    assert_eq!(session[0]["params"]["sessionId"], "[REDACTED]");
    // The sampling request came over SSE, and the client's answer went back by POST.
    assert!(
        entries
            .iter()
            .any(|e| e["method"] == "sampling/createMessage")
    );

    // The server is gone: the tape answers, to the same stdio client, byte for byte.
    let replayed = run(env
        .mcptape(["replay", "s", "--"])
        .args(&client)
        .args(front("http://127.0.0.1:9/mcp")));
    assert!(replayed.status.success(), "{}", text(&replayed));
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&recorded.stdout),
        String::from_utf8_lossy(&replayed.stdout)
    );
}

#[test]
fn streams_closed_early_are_resumed_with_last_event_id() {
    // The SDK's own server closes the tool call's event stream before answering (SEP-1699
    // polling); the answer arrives only to a client that resumes with `Last-Event-ID`.
    let env = Env::new();
    let mut cmd = Command::new("node");
    cmd.arg(peer("ts_polling_server.mjs"));
    let server = HttpServer::launch(cmd, "listening on port ");
    let tape = env.path("late.ndjson");
    let mut p = Proc::spawn(
        env.mcptape(["proxy", "--server", "polling", "--record"])
            .arg(&tape)
            .args(["--url", &server.url]),
    );
    p.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#);
    assert_eq!(p.recv()["id"], 1);
    p.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    p.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"late","arguments":{}}}"#,
    );
    let answer = p.recv();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(
        answer["result"]["content"][0]["text"], "answered after the stream closed",
        "{answer}"
    );

    // The GET stream, closed after "before" and reopened from its last event id, gives
    // "after" too (the server stored it while no stream was open).
    p.send(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"aside","arguments":{}}}"#);
    let mut logged = Vec::new();
    while logged.len() < 2 {
        let m = p.recv();
        if m["method"] == "notifications/message" {
            logged.push(m["params"]["data"].clone());
        } else {
            assert_eq!(m["id"], 3, "{m}");
        }
    }
    assert_eq!(logged, ["before", "after"]);
    p.close_stdin();
    assert!(p.wait().success());
    let entries = tape_entries(&tape);
    let resumed = lifecycle(&entries, "$http/resume");
    assert!(!resumed.is_empty(), "the resumption is on the tape");
    assert!(resumed[0]["params"]["lastEventId"].is_string());
}

#[test]
fn unreachable_and_failing_urls_answer_the_client_with_errors() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

    // Nothing listens there.
    let refusing = RefusingPort::bind();
    let url = format!("http://{}/mcp", refusing.addr);
    let mut p = Proc::spawn(
        env.mcptape(["proxy", "--server", "x", "--record"])
            .arg(&tape)
            .args(["--url", &url]),
    );
    p.send(init);
    let err = p.recv();
    assert_eq!(err["id"], 1);
    assert_eq!(err["error"]["code"], -32000);
    assert!(
        err["error"]["message"]
            .as_str()
            .expect("message")
            .contains(&format!("cannot reach `{url}`")),
        "{err}"
    );
    // mcptape's words, not the server's.
    assert!(
        err["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("mcptape: cannot reach")),
        "{err}"
    );
    p.close_stdin();
    assert!(p.wait().success());
    let entries = tape_entries(&tape);
    assert_eq!(lifecycle(&entries, "$http/error").len(), 1);

    // A path the server does not serve: its 404 reaches the client and the tape.
    let server = HttpServer::start();
    // TLS to a server that speaks plain HTTP: the handshake fails, and the client hears it.
    let https = server.url.replace("http://", "https://");
    let mut p = Proc::spawn(&mut env.mcptape(["proxy", "--server", "x", "--url", &https]));
    p.send(init);
    let err = p.recv();
    assert!(
        err["error"]["message"]
            .as_str()
            .expect("message")
            .contains(&format!("cannot reach `{https}`")),
        "{err}"
    );
    p.close_stdin();
    assert!(p.wait().success());

    let wrong = server.url.replace("/mcp", "/nope");
    let tape = env.path("t404.ndjson");
    let mut p = Proc::spawn(
        env.mcptape(["proxy", "--server", "x", "--record"])
            .arg(&tape)
            .args(["--url", &wrong]),
    );
    p.send(init);
    let err = p.recv();
    assert!(
        err["error"]["message"]
            .as_str()
            .expect("message")
            .contains("HTTP 404"),
        "{err}"
    );
    p.close_stdin();
    assert!(p.wait().success());
    let entries = tape_entries(&tape);
    let status = lifecycle(&entries, "$http/status");
    assert_eq!(status[0]["params"]["status"], 404);
}

#[test]
fn call_reaches_a_remote_server_from_the_config_and_replays_it() {
    let env = Env::new();
    let server = HttpServer::start();
    let config = serde_json::json!({"mcpServers": {"everything": {
        "url": server.url, "headers": {"X-Api-Key": "${MCPTAPE_TEST_KEY}"}}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("config");
    let key = "k-0123456789abcdef-key";
    let out = run(env
        .mcptape([
            "call",
            "everything.echo",
            "message:over http",
            "--record",
            "s",
        ])
        .env("MCPTAPE_TEST_KEY", key));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Echo: over http\n");
    drop(server);
    assert!(
        !std::fs::read_to_string(env.tape("s"))
            .expect("tape")
            .contains(key)
    );
    let out = run(&mut env.mcptape([
        "call",
        "everything.echo",
        "message:over http",
        "--replay",
        "s",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Echo: over http\n");
}

#[test]
fn a_tape_recorded_over_stdio_verifies_against_the_server_over_http() {
    let env = Env::new();
    record_everything(&env, "s");
    let server = HttpServer::start();
    let out = run(env.mcptape(["verify", "s", "--allow-writes", "--url", &server.url]));
    assert!(out.status.success(), "{}", text(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(" same, 0 changed")
            && !report.contains("skipped")
            && !report.contains("error"),
        "{report}"
    );
    assert!(
        !report.contains("problem"),
        "sampling answered from the tape over SSE: {report}"
    );
}

/// `mcptape proxy --server SERVER --listen 127.0.0.1:0 ARGS`: the front and the URL it
/// printed.
pub(crate) struct Front {
    child: Child,
    pub(crate) url: String,
}

impl Front {
    pub(crate) fn start(env: &Env, args: &[&str]) -> Front {
        Front::start_as(env, "everything", args)
    }

    pub(crate) fn start_as(env: &Env, server: &str, args: &[&str]) -> Front {
        let mut child = env
            .mcptape(["proxy", "--server", server, "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the front");
        let rest = after_stderr_line(&mut child, "listening on ", "the front");
        let url = rest.split_whitespace().next().unwrap_or("").to_owned();
        Front { child, url }
    }

    /// SIGTERM, then its exit status.
    pub(crate) fn stop(mut self) -> std::process::ExitStatus {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .expect("kill");
        wait_child(&mut self.child)
    }
}

#[test]
fn the_http_front_records_a_remote_server_and_replays_it_with_no_upstream() {
    let env = Env::new();
    let tape = env.path("front.ndjson").display().to_string();
    let server = HttpServer::start();
    let client = |url: &str| {
        let mut cmd = env.cmd(python());
        cmd.args([
            peer("py_client.py"),
            "replayable".into(),
            "--".into(),
            url.to_owned(),
        ]);
        run(cmd)
    };
    let front = Front::start(&env, &["--url", &server.url, "--record", &tape]);
    let recorded = client(&front.url);
    assert!(recorded.status.success(), "{}", text(&recorded));
    assert!(front.stop().success());
    drop(server);

    let front = Front::start(&env, &["--replay", &tape]);
    let replayed = client(&front.url);
    assert!(replayed.status.success(), "{}", text(&replayed));
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&recorded.stdout),
        String::from_utf8_lossy(&replayed.stdout)
    );
    assert!(
        front.stop().success(),
        "the replayed session's verdict is clean"
    );
}

#[test]
fn the_http_front_refuses_other_origins_and_unknown_sessions() {
    use std::io::{Read, Write};
    let env = Env::new();
    let sample = samples().join("mcporter-0.13.7-everything-echo.ndjson");
    let front = Front::start(&env, &["--replay", &sample.display().to_string()]);
    let authority = front
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let status = |extra: &str| {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let mut s = std::net::TcpStream::connect(&authority).expect("connect");
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("write");
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer.lines().next().unwrap_or("").to_owned()
    };
    assert!(
        status("Origin: https://evil.example\r\n").contains("403"),
        "a foreign origin"
    );
    assert!(
        status("Mcp-Session-Id: nope\r\n").contains("404"),
        "an unknown session"
    );
    assert!(status("").contains("400"), "no session and not initialize");
    front.stop();
}

#[test]
fn the_http_front_passes_the_upstream_status_on() {
    use std::io::{Read, Write};
    let env = Env::new();
    let server = HttpServer::start();
    let front = Front::start(&env, &["--url", &server.url.replace("/mcp", "/nope")]);
    let authority = front
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let mut s = std::net::TcpStream::connect(&authority).expect("connect");
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(
        answer.lines().next().unwrap_or("").contains("404"),
        "{answer}"
    );
    assert!(front.stop().success());
}
