use serde_json::json;

use super::*;

fn launcher() -> Vec<String> {
    vec!["/bin/mcptape".to_owned()]
}

fn members(w: Wrap) -> Vec<Member> {
    match w {
        Wrap::Members(m) => m,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_stdio_entry_gets_the_wrapper_and_nothing_else_changes() {
    let e = json!({"command": "npx", "args": ["-y", "srv"], "env": {"K": "secret"}, "cwd": "/w"});
    let m = members(wrap(&e, "gh", &Dialect::STANDARD, &launcher()));
    assert_eq!(
        m,
        vec![
            ("command".to_owned(), Some(json!("/bin/mcptape"))),
            (
                "args".to_owned(),
                Some(json!(["proxy", "--server", "gh", "--", "npx", "-y", "srv"]))
            ),
        ]
    );
    let words: Vec<String> = ["npx", "-y", "mcptape"].map(str::to_owned).to_vec();
    let m = members(wrap(&e, "gh", &Dialect::STANDARD, &words));
    assert_eq!(m[0].1, Some(json!("npx")));
    assert_eq!(
        m[1].1,
        Some(json!([
            "-y", "mcptape", "proxy", "--server", "gh", "--", "npx", "-y", "srv"
        ]))
    );
}

#[test]
fn a_wrapped_entry_is_recognized_and_unwrapped_from_its_argv() {
    let e =
        json!({"command": "/x/mcptape", "args": ["proxy", "--server", "gh", "--", "npx", "-y"]});
    assert_eq!(
        wrap(&e, "gh", &Dialect::STANDARD, &launcher()),
        Wrap::Wrapped
    );
    let w = wrapped(&e, &Dialect::STANDARD).expect("wrapped");
    assert_eq!(w.server.as_deref(), Some("gh"));
    assert_eq!(
        unwrap_stdio(&e, &Dialect::STANDARD).expect("unwrap")[1].1,
        Some(json!(["-y"]))
    );
    let npx = json!({"command": "npx", "args": ["-y", "mcptape", "proxy", "--server", "a", "--url", "u"]});
    assert!(
        matches!(wrapped(&npx, &Dialect::STANDARD).map(|w| w.inner), Some(Inner::Url(u)) if u == "u")
    );
    // `proxy` of another program is not ours.
    let other = json!({"command": "docker", "args": ["proxy", "--server", "a", "--", "b"]});
    assert!(wrapped(&other, &Dialect::STANDARD).is_none());
}

#[test]
fn a_remote_entry_moves_its_headers_into_env_never_argv() {
    let e = json!({"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer sk-1", "X-Team": "t"}});
    let m = members(wrap(&e, "r", &Dialect::STANDARD, &launcher()));
    let args = m
        .iter()
        .find(|(k, _)| k == "args")
        .and_then(|(_, v)| v.clone())
        .expect("args");
    assert!(!args.to_string().contains("sk-1"), "{args}");
    assert_eq!(
        args,
        json!([
            "proxy",
            "--server",
            "r",
            "--url",
            "https://h/mcp",
            "--header-env",
            "Authorization=MCPTAPE_HEADER_AUTHORIZATION",
            "--header-env",
            "X-Team=MCPTAPE_HEADER_X_TEAM"
        ])
    );
    assert!(m.contains(&(
        "env".to_owned(),
        Some(json!({"MCPTAPE_HEADER_AUTHORIZATION": "Bearer sk-1", "MCPTAPE_HEADER_X_TEAM": "t"}))
    )));
    assert!(m.contains(&("type".to_owned(), Some(json!("stdio")))));
    assert!(m.contains(&("url".to_owned(), None)) && m.contains(&("headers".to_owned(), None)));
    let ws = json!({"serverUrl": "https://w"});
    let m = members(wrap(&ws, "w", &Dialect::WINDSURF, &launcher()));
    assert!(m.contains(&("serverUrl".to_owned(), None)));
}

#[test]
fn what_a_stdio_front_cannot_express_is_skipped_with_a_reason() {
    let skip = |e: Value, d: &Dialect| match wrap(&e, "x", d, &launcher()) {
        Wrap::Skip(why) => why,
        other => panic!("{other:?}"),
    };
    assert!(skip(json!({"type": "sse", "url": "u"}), &Dialect::STANDARD).contains("SSE"));
    assert!(skip(json!({"url": "u", "type": "sse"}), &Dialect::GEMINI).contains("SSE"));
    assert!(
        skip(
            json!({"httpUrl": "u", "oauth": {"enabled": true}}),
            &Dialect::GEMINI
        )
        .contains("oauth")
    );
    assert!(skip(json!({"command": 3}), &Dialect::STANDARD).contains("not a string"));
    assert!(skip(json!({"disabled": true}), &Dialect::STANDARD).contains("URL"));
    assert!(
        skip(
            json!({"url": "u", "env": {"MCPTAPE_HEADER_A": "1"}, "headers": {"a": "2"}}),
            &Dialect::STANDARD
        )
        .contains("already")
    );
}

#[test]
fn zed_nested_command_is_wrapped_inside_its_object() {
    let e =
        json!({"command": {"path": "node", "args": ["s.js"], "env": {"K": "v"}}, "settings": {}});
    let m = members(wrap(&e, "z", &Dialect::ZED, &launcher()));
    assert_eq!(
        m,
        vec![(
            "command".to_owned(),
            Some(
                json!({"path": "/bin/mcptape", "args": ["proxy", "--server", "z", "--", "node", "s.js"], "env": {"K": "v"}})
            )
        )]
    );
    let flat = json!({"command": "node", "args": ["s.js"]});
    assert_eq!(
        members(wrap(&flat, "z", &Dialect::ZED, &launcher())).len(),
        2
    );
}

#[test]
fn header_env_names() {
    assert_eq!(
        header_env_name("Authorization"),
        "MCPTAPE_HEADER_AUTHORIZATION"
    );
    assert_eq!(header_env_name("x-api.key"), "MCPTAPE_HEADER_X_API_KEY");
}

#[test]
fn gemini_url_is_streamable_http_unless_typed_sse_and_loses_its_type() {
    let e = json!({"url": "https://g/mcp", "type": "http", "timeout": 5000});
    let m = members(wrap(&e, "g", &Dialect::GEMINI, &launcher()));
    assert!(m.contains(&("type".to_owned(), None)), "{m:?}");
    assert!(m.contains(&("url".to_owned(), None)));
    let plain = json!({"url": "https://g/mcp"});
    assert!(matches!(
        wrap(&plain, "g", &Dialect::GEMINI, &launcher()),
        Wrap::Members(_)
    ));
}

#[test]
fn a_key_the_proxy_refuses_as_server_is_skipped_and_a_dash_key_goes_as_server_eq() {
    let e = json!({"command": "node", "args": ["s.js"]});
    for key in ["", "a,b", "q\n", "\u{fc}\tkey"] {
        match wrap(&e, key, &Dialect::STANDARD, &launcher()) {
            Wrap::Skip(why) => assert!(why.contains("invalid --server"), "{key:?}: {why}"),
            other => panic!("{key:?}: {other:?}"),
        }
    }
    for key in ["-x", "--url", "--"] {
        let m = members(wrap(&e, key, &Dialect::STANDARD, &launcher()));
        let args: Vec<String> =
            serde_json::from_value(m[1].1.clone().expect("args")).expect("strings");
        assert_eq!(args[1], format!("--server={key}"));
        // The proxy's own parser reads it back as that name, wrapping `node s.js`.
        let w = parse_wrapper("/bin/mcptape", &args).expect("the proxy accepts it");
        assert_eq!(w.server.as_deref(), Some(key));
        assert_eq!(
            w.inner,
            Inner::Stdio {
                command: "node".into(),
                args: vec!["s.js".into()]
            }
        );
    }
}

#[test]
fn any_mcptape_proxy_invocation_counts_as_wrapped_whatever_its_flags_and_server() {
    let cases = [
        json!({"command": "mcptape", "args": ["proxy", "--server", "h3", "--no-redact", "--", "node", "c.js"]}),
        json!({"command": "mcptape", "args": ["proxy", "--header-env", "A=B", "--url", "https://h/mcp", "--server", "h"]}),
        json!({"command": "mcptape", "args": ["proxy", "--server", "other", "--", "node"]}),
        json!({"command": "mcptape", "args": ["proxy", "--", "node"]}),
        json!({"command": "mcptape", "args": ["proxy", "--listen", "0", "--replay", "s"]}),
    ];
    for e in &cases {
        assert_eq!(
            wrap(e, "h2", &Dialect::STANDARD, &launcher()),
            Wrap::Wrapped,
            "{e}"
        );
    }
    // What the proxy would refuse is not a wrapper.
    for args in [json!(["proxy", "--bogus", "--", "node"]), json!(["proxy"])] {
        let e = json!({"command": "mcptape", "args": args});
        assert!(wrapped(&e, &Dialect::STANDARD).is_none(), "{e}");
    }
}
