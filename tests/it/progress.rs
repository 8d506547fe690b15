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
