//! The one exit table and the one error printer, seen from outside: real processes, a
//! real socket, and the exact lines on stderr.

use crate::support::*;

fn example_config(env: &Env) {
    let config = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("write config");
}

#[test]
fn an_io_error_is_2_and_printed_with_its_cause_on_a_line_of_its_own() {
    let env = Env::new();
    example_config(&env);
    let out = run(env.mcptape(["call", "example.echo", "message=@/nonexistent/file"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        stderr(&out),
        "error: argument `message`: cannot read `/nonexistent/file`\n\
         caused by: No such file or directory (os error 2)\n"
    );
}

#[test]
fn a_port_in_use_is_2_naming_the_address() {
    let env = Env::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let out = run(env.mcptape([
        "proxy",
        "--listen",
        &addr,
        "--url",
        "http://127.0.0.1:9/mcp",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("error: cannot listen on {addr}\ncaused by: ")),
        "{err}"
    );
}

#[test]
fn a_header_that_is_not_name_colon_value_is_refused_before_anything_runs() {
    let env = Env::new();
    for args in [
        &[
            "proxy",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--header",
            "no colon",
        ][..],
        &[
            "verify",
            "t",
            "--url",
            "http://127.0.0.1:9/mcp",
            "--header",
            ": v",
        ][..],
    ] {
        let out = run(env.mcptape(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = stderr(&out);
        assert!(err.contains("for '--header"), "{err}");
        assert!(err.contains("write 'Name: value'"), "{err}");
    }
}

#[test]
fn a_failed_tool_is_1_and_one_error_line() {
    let env = Env::new();
    example_config(&env);
    let out = run(env.mcptape(["call", "example.fail"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let err = stderr(&out);
    let last = err.lines().last().unwrap_or("");
    assert_eq!(
        last, "error: tool `fail` of server `example` answered isError: true",
        "{err}"
    );
}

#[test]
fn a_tool_that_fails_still_ends_its_recorded_connection_as_the_client_meant() {
    let env = Env::new();
    example_config(&env);
    let out = run(env.mcptape(["call", "--record", "f", "example.fail"]));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let entries = tape_entries(&env.tape("f"));
    let close = lifecycle(&entries, "$transport/close");
    assert_eq!(close[0]["params"]["reason"], "client done", "{close:?}");
}

#[test]
fn help_and_version_are_0_and_a_bad_flag_is_2() {
    let env = Env::new();
    let out = run(env.mcptape(["--version"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("mcptape "));
    let out = run(env.mcptape(["help", "call"]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let out = run(env.mcptape(["list", "--no-such-flag"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).starts_with("error: "), "{}", text(&out));
}
