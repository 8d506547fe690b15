//! Fault injection on the HTTP front (`proxy --listen`): the Python SDK client over
//! Streamable HTTP gets the injected JSON-RPC error and tool error, forwarding to a real
//! HTTP server (server-everything) and replaying the tape that recorded them.

use crate::http::{Front, HttpServer};
use crate::support::*;

const ERROR_2: &str = r#"tools/call name=echo nth=2: error -32000 "rate limited""#;
const TOOL_ERROR_3: &str = "tools/call name=echo nth=3: tool-error disk full";

fn calls(env: &Env, url: &str) -> Vec<serde_json::Value> {
    let mut cmd = env.cmd(python());
    cmd.args([
        peer("py_faults.py"),
        "3".into(),
        "--".into(),
        url.to_owned(),
    ]);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

fn faulted(lines: &[serde_json::Value]) {
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["text"], "Echo: m1");
    assert_eq!(lines[1]["error"]["code"], -32000);
    assert_eq!(lines[1]["error"]["message"], "rate limited");
    assert_eq!(lines[2]["isError"], true);
    assert_eq!(lines[2]["text"], "disk full");
}

#[test]
fn the_http_front_injects_errors_live_and_its_tape_replays_them() {
    let env = Env::new();
    let tape = env.path("faults.ndjson").display().to_string();
    let server = HttpServer::start();
    let front = Front::start(
        &env,
        &[
            "--url",
            &server.url,
            "--record",
            &tape,
            "--fault",
            ERROR_2,
            "--fault",
            TOOL_ERROR_3,
        ],
    );
    faulted(&calls(&env, &front.url));
    assert!(front.stop().success());
    drop(server);
    let entries = tape_entries(std::path::Path::new(&tape));
    assert_eq!(lifecycle(&entries, "$fault").len(), 2, "{entries:?}");

    // Replayed with no faults given: the faulted answers again.
    let front = Front::start(&env, &["--replay", &tape]);
    faulted(&calls(&env, &front.url));
    front.stop();
}
