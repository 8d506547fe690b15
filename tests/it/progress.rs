//! The TypeScript SDK's progress through replay (issue 13, e): the SDK drops a progress
//! notification that reaches it in the same read as the answer to its request, and a
//! replay has both ready at once. The replay writes the answer only once the client has
//! read the notification (src/downstream/apart.rs), so the real SDK client sees every
//! step. How often each mode saw all three over many runs: tests/peers/progress-runs.

use crate::support::*;

/// Runs the TS SDK progress driver against `server`; returns its one line.
fn progress_seen(env: &Env, server: &[String]) -> String {
    let mut cmd = env.cmd("node");
    cmd.arg(peer("ts_progress.mjs")).arg("--").args(server);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn the_typescript_sdk_sees_every_recorded_progress_notification_in_replay() {
    let env = Env::new();
    let tape = env.path("progress.ndjson");
    let tape_arg = tape.to_string_lossy().into_owned();
    let mut proxy: Vec<String> = [bin().to_string_lossy().as_ref(), "proxy"]
        .map(String::from)
        .into();
    proxy.extend(["--server", "everything", "--record", &tape_arg, "--"].map(String::from));
    proxy.extend(everything_server());
    // What the client saw while recording is up to the live race; the tape holds all.
    progress_seen(&env, &proxy);
    let recorded = tape_messages(&tape, "recv")
        .iter()
        .filter(|m| m.contains("notifications/progress"))
        .count();
    assert_eq!(recorded, 3, "the tape holds the three steps");

    let replay = |pace: bool| {
        let mut argv = proxy.clone();
        let at = argv.iter().position(|a| a == "--record").expect("--record");
        argv[at] = "--replay".into();
        if pace {
            argv.insert(at, "--pace".into());
        }
        progress_seen(&env, &argv)
    };
    // The replay has the third step and the answer ready in the same instant (with
    // --pace too: they were recorded in the same millisecond).
    assert_eq!(replay(false), "progress [1,2,3] lost 0");
    assert_eq!(replay(true), "progress [1,2,3] lost 0");
}

/// The tape keeps the order the client saw: a server write of a notification and an
/// answer is split where the proxy waits for the client to read the notification, and what
/// the client sends on reading it (here `tools/list`) is recorded after the notification,
/// so that replay, which gives a server message once what caused it has come, can play it.
#[test]
fn what_a_client_sends_on_reading_a_notification_is_taped_after_it_and_replays() {
    let env = Env::new();
    let tape = env.path("order.ndjson");
    let tape_arg = tape.to_string_lossy().into_owned();
    let client = [python(), peer("tap_order_client.py")];
    let server = [python(), peer("tap_order_server.py")];
    let mcptape = bin().to_string_lossy().into_owned();
    for _ in 0..5 {
        let _ = std::fs::remove_file(&tape);
        let mut cmd = env.mcptape(["record", &tape_arg, "--"]);
        cmd.args(&client)
            .args([mcptape.as_str(), "proxy", "--server", "order", "--"])
            .args(&server);
        let out = run(cmd);
        assert!(out.status.success(), "{}", text(&out));
        let entries = tape_entries(&tape);
        let at = |what: &str| {
            entries
                .iter()
                .position(|e| e.to_string().contains(what))
                .unwrap_or_else(|| panic!("no {what} in {entries:?}"))
        };
        assert!(
            at("notifications/tools/list_changed") < at(r#""method":"tools/list""#),
            "tools/list, sent on reading the notification, is taped before it: {entries:?}"
        );
        let mut cmd = env.mcptape(["replay", &tape_arg, "--"]);
        cmd.args(&client)
            .args([mcptape.as_str(), "proxy", "--server", "order", "--"])
            .args(&server);
        let out = run(cmd);
        assert!(out.status.success(), "{}", text(&out));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("client done"),
            "{}",
            text(&out)
        );
    }
}
