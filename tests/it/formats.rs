//! Output formats for CI: `--format github` (workflow commands) for `verify`, `replay`
//! and `redact --check`, and `redact --check --format json`.

use std::path::Path;

use serde_json::Value;

use crate::colour::echo_tape;
use crate::support::*;

/// Every annotation is one line with no control character in it.
fn assert_one_line_each(text: &str) {
    for line in text.lines() {
        assert!(
            !line
                .chars()
                .any(|c| c.is_control() || ('\u{80}'..='\u{9f}').contains(&c)),
            "a control in {line:?}"
        );
    }
}

#[test]
fn verify_github_annotates_each_changed_call_at_its_tape_line() {
    let env = Env::new();
    // A tape whose path needs escaping as a property, and an answer as a message:
    // `%`, a raw C1 control (serde_json writes it raw), and a diff on its own line.
    let tape = env.path("tapes/a:b,c.ndjson");
    echo_tape(&tape, "old 50%\u{9b}31m");
    let verify = |args: &[&str]| {
        run(env
            .mcptape(["verify", "tapes/a:b,c.ndjson", "--format", "github"])
            .args(args)
            .arg("--")
            .arg(example_server()))
    };
    let out = verify(&["--allow-writes"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    similar_asserts::assert_eq!(
        stdout(&out),
        "::error file=tapes/a%3Ab%2Cc.ndjson,line=5,title=mcptape verify%3A changed::\
         tools/call echo (connection `c-1`): changed%0A\
         result.content.0.text: \"old 50%25\\u{9b}31m\" → \"Echo: hi\"\n\
         ::notice file=tapes/a%3Ab%2Cc.ndjson,title=mcptape verify::0 same, 1 changed\n"
    );

    // Without --allow-writes the call is skipped: a warning at its line, exit 0.
    let out = verify(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = stdout(&out);
    let lines: Vec<&str> = report.lines().collect();
    // The skip, the warning that nothing was compared, and the counts, last.
    assert_eq!(lines.len(), 3, "{report}");
    assert!(
        lines[1].starts_with(
            "::warning title=mcptape verify%3A nothing compared::nothing was compared: "
        ),
        "{report}"
    );
    assert!(
        lines[0].starts_with(
            "::warning file=tapes/a%3Ab%2Cc.ndjson,line=5,title=mcptape verify%3A skipped::\
             tools/call echo (connection `c-1`): skipped: "
        ),
        "{report}"
    );
    assert_eq!(
        lines[2],
        "::notice file=tapes/a%3Ab%2Cc.ndjson,title=mcptape verify::0 same, 0 changed, 1 skipped"
    );
    assert_one_line_each(&report);

    // The same answer: only the summary.
    echo_tape(&tape, "Echo: hi");
    let out = verify(&["--allow-writes"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        stdout(&out),
        "::notice file=tapes/a%3Ab%2Cc.ndjson,title=mcptape verify::1 same, 0 changed\n"
    );
}

/// `mcptape replay s --format github -- mcptape call example.echo message:MESSAGE`.
fn replay_call(env: &Env, message: &str) -> std::process::Output {
    run(env
        .mcptape(["replay", "s", "--format", "github", "--"])
        .arg(bin())
        .args(["call", "example.echo", &format!("message:{message}")]))
}

#[test]
fn replay_github_annotates_after_the_command_on_stdout() {
    let env = Env::new();
    echo_tape(&env.tape("s"), "Echo: hi");
    let file = "home/.mcptape/recordings/s.ndjson";

    // A pass: CMD's own output, then one notice.
    let out = replay_call(&env, "hi");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "Echo: hi\n::notice file={file},title=mcptape replay::1 connection replayed as recorded\n"
        )
    );
    assert!(stderr(&out).contains("mcptape: ok "), "{}", text(&out));

    // A divergence: an error at the expected entry's line, the whole account in it; the
    // text report stays on stderr.
    let out = replay_call(&env, "something else\r\n%");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let report = stdout(&out);
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines.len(), 1, "{report}");
    similar_asserts::assert_eq!(
        lines[0],
        format!(
            "::error file={file},line=5,title=mcptape replay%3A DIVERGED::server `example` connection `c-1`: \
             2 client messages matched, 1 recorded answer given\
             %0A  expected tools/call #1 echo {{\"message\":\"hi\"}} (tape line 5)\
             %0A  got      tools/call #1 echo {{\"message\":\"something else\\r\\n%25\"}}\
             %0A  --- expected (tape line 5)%0A  +++ got%0A  @@ -3,7 +3,7 @@\
             %0A     \"params\": {{%0A       \"name\": \"echo\",%0A       \"arguments\": {{\
             %0A  -      \"message\": \"hi\"\
             %0A  +      \"message\": \"something else\\r\\n%25\"\
             %0A       }}%0A     }}%0A   }}"
        )
    );
    assert_one_line_each(&report);
    assert!(stderr(&out).contains("mcptape: DIVERGED server `example`"));

    // A recorded connection nobody used.
    let out = run(&mut env.mcptape(["replay", "s", "--format", "github", "--", "true"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "::error file={file},line=1,title=mcptape replay%3A UNUSED::server `example` connection `c-1` (from tape line 1) was never replayed: no client connected for it\n"
        )
    );

    // The default text format writes nothing to stdout of its own.
    let out = run(&mut env.mcptape(["replay", "s", "--", "true"]));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(out.stdout.is_empty(), "{}", text(&out));
}

/// A tape with a credential at line 5 and a possible secret (a random token) at line 6.
fn dirty_tape(path: &Path) {
    echo_tape(path, "deploy with Xk9mQ2vL7pR4tW8zN3bC6dF1hJ5sA0eY");
    let tape = std::fs::read_to_string(path).expect("tape");
    let tape = tape.replace(
        "\"arguments\":{\"message\":\"hi\"}",
        "\"arguments\":{\"message\":\"hi\",\"apiKey\":\"abc123abc123abc123\"}",
    );
    std::fs::write(path, tape).expect("write");
}

#[test]
fn redact_check_github_annotates_each_finding_at_file_and_line() {
    let env = Env::new();
    dirty_tape(&env.path("tapes/r.ndjson"));
    let check = |args: &[&str]| {
        run(env
            .mcptape(["redact", "--check", "--format", "github", "tapes/r.ndjson"])
            .args(args))
    };
    let error = "::error file=tapes/r.ndjson,line=5,title=mcptape redact%3A credential name::\
        `params.arguments.apiKey` still looks like a secret (credential name): `mcptape redact` rewrites it\n";
    let possible = "file=tapes/r.ndjson,line=6,title=mcptape redact%3A possible secret::\
        `result.content[0].text` holds a possible secret (a high-entropy token): review it\n";
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(stdout(&out), format!("{error}::warning {possible}"));
    assert!(stderr(&out).contains("still look"), "{}", text(&out));
    let out = check(&["--strict"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(stdout(&out), format!("{error}::error {possible}"));

    // A possible secret alone: a warning, exit 0 (1 with --strict).
    echo_tape(
        &env.path("tapes/r.ndjson"),
        "deploy with Xk9mQ2vL7pR4tW8zN3bC6dF1hJ5sA0eY",
    );
    let out = check(&[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(stdout(&out), format!("::warning {possible}"));
    assert_eq!(check(&["--strict"]).status.code(), Some(1));
}

#[test]
fn redact_check_json_is_one_document_matching_the_text_findings() {
    let env = Env::new();
    dirty_tape(&env.path("dirty.ndjson"));
    echo_tape(&env.path("clean.ndjson"), "Echo: hi");
    let check = |format: &str, tapes: &[&str]| {
        run(env
            .mcptape(["redact", "--check", "--format", format])
            .args(tapes))
    };
    let tapes = ["./dirty.ndjson", "./clean.ndjson"];
    let plain = check("text", &tapes);
    let out = check("json", &tapes);
    assert_eq!(out.status.code(), plain.status.code(), "{}", text(&out));
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    let findings = doc["findings"].as_array().expect("findings");
    let as_text: Vec<String> = findings
        .iter()
        .map(|f| {
            format!(
                "{}:{}: {} ({})",
                f["file"].as_str().expect("file"),
                f["line"],
                f["path"].as_str().expect("path"),
                f["rule"].as_str().expect("rule")
            )
        })
        .collect();
    let text_lines: Vec<String> = stdout(&plain).lines().map(str::to_owned).collect();
    assert_eq!(as_text, text_lines);
    assert_eq!(findings.len(), 2);
    assert_eq!(findings[0]["line"], 5);
    assert_eq!(findings[0]["path"], "params.arguments.apiKey");
    assert_eq!(findings[0]["rule"], "credential name");
    assert_eq!(findings[0]["possible"], false);
    assert_eq!(findings[1]["possible"], true);
    assert_eq!(
        doc["summary"],
        serde_json::json!({"tapes": 2, "secrets": 1, "possible": 1, "strict": false, "clean": false})
    );

    let out = check("json", &["./clean.ndjson"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(doc["findings"], serde_json::json!([]));
    assert_eq!(doc["summary"]["clean"], true);

    // --format is --check's.
    let out = run(&mut env.mcptape(["redact", "--format", "json", "./clean.ndjson"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
}
