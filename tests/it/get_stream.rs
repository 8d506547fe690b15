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
        &["--url", &server.url, "--record", &tape.display().to_string()],
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
        assert_eq!(r["_meta"]["stream"], "get", "it came on the GET stream: {r}");
    }
    let calls: Vec<_> = entries
        .iter()
        .filter(|e| e["_meta"]["dir"] == "recv" && e.get("result").is_some())
        .collect();
    assert!(
        calls.iter().all(|e| e["_meta"].get("stream").is_none()),
        "answers came on their POST streams"
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
