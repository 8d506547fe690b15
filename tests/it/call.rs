//! `mcptape call`, `tools` and `servers`: the built-in client against real servers,
//! config discovery, and record/replay in process.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::*;

/// Writes a config naming the example server (as `example`) and server-everything.
fn config(env: &Env, file: &str, key: &str) -> PathBuf {
    let path = env.path(file);
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    let everything = everything_server();
    let text = serde_json::json!({ key: {
        "example": {"command": example_server()},
        "everything": {"command": everything[0], "args": everything[1..]},
        "variant": {"command": example_server(), "args": ["--variant"], "env": {"UNUSED": "${HOME}"}},
    }});
    std::fs::write(&path, text.to_string()).expect("write");
    path
}

fn call(env: &Env, args: &[&str]) -> Output {
    run(env.mcptape(["call"]).args(args))
}

#[test]
fn call_the_example_server() {
    let env = Env::new();
    config(&env, ".mcp.json", "mcpServers");
    let out = call(&env, &["example.echo", "message:hello there"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "Echo: hello there\n");

    let out = call(&env, &["example.add", "a:2", "b=40"]);
    assert_eq!(
        stdout(&out),
        "42\nstructured content:\n{\n  \"sum\": 42\n}\n",
        "{}",
        text(&out)
    );
    let out = call(
        &env,
        &[
            "example.add",
            "--args",
            r#"{"a":1,"b":1}"#,
            "--output",
            "json",
        ],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["structuredContent"]["sum"], 2);
    let out = call(&env, &["example.exact", "--output", "raw"]);
    assert_eq!(
        stdout(&out),
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"z\":1.0,\"content\":[{\"type\":\"text\",\"text\":\"caf\\u00e9 \\/ 1.0\"}],\"a\":[1e2,-0.0]}}\n"
    );

    let out = call(&env, &["example.fail"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("this tool always fails"),
        "{}",
        text(&out)
    );
    assert!(
        stderr(&out).contains("answered isError: true"),
        "{}",
        text(&out)
    );

    let out = call(&env, &["example.no_such_tool"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        stderr(&out).contains("error -32602: unknown tool: no_such_tool"),
        "{}",
        text(&out)
    );

    let out = call(
        &env,
        &["example.slow", "steps:1000", "ms:20", "--timeout", "0.5"],
    );
    assert_eq!(out.status.code(), Some(124), "{}", text(&out));
    assert!(
        stderr(&out).contains("no answer from server `example` within 0.5s"),
        "{}",
        text(&out)
    );

    let out = call(&env, &["variant.greet", "name:you"]);
    assert_eq!(stdout(&out), "Hi, you!\n", "{}", text(&out));
}

#[test]
fn call_server_everything_shows_every_kind_of_content() {
    let env = Env::new();
    config(&env, ".mcp.json", "mcpServers");
    let out = call(&env, &["everything.echo", "message:hi"]);
    assert_eq!(stdout(&out), "Echo: hi\n", "{}", text(&out));
    let out = call(&env, &["everything.get-tiny-image"]);
    assert!(
        stdout(&out).contains("[image: image/png, "),
        "{}",
        text(&out)
    );
    let out = call(
        &env,
        &[
            "everything.get-resource-reference",
            "resourceType:Text",
            "resourceId:1",
        ],
    );
    assert!(
        stdout(&out).contains("[resource: demo://resource/"),
        "{}",
        text(&out)
    );
    let out = call(
        &env,
        &["everything.get-structured-content", "location:Chicago"],
    );
    assert!(
        stdout(&out).contains("structured content:\n{"),
        "{}",
        text(&out)
    );
    let out = call(&env, &["everything.no-such-tool"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[test]
fn tools_lists_schemas_and_annotations() {
    let env = Env::new();
    config(&env, ".mcp.json", "mcpServers");
    let out = run(&mut env.mcptape(["tools", "example"]));
    assert!(out.status.success(), "{}", text(&out));
    let listing = stdout(&out);
    assert!(
        listing.contains("echo  [read-only]\n  Echoes the message back.\n    message: string"),
        "{listing}"
    );
    assert!(
        listing.contains("write_note  [not read-only, not destructive]"),
        "{listing}"
    );
    assert!(listing.contains("    steps?: integer"), "{listing}");
    let out = run(&mut env.mcptape(["tools", "example", "--json"]));
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(tools.as_array().map(Vec::len), Some(9));
}

#[test]
fn config_discovery_order() {
    let env = Env::new();
    let servers = |out: &Output| stdout(out).lines().next().unwrap_or("").to_owned();
    let home_config = config(&env, "home/.mcptape/config.json", "mcpServers");
    let out = run(&mut env.mcptape(["servers"]));
    assert!(
        servers(&out).contains(&home_config.display().to_string()),
        "{}",
        text(&out)
    );
    // Each candidate in the working directory comes before the ones after it.
    for (file, key) in [
        (".vscode/mcp.json", "servers"),
        (".cursor/mcp.json", "mcpServers"),
        ("mcp.json", "mcpServers"),
        (".mcp.json", "mcpServers"),
    ] {
        let path = config(&env, file, key);
        let out = run(&mut env.mcptape(["servers"]));
        assert!(
            servers(&out).contains(&format!("{}` (key `{key}`)", path.display())),
            "{file}: {}",
            text(&out)
        );
    }
    let elsewhere = config(&env, "elsewhere/x.json", "mcpServers");
    let out = run(env.mcptape(["servers"]).env("MCPTAPE_CONFIG", &elsewhere));
    assert!(servers(&out).contains("elsewhere/x.json"), "{}", text(&out));
    let out = run(env
        .mcptape(["servers", "--config"])
        .arg(&home_config)
        .env("MCPTAPE_CONFIG", &elsewhere));
    assert!(
        servers(&out).contains("home/.mcptape/config.json"),
        "{}",
        text(&out)
    );
    let out = run(&mut env.mcptape(["servers"]));
    assert!(
        stdout(&out).lines().any(|l| l.starts_with("  example ")
            && l.contains(" stdio ")
            && l.ends_with(&format!(" {}", example_server()))),
        "{}",
        text(&out)
    );
}

#[test]
fn every_config_error_names_the_file_and_the_key() {
    let env = Env::new();
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}",
            &["a.t"],
            "is not valid JSON at line 3, column",
        ),
        (
            r#"{"mcpServers":{"a":{"command":"x"}}}"#,
            &["b.t"],
            "has no server `b`; it has: a",
        ),
        (
            r#"{"mcpServers":{"a":{"args":["x"]}}}"#,
            &["a.t"],
            "`mcpServers.a.command` is missing",
        ),
        (
            r#"{"mcpServers":{"a":{"command":"x","args":["${MCPTAPE_TEST_UNSET}"]}}}"#,
            &["a.t"],
            "`mcpServers.a.args[0]` uses `${MCPTAPE_TEST_UNSET}`, which is not set",
        ),
        (r#"{"other":{}}"#, &["a.t"], "`mcpServers` is missing"),
    ];
    let path = env.path("bad.json");
    for (text_, args, expected) in cases {
        std::fs::write(&path, text_).expect("write");
        let out = run(env.mcptape(["call", "--config"]).arg(&path).args(*args));
        assert_eq!(out.status.code(), Some(2), "{expected}: {}", text(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&path.display().to_string()) && err.contains(expected),
            "{expected}: {err}"
        );
    }
    let out = call(&env, &["a.t"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("no MCP config found (looked for ")
            && stderr(&out).contains(".mcp.json"),
        "{}",
        text(&out)
    );
    let out = call(&env, &["no-dot"]);
    assert!(
        stderr(&out).contains("`no-dot` is not SERVER.TOOL"),
        "{}",
        text(&out)
    );
}

/// A config whose example server is a copy that the test can delete.
fn removable_server(env: &Env) -> PathBuf {
    let copy = env.path("bin/example-server");
    std::fs::create_dir_all(copy.parent().expect("dir")).expect("mkdir");
    std::fs::copy(example_server(), &copy).expect("copy");
    let text = serde_json::json!({"mcpServers": {"example": {"command": copy}}});
    std::fs::write(env.path(".mcp.json"), text.to_string()).expect("write");
    copy
}

#[test]
fn a_recorded_call_replays_with_the_server_gone() {
    let env = Env::new();
    let server = removable_server(&env);
    let mcptape = bin().display().to_string();
    let calls = |m: &str| {
        format!("{mcptape} call example.echo message:{m} && {mcptape} call example.add a:1 b:2")
    };
    let recorded = run(&mut env.mcptape(["record", "s", "--", "sh", "-c", &calls("one")]));
    assert!(recorded.status.success(), "{}", text(&recorded));
    std::fs::remove_file(&server).expect("remove the server");
    std::fs::remove_file(env.path(".mcp.json")).expect("remove the config");

    let replayed = run(&mut env.mcptape(["replay", "s", "--", "sh", "-c", &calls("one")]));
    assert!(replayed.status.success(), "{}", text(&replayed));
    assert_eq!(stdout(&replayed), stdout(&recorded));
    assert_eq!(
        stderr(&replayed)
            .matches("ok       server `example`")
            .count(),
        2,
        "{}",
        text(&replayed)
    );

    let changed = run(&mut env.mcptape(["replay", "s", "--", "sh", "-c", &calls("two")]));
    assert_eq!(changed.status.code(), Some(3), "{}", text(&changed));
    let err = stderr(&changed);
    assert!(
        err.contains(r#"expected tools/call #2 echo {"message":"one"}"#),
        "{err}"
    );
    assert!(
        err.contains(r#"got      tools/call #2 echo {"message":"two"}"#),
        "{err}"
    );

    // --replay on the command line, no parent: the verdict decides the status.
    let out = call(&env, &["--replay", "s", "example.echo", "message:two"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let out = call(&env, &["--replay", "s", "example.echo", "message:one"]);
    assert_eq!(stdout(&out), "Echo: one\n", "{}", text(&out));
}

#[test]
fn an_mcporter_tape_replays_with_mcptape_call() {
    let env = Env::new();
    let sample: &Path = &samples().join("mcporter-0.12.3-everything-echo.ndjson");
    let out = run(env.mcptape(["replay"]).arg(sample).args([
        "--",
        &bin().display().to_string(),
        "call",
        "everything.echo",
        "message:hello",
    ]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "Echo: hello\n");
}

#[test]
fn the_example_call_recordings_replay() {
    let env = Env::new();
    let tape = recordings_example().join("call-example.ndjson");
    let script = format!(
        "{0} call example.echo message:hello && {0} call example.add a:2 b:40",
        bin().display()
    );
    let out = run(env
        .mcptape(["replay"])
        .arg(&tape)
        .args(["--", "sh", "-c", &script]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stdout(&out).starts_with("Echo: hello\n42\n"),
        "{}",
        text(&out)
    );
}

/// `cmd` with the directory of the mcptape under test first on `PATH`, so that commands
/// run as a user types them: `mcptape …`.
fn on_path(mut cmd: std::process::Command) -> std::process::Command {
    let dir = bin().parent().expect("bin dir").to_path_buf();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![dir];
    dirs.extend(std::env::split_paths(&path));
    cmd.env("PATH", std::env::join_paths(dirs).expect("PATH"));
    cmd
}

#[test]
fn the_readme_fixture_for_ci_with_a_config_that_names_mcptape_proxy() {
    // The README's config: the server named through `mcptape proxy`.
    let env = Env::new();
    let mut args = vec![
        "proxy".to_owned(),
        "--server".into(),
        "everything".into(),
        "--".into(),
    ];
    args.extend(everything_server());
    let cfg =
        serde_json::json!({"mcpServers": {"everything": {"command": "mcptape", "args": args}}});
    std::fs::write(env.path(".mcp.json"), cfg.to_string()).expect("write");
    // The README's sequence, word for word.
    let line = |words: &str| {
        let words: Vec<&str> = words.split(' ').collect();
        let mut cmd = on_path(env.cmd(words[0]));
        cmd.args(&words[1..]);
        cmd
    };
    let out = run(line(
        "mcptape record fixture -- mcptape call everything.echo message:hello",
    ));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "Echo: hello\n");
    let entries = tape_entries(&env.tape("fixture"));
    let starts = lifecycle(&entries, "$transport/start");
    assert_eq!(
        starts.len(),
        1,
        "one connection, `call`'s own: {entries:#?}"
    );
    let out = run(line(
        "mcptape replay fixture -- mcptape call everything.echo message:hello",
    ));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(stdout(&out), "Echo: hello\n");
    assert!(!stderr(&out).contains("UNUSED"), "{}", text(&out));
    // `tools` records in process the same way.
    let out = run(line("mcptape record listing -- mcptape tools everything"));
    assert!(out.status.success(), "{}", text(&out));
    let entries = tape_entries(&env.tape("listing"));
    assert_eq!(
        lifecycle(&entries, "$transport/start").len(),
        1,
        "{entries:#?}"
    );
    let out = run(line("mcptape replay listing -- mcptape tools everything"));
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn call_shows_progress_on_stderr_for_people() {
    let env = Env::new();
    config(&env, ".mcp.json", "mcpServers");
    let slow = ["example.slow", "steps:2", "ms:1"];
    let shown = |out: &Output| {
        stderr(out)
            .lines()
            .filter(|l| l.starts_with("mcptape: `example` progress "))
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let want = [
        "mcptape: `example` progress 1/2 step 1",
        "mcptape: `example` progress 2/2 step 2",
    ];
    let out = call(&env, &slow);
    assert_eq!(stdout(&out), "done after 2 steps\n", "{}", text(&out));
    assert_eq!(shown(&out), want, "{}", text(&out));
    // Machine output keeps stderr for errors.
    let out = call(
        &env,
        &["--output", "json", "example.slow", "steps:2", "ms:1"],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(shown(&out).is_empty(), "{}", text(&out));
    // Recorded with its progress, and replayed with it.
    let out = call(&env, &["--record", "p", "example.slow", "steps:2", "ms:1"]);
    assert_eq!(shown(&out), want, "{}", text(&out));
    let out = call(&env, &["--replay", "p", "example.slow", "steps:2", "ms:1"]);
    assert_eq!(stdout(&out), "done after 2 steps\n", "{}", text(&out));
    assert_eq!(shown(&out), want, "{}", text(&out));
}
