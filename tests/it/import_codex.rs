//! `mcptape import codex`: Codex rollouts (tests/fixtures/codex, made from codex-rs/protocol's
//! types) become tapes that hold each call and its answer, that verify against the example
//! server and replay to `mcptape call`; bad rollouts are errors naming file and line, and
//! change nothing.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

const EXAMPLE: &str = "rollout-2025-11-20T10-15-30-0199a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b.jsonl";
const DOCS: &str = "rollout-2025-11-21T08-00-00-0199a1c4-1111-7222-8333-944455566677.jsonl";
const GREET: &str = "rollout-2025-11-22T09-30-00-0199a1d5-2222-7333-8444-a55566677788.jsonl";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex")
        .join(name)
}

/// `$CODEX_HOME` of the test, inside its temp dir.
pub(crate) fn codex_home(env: &Env) -> PathBuf {
    env.path("codex-home")
}

/// Copies fixtures where Codex keeps them: `$CODEX_HOME/sessions/YYYY/MM/DD/`.
pub(crate) fn keep_rollouts(env: &Env, names: &[&str]) {
    for name in names {
        let (y, m, d) = (&name[8..12], &name[13..15], &name[16..18]);
        let dir = codex_home(env).join("sessions").join(y).join(m).join(d);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::copy(fixture(name), dir.join(name)).expect("copy");
    }
}

/// `mcptape ARGS` with every variable an agent path reads inside the temp dir.
pub(crate) fn agent_cmd(env: &Env, args: &[&str]) -> std::process::Command {
    let mut cmd = env.mcptape(args);
    cmd.env("CODEX_HOME", codex_home(env))
        .env("CLAUDE_CONFIG_DIR", env.path("claude-config"))
        .env("XDG_CONFIG_HOME", env.path("xdg"))
        .env("APPDATA", env.path("appdata"));
    cmd
}

fn messages(tape: &Path, dir: &str) -> Vec<Value> {
    tape_entries(tape)
        .into_iter()
        .filter(|e| e["_meta"]["dir"] == dir)
        .collect()
}

#[test]
fn import_codex_writes_each_call_and_answer_with_the_rollouts_times() {
    let env = Env::new();
    keep_rollouts(&env, &[EXAMPLE, DOCS]);
    let out = run(agent_cmd(&env, &["import", "codex"]));
    assert!(out.status.success(), "{}", text(&out));
    let said = stdout(&out);
    assert!(
        said.contains("codex-0199a1b2  3 calls: example 3  "),
        "{said}"
    );
    assert!(
        said.contains("codex-0199a1c4  5 calls: docs 4, github 1 (1 unanswered)  "),
        "{said}"
    );

    let tape = env.tape("codex-0199a1b2");
    let sent: Vec<Value> = messages(&tape, "send")
        .into_iter()
        .filter(|m| m["method"] == "tools/call")
        .collect();
    let calls: Vec<_> = sent.iter().map(|m| m["params"].clone()).collect();
    assert_eq!(
        calls,
        [
            json!({"name": "echo", "arguments": {"message": "hello from codex"}}),
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
            json!({"name": "write_note", "arguments": {"text": "greeted Ada"}}),
        ]
    );
    assert_eq!(
        sent[0]["_meta"]["ts"], "2025-11-20T10:15:33.402Z",
        "the begin event's time"
    );
    assert_eq!(
        sent[1]["_meta"]["ts"], "2025-11-20T10:15:35.201Z",
        "the end's less its duration"
    );
    assert_eq!(sent[0]["_meta"]["source"]["imported"], "codex");
    let answers: Vec<Value> = messages(&tape, "recv")
        .into_iter()
        .filter(|m| m["id"] != 0)
        .collect();
    assert_eq!(
        answers[0]["result"],
        json!({"content": [{"type": "text", "text": "Echo: hello from codex"}]})
    );
    assert_eq!(answers[0]["_meta"]["ts"], "2025-11-20T10:15:33.451Z");

    let docs = env.tape("codex-0199a1c4");
    let answers = messages(&docs, "recv");
    let err = answers
        .iter()
        .find(|m| m.get("error").is_some())
        .expect("the Err result");
    assert_eq!(
        err["error"],
        json!({"code": -32603, "message": "tool call failed for `docs/fetch_page`: request timed out"})
    );
    let big = answers
        .iter()
        .find(|m| m["result"]["_meta"]["page"] == "big")
        .expect("the big result");
    assert_eq!(
        big["result"]["content"][0]["text"].as_str().map(str::len),
        Some(120_000)
    );
    // The begin without an end is a request with no answer.
    let docs_sent: Vec<Value> = messages(&docs, "send")
        .into_iter()
        .filter(|m| m["_meta"]["server"] == "docs")
        .collect();
    let last = docs_sent.last().expect("sent");
    assert_eq!(
        last["params"],
        json!({"name": "search", "arguments": {"query": "interrupted"}})
    );
    assert!(
        !answers
            .iter()
            .any(|a| a["id"] == last["id"] && a["_meta"]["server"] == "docs"),
        "no answer to the call whose end never came"
    );
}

#[test]
fn an_imported_codex_session_verifies_against_the_example_server() {
    let env = Env::new();
    keep_rollouts(&env, &[EXAMPLE]);
    let out = run(agent_cmd(&env, &["import", "codex"]));
    assert!(out.status.success(), "{}", text(&out));
    // Writes gated as usual: write_note is not read-only on the live server.
    let mut gated = env.mcptape(["verify", "codex-0199a1b2", "--"]);
    gated.arg(example_server());
    let gated = run(gated);
    assert!(gated.status.success(), "{}", text(&gated));
    assert!(
        stdout(&gated).contains(": 2 same, 0 changed, 1 skipped"),
        "{}",
        text(&gated)
    );
    assert!(
        stdout(&gated).contains("skipped    tools/call write_note"),
        "{}",
        text(&gated)
    );
    let verify = |extra: &[&str]| {
        let mut cmd = env.mcptape(["verify", "codex-0199a1b2", "--allow-writes", "--"]);
        cmd.arg(example_server()).args(extra);
        run(cmd)
    };
    let same = verify(&[]);
    assert!(same.status.success(), "{}", text(&same));
    assert!(
        stdout(&same).contains(": 3 same, 0 changed"),
        "{}",
        text(&same)
    );
    let drift = verify(&["--variant"]);
    assert_eq!(drift.status.code(), Some(1), "{}", text(&drift));
    assert!(
        stdout(&drift).contains(r#"result.content.0.text: "Hello, Ada!" → "Hi, Ada!""#),
        "{}",
        text(&drift)
    );
}

#[test]
fn an_imported_codex_session_replays_to_mcptape_call() {
    let env = Env::new();
    keep_rollouts(&env, &[GREET]);
    let out = run(agent_cmd(
        &env,
        &["import", "codex", &codex_home(&env).to_string_lossy()],
    ));
    assert!(out.status.success(), "{}", text(&out));
    // The server is absent: replay answers from the tape.
    let config = env.path("mcp.json");
    std::fs::write(
        &config,
        r#"{"mcpServers":{"example":{"command":"/nonexistent/example"}}}"#,
    )
    .expect("config");
    let mut cmd = env.mcptape(["replay", "codex-0199a1d5", "--"]);
    cmd.arg(bin())
        .args(["call", "example.greet", "name=Grace", "--config"])
        .arg(&config);
    let replayed = run(cmd);
    assert!(replayed.status.success(), "{}", text(&replayed));
    assert_eq!(stdout(&replayed), "Hello, Grace!\n");
}

#[test]
fn bad_rollouts_are_errors_naming_file_and_line_and_write_nothing() {
    let env = Env::new();
    keep_rollouts(&env, &[EXAMPLE]);
    let day = codex_home(&env).join("sessions/2025/11/20");
    let bad = day.join("rollout-2025-11-20T11-00-00-0199ffff-0000-7000-8000-000000000000.jsonl");
    let meta = std::fs::read_to_string(fixture(EXAMPLE)).expect("fixture");
    let first = meta.lines().next().expect("meta line");
    std::fs::write(
        &bad,
        format!(
            "{first}\n{{\"type\":\"event_msg\",\"payload\":{{\"type\":\"mcp_tool_call_end\"}}}}\n"
        ),
    )
    .expect("write");
    let out = run(agent_cmd(&env, &["import", "codex"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!(
            "error: transcript `{}` line 2: mcp_tool_call_end: missing field `call_id`",
            bad.display()
        )),
        "{err}"
    );
    assert!(
        !env.mcptape_home().join("recordings").exists(),
        "nothing written"
    );

    // A file that is not a rollout at all, named on the command line.
    let other = env.path("notes.jsonl");
    std::fs::write(&other, "{\"type\":\"user\",\"message\":\"hi\"}\n").expect("write");
    let out = run(agent_cmd(
        &env,
        &["import", "codex", &other.to_string_lossy()],
    ));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("is not a Codex transcript: it has no `session_meta` line"),
        "{}",
        text(&out)
    );
    let missing = run(agent_cmd(&env, &["import", "codex", "nowhere.jsonl"]));
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing));
    assert!(
        stderr(&missing).contains("cannot read transcript `nowhere.jsonl`"),
        "{}",
        text(&missing)
    );
}

#[test]
fn a_control_character_in_a_rollout_is_escaped_in_what_import_prints() {
    let env = Env::new();
    let dir = env.path("rollouts");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let file = dir.join("rollout-x.jsonl");
    std::fs::write(
        &file,
        "{\"type\":\"session_meta\",\"payload\":{\"id\":\"s\",\"cwd\":\"/w\"}}\n{\"type\":\"event_msg\",\"payload\":{\"type\":\"mcp_tool_call_end\",\"call_id\":\"c\",\"invocation\":{\"server\":\"ev\\u001b[31mil\",\"tool\":\"t\"},\"result\":{\"Ok\":{\"content\":[]}}}}\n",
    )
    .expect("write");
    let out = run(agent_cmd(
        &env,
        &["import", "codex", &dir.to_string_lossy()],
    ));
    assert!(out.status.success(), "{}", text(&out));
    assert!(!stdout(&out).contains('\u{1b}'), "{}", text(&out));
    assert!(stdout(&out).contains("1 call: ev"), "{}", text(&out));
}

#[test]
fn without_codex_home_the_rollouts_are_read_from_dot_codex_in_home() {
    let env = Env::new();
    let day = env.path("home/.codex/sessions/2025/11/22");
    std::fs::create_dir_all(&day).expect("mkdir");
    std::fs::copy(fixture(GREET), day.join(GREET)).expect("copy");
    let mut cmd = env.mcptape(["import", "codex"]);
    cmd.env_remove("CODEX_HOME");
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).starts_with("codex-0199a1d5  1 call: example 1  "),
        "{}",
        text(&out)
    );
    // And with neither a CODEX_HOME nor sessions there: said, nothing written.
    let empty = Env::new();
    let mut cmd = empty.mcptape(["import", "codex"]);
    cmd.env_remove("CODEX_HOME");
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("mcptape: no Codex sessions: `"),
        "{}",
        text(&out)
    );
    assert!(stdout(&out).is_empty(), "{}", text(&out));
}

#[test]
fn replay_of_an_imported_session_answers_its_first_call_alone_with_notes_for_the_rest() {
    // A session of two servers: the example fixture's three `example` calls, then one
    // call of `docs` (from the docs fixture, its call id made distinct).
    let env = Env::new();
    keep_rollouts(&env, &[EXAMPLE]);
    let docs = std::fs::read_to_string(fixture(DOCS)).expect("fixture");
    let search = docs
        .lines()
        .nth(1)
        .expect("docs search")
        .replace(r#""c1""#, r#""d1""#);
    let rollout = codex_home(&env).join("sessions/2025/11/20").join(EXAMPLE);
    let mut both = std::fs::read_to_string(&rollout).expect("rollout");
    both.push_str(&search);
    both.push('\n');
    std::fs::write(&rollout, both).expect("rollout");
    let out = run(agent_cmd(&env, &["import", "codex"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout(&out).contains("example 3, docs 1"), "{}", text(&out));
    let config = env.path("mcp.json");
    std::fs::write(
        &config,
        r#"{"mcpServers":{"example":{"command":"/nonexistent/example"}}}"#,
    )
    .expect("config");
    let call = |args: &[&str]| {
        let mut cmd = env.mcptape(["replay", "codex-0199a1b2", "--"]);
        cmd.arg(bin())
            .arg("call")
            .args(args)
            .arg("--config")
            .arg(&config);
        run(cmd)
    };
    // The first call, alone: answered, and the calls and server it never asked for are
    // notes, not INCOMPLETE or UNUSED.
    let first = call(&["example.echo", "message=hello from codex"]);
    assert_eq!(first.status.code(), Some(0), "{}", text(&first));
    assert_eq!(
        stdout(&first),
        "Echo: hello from codex\n",
        "{}",
        text(&first)
    );
    let said = stderr(&first);
    assert!(
        !said.contains("INCOMPLETE") && !said.contains("UNUSED"),
        "{said}"
    );
    assert_eq!(
        said.matches("note: imported, not sent").count(),
        2,
        "{said}"
    );
    assert!(
        said.contains("server `docs` connection")
            && said.contains("is imported and no client connected for it"),
        "{said}"
    );
    // A call out of the recorded order still diverges.
    let later = call(&["example.greet", "name=Ada"]);
    assert_eq!(later.status.code(), Some(3), "{}", text(&later));
    assert!(stderr(&later).contains("DIVERGED"), "{}", text(&later));
}
