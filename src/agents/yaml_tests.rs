//! Unit tests of the YAML document: round trips, edits confined to their entry, style kept.

use serde_json::json;

use super::*;
use crate::agents::document::apply_edits;

/// Goose's own layout (serde_yaml: sequences not indented under their key, single
/// quotes), with a comment and a flow mapping added by hand.
const GOOSE: &str = "# Goose config
GOOSE_PROVIDER: openai
extensions:
  developer:
    bundled: true
    enabled: true
    name: developer
    timeout: 300
    type: builtin
  github:
    # added by hand
    args:
    - -y
    - '@modelcontextprotocol/server-github'
    cmd: npx
    enabled: true
    env_keys: []
    envs:
      GITHUB_TOKEN: ghp_secret
    name: github
    timeout: 300
    type: stdio
  remote: {type: streamable_http, uri: 'https://mcp.example/mcp', headers: {X-Key: k}, enabled: true}
GOOSE_MODEL: gpt-4o # trailing
";

fn doc(text: &str) -> YamlDocument {
    YamlDocument::parse(text).expect("parse")
}

fn set(text: &str, name: &str, key: &str, value: Option<serde_json::Value>) -> String {
    let d = doc(text);
    let entries = d.entries(&["extensions"]).expect("entries");
    let entry = entries
        .iter()
        .find(|e| e.name() == name)
        .expect("entry present");
    let edits = d.set_member(entry, key, value.as_ref()).expect("edit");
    for e in &edits {
        assert!(
            e.span.start >= entry.span.start && e.span.end <= entry.span.end,
            "edit {e:?} outside entry {:?}",
            entry.span
        );
    }
    let out = apply_edits(text, edits).expect("apply");
    YamlDocument::parse(&out).expect("the edited text parses");
    out
}

#[test]
fn entries_are_read_as_json_with_their_spans() {
    let d = doc(GOOSE);
    let e = d.entries(&["extensions"]).expect("entries");
    assert_eq!(e.len(), 3);
    assert_eq!(e[1].path, ["extensions", "github"]);
    assert_eq!(
        e[1].value["args"],
        json!(["-y", "@modelcontextprotocol/server-github"])
    );
    assert_eq!(e[1].value["timeout"], 300);
    assert_eq!(e[1].value["enabled"], true);
    assert_eq!(e[1].value["envs"]["GITHUB_TOKEN"], "ghp_secret");
    assert_eq!(e[2].value["headers"]["X-Key"], "k");
    assert!(GOOSE[e[1].span.clone()].starts_with("    args:\n    - -y"));
    assert!(GOOSE[e[1].span.clone()].ends_with("type: stdio\n"));
    assert!(GOOSE[e[2].span.clone()].starts_with('{') && GOOSE[e[2].span.clone()].ends_with('}'));
    assert!(
        doc("a: 1\n")
            .entries(&["extensions"])
            .expect("none")
            .is_empty()
    );
    assert!(
        doc("extensions:\n")
            .entries(&["extensions"])
            .expect("none")
            .is_empty()
    );
    assert!(doc("extensions: [1]\n").entries(&["extensions"]).is_err());
    assert!(
        doc("# only a comment\n")
            .entries(&["extensions"])
            .expect("none")
            .is_empty()
    );
}

#[test]
fn a_wrap_and_its_undo_round_trip_byte_for_byte() {
    let wrapped_args = json!([
        "proxy",
        "--server",
        "github",
        "--",
        "npx",
        "-y",
        "@modelcontextprotocol/server-github"
    ]);
    let out = set(GOOSE, "github", "cmd", Some(json!("/opt/bin/mcptape")));
    let out = set(&out, "github", "args", Some(wrapped_args));
    assert!(
        out.contains(
            "    args:\n    - proxy\n    - --server\n    - github\n    - --\n    - npx\n    - -y\n    - '@modelcontextprotocol/server-github'\n    cmd: /opt/bin/mcptape\n"
        ),
        "{out}"
    );
    let back = set(
        &out,
        "github",
        "args",
        Some(json!(["-y", "@modelcontextprotocol/server-github"])),
    );
    let back = set(&back, "github", "cmd", Some(json!("npx")));
    assert_eq!(back, GOOSE);
}

#[test]
fn members_are_added_in_the_entry_style() {
    let out = set(GOOSE, "github", "description", Some(json!("GitHub: repos")));
    assert!(
        out.contains("    type: stdio\n    description: 'GitHub: repos'\n  remote:"),
        "{out}"
    );
    assert_eq!(set(&out, "github", "description", None), GOOSE);
    let out = set(GOOSE, "remote", "cmd", Some(json!("mcptape")));
    assert!(out.contains("enabled: true, cmd: mcptape}\n"), "{out}");
    assert_eq!(set(&out, "remote", "cmd", None), GOOSE);
    // A new sequence copies the file's dash offset (Goose's: none).
    let out = set(GOOSE, "developer", "args", Some(json!(["a", "@b"])));
    assert!(
        out.contains("    type: builtin\n    args:\n    - a\n    - '@b'\n  github:"),
        "{out}"
    );
    let flow_only = "extensions:\n  a:\n    cmd: x\n";
    assert_eq!(
        set(flow_only, "a", "args", Some(json!(["p", "q"]))),
        "extensions:\n  a:\n    cmd: x\n    args: [p, q]\n"
    );
    // A new nested mapping is written as a block at the entry's own step.
    let text = "extensions:\n  a:\n    cmd: x\n    envs:\n      K: v\n";
    let out = set(text, "a", "more", Some(json!({"A": "1"})));
    assert_eq!(out, format!("{text}    more:\n      A: '1'\n"));
}

#[test]
fn a_nested_mapping_is_edited_key_by_key() {
    let out = set(
        GOOSE,
        "github",
        "envs",
        Some(json!({"GITHUB_TOKEN": "ghp_secret", "MCPTAPE_HEADER_X": "v"})),
    );
    assert!(
        out.contains("      GITHUB_TOKEN: ghp_secret\n      MCPTAPE_HEADER_X: v\n    name: github"),
        "{out}"
    );
    let back = set(
        &out,
        "github",
        "envs",
        Some(json!({"GITHUB_TOKEN": "ghp_secret"})),
    );
    assert_eq!(back, GOOSE);
    let out = set(
        GOOSE,
        "remote",
        "headers",
        Some(json!({"X-Key": "k", "Z": "z"})),
    );
    assert!(out.contains("headers: {X-Key: k, Z: z}"), "{out}");
}

#[test]
fn crlf_and_indented_sequences_keep_their_form() {
    let text = "extensions:\r\n  a:\r\n    cmd: x\r\n    args:\r\n      - \"one\"\r\n";
    let out = set(text, "a", "args", Some(json!(["@two", "three"])));
    assert_eq!(
        out,
        "extensions:\r\n  a:\r\n    cmd: x\r\n    args:\r\n      - \"@two\"\r\n      - three\r\n"
    );
    let out = set(text, "a", "enabled", Some(json!(true)));
    assert_eq!(out, format!("{text}    enabled: true\r\n"));
    let no_newline = "extensions:\n  a:\n    cmd: x";
    assert_eq!(
        set(no_newline, "a", "enabled", Some(json!(false))),
        "extensions:\n  a:\n    cmd: x\n    enabled: false\n"
    );
}

#[test]
fn non_ascii_text_keeps_byte_offsets_right() {
    let text = "# é ü\nextensions:\n  ü:\n    cmd: «x»\n    args: [a]\n";
    let out = set(text, "ü", "args", Some(json!(["b", "c"])));
    assert_eq!(
        out,
        "# é ü\nextensions:\n  ü:\n    cmd: «x»\n    args: [b, c]\n"
    );
}

#[test]
fn bad_input_is_a_syntax_error_with_its_line() {
    let err = YamlDocument::parse("a: 1\nb: [1, 2\nc: 3\n").expect_err("bad");
    assert!(matches!(err, DocError::Syntax { .. }), "{err:?}");
    let err = YamlDocument::parse("a: 1\n  b: 2\n").expect_err("bad");
    assert!(matches!(err, DocError::Syntax { line: 2, .. }), "{err:?}");
    // Found by the config_yaml fuzz target: with `name` twice, an edit changed one and
    // reading took the other.
    let err = YamlDocument::parse("x:\n  name: a\n  name: b\n").expect_err("duplicate");
    assert!(
        matches!(err, DocError::Syntax { line: 3, column: 3, ref message } if message.contains("name")),
        "{err:?}"
    );
    // Found by the config_yaml fuzz target: a lone CR is a YAML line break.
    let err = YamlDocument::parse("a: 1\n  :\r  b: 2\n").expect_err("lone CR");
    assert!(matches!(err, DocError::Syntax { line: 2, .. }), "{err:?}");
    let err = YamlDocument::parse("a: 1\n---\nb: 2\n").expect_err("two docs");
    assert!(matches!(err, DocError::Unsupported(_)), "{err:?}");
    let deep = format!("extensions: {}{}\n", "[".repeat(50_000), "]".repeat(50_000));
    if let Ok(d) = YamlDocument::parse(&deep) {
        assert!(d.entries(&["extensions"]).is_err());
    }
}

#[test]
fn anchors_aliases_and_tags_are_read_but_not_edited() {
    let text = "base: &b {cmd: x, args: []}\nextensions:\n  a: *b\n  c:\n    <<: *b\n    name: c\n  t: !custom {cmd: y}\n  plain: {cmd: z}\n";
    let d = doc(text);
    let e = d.entries(&["extensions"]).expect("entries");
    assert_eq!(e[0].value, json!({"cmd": "x", "args": []}));
    for entry in &e[..3] {
        let err = d
            .set_member(entry, "cmd", Some(&json!("m")))
            .expect_err("refused");
        assert!(
            matches!(err, DocError::Unsupported(ref m) if m.contains("anchor")),
            "{err:?}"
        );
    }
    assert!(d.set_member(&e[3], "cmd", Some(&json!("m"))).is_ok());
    // A billion laughs stays bounded.
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let j = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}, *a{j}]\n"
        ));
    }
    bomb.push_str("extensions:\n  x: *a11\n");
    assert!(doc(&bomb).entries(&["extensions"]).is_err());
}

#[test]
fn mappings_that_lose_keys_stay_valid() {
    let out = set(GOOSE, "remote", "headers", Some(json!({"A": "v"})));
    assert!(out.contains("headers: {A: v}"), "{out}");
    let out = set(GOOSE, "github", "envs", Some(json!({"B": "w"})));
    assert!(out.contains("    envs: {B: w}\n    name: github"), "{out}");
    let two = "extensions:\n  a:\n    cmd: x\n    envs:\n      K: v\n      L: w\n";
    assert_eq!(
        set(two, "a", "envs", Some(json!({"L": "w", "M": "z"}))),
        "extensions:\n  a:\n    cmd: x\n    envs:\n      L: w\n      M: z\n"
    );
}

#[test]
fn an_empty_value_is_set_after_its_colon() {
    // Found by the config_yaml fuzz target: `key:` alone was marked on the next line.
    let text = "extensions:\n  a:\n    cmd: x\n    args:\n  b:\n    cmd: y\n";
    let out = set(text, "a", "args", Some(json!(["p"])));
    assert_eq!(
        out,
        "extensions:\n  a:\n    cmd: x\n    args: [p]\n  b:\n    cmd: y\n"
    );
    let out = set(text, "a", "args", None);
    assert_eq!(out, "extensions:\n  a:\n    cmd: x\n  b:\n    cmd: y\n");
    let out = set(text, "a", "env", Some(json!({"K": "v"})));
    assert_eq!(
        out,
        "extensions:\n  a:\n    cmd: x\n    args:\n    env:\n      K: v\n  b:\n    cmd: y\n"
    );
}

#[test]
fn a_key_without_a_colon_is_not_edited() {
    // Found by the config_yaml fuzz target: `{K}` (K: null) had no place for a value.
    let text = "extensions:\n  a: {cmd: x, K}\n";
    let d = doc(text);
    let e = d.entries(&["extensions"]).expect("entries");
    assert_eq!(e[0].value, json!({"cmd": "x", "K": null}));
    assert!(d.set_member(&e[0], "K", Some(&json!("v"))).is_err());
    assert!(d.set_member(&e[0], "cmd", Some(&json!("v"))).is_err());
}

#[test]
fn a_tab_before_a_key_is_not_copied() {
    // Found by the config_yaml fuzz target: a new line copied tabs into indentation.
    let text = "# Goose coe`)\nGOOSE_PROVIDER: anthropic\nGOOSE_MODEL: claude-sonnet-3\nextensions:\n  de hand as w    bundled: \n   \t\t\te\tart_approve %m : cl_s[\t\t  # trailingti \t\te\t\t\tf[\t\t\t\te\t\t\toye # Goosee cp0 uand iss";
    let d = doc(text);
    for e in d.entries(&["extensions"]).expect("entries") {
        for key in ["command", "args"] {
            if let Ok(edits) = d.set_member(&e, key, Some(&json!("/usr/bin/mcptape"))) {
                let out = apply_edits(text, edits).expect("apply");
                YamlDocument::parse(&out).expect("the edited text parses");
            }
        }
    }
}

#[test]
fn an_edit_that_would_not_read_back_is_refused() {
    // Found by the config_yaml fuzz target: saphyr reads this odd text, but not the same
    // text with a longer flow mapping on line 3. Every edit is read back before it is
    // handed out, so none leaves a file that does not parse.
    let text = "# Goose confignratio2n (edited by ndt-4\nextensions:\n  dnob: {level: 3 } \nline~ar:\n    : nvs: {}\nGOOSE_MODE: smart_aptrailing comment\n";
    let d = doc(text);
    for e in d.entries(&["extensions"]).expect("entries") {
        let values = [
            json!("/usr/bin/mcptape"),
            json!(["proxy", "--server", "@x/y", "a: b"]),
        ];
        for key in ["level", "command"] {
            for v in &values {
                if let Ok(edits) = d.set_member(&e, key, Some(v)) {
                    let out = apply_edits(text, edits).expect("apply");
                    YamlDocument::parse(&out).expect("the edited text parses");
                }
            }
        }
    }
}
