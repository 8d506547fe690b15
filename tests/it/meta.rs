//! `_meta` is metadata for the implementations (MCP spec): replay leaves `params._meta`
//! out of matching and verify leaves `result._meta` out of its comparison, unless
//! `--match-meta` (or `MCPTAPE_MATCH_META=1`) asks to compare them.

use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// An echo call carrying an agent's own id in `params._meta`, as Claude Code sends.
fn echo_with_id(tool_use_id: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}},"_meta":{{"claudecode/toolUseId":"{tool_use_id}"}}}}}}"#
    )
}

/// Records the handshake and one echo call (with `toolu_recorded`) with the example server.
fn record(env: &Env) -> std::path::PathBuf {
    let tape = env.path("meta.ndjson");
    let mut cmd = env.mcptape(["proxy", "--server", "example", "--record"]);
    cmd.arg(&tape).arg("--").arg(example_server());
    let mut p = Proc::spawn(&mut cmd);
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    p.send(&echo_with_id("toolu_recorded"));
    assert_eq!(p.recv()["result"]["content"][0]["text"], "Echo: hi");
    p.close_stdin();
    assert!(p.wait().success());
    tape
}

/// `mcptape replay TAPE [FLAGS] -- mcptape proxy --server example -- <absent>`: the test
/// is the client, on the proxy's stdio, and the proxy takes its mode from the parent.
fn replay(env: &Env, tape: &std::path::Path, flags: &[&str]) -> Proc {
    let mut cmd = env.mcptape(["replay"]);
    cmd.arg(tape)
        .args(flags)
        .arg("--")
        .args(proxy_argv("example", &["/nonexistent/server".into()]));
    Proc::spawn(&mut cmd)
}

fn replay_one_call(p: &mut Proc) -> serde_json::Value {
    p.send(INIT);
    p.recv();
    p.send(INITIALIZED);
    p.send(&echo_with_id("toolu_live"));
    let answer = p.recv();
    p.close_stdin();
    answer
}

#[test]
fn replay_leaves_params_meta_out_unless_match_meta() {
    let env = Env::new();
    let tape = record(&env);

    let mut p = replay(&env, &tape, &[]);
    let answer = replay_one_call(&mut p);
    assert_eq!(
        answer["result"]["content"][0]["text"], "Echo: hi",
        "{answer}"
    );
    let status = p.wait();
    let err = p.stderr();
    assert!(status.success(), "{err}");
    assert!(err.contains("ok       server `example`"), "{err}");

    // --match-meta reaches the proxy through the replay parent's environment.
    let mut p = replay(&env, &tape, &["--match-meta"]);
    let answer = replay_one_call(&mut p);
    assert_eq!(answer["error"]["code"], -32090, "{answer}");
    assert_eq!(p.wait().code(), Some(3));
    let err = p.stderr();
    assert!(err.contains("DIVERGED server `example`"), "{err}");
    assert!(
        err.contains("toolu_live"),
        "the diff shows the `_meta`: {err}"
    );

    // A proxy's own environment, set by hand: `1` compares, `false` does not.
    for (value, code) in [("1", 3), ("false", 0)] {
        let mut cmd = env.mcptape(["proxy", "--server", "example", "--", "/nonexistent/server"]);
        cmd.env("MCPTAPE_REPLAY", &tape)
            .env("MCPTAPE_MATCH_META", value);
        let mut p = Proc::spawn(&mut cmd);
        replay_one_call(&mut p);
        let status = p.wait();
        assert_eq!(
            status.code(),
            Some(code),
            "MCPTAPE_MATCH_META={value}: {}",
            p.stderr()
        );
    }
}

#[test]
fn verify_leaves_result_meta_out_unless_match_meta() {
    let env = Env::new();
    let tape = record(&env);
    // The recorded answer carried a `_meta` that the live server does not send.
    let raw = std::fs::read_to_string(&tape).expect("read tape");
    let edited = raw.replacen(
        r#""result":{"content""#,
        r#""result":{"_meta":{"served-by":"recorded"},"content""#,
        1,
    );
    assert_ne!(raw, edited, "the tape has the echo's result: {raw}");
    std::fs::write(&tape, edited).expect("write tape");

    let verify = |flags: &[&str], env_value: Option<&str>| {
        let mut cmd = env.mcptape(["verify"]);
        cmd.arg(&tape)
            .arg("--allow-writes")
            .args(flags)
            .arg("--")
            .arg(example_server());
        if let Some(v) = env_value {
            cmd.env("MCPTAPE_MATCH_META", v);
        }
        run(cmd)
    };
    let out = verify(&[], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 same, 0 changed"),
        "{}",
        text(&out)
    );
    let out = verify(&["--match-meta"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("result._meta"),
        "{}",
        text(&out)
    );
    let out = verify(&[], Some("1"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let out = verify(&[], Some("0"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
}
