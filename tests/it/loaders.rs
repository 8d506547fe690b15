//! One loader: every command reads a tape through the same path (`lines::open`, one
//! line at a time, `lines::classify`), so a device is refused everywhere, a torn line means
//! the same to all of them, its warning is escaped wherever it is printed, and a command
//! that rewrites a tape rewrites the bytes it loaded.

use std::process::Output;

use crate::support::*;

/// A lifecycle entry as `record --no-redact` writes it.
const START: &str = r#"{"jsonrpc":"2.0","method":"$transport/start","params":{"command":["srv"],"redaction":"off"},"_meta":{"dir":"lifecycle","server":"s","ts":"2026-11-30T04:35:01.266Z","conn":"c-1"}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"ping","_meta":{"dir":"send","server":"s","ts":"2026-11-30T04:35:01.267Z","conn":"c-1"}}"#;

#[test]
fn redact_refuses_a_device_instead_of_reading_it_forever() {
    let env = Env::new();
    for args in [&["redact"][..], &["redact", "--check"][..]] {
        let out = run(env.mcptape(args).arg("/dev/zero"));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert!(
            stderr(&out).contains("not a regular file"),
            "{}",
            text(&out)
        );
    }
}

#[test]
fn redact_drops_the_off_mark_of_an_entry_too_deep_for_serde_and_keeps_its_bytes() {
    let env = Env::new();
    // Deeper than serde_json's 128 levels: it cannot be read into a `Value`.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let start = START.replace(
        r#""command":["srv"],"#,
        &format!(r#""command":["srv"],"deep":{deep},"#),
    );
    let tape = env.path("deep.ndjson");
    std::fs::write(&tape, format!("{start}\n{PING}\n")).expect("write");

    let out = run(env.mcptape(["redact"]).arg(&tape));
    assert!(out.status.success(), "{}", text(&out));
    assert!(stderr(&out).contains("redacted 1 entry"), "{}", text(&out));
    let want = start.replace(r#","redaction":"off""#, "");
    assert_eq!(
        std::fs::read_to_string(&tape).expect("tape"),
        format!("{want}\n{PING}\n")
    );
    // The rewritten tape still loads.
    let out = run(env.mcptape(["show"]).arg(&tape));
    assert!(out.status.success(), "{}", text(&out));
}

/// The warning line of a torn line in a command's stderr.
fn torn_warning(out: &Output) -> String {
    stderr(out)
        .lines()
        .find(|l| l.contains("torn last line ignored"))
        .unwrap_or_else(|| panic!("no torn-line warning: {}", text(out)))
        .to_owned()
}

#[test]
fn torn_line_warnings_are_escaped_by_every_reader() {
    let env = Env::new();
    // A tape whose name would retitle the terminal, with a torn last line.
    let tape = env.path("evil\x1b]0;owned\x07.ndjson");
    std::fs::write(
        &tape,
        format!("{PING}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"me"),
    )
    .expect("write");

    // The replay parent reads it with the streaming census.
    let out = run(env.mcptape(["replay"]).arg(&tape));
    assert!(out.status.success(), "{}", text(&out));
    let line = torn_warning(&out);
    assert!(!line.contains('\x1b') && !line.contains('\x07'), "{line:?}");
    assert!(line.contains(r"evil\x1b]0;owned\x07.ndjson"), "{line:?}");

    // A replaying proxy reads it with the one-server loader.
    let out = run(env
        .mcptape(["proxy", "--server", "s", "--", "/nonexistent/server"])
        .env("MCPTAPE_REPLAY", &tape));
    let line = torn_warning(&out);
    assert!(!line.contains('\x1b') && !line.contains('\x07'), "{line:?}");

    // `show` reads the whole tape.
    let out = run(env.mcptape(["show"]).arg(&tape));
    assert!(out.status.success(), "{}", text(&out));
    let line = torn_warning(&out);
    assert!(!line.contains('\x1b') && !line.contains('\x07'), "{line:?}");
}

#[test]
fn verify_update_rewrites_a_tape_with_a_non_utf8_torn_line_keeping_it_and_the_numbers() {
    let env = Env::new();
    record_py(&env, "s", "example", "example", &[example_server()]);
    let path = env.tape("s");
    let recorded = std::fs::read(&path).expect("tape");
    // A writer killed inside a multi-byte character, its line ended by the next writer:
    // line 2 is torn and not UTF-8, and every later entry's number counts it.
    let first = recorded.iter().position(|&b| b == b'\n').expect("a line") + 1;
    let torn = b"{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{\"text\":\"caf\xc3\n";
    let mut tape = recorded[..first].to_vec();
    tape.extend_from_slice(torn);
    tape.extend_from_slice(&recorded[first..]);
    std::fs::write(&path, &tape).expect("write");

    let verify = |args: &[&str]| {
        let mut cmd = env.mcptape(["verify", "s"]);
        cmd.args(args)
            .arg("--")
            .arg(example_server())
            .arg("--drift");
        run(&mut cmd)
    };
    let out = verify(&["--update"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("rewrote 4 recorded answers"),
        "{}",
        text(&out)
    );
    // The previous tape is kept byte for byte; the torn line stays where it was.
    let prev = env.mcptape_home().join("recordings/s.prev.ndjson");
    assert_eq!(std::fs::read(&prev).expect("prev"), tape);
    let updated = std::fs::read(&path).expect("tape");
    assert!(updated[first..].starts_with(torn), "the torn line moved");
    // The answers rewritten are the right lines: the drifted build now verifies clean.
    let out = verify(&[]);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn record_summarizes_a_tape_larger_than_its_memory_limit() {
    let env = Env::new();
    // 150,000 small entries (8.4 MB): a whole-tape load holds about 60 MB of them, the
    // streaming census one line.
    let line = r#"{"id":1,"_meta":{"dir":"send","server":"s","conn":"c-1"}}"#;
    let big = env.path("big.ndjson");
    std::fs::write(&big, format!("{line}\n").repeat(150_000)).expect("write");
    // mcptape runs with 32 MiB of data segment; the command appends the big tape.
    let script =
        r#"ulimit -d 32768 && exec "$0" record m -- sh -c 'cat "$0" >> "$MCPTAPE_RECORD"' "$1""#;
    let out = run(env.cmd("sh").arg("-c").arg(script).arg(bin()).arg(&big));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("recorded 150000 messages in 1 connection of s into"),
        "{}",
        text(&out)
    );
}
