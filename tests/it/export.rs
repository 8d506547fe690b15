//! `mcptape export`: real recordings (server-everything over stdio and over the HTTP
//! front, a gated and a faulted session) written as HAR 1.2 and validated against the
//! HAR 1.2 JSON schemas (tests/fixtures/har, with Python jsonschema), as OTLP/JSON
//! parsed into opentelemetry-proto's `ExportTraceServiceRequest`, and as JSON lines read
//! back line by line; each validator shown to reject a broken copy.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::check::{everything, faulty, gated};
use crate::http::{Front, HttpServer};
use crate::support::*;

fn export(env: &Env, tape: &Path, format: &str) -> String {
    let out = run(env.mcptape(["export", &tape.display().to_string(), "--format", format]));
    assert!(out.status.success(), "{}", text(&out));
    stdout(&out)
}

fn har_schemas() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/har")
        .display()
        .to_string()
}

/// Runs a validator of tests/peers on `doc` (written to a file): its summary on
/// success, or its stderr on failure.
fn validate(env: &Env, script: &str, doc: &Value, name: &str) -> Result<Value, String> {
    let file = env.path(name);
    std::fs::write(
        &file,
        serde_json::to_string(doc).expect("the shape this test expects"),
    )
    .expect("the shape this test expects");
    let mut cmd = env.cmd(python());
    cmd.arg(peer(script));
    if script == "validate_har.py" {
        cmd.arg(har_schemas());
    }
    let out = run(cmd.arg(&file));
    match out.status.code() {
        Some(0) => {
            // The figures the closing note quotes (`--nocapture`).
            let summary: Value =
                serde_json::from_slice(&out.stdout).expect("the validator's summary");
            match summary["spans"].as_array() {
                Some(spans) => eprintln!(
                    "{script} {name}: {} resourceSpans, {} spans parsed",
                    summary["resourceSpans"],
                    spans.len()
                ),
                None => eprintln!("{script} {name}: {summary}"),
            }
            Ok(summary)
        }
        Some(1) => Err(stderr(&out)),
        _ => panic!("the validator crashed: {}", text(&out)),
    }
}

/// The HTTP front recording server-everything over Streamable HTTP (the Python SDK
/// client's `replayable` scenario, to the front's URL).
/// The first HAR entry whose posted body contains `needle`.
fn posted<'a>(entries: &'a [Value], needle: &str) -> Option<&'a Value> {
    entries.iter().find(|e| {
        e["request"]["postData"]["text"]
            .as_str()
            .is_some_and(|t| t.contains(needle))
    })
}

fn http_tape(env: &Env) -> PathBuf {
    let tape = env.path("front.ndjson");
    let server = HttpServer::start();
    let front = Front::start(
        env,
        &[
            "--url",
            &server.url,
            "--record",
            &tape.display().to_string(),
        ],
    );
    let mut client = env.cmd(python());
    client.args([
        peer("py_client.py"),
        "replayable".into(),
        "--".into(),
        front.url.clone(),
    ]);
    let out = run(client);
    assert!(out.status.success(), "{}", text(&out));
    assert!(front.stop().success());
    tape
}

#[test]
fn har_of_stdio_and_http_tapes_is_valid_har_1_2() {
    let env = Env::new();
    let stdio = everything(&env);
    let doc: Value = serde_json::from_str(&export(&env, &stdio, "har")).expect("HAR is JSON");
    let summary = validate(&env, "validate_har.py", &doc, "stdio.har").expect("valid HAR 1.2");
    // One entry per exchange and one per notification, either way.
    let entries = tape_entries(&stdio);
    let answers = entries.iter().filter(|e| e.get("method").is_none()).count();
    let messages = entries
        .iter()
        .filter(|e| e["_meta"]["dir"] != "lifecycle")
        .count();
    assert_eq!(
        summary["entries"]
            .as_u64()
            .expect("the shape this test expects") as usize,
        messages - answers,
        "{summary}"
    );
    assert_eq!(summary["pages"], 1);
    let log = &doc["log"];
    assert_eq!(log["version"], "1.2");
    assert_eq!(log["creator"]["name"], "mcptape");
    let entries = log["entries"].as_array().expect("entries");
    let call = posted(entries, "hello replay").expect("the echo call");
    assert_eq!(call["request"]["url"], "stdio://everything/tools/call");
    assert_eq!(call["response"]["status"], 200);
    assert!(
        call["response"]["content"]["text"]
            .as_str()
            .expect("the shape this test expects")
            .contains("Echo: hello replay")
    );
    assert_eq!(call["time"], call["timings"]["wait"]);
    let sampling = log["entries"]
        .as_array()
        .expect("the shape this test expects")
        .iter()
        .find(|e| e["request"]["url"] == "stdio://everything/sampling/createMessage")
        .expect("the server's sampling request");
    assert!(
        sampling["comment"]
            .as_str()
            .expect("the shape this test expects")
            .starts_with("server → client request")
    );

    // A broken copy is refused: the validator can fail.
    let mut broken = doc.clone();
    broken["log"]["entries"][0]
        .as_object_mut()
        .expect("the shape this test expects")
        .remove("startedDateTime");
    broken["log"]["entries"][1]["response"]["status"] = Value::from("200");
    let err = validate(&env, "validate_har.py", &broken, "broken.har").expect_err("invalid HAR");
    assert!(
        err.contains("'startedDateTime' is a required property"),
        "{err}"
    );
    assert!(err.contains("is not of type 'integer'"), "{err}");

    let http = http_tape(&env);
    // The same tape as OTLP: Streamable HTTP spans with the server's address.
    let otlp: Value = serde_json::from_str(&export(&env, &http, "otlp")).expect("OTLP is JSON");
    let parsed = validate(&env, "validate_otlp.py", &otlp, "http.json").expect("a valid request");
    let spans = parsed["spans"].as_array().expect("spans");
    assert!(spans.len() >= 9, "{parsed:#}");
    for s in spans {
        assert_eq!(s["attributes"]["network.transport"], "tcp");
        assert_eq!(s["attributes"]["network.protocol.name"], "http");
        assert_eq!(s["attributes"]["server.address"], "127.0.0.1");
    }
    let doc: Value = serde_json::from_str(&export(&env, &http, "har")).expect("HAR is JSON");
    let summary = validate(&env, "validate_har.py", &doc, "http.har").expect("valid HAR 1.2");
    assert!(
        summary["entries"]
            .as_u64()
            .expect("the shape this test expects")
            >= 8,
        "{summary}"
    );
    let entries = doc["log"]["entries"]
        .as_array()
        .expect("the shape this test expects");
    let init = &entries[0];
    assert_eq!(init["request"]["method"], "POST");
    assert!(
        init["request"]["url"]
            .as_str()
            .expect("the shape this test expects")
            .starts_with("http://127.0.0.1:")
    );
    let header = |e: &Value, name: &str| {
        e["request"]["headers"]
            .as_array()
            .expect("the shape this test expects")
            .iter()
            .find(|h| h["name"] == name)
            .map(|h| {
                h["value"]
                    .as_str()
                    .expect("the shape this test expects")
                    .to_owned()
            })
    };
    assert_eq!(
        header(init, "Content-Type").as_deref(),
        Some("application/json")
    );
    assert_eq!(
        header(init, "Mcp-Session-Id"),
        None,
        "no session before initialize"
    );
    let later = posted(entries, "hello replay").expect("the echo call");
    assert_eq!(
        header(later, "Mcp-Session-Id").as_deref(),
        Some("[REDACTED]")
    );
    assert!(header(later, "MCP-Protocol-Version").is_some(), "{later:#}");
    // The notification after initialize is accepted with an empty body.
    assert!(entries.iter().any(|e| {
        e["response"]["status"] == 202
            && e["request"]["postData"]["text"]
                .as_str()
                .expect("the shape this test expects")
                .contains("notifications/initialized")
    }));
    // The progress notifications came on the long call's event stream.
    let long = posted(entries, "trigger-long-running-operation").expect("the long call");
    assert_eq!(
        long["response"]["content"]["mimeType"], "text/event-stream",
        "{long:#}"
    );
    assert_eq!(
        long["response"]["content"]["text"]
            .as_str()
            .expect("the shape this test expects")
            .matches("event: message")
            .count(),
        4,
        "three progress notifications and the answer: {long:#}"
    );
}

#[test]
fn otlp_parses_into_the_official_protobuf_types() {
    let env = Env::new();
    let tape = everything(&env);
    let doc: Value = serde_json::from_str(&export(&env, &tape, "otlp")).expect("OTLP is JSON");
    let parsed = validate(&env, "validate_otlp.py", &doc, "ev.json").expect("a valid request");
    assert_eq!(parsed["resourceSpans"], 1);
    let spans = parsed["spans"]
        .as_array()
        .expect("the shape this test expects");
    let requests = tape_entries(&tape)
        .iter()
        .filter(|e| {
            e["_meta"]["dir"] != "lifecycle" && e.get("method").is_some() && e.get("id").is_some()
        })
        .count();
    assert_eq!(spans.len(), requests + 1, "a root span and one per request");
    let root = &spans[0];
    assert_eq!(root["parentSpanId"], "");
    assert_eq!(root["attributes"]["network.transport"], "pipe");
    assert_eq!(root["service"], "everything");
    for s in &spans[1..] {
        assert_eq!(s["traceId"], root["traceId"]);
        assert_eq!(s["parentSpanId"], root["spanId"]);
        assert_eq!(s["kind"], 3, "SPAN_KIND_CLIENT");
        assert!(s["end"].as_u64() >= s["start"].as_u64());
        assert!(
            s["start"].as_u64() >= root["start"].as_u64()
                && s["end"].as_u64() <= root["end"].as_u64()
        );
        assert_eq!(
            s["attributes"]["mcp.protocol.version"].is_string(),
            s["name"] != "initialize"
        );
    }
    let by_name = |n: &str| {
        spans
            .iter()
            .find(|s| s["name"] == n)
            .unwrap_or_else(|| panic!("no span `{n}`: {spans:?}"))
    };
    let echo = by_name("tools/call echo");
    assert_eq!(echo["attributes"]["gen_ai.tool.name"], "echo");
    assert_eq!(echo["attributes"]["gen_ai.operation.name"], "execute_tool");
    assert_eq!(echo["attributes"]["mcp.method.name"], "tools/call");
    assert_eq!(echo["attributes"]["jsonrpc.request.id"], "2");
    assert_eq!(echo["status"], 0, "unset");
    let bad = by_name("tools/call get-sum");
    assert_eq!(bad["status"], 2, "STATUS_CODE_ERROR");
    assert_eq!(bad["attributes"]["error.type"], "tool_error");
    let long = by_name("tools/call trigger-long-running-operation");
    assert_eq!(
        long["events"],
        serde_json::json!([
            "notifications/progress",
            "notifications/progress",
            "notifications/progress"
        ])
    );
    assert!(
        long["end"].as_u64().expect("the shape this test expects")
            - long["start"].as_u64().expect("the shape this test expects")
            >= 300_000_000
    );
    assert!(
        by_name("sampling/createMessage")["attributes"]["mcptape.direction"] == "server-to-client"
    );
    assert!(
        root["events"]
            .as_array()
            .expect("the shape this test expects")
            .iter()
            .any(|e| e == "$transport/close")
    );
    // The same tape exports the same ids.
    assert_eq!(
        serde_json::from_str::<Value>(&export(&env, &tape, "otlp"))
            .expect("the shape this test expects"),
        doc
    );

    // Broken copies are refused: an id that is not hex, a field the proto lacks.
    let mut bad_id = doc.clone();
    bad_id["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["spanId"] = Value::from("zz");
    let err = validate(&env, "validate_otlp.py", &bad_id, "bad-id.json").expect_err("a bad id");
    assert!(err.contains("spanId"), "{err}");
    let mut unknown = doc.clone();
    unknown["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["kindd"] = Value::from(3);
    let err =
        validate(&env, "validate_otlp.py", &unknown, "unknown.json").expect_err("unknown field");
    assert!(err.contains("kindd"), "{err}");
}

#[test]
fn otlp_marks_policy_refusals_and_faults_as_errors() {
    let env = Env::new();
    let gated = gated(&env);
    let doc: Value =
        serde_json::from_str(&export(&env, &gated, "otlp")).expect("the shape this test expects");
    let parsed = validate(&env, "validate_otlp.py", &doc, "gated.json").expect("valid");
    let spans = parsed["spans"]
        .as_array()
        .expect("the shape this test expects");
    let delete = spans
        .iter()
        .find(|s| s["name"] == "tools/call delete_file")
        .expect("the denied call");
    assert_eq!(delete["status"], 2);
    assert_eq!(delete["attributes"]["mcptape.policy.resolution"], "refused");
    assert_eq!(delete["events"], serde_json::json!(["$policy/decision"]));

    let faulty = faulty(&env);
    let doc: Value =
        serde_json::from_str(&export(&env, &faulty, "otlp")).expect("the shape this test expects");
    let parsed = validate(&env, "validate_otlp.py", &doc, "faulty.json").expect("valid");
    let faulted: Vec<&Value> = parsed["spans"]
        .as_array()
        .expect("the shape this test expects")
        .iter()
        .filter(|s| s["attributes"]["mcptape.status"] == "fault")
        .collect();
    assert_eq!(faulted.len(), 2, "{parsed:#}");
    for s in faulted {
        assert_eq!(s["status"], 2);
        assert_eq!(s["events"], serde_json::json!(["$fault"]));
    }
    // And as HAR: still valid.
    for (tape, name) in [(&gated, "gated.har"), (&faulty, "faulty.har")] {
        let doc: Value =
            serde_json::from_str(&export(&env, tape, "har")).expect("the shape this test expects");
        validate(&env, "validate_har.py", &doc, name).expect("valid HAR 1.2");
    }
}

#[test]
fn jsonl_has_every_entry_and_reads_line_by_line() {
    let env = Env::new();
    let tape = everything(&env);
    let out = export(&env, &tape, "jsonl");
    let file = env.path("ev.jsonl");
    std::fs::write(&file, &out).expect("the shape this test expects");
    // Python reads each line with json.loads.
    let read = run(env.cmd(python()).args([
        "-c",
        "import json, sys\nrows = [json.loads(l) for l in open(sys.argv[1], encoding='utf-8')]\nprint(len(rows), sorted({r['dir'] for r in rows}))",
        &file.display().to_string(),
    ]));
    assert!(read.status.success(), "{}", text(&read));
    let entries = tape_entries(&tape);
    assert_eq!(
        stdout(&read).trim(),
        format!("{} ['lifecycle', 'recv', 'send']", entries.len())
    );
    for (row, entry) in out.lines().zip(&entries) {
        let row: Value = serde_json::from_str(row).expect("the shape this test expects");
        let mut message = entry.clone();
        let meta = message
            .as_object_mut()
            .expect("the shape this test expects")
            .remove("_meta")
            .expect("the shape this test expects");
        assert_eq!(row["message"], message, "the message, _meta split out");
        assert_eq!(row["dir"], meta["dir"]);
        assert_eq!(row["conn"], meta["conn"]);
        assert_eq!(row["ts"], meta["ts"]);
        assert_eq!(row["server"], "everything");
    }

    // A message nested far too deep is exported, not crashed on.
    let deep = env.path("deep.ndjson");
    let nested = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    std::fs::write(
        &deep,
        format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"x\",\"arguments\":{{\"a\":{nested}}}}},\"_meta\":{{\"dir\":\"send\",\"server\":\"s\",\"conn\":\"c\"}}}}\n"
        ),
    )
    .expect("the shape this test expects");
    for format in ["jsonl", "har", "otlp"] {
        let out = run(env.mcptape(["export", &deep.display().to_string(), "--format", format]));
        assert!(out.status.success(), "{format}: {}", text(&out));
        let doc = match format {
            "jsonl" => out
                .stdout
                .split(|&b| b == b'\n')
                .next()
                .expect("the shape this test expects"),
            _ => &out.stdout[..],
        };
        serde_json::from_slice::<Value>(doc).unwrap_or_else(|e| panic!("{format}: {e}"));
    }

    // -o: 0600, never through a symlink.
    let file = env.path("out.jsonl");
    let out = run(env.mcptape([
        "export",
        "ev",
        "--format",
        "jsonl",
        "-o",
        &file.display().to_string(),
    ]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(crate::support::mode_of(&file), 0o600);
    let link = env.path("link.jsonl");
    std::os::unix::fs::symlink(env.path("elsewhere"), &link).expect("the shape this test expects");
    let out = run(env.mcptape([
        "export",
        "ev",
        "--format",
        "jsonl",
        "-o",
        &link.display().to_string(),
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(!env.path("elsewhere").exists());
}

#[test]
fn a_fault_that_withheld_the_answer_says_so_and_trace_ids_do_not_depend_on_the_path() {
    let env = Env::new();
    let faulty = faulty(&env);
    // The faulted call's answer cut away, as a `timeout` fault leaves its tape.
    let entries = tape_entries(&faulty);
    let fault = entries
        .iter()
        .position(|e| e["method"] == "$fault")
        .expect("a fault");
    let id = entries[fault]["params"]["id"].clone();
    let answer = entries
        .iter()
        .position(|e| e["_meta"]["dir"] == "recv" && e["id"] == id && e.get("method").is_none())
        .expect("the faulted answer");
    let kept: Vec<String> = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != answer)
        .map(|(_, e)| e.to_string())
        .collect();
    let withheld = env.path("withheld.ndjson");
    std::fs::write(&withheld, kept.join("\n") + "\n").expect("write");
    let har: Value = serde_json::from_str(&export(&env, &withheld, "har")).expect("HAR");
    validate(&env, "validate_har.py", &har, "withheld.har").expect("valid HAR 1.2");
    assert!(
        har["log"]["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .any(|e| e["response"]["_error"] == "an injected fault withheld the answer"),
        "{har:#}"
    );
    let otlp: Value = serde_json::from_str(&export(&env, &withheld, "otlp")).expect("OTLP");
    let parsed = validate(&env, "validate_otlp.py", &otlp, "withheld.json").expect("valid");
    assert!(
        parsed["spans"]
            .as_array()
            .expect("spans")
            .iter()
            .any(|s| s["attributes"]["error.type"] == "mcptape.fault"
                && s["status_message"] == "an injected fault withheld the answer"),
        "{parsed:#}"
    );

    // The same tape by its absolute path and as `./name` from its directory: one trace.
    let ids = |out: &str| -> Vec<String> {
        let doc: Value = serde_json::from_str(out).expect("OTLP");
        doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .expect("spans")
            .iter()
            .map(|s| format!("{} {}", s["traceId"], s["spanId"]))
            .collect()
    };
    let dir = withheld.parent().expect("a directory");
    let rel = run(env
        .mcptape(["export", "./withheld.ndjson", "--format", "otlp"])
        .current_dir(dir));
    assert!(rel.status.success(), "{}", text(&rel));
    assert_eq!(
        ids(&stdout(&rel)),
        ids(&serde_json::to_string(&otlp).expect("JSON"))
    );
}
