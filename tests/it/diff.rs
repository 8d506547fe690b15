//! `mcptape diff`: two versions of a real server (the official Python SDK's low-level
//! server, tests/peers/py_diff_server.py), recorded through the SDK's own client, diffed
//! tape against tape, against the live server over stdio and over Streamable HTTP; every
//! format read back; bad input refused by name.

use std::collections::BTreeSet;
use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::http::HttpServer;
use crate::support::*;

/// The v1/v2 server's command line.
fn server(version: &str) -> Vec<String> {
    vec![
        python(),
        peer("py_diff_server.py"),
        "--version".into(),
        version.into(),
    ]
}

/// Records the Python SDK client (lists everything, calls `lookup`) against `version`.
fn record(env: &Env, session: &str, version: &str) {
    let out = run(env
        .mcptape([
            "record",
            session,
            "--",
            &python(),
            &peer("py_diff_client.py"),
            "--",
        ])
        .args(proxy_argv("py-diff", &server(version))));
    assert!(out.status.success(), "{}", text(&out));
}

fn diff(env: &Env, args: &[&str]) -> Output {
    run(env.mcptape(std::iter::once("diff").chain(args.iter().copied())))
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {}", text(out)))
}

/// The findings as (rule, item, path, class), a set.
fn findings(doc: &Value) -> BTreeSet<(String, String, String, String)> {
    doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or_default().to_owned();
            (s("rule"), s("item"), s("path"), s("class"))
        })
        .collect()
}

/// What v1 → v2 must show: every change the peer makes, with its class.
fn expected() -> BTreeSet<(String, String, String, String)> {
    [
        ("removed", "legacy", "", "breaking"),
        ("added", "search", "", "compatible"),
        (
            "enum-value-removed",
            "lookup",
            "inputSchema.properties.mode.enum",
            "breaking",
        ),
        (
            "property-added",
            "lookup",
            "inputSchema.properties.lang",
            "compatible",
        ),
        ("wording", "lookup", "description", "info"),
        (
            "type-narrowed",
            "note",
            "inputSchema.properties.text.type",
            "breaking",
        ),
        (
            "required-added",
            "note",
            "inputSchema.properties.author",
            "breaking",
        ),
        (
            "property-removed",
            "stats",
            "outputSchema.properties.mean",
            "breaking",
        ),
        (
            "hint-riskier",
            "wipe",
            "annotations.readOnlyHint",
            "breaking",
        ),
        (
            "hint-riskier",
            "wipe",
            "annotations.destructiveHint",
            "breaking",
        ),
        (
            "hint-riskier",
            "wipe",
            "annotations.idempotentHint",
            "breaking",
        ),
        ("removed", "file:///old", "", "breaking"),
        ("added", "file:///new", "", "compatible"),
        (
            "prompt-argument-required",
            "summarize",
            "arguments.style.required",
            "breaking",
        ),
    ]
    .into_iter()
    .map(|(a, b, c, d)| (a.to_owned(), b.to_owned(), c.to_owned(), d.to_owned()))
    .collect()
}

#[test]
fn two_versions_of_a_server_differ_by_the_rules() {
    let env = Env::new();
    record(&env, "v1", "1");
    record(&env, "v2", "2");

    // The server lists its tools in two pages, and the client followed the cursor.
    let pages: Vec<Value> = tape_entries(&env.tape("v1"))
        .into_iter()
        .filter(|e| e["method"] == "tools/list")
        .collect();
    assert_eq!(pages.len(), 2, "{pages:?}");
    assert_eq!(pages[1]["params"]["cursor"], "3");

    let out = diff(&env, &["v1", "v2", "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "no --fail-on: 0 whatever changed; {}",
        text(&out)
    );
    let doc = json_of(&out);
    similar_asserts::assert_eq!(findings(&doc), expected());
    assert_eq!(doc["summary"]["breaking"], 10);
    assert_eq!(doc["summary"]["compatible"], 3);
    assert_eq!(doc["summary"]["info"], 1);
    let mode = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["rule"] == "enum-value-removed");
    assert_eq!(mode.expect("the enum finding")["old"], "full");
    // The one call both made: its answer changed, at its path.
    let calls = doc["calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0]["tool"], "lookup");
    assert_eq!(calls[0]["class"], "changed");
    assert_eq!(calls[0]["differences"][0]["path"], "result.content.0.text");
    assert_eq!(calls[0]["differences"][0]["new"], "v2 result for x");

    // Text: the summary line, then each item with its tagged changes.
    let out = diff(&env, &["v1", "v2"]);
    let shown = stdout(&out);
    assert!(
        shown
            .lines()
            .next()
            .expect("a summary")
            .ends_with("10 breaking, 3 compatible, 1 info; calls: 0 same, 1 changed, 0 unmatched"),
        "{shown}"
    );
    assert!(
        shown.contains("tool `legacy`\n  BREAKING   tool removed (removed)\n"),
        "{shown}"
    );
    assert!(
        shown.contains(
            "  compatible inputSchema.properties.lang: new optional property (property-added)\n"
        ),
        "{shown}"
    );
    assert!(shown.contains("  changed    tools/call lookup"), "{shown}");

    for (fail_on, code) in [("breaking", 1), ("any", 1)] {
        let out = diff(&env, &["v1", "v2", "--fail-on", fail_on]);
        assert_eq!(
            out.status.code(),
            Some(code),
            "--fail-on {fail_on}: {}",
            text(&out)
        );
    }
    // A tape against itself: nothing found, whatever --fail-on says.
    let out = diff(&env, &["v1", "v1", "--fail-on", "any", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc = json_of(&out);
    assert_eq!(doc["findings"], json!([]));
    assert_eq!(doc["calls"][0]["class"], "same");

    // Structure only: the description change is gone, the rest is there; no calls.
    let out = diff(&env, &["v1", "v2", "--structure-only", "--format", "json"]);
    let doc = json_of(&out);
    let mut structural = expected();
    structural.retain(|f| f.0 != "wording");
    similar_asserts::assert_eq!(findings(&doc), structural);
    assert_eq!(doc["calls"], json!([]));
}

/// `diff v1 --format json --fail-on breaking --live -- ARGV`.
fn diff_live(env: &Env, argv: Vec<String>) -> Output {
    let mut args = vec![
        "v1",
        "--format",
        "json",
        "--fail-on",
        "breaking",
        "--live",
        "--",
    ];
    args.extend(argv.iter().map(String::as_str));
    diff(env, &args)
}

#[test]
fn a_live_server_over_stdio_and_over_http_gives_the_same_findings() {
    let env = Env::new();
    record(&env, "v1", "1");
    let out = diff_live(&env, server("2"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    similar_asserts::assert_eq!(findings(&json_of(&out)), expected());

    let mut cmd = Command::new(python());
    cmd.args([
        peer("py_diff_server.py"),
        "--version".into(),
        "2".into(),
        "--http".into(),
    ]);
    let http = HttpServer::launch(cmd, "listening on port ");
    let out = diff(&env, &["v1", "--url", &http.url, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let doc = json_of(&out);
    similar_asserts::assert_eq!(findings(&doc), expected());
    assert_eq!(doc["new"]["label"], http.url.as_str());
    assert_eq!(doc["calls"], json!([]), "nothing is called on a live side");
}

#[test]
fn every_format_reads_back() {
    let env = Env::new();
    record(&env, "v1", "1");
    record(&env, "v2", "2");

    // JUnit, read by Python's XML parser: a testcase per item with a finding and one per
    // call; a failure per item with a breaking change, and for the changed call.
    let xml = env.path("diff.xml");
    let out = diff(
        &env,
        &[
            "v1",
            "v2",
            "--format",
            "junit",
            "--output",
            &xml.display().to_string(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        out.stdout.is_empty(),
        "--output takes the report: {}",
        text(&out)
    );
    let check = "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); \
                 print(len(r.findall('.//testcase')), len(r.findall('.//failure')))";
    let parsed = run(env.cmd(python()).args(["-c", check]).arg(&xml));
    // Items: lookup note stats wipe legacy search file:///old file:///new summarize, + 1 call.
    // Breaking: lookup note stats wipe legacy file:///old summarize, + the changed call.
    assert_eq!(stdout(&parsed).trim(), "10 8", "{}", text(&parsed));

    // GitHub: an ::error per breaking change at the listing's tape line, a ::warning per
    // other change, notices last.
    let out = diff(&env, &["v1", "v2", "--format", "github"]);
    let shown = stdout(&out);
    let lines: Vec<&str> = shown.lines().collect();
    assert!(lines.iter().all(|l| l.starts_with("::")), "{shown}");
    let count = |level: &str| lines.iter().filter(|l| l.starts_with(level)).count();
    assert_eq!(count("::error "), 10, "{shown}");
    assert_eq!(
        count("::warning "),
        5,
        "3 compatible, 1 info, 1 changed call: {shown}"
    );
    assert!(
        lines
            .last()
            .expect("a summary")
            .starts_with("::notice title=mcptape diff::"),
        "{shown}"
    );
    // Named relative to the working directory, as the runner matches files.
    let tape_v1 = env.tape("v1");
    let tape_v1 = tape_v1
        .strip_prefix(env.dir.path())
        .expect("under the temp dir")
        .display()
        .to_string();
    let tools_line = std::fs::read_to_string(env.tape("v1"))
        .expect("tape")
        .lines()
        .position(|l| l.contains("\"tools\":[") && l.contains("\"name\":\"legacy\""))
        .expect("the tools/list page that lists legacy")
        + 1;
    let legacy = lines
        .iter()
        .find(|l| l.contains("title=tool `legacy`"))
        .expect("legacy");
    assert!(
        legacy.starts_with(&format!("::error file={tape_v1},line={tools_line},")),
        "{legacy}"
    );

    // --output never writes through a symlink.
    let link = env.path("link.txt");
    std::os::unix::fs::symlink(env.path("elsewhere.txt"), &link).expect("symlink");
    let out = diff(&env, &["v1", "v2", "--output", &link.display().to_string()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!env.path("elsewhere.txt").exists());
}

/// A tape of one connection of `server` whose `tools/list` answer's result is `result`
/// (raw JSON text), written by hand: the bad inputs a real server would not make.
fn tape_with(env: &Env, name: &str, servers: &[&str], result: &str) -> String {
    let mut text = String::new();
    for (i, s) in servers.iter().enumerate() {
        let meta = |dir: &str| {
            format!(
                r#""_meta":{{"dir":"{dir}","server":"{s}","ts":"2026-12-01T00:00:00.000Z","conn":"c{i}"}}"#
            )
        };
        text.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",{}}}\n",
            meta("send")
        ));
        text.push_str(&format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{result},{}}}\n",
            meta("recv")
        ));
    }
    let path = env.path(name);
    std::fs::write(&path, text).expect("write tape");
    path.display().to_string()
}

#[test]
fn bad_input_is_refused_by_name_and_nothing_crashes() {
    let env = Env::new();
    let ok = r#"{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}"#;
    let a = tape_with(&env, "a.ndjson", &["one"], ok);

    let out = diff(&env, &[&a, "missing-session"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("missing-session"), "{}", text(&out));

    let two = tape_with(&env, "two.ndjson", &["alpha", "beta"], ok);
    let out = diff(&env, &[&two, &a]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("holds several servers (alpha, beta): choose one with --server"),
        "{}",
        text(&out)
    );
    let out = diff(&env, &[&two, &two, "--server", "beta", "--fail-on", "any"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = diff(&env, &[&two, &two, "--server", "gamma"]);
    assert!(
        stderr(&out).contains("no connection of server `gamma`; it holds: alpha, beta"),
        "{}",
        text(&out)
    );

    let not_object = tape_with(&env, "bad.ndjson", &["one"], r#"[1,2]"#);
    let out = diff(&env, &[&a, &not_object]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("the `tools/list` answer of tape")
            && stderr(&out).contains("at line 2 has a result that is not an object"),
        "{}",
        text(&out)
    );
    let not_array = tape_with(&env, "bad2.ndjson", &["one"], r#"{"tools":{"t":1}}"#);
    let out = diff(&env, &[&a, &not_array]);
    assert!(
        stderr(&out).contains("has a `tools` that is not an array"),
        "{}",
        text(&out)
    );

    // A schema nested 10,000 deep on both sides, differing at the bottom: one finding
    // that says so, classed breaking; the same deep schema against itself: none.
    let deep = |leaf: &str| {
        let depth = 10_000;
        let schema = format!(
            "{}{leaf}{}",
            r#"{"items":"#.repeat(depth),
            "}".repeat(depth)
        );
        format!(r#"{{"tools":[{{"name":"deep","inputSchema":{schema}}}]}}"#)
    };
    let d1 = tape_with(&env, "d1.ndjson", &["one"], &deep(r#"{"type":"string"}"#));
    let d2 = tape_with(&env, "d2.ndjson", &["one"], &deep(r#"{"type":"integer"}"#));
    let out = diff(
        &env,
        &[&d1, &d2, "--format", "json", "--fail-on", "breaking"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let doc = json_of(&out);
    let rules: Vec<&str> = doc["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["rule"].as_str())
        .collect();
    assert_eq!(rules, ["too-deep"], "{doc:#}");
    let out = diff(&env, &[&d1, &d1, "--fail-on", "any"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = diff(&env, &[&d1, &d2]);
    assert!(
        stdout(&out).contains("too deep to compare"),
        "{}",
        text(&out)
    );

    // A side that never listed prompts says so; it is no removal and no change.
    let meta = |dir: &str| {
        format!(
            r#""_meta":{{"dir":"{dir}","server":"one","ts":"2026-12-01T00:00:00.000Z","conn":"c0"}}"#
        )
    };
    let mut listed = std::fs::read_to_string(&a).expect("tape");
    listed.push_str(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/list\",{}}}\n",
        meta("send")
    ));
    listed.push_str(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{{\"prompts\":[{{\"name\":\"p\"}}]}},{}}}\n",
        meta("recv")
    ));
    let p = env.path("p.ndjson");
    std::fs::write(&p, listed).expect("write tape");
    let out = diff(&env, &[&p.display().to_string(), &a, "--fail-on", "any"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        stdout(&out).contains(&format!("{a} never listed prompts: those of ")),
        "{}",
        text(&out)
    );
}

#[test]
fn what_a_tape_says_is_escaped_in_every_format() {
    let env = Env::new();
    let hostile = |d: &str| {
        format!(
            r#"{{"tools":[{{"name":"x\u001b]0;owned\u0007\u202e","description":"{d}","inputSchema":{{"type":"object"}}}}]}}"#
        )
    };
    let a = tape_with(
        &env,
        "a.ndjson",
        &["one"],
        &hostile("</failure><x>\\u009b2J"),
    );
    let b = tape_with(
        &env,
        "b.ndjson",
        &["one"],
        &hostile("\\r\\nforged line\\u001b[2J"),
    );
    let raw = |bytes: &[u8]| {
        let s = String::from_utf8_lossy(bytes).into_owned();
        s.chars()
            .any(|c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
    };
    for format in ["text", "json", "junit", "github"] {
        let out = diff(&env, &[&a, &b, "--format", format, "--color", "never"]);
        assert!(out.status.success(), "{format}: {}", text(&out));
        assert!(
            !raw(&out.stdout),
            "{format} printed a raw control: {}",
            text(&out)
        );
        assert!(
            !stdout(&out).contains("\nforged line"),
            "{format}: {}",
            text(&out)
        );
    }
    let xml = env.path("x.xml");
    let out = diff(
        &env,
        &[
            &a,
            &b,
            "--format",
            "junit",
            "--output",
            &xml.display().to_string(),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let check = "import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); \
                 print(len(r.findall('.//testcase')), len(r.findall('.//x')))";
    let parsed = run(env.cmd(python()).args(["-c", check]).arg(&xml));
    assert_eq!(stdout(&parsed).trim(), "1 0", "{}", text(&parsed));
}

#[test]
fn a_live_release_whose_tools_list_fails_breaks_every_tool() {
    let env = Env::new();
    record(&env, "v1", "1");
    let mut argv = server("1");
    argv.push("--broken-list".into());
    let out = diff_live(&env, argv);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("declares `tools` but answered tools/list with error -32603"),
        "{}",
        text(&out)
    );
    let removed: Vec<String> = findings(&json_of(&out))
        .into_iter()
        .filter(|(rule, _, _, class)| rule == "removed" && class == "breaking")
        .map(|(_, item, _, _)| item)
        .collect();
    for tool in ["lookup", "wipe", "legacy"] {
        assert!(removed.iter().any(|i| i == tool), "{removed:?}");
    }
}
