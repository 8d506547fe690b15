//! Redaction end to end: no secret reaches the tape, replay still matches, and
//! `redact --check` tells a clean tape from a dirty one.

use std::os::unix::fs::PermissionsExt;

use crate::support::*;

const KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwx0123";
const ENV_SECRET: &str = "plain-looking-words-42";

fn client(message: &str) -> Vec<String> {
    vec![
        python(),
        peer("py_client.py"),
        "echo".into(),
        "--message".into(),
        message.into(),
    ]
}

fn message() -> String {
    format!("key {KEY} and {ENV_SECRET} and password=hunter2x and Bearer abcDEF1234567890wxyz")
}

#[test]
fn secrets_never_reach_the_tape_and_replay_still_matches() {
    let env = Env::new();
    let mut cmd = env.mcptape(["record", "s", "--"]);
    cmd.args(client(&message()))
        .arg("--")
        .args(proxy_argv("everything", &everything_server()));
    cmd.env("MCPTAPE_REDACT", "MY_SECRET")
        .env("MY_SECRET", ENV_SECRET);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(KEY),
        "the live session is untouched"
    );
    let tape = std::fs::read_to_string(env.tape("s")).expect("tape");
    for secret in [KEY, ENV_SECRET, "hunter2x", "abcDEF1234567890wxyz"] {
        assert!(!tape.contains(secret), "{secret} reached the tape");
    }
    assert!(
        tape.contains(
            "key [REDACTED] and [REDACTED] and password=[REDACTED] and Bearer [REDACTED]"
        ),
        "{tape}"
    );

    // Replay: the redacted request still matches the client's real one.
    let mut cmd = env.mcptape(["replay", "s", "--"]);
    cmd.args(client(&message()))
        .arg("--")
        .args(proxy_argv("everything", &["/nonexistent".into()]));
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Echo: key [REDACTED]"),
        "{}",
        text(&out)
    );

    let out = run(&mut env.mcptape(["redact", "--check", "s"]));
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn check_finds_what_no_redact_left_and_redact_rewrites_it() {
    let env = Env::new();
    let mut cmd = env.mcptape(["record", "s", "--no-redact", "--"]);
    cmd.args(client(&message()))
        .arg("--")
        .args(proxy_argv("everything", &everything_server()));
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("without redaction"),
        "{}",
        text(&out)
    );
    let tape = env.tape("s");
    let raw = std::fs::read_to_string(&tape).expect("tape");
    assert!(
        raw.contains(KEY) && raw.contains(r#""redaction":"off""#),
        "the tape is marked"
    );

    let out = run(&mut env.mcptape(["redact", "--check", "s"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing.contains(&format!("{}:", tape.display())),
        "{listing}"
    );
    assert!(
        listing.contains(": params.arguments.message (key format)"),
        "{listing}"
    );
    assert!(listing.contains(": result.content[0].text ("), "{listing}");

    let before = std::fs::metadata(&tape).expect("meta").permissions().mode();
    let out = run(&mut env.mcptape(["redact", "s"]));
    assert!(out.status.success(), "{}", text(&out));
    let after = std::fs::read_to_string(&tape).expect("tape");
    assert!(
        !after.contains(KEY) && !after.contains("hunter2x"),
        "{after}"
    );
    assert_eq!(
        std::fs::metadata(&tape).expect("meta").permissions().mode(),
        before
    );
    let out = run(&mut env.mcptape(["redact", "--check", "s"]));
    assert!(out.status.success(), "{}", text(&out));
    // Entries that held no secret kept every byte.
    let first = |t: &str| t.lines().nth(1).map(str::to_owned);
    assert_eq!(first(&raw), first(&after));
}

#[test]
fn a_tape_past_max_bytes_is_cut_with_an_entry_and_record_fails() {
    let env = Env::new();
    let mut cmd = env.mcptape(["record", "s", "--max-bytes", "1500", "--"]);
    cmd.args(client("hello"))
        .arg("--")
        .args(proxy_argv("everything", &everything_server()));
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Echo: hello"),
        "live traffic goes on: {}",
        text(&out)
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("reached its limit of 1500 bytes"),
        "{}",
        text(&out)
    );
    let entries = tape_entries(&env.tape("s"));
    let cut = lifecycle(&entries, "$tape/truncated");
    assert_eq!(cut.len(), 1);
    assert_eq!(cut[0]["params"]["maxBytes"], 1500);
}
