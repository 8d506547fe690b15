//! The GET stream over HTTP: server-everything (`streamableHttp`) asks `roots/list` on
//! it, and the official Python SDK client opens one. Through the HTTP front (forwarding
//! and replaying) and in `verify --url`, `get-roots-list` answers.

use crate::http::{Front, HttpServer};
use crate::support::*;

/// The roots client (`tests/peers/py_roots.py`) against `target` (a URL, or a command).
fn roots_client(env: &Env, target: &[String]) -> std::process::Output {
    let mut cmd = env.cmd(python());
    cmd.arg(peer("py_roots.py")).arg("--").args(target);
    run(cmd)
}

/// The text the roots tool answered with, from the client's printed steps.
fn roots_answer(out: &std::process::Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let call = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["step"] == "call")
        .unwrap_or_else(|| panic!("no call step: {}", text(out)));
    call["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The recorded `roots/list` requests of a tape.
fn roots_requests(entries: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    entries
        .iter()
        .filter(|e| e["method"] == "roots/list" && e["_meta"]["dir"] == "recv")
        .collect()
}

#[test]
fn through_the_http_front_roots_asked_on_the_get_stream_answer_recorded_and_replayed() {
    let env = Env::new();
    let tape = env.path("roots.ndjson");
    let server = HttpServer::start();
    let front = Front::start(
        &env,
        &[
            "--url",
            &server.url,
            "--record",
            &tape.display().to_string(),
        ],
    );
    let recorded = roots_client(&env, std::slice::from_ref(&front.url));
    assert!(recorded.status.success(), "{}", text(&recorded));
    let answer = roots_answer(&recorded);
    assert!(
        answer.contains("file:///srv/mcptape-root"),
        "the server got the client's roots: {answer}"
    );
    assert!(front.stop().success());
    drop(server);

    let entries = tape_entries(&tape);
    let roots = roots_requests(&entries);
    assert!(!roots.is_empty(), "roots/list is in the tape");
    for r in &roots {
        assert_eq!(
            r["_meta"]["stream"], "get",
            "it came on the GET stream: {r}"
        );
    }
    let calls: Vec<_> = entries
        .iter()
        .filter(|e| e["_meta"]["dir"] == "recv" && e.get("result").is_some())
        .collect();
    assert!(
        calls.iter().all(|e| e["_meta"].get("stream").is_none()),
        "answers came on their POST streams"
    );

    let shown = run(env.mcptape(["show"]).arg(&tape));
    let shown = String::from_utf8_lossy(&shown.stdout).into_owned();
    assert!(
        shown
            .lines()
            .any(|l| l.contains("roots/list") && l.ends_with("[get stream]")),
        "show marks it: {shown}"
    );
    let json = run(env.mcptape(["show", "--json"]).arg(&tape));
    let json: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let marked: Vec<&serde_json::Value> = json["connections"][0]["entries"]
        .as_array()
        .expect("entries")
        .iter()
        .filter(|e| e["stream"] == "get")
        .collect();
    assert!(
        marked
            .iter()
            .any(|e| e["message"]["method"] == "roots/list"),
        "show --json names it: {json}"
    );

    // The server is gone: the front answers from the tape, roots/list on the GET stream.
    let front = Front::start(&env, &["--replay", &tape.display().to_string()]);
    let replayed = roots_client(&env, std::slice::from_ref(&front.url));
    assert!(replayed.status.success(), "{}", text(&replayed));
    similar_asserts::assert_eq!(
        String::from_utf8_lossy(&recorded.stdout),
        String::from_utf8_lossy(&replayed.stdout)
    );
    assert!(
        front.stop().success(),
        "the replayed session's verdict is clean: the client answered roots/list"
    );
}

#[test]
fn verify_url_answers_the_roots_a_server_asks_on_its_get_stream() {
    let env = Env::new();
    let server = HttpServer::start();
    let proxy = [
        bin().display().to_string(),
        "proxy".into(),
        "--server".into(),
        "everything".into(),
        "--url".into(),
        server.url.clone(),
    ];
    // Recorded through the stdio front, which carries the GET stream to a stdio client.
    let mut record = env.mcptape(["record", "s", "--"]);
    record
        .arg(python())
        .arg(peer("py_roots.py"))
        .arg("--")
        .args(&proxy);
    let recorded = run(record);
    assert!(recorded.status.success(), "{}", text(&recorded));
    assert!(roots_answer(&recorded).contains("file:///srv/mcptape-root"));
    let entries = tape_entries(&env.tape("s"));
    assert!(
        roots_requests(&entries)
            .iter()
            .all(|r| r["_meta"]["stream"] == "get"),
        "the stdio front marks what came on the GET stream too"
    );

    let out = run(env.mcptape(["verify", "s", "--url", &server.url]));
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(
        !report.contains("no answer within"),
        "roots/list was answered from the tape: {report}"
    );
}

/// A tape of one connection whose server asks `roots/list` after `initialized`, while
/// no request waits: tied to no request, so replay gives it on the GET stream.
const UNSOLICITED: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"0"}},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"0"}},"_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","method":"notifications/initialized","_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":0,"method":"roots/list","_meta":{"dir":"recv","server":"s","conn":"c-1"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":0,"result":{"roots":[]},"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#,
    "\n",
);

/// An HTTP/1.1 request to the front at `authority`, its connection left open to read.
pub(crate) fn request(authority: &str, head: &str, body: &str) -> std::net::TcpStream {
    use std::io::Write;
    let mut s = std::net::TcpStream::connect(authority).expect("connect");
    s.set_read_timeout(Some(DEADLINE)).expect("a read deadline");
    write!(
        s,
        "{head}\r\nHost: {authority}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    s
}

/// The `host:port` of a front's URL.
pub(crate) fn authority(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned()
}

/// A POST of `body` to the front at `authority`, in `session` when given, its connection
/// left open to read the answer.
pub(crate) fn post(authority: &str, session: Option<&str>, body: &str) -> std::net::TcpStream {
    let id = session.map_or(String::new(), |s| format!("\r\nMcp-Session-Id: {s}"));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream{id}"
    );
    request(authority, &head, body)
}

/// The `Mcp-Session-Id` an answer's head gives.
pub(crate) fn session_of(head: &str) -> String {
    head.lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("mcp-session-id: ")
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id: {head}"))
}

/// What `s` says up to and including `needle` (or all it said, if it ended first).
pub(crate) fn read_to(s: &mut std::net::TcpStream, needle: &str) -> String {
    use std::io::Read;
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

#[test]
fn the_replay_front_gives_unsolicited_requests_on_one_resumable_get_stream() {
    let env = Env::new();
    let tape = env.path("unsolicited.ndjson");
    std::fs::write(&tape, UNSOLICITED).expect("write the tape");
    let front = Front::start_as(&env, "s", &["--replay", &tape.display().to_string()]);
    let authority = authority(&front.url);
    let post = |session: Option<&str>, body: &str| post(&authority, session, body);
    let init = UNSOLICITED.lines().next().expect("a line");
    let init = &init[..init.find(r#","_meta""#).expect("_meta")];
    let mut answer = post(None, &format!("{init}}}"));
    let head = read_to(&mut answer, "serverInfo");
    let session = session_of(&head);
    drop(answer);
    let get = |extra: &str| {
        let head = format!("GET /mcp HTTP/1.1\r\nMcp-Session-Id: {session}{extra}");
        request(&authority, &head, "")
    };

    let refused = read_to(&mut get(""), "\r\n");
    assert!(refused.starts_with("HTTP/1.1 406"), "no Accept: {refused}");
    let accepted = read_to(
        &mut post(
            Some(&session),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        "\r\n",
    );
    assert!(accepted.starts_with("HTTP/1.1 202"), "{accepted}");

    // No stream was open when the engine released roots/list: it waited for this one.
    let mut first = get("\r\nAccept: text/event-stream");
    let said = read_to(&mut first, r#""method":"roots/list"}"#);
    assert!(said.starts_with("HTTP/1.1 200"), "{said}");
    assert!(
        said.contains(
            "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"roots/list\"}"
        ),
        "{said}"
    );
    let second = read_to(&mut get("\r\nAccept: text/event-stream"), "\r\n");
    assert!(
        second.starts_with("HTTP/1.1 409"),
        "one GET stream: {second}"
    );
    // A client that lost its stream resumes it: it gets what came after its last id.
    let mut resumed = get("\r\nAccept: text/event-stream\r\nLast-Event-ID: 0");
    let again = read_to(&mut resumed, r#""method":"roots/list"}"#);
    assert!(again.contains("id: 1\nevent: message\n"), "{again}");
    drop(first);

    let answered = read_to(
        &mut post(
            Some(&session),
            r#"{"jsonrpc":"2.0","id":0,"result":{"roots":[]}}"#,
        ),
        "\r\n",
    );
    assert!(answered.starts_with("HTTP/1.1 202"), "{answered}");
    let deleted = read_to(
        &mut request(
            &authority,
            &format!("DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: {session}"),
            "",
        ),
        "\r\n",
    );
    assert!(deleted.starts_with("HTTP/1.1 200"), "{deleted}");
    drop(resumed);
    assert!(
        front.stop().success(),
        "the replayed connection was played whole"
    );
}

#[test]
fn the_forwarding_front_gives_the_upstream_get_stream_on_the_clients_reopened_from_its_last_id() {
    // The SDK's own server logs "before" on its GET stream, closes it, and logs "after":
    // only a link that reopens it from the last event id gets "after".
    let env = Env::new();
    let mut cmd = std::process::Command::new("node");
    cmd.arg(peer("ts_polling_server.mjs"));
    let server = HttpServer::launch(cmd, "listening on port ");
    let front = Front::start_as(&env, "polling", &["--url", &server.url]);
    let authority = authority(&front.url);
    let post = |session: Option<&str>, body: &str| post(&authority, session, body);
    let mut init = post(
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
    );
    let session = session_of(&read_to(&mut init, "serverInfo"));
    let accepted = read_to(
        &mut post(
            Some(&session),
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        ),
        "\r\n",
    );
    assert!(accepted.starts_with("HTTP/1.1 202"), "{accepted}");
    let mut get = request(
        &authority,
        &format!("GET /mcp HTTP/1.1\r\nMcp-Session-Id: {session}\r\nAccept: text/event-stream"),
        "",
    );
    // Its head comes once the upstream's GET stream is open (the front waits to know).
    let head = read_to(&mut get, "\r\n\r\n");
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let mut call = post(
        Some(&session),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"aside","arguments":{}}}"#,
    );
    let answer = read_to(&mut call, r#""id":2"#);
    let on_get = read_to(&mut get, r#""data":"after""#);
    let before = on_get.find(r#""data":"before""#);
    let after = on_get.find(r#""data":"after""#);
    assert!(
        before.is_some() && after.is_some() && before < after,
        "both log lines came on the client's GET stream, in order: {on_get}"
    );
    assert!(
        !answer.contains("notifications/message"),
        "not on the request's stream, though it was open: {answer}"
    );
    assert!(on_get.contains("id: 1\n"), "with event ids: {on_get}");
    drop(get);
    assert!(front.stop().success());
}
