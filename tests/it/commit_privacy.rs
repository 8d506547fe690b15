//! What a recording with commitments must not give away, through the built-in `call`
//! against a raw stdio server (a Python script that writes the exact bytes a careless or
//! hostile server could): under `--redact-results` no tool output reaches the tape by
//! any path the tap cannot attribute; a commitment to an answer that held a secret keeps
//! no hash; and a fault's replaced or withheld answer is never said to be `kept`.

use serde_json::Value;

use crate::support::*;

/// A stdio server: `initialize` and `tools/list` answered plainly; each `tools/call`
/// answered first by the lines of `$RAW_LINES` (a file: `{id}` is the call's id), then
/// with the result in `$RESULT` (JSON text).
const RAW_SERVER: &str = r#"
import json, os, sys
extra = open(os.environ["RAW_LINES"], "rb").read().splitlines() if os.environ.get("RAW_LINES") else []
result = os.environ.get("RESULT", '{"content":[{"type":"text","text":"SECRET-REAL"}]}').encode()
out = sys.stdout.buffer
def say(b):
    out.write(b + b"\n"); out.flush()
for line in sys.stdin.buffer:
    if not line.strip():
        continue
    msg = json.loads(line)
    mid, m = msg.get("id"), msg.get("method")
    if m == "initialize":
        say(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "raw", "version": "1"}}}).encode())
    elif m == "tools/list":
        say(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{"name": "t", "description": "LISTED", "inputSchema": {"type": "object"}}]}}).encode())
    elif m == "tools/call":
        i = json.dumps(mid).encode()
        for l in extra:
            say(l.replace(b"{id}", i).replace(b"{sid}", str(mid).encode()))
        say(b'{"jsonrpc":"2.0","id":' + i + b',"result":' + result + b'}')
    elif mid is not None:
        say(json.dumps({"jsonrpc": "2.0", "id": mid, "result": {}}).encode())
"#;

/// An env whose config names the raw server `raw`.
fn raw_env() -> Env {
    let env = Env::new();
    let script = env.path("raw.py");
    std::fs::write(&script, RAW_SERVER).expect("write");
    let config =
        serde_json::json!({"mcpServers": {"raw": {"command": python(), "args": [script]}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("write");
    env
}

fn call(env: &Env, session: &str, flags: &[&str], vars: &[(&str, &str)]) -> std::process::Output {
    let mut cmd = env.mcptape(["call", "raw.t", "--record", session]);
    cmd.args(flags);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

fn verify(env: &Env, session: &str) -> std::process::Output {
    run(env.mcptape(["commitments", "verify", session]))
}

#[test]
fn redact_results_keeps_no_body_it_cannot_attribute_to_a_kept_method() {
    let env = raw_env();
    let lines = env.path("lines");
    let mut raw: Vec<u8> = Vec::new();
    raw.extend_from_slice(
        br#"{"jsonrpc":"2.0","id":"{sid}","result":{"content":[{"type":"text","text":"SECRET-STRID"}]}}"#,
    );
    raw.extend_from_slice(b"\n");
    raw.extend_from_slice(
        br#"[{"jsonrpc":"2.0","id":{id},"result":{"content":[{"type":"text","text":"SECRET-BATCH"}]}}]"#,
    );
    raw.extend_from_slice(b"\n{\"jsonrpc\":\"2.0\",\"result\":{\"SECRET-BAD\xff\":1}}\n");
    raw.extend_from_slice(
        br#"{"jsonrpc":"2.0","id":98,"id":99,"result":{"content":[{"type":"text","text":"SECRET-DUP"}]}}"#,
    );
    raw.extend_from_slice(b"\n");
    std::fs::write(&lines, raw).expect("write");
    let lines = lines.display().to_string();
    let out = call(&env, "r", &["--redact-results"], &[("RAW_LINES", &lines)]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("SECRET-REAL"),
        "the client got the answer: {}",
        text(&out)
    );
    let tape = std::fs::read_to_string(env.tape("r")).expect("tape");
    for secret in [
        "SECRET-STRID",
        "SECRET-BATCH",
        "SECRET-BAD",
        "SECRET-DUP",
        "SECRET-REAL",
    ] {
        assert!(!tape.contains(secret), "{secret} is on the tape: {tape}");
    }
    assert!(
        tape.contains("LISTED"),
        "a tools/list answer is kept: {tape}"
    );
    let entries = tape_entries(&env.tape("r"));
    let commit = lifecycle(&entries, "$commit");
    assert_eq!(commit.len(), 1, "{entries:#?}");
    assert_eq!(commit[0]["params"]["body"], "dropped");

    // A fault's replaced answer, and a malformed one (half the real answer), under
    // --redact-results: no body either; the $commit says `replaced`.
    for fault in ["tools/call: malformed", "tools/call: tool-error boom"] {
        // The client gets a torn line or the tool error: it fails or gives up, as it may.
        let _ = call(
            &env,
            "f",
            &["--redact-results", "--timeout", "5", "--fault", fault],
            &[],
        );
        let tape = std::fs::read_to_string(env.tape("f")).expect("tape");
        assert!(!tape.contains("SECRET-REAL"), "{fault}: {tape}");
        let entries = tape_entries(&env.tape("f"));
        let commit = lifecycle(&entries, "$commit");
        assert_eq!(commit.len(), 1, "{fault}: {entries:#?}");
        assert_eq!(commit[0]["params"]["body"], "replaced", "{fault}");
        let report = verify(&env, "f");
        assert!(report.status.success(), "{}", text(&report));
        assert!(
            stdout(&report)
                .contains("not checkable (an injected fault replaced or withheld the answer"),
            "{fault}: {}",
            stdout(&report)
        );
        std::fs::remove_file(env.tape("f")).expect("rm");
    }
}

#[test]
fn a_commitment_to_an_answer_with_a_secret_keeps_no_hash_to_guess_it_from() {
    let env = raw_env();
    let result =
        r#"{"content":[{"type":"text","text":"x"}],"structuredContent":{"password":"hunter2"}}"#;
    for (flag, body) in [("--commit", "redacted"), ("--redact-results", "dropped")] {
        let out = call(&env, "s", &[flag], &[("RESULT", result)]);
        assert!(out.status.success(), "{}", text(&out));
        let tape = std::fs::read_to_string(env.tape("s")).expect("tape");
        assert!(!tape.contains("hunter2"), "{tape}");
        let entries = tape_entries(&env.tape("s"));
        let commit = lifecycle(&entries, "$commit");
        assert_eq!(commit.len(), 1, "{entries:#?}");
        let params = &commit[0]["params"];
        assert!(params.get("sha256").is_none(), "{flag}: {params}");
        assert_eq!(params["body"], body, "{flag}");
        assert!(
            params["reason"]
                .as_str()
                .is_some_and(|r| r.contains("secret")),
            "{params}"
        );
        assert!(!tape.contains(r#""sha256""#), "no hash anywhere: {tape}");
        let report = verify(&env, "s");
        assert!(report.status.success(), "{}", text(&report));
        assert!(
            stdout(&report)
                .contains("not checkable (the result had no commitment: the answer held a secret"),
            "{}",
            stdout(&report)
        );
        std::fs::remove_file(env.tape("s")).expect("rm");
    }
    // Without a secret the commitment has its hash and verifies.
    let out = call(&env, "p", &["--commit"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let entries = tape_entries(&env.tape("p"));
    let commit: Vec<&Value> = lifecycle(&entries, "$commit");
    assert!(commit[0]["params"]["sha256"].is_string(), "{entries:#?}");
    assert!(verify(&env, "p").status.success());
}

#[test]
fn redacting_a_tape_later_updates_the_commitment_of_each_answer_it_changes() {
    let env = raw_env();
    let result =
        r#"{"content":[{"type":"text","text":"x"}],"structuredContent":{"password":"hunter2"}}"#;
    let out = call(
        &env,
        "nr",
        &["--commit", "--no-redact"],
        &[("RESULT", result)],
    );
    assert!(out.status.success(), "{}", text(&out));
    // A second, plain call on the same tape: its commitment stays as it is.
    let out = call(&env, "plain", &["--commit", "--no-redact"], &[]);
    assert!(out.status.success(), "{}", text(&out));
    let tape = env.tape("nr");
    let plain = std::fs::read_to_string(env.tape("plain")).expect("tape");
    let mut both = std::fs::read_to_string(&tape).expect("tape");
    both.push_str(&plain);
    std::fs::write(&tape, &both).expect("write");
    let before = lifecycle(&tape_entries(&tape), "$commit")
        .iter()
        .map(|c| c["params"].clone())
        .collect::<Vec<Value>>();
    assert_eq!(before.len(), 2);
    assert!(
        before[0]["sha256"].is_string(),
        "recorded with --no-redact: {before:?}"
    );
    assert!(verify(&env, "nr").status.success());

    let out = run(env.mcptape(["redact", "nr"]));
    assert!(out.status.success(), "{}", text(&out));
    let raw = std::fs::read_to_string(&tape).expect("tape");
    assert!(!raw.contains("hunter2"), "{raw}");
    let after = lifecycle(&tape_entries(&tape), "$commit")
        .iter()
        .map(|c| c["params"].clone())
        .collect::<Vec<Value>>();
    assert_eq!(after[0]["body"], "redacted", "{after:?}");
    assert!(after[0].get("sha256").is_none(), "{after:?}");
    assert!(
        after[0]["reason"]
            .as_str()
            .is_some_and(|r| r.contains("secret"))
    );
    assert_eq!(
        after[1], before[1],
        "the plain answer's commitment is untouched"
    );
    let report = verify(&env, "nr");
    assert!(
        report.status.success(),
        "no false MISMATCH: {}",
        text(&report)
    );
    assert!(
        stdout(&report).ends_with("2 commitments: 1 ok, 0 mismatches, 1 not checkable\n"),
        "{}",
        stdout(&report)
    );
    // --check is unchanged: the redacted tape is clean.
    let out = run(env.mcptape(["redact", "--check", "nr"]));
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_scrubbed_proxy_under_record_redact_results_still_drops_the_bodies() {
    let env = raw_env();
    let script = env.path("raw.py").display().to_string();
    let mcptape = env!("CARGO_BIN_EXE_mcptape");
    // The agent between record and the proxy scrubs its env and sets MCPTAPE_COMMIT=1
    // (or =0) itself: the ancestor's --redact-results still holds.
    for commit in ["1", "0"] {
        let inner = format!(
            "printf '%s\\n' '{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{{}},\"clientInfo\":{{\"name\":\"c\",\"version\":\"1\"}}}}}}' '{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{{\"name\":\"t\",\"arguments\":{{}}}}}}' | env -i PATH=\"$PATH\" HOME=\"$HOME\" MCPTAPE_COMMIT={commit} {mcptape} proxy --server raw -- {py} {script}",
            py = python(),
        );
        let session = format!("scrub{commit}");
        let out = run(env.mcptape([
            "record",
            &session,
            "--redact-results",
            "--",
            "sh",
            "-c",
            &inner,
        ]));
        assert!(out.status.success(), "{}", text(&out));
        let tape = std::fs::read_to_string(env.tape(&session)).expect("tape");
        assert!(
            !tape.contains("SECRET-REAL"),
            "MCPTAPE_COMMIT={commit}: {tape}"
        );
        assert!(tape.contains(r#""body":"dropped""#), "{tape}");
    }
    // The exports form keeps what the shell has: no `unset` for a variable not given.
    let out = run(env
        .mcptape(["record", "pv", "--commit"])
        .env("MCPTAPE_REDACT_RESULTS", "1"));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).contains("export MCPTAPE_COMMIT='1'"),
        "{}",
        stdout(&out)
    );
    assert!(
        !stdout(&out).contains("unset MCPTAPE_REDACT_RESULTS"),
        "{}",
        stdout(&out)
    );
    assert!(
        !stdout(&out).contains("unset MCPTAPE_COMMIT"),
        "{}",
        stdout(&out)
    );
}
