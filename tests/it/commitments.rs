//! Commitments (`--commit`, `--redact-results`, `mcptape commitments`) through real
//! clients: the Python SDK against server-everything under `record`, the built-in `call`
//! against the example server, and the HTTP front; the tapes verified, edited, checked
//! against answers, shown, replayed and verified against the live server.

use std::path::Path;

use serde_json::Value;

use crate::http::{Front, HttpServer};
use crate::support::*;

/// Records the Python SDK's `everything` scenario (echo, get-sum) against server-everything
/// with these extra `record` flags.
fn record(env: &Env, session: &str, flags: &[&str]) {
    let out = run(env
        .mcptape(["record", session])
        .args(flags)
        .args(["--", &python(), &peer("py_client.py"), "everything", "--"])
        .args(proxy_argv("everything", &everything_server())));
    assert!(out.status.success(), "{}", text(&out));
}

fn commitments(env: &Env, args: &[&str]) -> std::process::Output {
    run(env.mcptape(["commitments"]).args(args))
}

/// The tape's tools/call answers, each with the entry just before it.
fn answers_and_before(entries: &[Value]) -> Vec<(Value, Value)> {
    let calls: Vec<&Value> = entries
        .iter()
        .filter(|e| e["_meta"]["dir"] == "send" && e["method"] == "tools/call")
        .collect();
    assert!(!calls.is_empty());
    calls
        .iter()
        .map(|call| {
            let at = entries
                .iter()
                .position(|e| e["_meta"]["dir"] == "recv" && e["id"] == call["id"])
                .expect("an answer");
            (entries[at].clone(), entries[at - 1].clone())
        })
        .collect()
}

/// The tape line (1-based) that holds `needle`.
fn line_with(tape: &Path, needle: &str) -> usize {
    std::fs::read_to_string(tape)
        .expect("tape")
        .lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle}"))
        + 1
}

#[test]
fn a_commit_recording_through_the_python_sdk_verifies_and_an_edited_answer_is_a_mismatch_at_its_line()
 {
    let env = Env::new();
    record(&env, "c", &["--commit"]);
    let tape = env.tape("c");
    let entries = tape_entries(&tape);
    let pairs = answers_and_before(&entries);
    assert_eq!(pairs.len(), 2, "echo and get-sum");
    for (answer, before) in &pairs {
        assert_eq!(before["method"], "$commit", "{before}");
        assert_eq!(before["params"]["id"], answer["id"]);
        assert_eq!(before["params"]["body"], "kept");
        assert_eq!(before["params"]["alg"], "jcs-sha256");
        assert_eq!(before["_meta"]["conn"], answer["_meta"]["conn"]);
        let hex = before["params"]["sha256"].as_str().expect("a hash");
        assert_eq!(hex.len(), 64, "{hex}");
    }
    assert_eq!(pairs[0].1["params"]["tool"], "echo");
    assert_eq!(pairs[1].1["params"]["tool"], "get-sum");
    // Nothing but tools/call results is committed.
    assert_eq!(lifecycle(&entries, "$commit").len(), 2);

    let out = commitments(&env, &["verify", "c"]);
    assert!(out.status.success(), "{}", text(&out));
    let report = stdout(&out);
    let echo = line_with(&tape, r#""method":"$commit","params":{"id":3"#);
    assert!(
        report.contains(&format!(
            "line {echo} everything #3 echo: ok (answer at line {})",
            echo + 1
        )),
        "{report}"
    );
    assert!(
        report.ends_with("2 commitments: 2 ok, 0 mismatches, 0 not checkable\n"),
        "{report}"
    );

    // `show` says what each one is; replay serves the tape as recorded, the $commit
    // entries changing nothing; verify against the live server ignores them.
    let out = run(env.mcptape(["show", "c", "--full"]));
    assert!(out.status.success(), "{}", text(&out));
    let hex = pairs[0].1["params"]["sha256"].as_str().expect("hash");
    assert!(
        stdout(&out).contains(&format!("COMMIT #3 echo jcs-sha256 {hex} (body kept)")),
        "{}",
        stdout(&out)
    );
    let out = run(env
        .mcptape([
            "replay",
            "c",
            "--",
            &python(),
            &peer("py_client.py"),
            "everything",
            "--",
        ])
        .args(proxy_argv("everything", &everything_server())));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("Echo: hello from python"),
        "{}",
        text(&out)
    );
    let out = run(env.mcptape(["verify", "c", "--"]).args(everything_server()));
    assert!(out.status.success(), "{}", text(&out));

    // One answer edited: a mismatch at its line, exit 1; the other still ok.
    let text_before = std::fs::read_to_string(&tape).expect("tape");
    let edited = text_before.replace("Echo: hello from python", "Echo: hello from PYTHON");
    assert_ne!(edited, text_before);
    std::fs::write(&tape, edited).expect("write");
    let out = commitments(&env, &["verify", "c"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = stdout(&out);
    assert!(
        report.contains(&format!(
            "line {echo} everything #3 echo: MISMATCH (the answer at line {} does not match: the answer hashes to ",
            echo + 1
        )),
        "{report}"
    );
    assert!(report.contains("get-sum: ok"), "{report}");
    assert!(
        report.ends_with("2 commitments: 1 ok, 1 mismatch, 0 not checkable\n"),
        "{report}"
    );
}

#[test]
fn redact_results_keeps_the_commitments_and_drops_the_bodies_and_check_finds_the_real_answer() {
    let env = Env::new();
    record(&env, "real", &["--commit"]);
    record(&env, "dropped", &["--redact-results"]);
    let tape = env.tape("dropped");
    let raw = std::fs::read_to_string(&tape).expect("tape");
    for body in ["Echo: hello from python", "The sum of 2 and 3 is 5."] {
        assert!(!raw.contains(body), "{body} is left out: {raw}");
    }
    let entries = tape_entries(&tape);
    for (answer, before) in answers_and_before(&entries) {
        assert_eq!(before["method"], "$commit");
        assert_eq!(before["params"]["body"], "dropped");
        assert_eq!(answer["result"]["content"], serde_json::json!([]));
        assert_eq!(
            answer["result"]["_meta"]["mcptape/commit"]["sha256"],
            before["params"]["sha256"]
        );
    }
    let out = commitments(&env, &["verify", "dropped"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).ends_with("2 commitments: 0 ok, 0 mismatches, 2 not checkable\n"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("the answer's body was dropped (--redact-results)"),
        "{}",
        stdout(&out)
    );

    // The real answer, from the tape that kept it: the whole response, or its result.
    let answer = tape_messages(&env.tape("real"), "recv")
        .into_iter()
        .find(|m| m.contains("Echo: hello from python"))
        .expect("the echo answer");
    let response = env.path("response.json");
    std::fs::write(&response, &answer).expect("write");
    let out = run(env
        .mcptape(["commitments", "check", "dropped", "--answer"])
        .arg(&response));
    assert!(out.status.success(), "{}", text(&out));
    let echo = line_with(&tape, r#""method":"$commit","params":{"id":3"#);
    assert!(
        stdout(&out).contains(&format!("matches line {echo} everything #3 echo\n")),
        "{}",
        stdout(&out)
    );
    let value: Value = serde_json::from_str(&answer).expect("json");
    let result = env.path("result.json");
    std::fs::write(
        &result,
        serde_json::to_string_pretty(&value["result"]).expect("json"),
    )
    .expect("write");
    let out = run(env
        .mcptape(["commitments", "check", "dropped", "--answer"])
        .arg(&result));
    assert!(
        out.status.success(),
        "pretty-printed, it is the same answer: {}",
        text(&out)
    );

    // A wrong answer matches nothing: exit 1.
    let wrong = env.path("wrong.json");
    std::fs::write(
        &wrong,
        answer.replace("hello from python", "hello from perl"),
    )
    .expect("write");
    let out = run(env
        .mcptape(["commitments", "check", "dropped", "--answer"])
        .arg(&wrong));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stdout(&out).contains("it matches none of the tape's 2 commitments"),
        "{}",
        text(&out)
    );

    // A bad FILE is a usage error that names it.
    let bad = env.path("bad.json");
    std::fs::write(&bad, "{\"content\": [").expect("write");
    let error = env.path("error.json");
    std::fs::write(
        &error,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no"}}"#,
    )
    .expect("write");
    for (file, says) in [
        (
            bad.clone(),
            "has no commitment: it cannot be read as I-JSON: EOF while parsing",
        ),
        (error, "it is a JSON-RPC error response: there is no result"),
        (env.path("missing.json"), "cannot read --answer"),
        (env.path(""), "is not a regular file"),
    ] {
        let out = run(env
            .mcptape(["commitments", "check", "dropped", "--answer"])
            .arg(&file));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(stderr(&out).contains(says), "{says}: {}", text(&out));
        assert!(
            stderr(&out).contains(&file.display().to_string()),
            "{}",
            text(&out)
        );
    }

    // Replayed, the client is given the body-less results and finishes.
    let out = run(env
        .mcptape([
            "replay",
            "dropped",
            "--",
            &python(),
            &peer("py_client.py"),
            "everything",
            "--",
        ])
        .args(proxy_argv("everything", &everything_server())));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains(r#""content": []"#),
        "{}",
        stdout(&out)
    );
}

/// A config naming the example server `example`.
fn example_config(env: &Env) {
    let text = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(env.path(".mcp.json"), text.to_string()).expect("write");
}

#[test]
fn call_commits_and_the_tape_says_when_redaction_or_a_fault_changed_the_answer() {
    let env = Env::new();
    example_config(&env);
    let key = format!(
        "sk-proj-{}",
        fake("abcdefghijklmnopqrstuvwxyz0123456789", 48, 17)
    );
    let out = run(env.mcptape([
        "call",
        "example.echo",
        &format!("message:{key}"),
        "--record",
        "secret",
        "--commit",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    let raw = std::fs::read_to_string(env.tape("secret")).expect("tape");
    assert!(!raw.contains(&key), "the key is redacted on the tape");
    let entries = tape_entries(&env.tape("secret"));
    let commit = lifecycle(&entries, "$commit");
    assert_eq!(commit.len(), 1, "{entries:?}");
    assert_eq!(commit[0]["params"]["body"], "redacted");
    let out = commitments(&env, &["verify", "secret"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out)
            .contains("not checkable (the result had no commitment: the answer held a secret"),
        "{}",
        stdout(&out)
    );
    // The commitment keeps no hash (a hash of the answer would let the key be guessed):
    // the live answer, which the client printed, matches nothing.
    assert!(commit[0]["params"].get("sha256").is_none(), "{commit:?}");
    let answer = env.path("answer.json");
    std::fs::write(
        &answer,
        serde_json::json!({"content": [{"type": "text", "text": format!("Echo: {key}")}]})
            .to_string(),
    )
    .expect("write");
    let out = run(env
        .mcptape(["commitments", "check", "secret", "--answer"])
        .arg(&answer));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // A fault replaces the answer: the commitment is still to the server's, and verify
    // says it cannot check it.
    let out = run(env.mcptape([
        "call",
        "example.echo",
        "message:hi",
        "--record",
        "faulted",
        "--commit",
        "--fault",
        "tools/call: tool-error boom",
    ]));
    assert_eq!(out.status.code(), Some(1), "the tool error: {}", text(&out));
    let entries = tape_entries(&env.tape("faulted"));
    let methods: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["method"].as_str())
        .filter(|m| m.starts_with("$commit") || m.starts_with("$fault"))
        .collect();
    assert_eq!(
        methods,
        ["$commit", "$fault"],
        "the $commit (body replaced) just before the fault that replaced the answer"
    );
    assert_eq!(
        lifecycle(&entries, "$commit")[0]["params"]["body"],
        "replaced"
    );
    let out = commitments(&env, &["verify", "faulted"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("not checkable (an injected fault replaced or withheld the answer"),
        "{}",
        stdout(&out)
    );
    let server_said = env.path("hi.json");
    std::fs::write(
        &server_said,
        r#"{"content":[{"type":"text","text":"Echo: hi"}]}"#,
    )
    .expect("write");
    let out = run(env
        .mcptape(["commitments", "check", "faulted", "--answer"])
        .arg(&server_said));
    assert!(out.status.success(), "{}", text(&out));

    // Without --commit (or a policy, or the variables), no $commit is written.
    let out = run(env.mcptape(["call", "example.echo", "message:x", "--record", "plain"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(lifecycle(&tape_entries(&env.tape("plain")), "$commit").is_empty());
    // A tape without commitments: nothing to verify, said so.
    let out = commitments(&env, &["verify", "plain"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("no commitments in"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn the_http_front_commits_to_each_tools_call_result() {
    let env = Env::new();
    let tape = env.path("front.ndjson").display().to_string();
    let server = HttpServer::start();
    let front = Front::start(&env, &["--url", &server.url, "--record", &tape, "--commit"]);
    let out = run(env.cmd(python()).args([
        peer("py_calls.py"),
        r#"echo:{"message":"over http"}"#.into(),
        r#"get-sum:{"a":1,"b":2}"#.into(),
        "--".into(),
        front.url.clone(),
    ]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(front.stop().success());
    drop(server);
    let entries = tape_entries(Path::new(&tape));
    for (answer, before) in answers_and_before(&entries) {
        assert_eq!(before["method"], "$commit", "{before}");
        assert_eq!(before["params"]["id"], answer["id"]);
    }
    let out = commitments(&env, &["verify", &tape]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).ends_with("2 commitments: 2 ok, 0 mismatches, 0 not checkable\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_bad_variable_or_tape_is_an_error_naming_it_and_record_exports_the_variables() {
    let env = Env::new();
    example_config(&env);
    let out = run(env
        .mcptape(["call", "example.echo", "message:x", "--record", "v"])
        .env("MCPTAPE_COMMIT", "yes"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("MCPTAPE_COMMIT"), "{}", text(&out));
    let out = run(env
        .mcptape(["call", "example.echo", "message:x", "--record", "v"])
        .env("MCPTAPE_REDACT_RESULTS", "1"));
    assert!(out.status.success(), "{}", text(&out));
    let entries = tape_entries(&env.tape("v"));
    assert_eq!(
        lifecycle(&entries, "$commit")[0]["params"]["body"],
        "dropped"
    );

    // A tape that cannot be read: the file and the line.
    let bad = env.path("bad.ndjson");
    let tape = std::fs::read_to_string(env.tape("v")).expect("tape");
    std::fs::write(&bad, format!("not json\n{tape}")).expect("write");
    let out = commitments(&env, &["verify", &bad.display().to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains(&format!("`{}` line 1: not a JSON object", bad.display())),
        "{}",
        text(&out)
    );

    // `record` without a command prints them for the proxies started by hand.
    let out = run(env.mcptape(["record", "x", "--commit", "--redact-results"]));
    assert!(out.status.success(), "{}", text(&out));
    for line in [
        "export MCPTAPE_COMMIT='1'",
        "export MCPTAPE_REDACT_RESULTS='1'",
    ] {
        assert!(stdout(&out).contains(line), "{}", stdout(&out));
    }
}
