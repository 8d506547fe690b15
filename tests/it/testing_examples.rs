//! The examples of docs/testing-clients.md, run as a user would: a pytest suite and a
//! vitest suite, each under `mcptape replay --match any --record-mode once`. The first run
//! finds no tape and records one through the real example server; the second run replays
//! it with the server's path pointing nowhere, and the suites pass both times — including
//! their test of a rate-limit fault injected by `mcptape proxy --fault`.

use std::path::{Path, PathBuf};

use crate::support::{Env, bin, example_server, python, run, stderr, stdout, tape_entries};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `suite` (a command line) twice under `mcptape replay TAPE --match any
/// --record-mode once`, in `dir`: recording, then replaying with no server.
fn twice(env: &Env, tape: &Path, dir: &Path, suite: &[String]) {
    let replay = |server: &str| {
        let mut cmd = env.mcptape(["replay"]);
        cmd.arg(tape)
            .args(["--match", "any", "--record-mode", "once", "--"])
            .args(suite)
            .env("MCPTAPE", bin())
            .env("SERVER", server)
            .current_dir(dir);
        run(cmd)
    };
    let first = replay(&example_server());
    assert!(
        first.status.success(),
        "the recording run failed: {}\n{}",
        stdout(&first),
        stderr(&first)
    );
    assert!(
        stderr(&first).contains("recording"),
        "the first run records: {}",
        stderr(&first)
    );
    let entries = tape_entries(tape);
    let calls = entries
        .iter()
        .filter(|e| e["method"] == "tools/call" && e["_meta"]["dir"] == "send")
        .count();
    assert_eq!(calls, 3, "one call per test was recorded: {entries:?}");
    assert!(
        entries.iter().any(|e| e["method"] == "$fault"),
        "the injected rate limit is on the tape: {entries:?}"
    );
    let before = std::fs::read(tape).expect("tape");
    let second = replay("/nonexistent/example-server");
    assert!(
        second.status.success(),
        "the replaying run failed: {}\n{}",
        stdout(&second),
        stderr(&second)
    );
    // The proxies' own words go to the suite's captured stderr; the parent's verdicts
    // (one `ok` per recorded connection) say that the tape answered.
    let said = stderr(&second);
    assert_eq!(
        said.matches("mcptape: ok").count(),
        3,
        "the second run replays each recorded connection: {said}"
    );
    assert!(!said.contains("recording"), "{said}");
    assert_eq!(
        std::fs::read(tape).expect("tape"),
        before,
        "a replay leaves the tape as it was"
    );
}

#[test]
fn the_pytest_example_records_once_then_replays_with_no_server() {
    let env = Env::new();
    let dir = env.path("pytest-project");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::copy(
        repo().join("examples/testing/pytest/test_client.py"),
        dir.join("test_client.py"),
    )
    .expect("copy the example");
    let tape = env.path("client.ndjson");
    let suite = [python(), "-m".into(), "pytest".into(), "-q".into()]
        .into_iter()
        .chain(["-p".into(), "no:cacheprovider".into(), ".".into()])
        .collect::<Vec<String>>();
    twice(&env, &tape, &dir, &suite);
}

#[test]
fn the_vitest_example_records_once_then_replays_with_no_server() {
    let env = Env::new();
    let dir = env.path("vitest-project");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::copy(
        repo().join("examples/testing/vitest/client.test.mjs"),
        dir.join("client.test.mjs"),
    )
    .expect("copy the example");
    // The project's own node_modules, as `npm install` would make it: the SDK and vitest.
    let peers = repo().join("tests/peers/node_modules");
    std::os::unix::fs::symlink(&peers, dir.join("node_modules")).expect("node_modules");
    let vitest = peers.join("vitest/vitest.mjs");
    assert!(
        vitest.exists(),
        "{} is missing: run tests/peers/install",
        vitest.display()
    );
    let tape = env.path("client.ndjson");
    let suite: Vec<String> = [
        "node",
        &vitest.to_string_lossy(),
        "run",
        "--root",
        ".",
        "--no-color",
        "--cache=false",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    twice(&env, &tape, &dir, &suite);
}
