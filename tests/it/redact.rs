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
        listing.contains(": params.arguments.message (OpenAI key)"),
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

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// Production-shaped fake credentials of several providers.
fn provider_keys() -> Vec<String> {
    let b64url = format!("{ALNUM}_-");
    vec![
        format!("sk_live_{}", fake(ALNUM, 24, 1)),
        format!("AIza{}", fake(&b64url, 35, 2)),
        format!(
            "https://hooks.slack.com/services/T{}/B{}/{}",
            fake("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 8, 3),
            fake("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", 10, 4),
            fake(ALNUM, 24, 5)
        ),
        format!("glpat-{}", fake(&b64url, 20, 6)),
        format!("npm_{}", fake(ALNUM, 36, 7)),
        format!("hf_{}", fake(&ALNUM[..52], 34, 8)),
        format!("SG.{}.{}", fake(&b64url, 22, 9), fake(&b64url, 43, 10)),
        format!(
            "https://db.example/login?user=bob&pass={}",
            fake(ALNUM, 12, 11)
        ),
    ]
}

#[test]
fn provider_keys_never_reach_the_tape_and_check_names_them() {
    let env = Env::new();
    let keys = provider_keys();
    let message = format!("keys: {} end", keys.join(" and "));
    // The writer: every key is redacted as the entry is written.
    let mut cmd = env.mcptape(["record", "s", "--"]);
    cmd.args(client(&message))
        .arg("--")
        .args(proxy_argv("everything", &everything_server()));
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    let tape = std::fs::read_to_string(env.tape("s")).expect("tape");
    // The secret part of each: the webhook keeps its host, the URL its parameter name.
    let secrets = [
        &keys[0][..],
        &keys[1],
        &keys[2]["https://hooks.slack.com/services/".len()..],
        &keys[3],
        &keys[4],
        &keys[5],
        &keys[6],
        &keys[7][keys[7].len() - 12..],
    ];
    for secret in secrets {
        assert!(!tape.contains(secret), "{secret} reached the tape: {tape}");
    }
    assert!(
        tape.contains("https://hooks.slack.com/services/[REDACTED] and")
            && tape.contains("&pass=[REDACTED] end"),
        "{tape}"
    );
    let out = run(&mut env.mcptape(["redact", "--check", "--strict", "s"]));
    assert!(out.status.success(), "{}", text(&out));

    // `redact --check` on a tape recorded without redaction names the provider.
    let mut cmd = env.mcptape(["record", "raw", "--no-redact", "--"]);
    cmd.args(client(&message))
        .arg("--")
        .args(proxy_argv("everything", &everything_server()));
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    let out = run(&mut env.mcptape(["redact", "--check", "raw"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing.contains(": params.arguments.message (Stripe key)"),
        "{listing}"
    );
    let out = run(&mut env.mcptape(["redact", "raw"]));
    assert!(out.status.success(), "{}", text(&out));
    let after = std::fs::read_to_string(env.tape("raw")).expect("tape");
    for secret in secrets {
        assert!(!after.contains(secret), "{secret} survived `redact`");
    }
}

#[test]
fn check_strict_fails_on_possible_secrets_alone() {
    let env = Env::new();
    // A random token under no credential name and in no known format: the writer keeps
    // it (redaction never guesses), `--check` lists it, `--check --strict` fails on it.
    let token = fake(ALNUM, 32, 42);
    let message = format!(
        "deploy with {token}; sk-learn 0b1d2c3e-4f50-6789-abcd-ef0123456789 \
         sha 4b825dc642cb6eb9a060e54bf8d69288fbee4904 maxTokens progressToken nextCursor"
    );
    let mut cmd = env.mcptape(["record", "s", "--"]);
    cmd.args(client(&message))
        .arg("--")
        .args(proxy_argv("everything", &everything_server()));
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        std::fs::read_to_string(env.tape("s"))
            .expect("tape")
            .contains(&token)
    );

    let out = run(&mut env.mcptape(["redact", "--check", "s"]));
    assert!(
        out.status.success(),
        "possible secrets alone pass: {}",
        text(&out)
    );
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(
        listing.contains(": params.arguments.message (possible secret)"),
        "{listing}"
    );
    assert!(
        listing.contains(": result.content[0].text (possible secret)"),
        "{listing}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("possible secrets (high-entropy tokens)"),
        "{}",
        text(&out)
    );
    let out = run(&mut env.mcptape(["redact", "--check", "--strict", "s"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // The look-alikes alone, and everything else server-everything says, pass --strict.
    let clean = message.replace(&token, "the usual key");
    let mut cmd = env.mcptape(["record", "clean", "--"]);
    cmd.args(client(&clean))
        .arg("--")
        .args(proxy_argv("everything", &everything_server()));
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    let out = run(&mut env.mcptape(["redact", "--check", "--strict", "clean"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(out.stdout.is_empty(), "{}", text(&out));

    // --strict means nothing without --check.
    let out = run(&mut env.mcptape(["redact", "--strict", "clean"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}

#[test]
fn the_example_recordings_have_no_possible_secrets() {
    let env = Env::new();
    for tape in ["call-example", "everything", "example"] {
        let path = recordings_example().join(format!("{tape}.ndjson"));
        let mut cmd = env.mcptape(["redact", "--check", "--strict"]);
        cmd.arg(&path);
        let out = run(&mut cmd);
        assert!(out.status.success(), "{tape}: {}", text(&out));
    }
}
