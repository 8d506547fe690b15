//! Review fixes of issue 14 (set C): a non-UTF-8 environment, the `--no-redact` warning
//! under `replay`, credentials in `servers`, a shell-safe `--` hint (also after a global
//! flag), and clap's errors that quote control characters.

use std::os::unix::ffi::OsStrExt;

use crate::support::*;

/// A value no UTF-8 string holds.
fn not_utf8() -> &'static std::ffi::OsStr {
    std::ffi::OsStr::from_bytes(b"\xff")
}

#[test]
fn a_non_utf8_environment_variable_is_ignored_unless_it_is_ours() {
    let env = Env::new();
    let mut cmd = env.mcptape(["list"]);
    cmd.env("UNRELATED", not_utf8());
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!stderr(&out).contains("panicked"), "{}", text(&out));

    let mut cmd = env.mcptape(["list"]);
    cmd.env("MCPTAPE_RECORD", not_utf8());
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(!err.contains("panicked"), "{err}");
    assert!(
        err.contains("environment variable `MCPTAPE_RECORD` is not valid UTF-8"),
        "{err}"
    );

    // One clap reads as a flag's value is named too, not only "invalid UTF-8".
    let mut cmd = env.mcptape(["replay", "demo", "--", "true"]);
    cmd.env("MCPTAPE_MATCH_META", not_utf8());
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("environment variable `MCPTAPE_MATCH_META` is not valid UTF-8"),
        "{err}"
    );
}

/// `sh -c` that runs a proxy of the example server recording into `session`, with no
/// client (its stdin is empty).
fn proxy_recording(session: &str) -> String {
    format!(
        "exec '{}' proxy --server example --record {session} -- '{}' </dev/null",
        bin().display(),
        example_server()
    )
}

#[test]
fn no_redact_under_replay_still_warns_for_the_tape_it_records() {
    let env = Env::new();
    let proxy = format!(
        "exec '{}' proxy --server example -- '{}' </dev/null",
        bin().display(),
        example_server()
    );
    let out = run(env.mcptape(["record", "demo", "--", "sh", "-c", &proxy]));
    assert!(out.status.success(), "{}", text(&out));

    // `replay` gives its report directory too, and never warned of anything.
    let mut cmd = env.mcptape(["replay", "demo", "--", "sh", "-c", &proxy_recording("nr3")]);
    cmd.env("MCPTAPE_NO_REDACT", "1");
    let out = run(cmd);
    let err = stderr(&out);
    assert_eq!(err.matches("without redaction").count(), 1, "{err}");
    assert!(
        err.contains(&format!(
            "recording into `{}` without redaction (MCPTAPE_NO_REDACT is set)",
            env.tape("nr3").display()
        )),
        "{err}"
    );

    // A `record` parent warned for its own tape only: a proxy recording elsewhere says so.
    let mut cmd = env.mcptape(["record", "outer", "--no-redact", "--"]);
    cmd.args(["sh", "-c", &proxy_recording("inner")]);
    let out = run(cmd);
    let err = stderr(&out);
    assert_eq!(err.matches("without redaction").count(), 2, "{err}");
    assert!(
        err.contains(&format!(
            "`{}` without redaction",
            env.tape("inner").display()
        )),
        "{err}"
    );
}

#[test]
fn servers_redacts_credentials_in_args_and_urls_in_the_table_and_json() {
    let env = Env::new();
    let key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH";
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let literal = "mysecretliteral99";
    let config = serde_json::json!({"mcpServers": {
        "a": {"command": "npx", "args": [
            "srv", "--api-key", key, &format!("--token={token}"), "--plain", literal,
        ]},
        "b": {"url": "https://user:hunter2@example.com/mcp?api_key=abc123def456&x=1"},
    }});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("config");
    let secrets = [key, token, literal, "hunter2", "abc123def456"];
    for json in [false, true] {
        let mut cmd = env.mcptape(["servers"]);
        if json {
            cmd.arg("--json");
        }
        cmd.env("MCPTAPE_REDACT", "LIT").env("LIT", literal);
        // About recording, not about showing a config.
        cmd.env("MCPTAPE_NO_REDACT", "1");
        let out = run(cmd);
        assert!(out.status.success(), "{}", text(&out));
        let shown = String::from_utf8_lossy(&out.stdout).into_owned();
        for s in secrets {
            assert!(!shown.contains(s), "{s} shown:\n{shown}");
        }
        assert!(shown.contains("--api-key"), "{shown}");
        assert!(shown.contains("--token=[REDACTED]"), "{shown}");
        assert!(
            shown.contains("example.com/mcp?api_key=[REDACTED]&x=1"),
            "{shown}"
        );
        if json {
            let doc: serde_json::Value = serde_json::from_str(&shown).expect("json");
            let a = &doc["servers"][0];
            assert_eq!(a["command"], "npx");
            assert_eq!(a["args"][2], "[REDACTED]", "{a}");
            assert_eq!(a["args"][5], "[REDACTED]", "{a}");
        }
    }
}

/// The corrected line of the `--` hint in `err`.
fn corrected(err: &str) -> String {
    let marker = "put `--` before the command it runs: `";
    let at = err.find(marker).unwrap_or_else(|| panic!("no hint: {err}")) + marker.len();
    let rest = &err[at..];
    rest[..rest.rfind('`').expect("closing backtick")].to_owned()
}

/// The words a POSIX shell reads from `line`.
fn shell_reads(env: &Env, line: &str) -> Vec<String> {
    let script = format!("set -- {line}; printf '%s\\n' \"$@\"");
    let out = run(env.cmd("sh").args(["-c", &script]));
    assert!(out.status.success(), "{}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn the_dashdash_hint_reads_back_word_for_word_in_a_shell() {
    let env = Env::new();
    let words = ["python", "-c", "a;b", "$HOME", "it's", "a b"];
    let out = run(env.mcptape(["record", "demo"]).args(words));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let line = corrected(&stderr(&out));
    assert!(
        line.starts_with("mcptape record demo -- python -c "),
        "{line}"
    );
    let mut expected = vec!["mcptape", "record", "demo", "--"];
    expected.extend(words);
    assert_eq!(shell_reads(&env, &line), expected, "{line}");

    // record's hint to start afresh quotes the session as well.
    let tape = env.tape("a;b");
    std::fs::create_dir_all(tape.parent().expect("dir")).expect("recordings");
    std::fs::write(&tape, "x\n").expect("tape");
    let out = run(env.mcptape(["record", "a;b"]));
    assert!(out.status.success(), "{}", text(&out));
    let err = stderr(&out);
    assert!(err.contains("run `mcptape record 'a;b' -- CMD`"), "{err}");
}

#[test]
fn the_dashdash_hint_comes_after_a_global_flag_too() {
    let env = Env::new();
    for (flag, line) in [
        (
            &["--color", "never"][..],
            "mcptape --color never record demo -- python agent.py",
        ),
        (
            &["--color=never"][..],
            "mcptape --color=never record demo -- python agent.py",
        ),
    ] {
        let out = run(env
            .mcptape(flag)
            .args(["record", "demo", "python", "agent.py"]));
        assert_eq!(out.status.code(), Some(2), "{}", text(&out));
        assert_eq!(corrected(&stderr(&out)), line);
    }
}

/// True when every ESC of `text` starts an SGR sequence (`ESC [` digits and `;`, `m`).
fn only_sgr(text: &str) -> bool {
    text.match_indices('\u{1b}').all(|(at, _)| {
        let rest = &text[at + 1..];
        rest.strip_prefix('[').is_some_and(|r| {
            let params = r.find(|c: char| !c.is_ascii_digit() && c != ';');
            params.is_some_and(|n| r[n..].starts_with('m'))
        })
    })
}

#[test]
fn clap_errors_quote_no_raw_control_or_bidi_character() {
    let env = Env::new();
    for arg in [
        "--x\u{1b}[2J",
        "--x\u{1b}[31m",
        "--x\u{202e}",
        "--x\u{9b}2J",
    ] {
        for colour in ["always", "never"] {
            let out = run(env.mcptape(["--color", colour, "verify", arg]));
            assert_eq!(out.status.code(), Some(2), "{}", text(&out));
            let err = stderr(&out);
            assert!(err.contains("unexpected argument"), "{err:?}");
            assert!(only_sgr(&err), "{arg:?} {colour}: {err:?}");
            assert!(!err.contains("--x\u{1b}"), "{arg:?} {colour}: {err:?}");
            assert!(!err.contains(['\u{202e}', '\u{9b}']), "{arg:?}: {err:?}");
            if colour == "always" {
                assert!(err.contains("\u{1b}[31m"), "keeps its colour: {err:?}");
            } else {
                assert!(!err.contains('\u{1b}'), "{err:?}");
            }
        }
    }
}
