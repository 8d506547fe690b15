//! Unit tests of the TOML document: round trips, edits confined to their entry, style kept.

use serde_json::json;

use super::*;
use crate::agents::document::apply_edits;

const CODEX: &str = r#"# Codex settings
model = "o3"  # keep me

[mcp_servers.github]
# the GitHub server
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
startup_timeout_sec = 20
unknown_key = { nested = true }

[mcp_servers.github.env]
GITHUB_TOKEN = "ghp_secret"

[mcp_servers.docs]
url = 'https://docs.example/mcp'
bearer_token_env_var = "DOCS_TOKEN"
http_headers = { "X-Team" = "core" }

[profiles.fast]
model = "o4-mini"
"#;

fn doc(text: &str) -> TomlDocument {
    TomlDocument::parse(text).expect("parse")
}

fn set(text: &str, name: &str, key: &str, value: Option<serde_json::Value>) -> String {
    let d = doc(text);
    let entries = d.entries(&["mcp_servers"]).expect("entries");
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
    apply_edits(text, edits).expect("apply")
}

#[test]
fn entries_of_every_style_are_read_as_json() {
    let d = doc(CODEX);
    let e = d.entries(&["mcp_servers"]).expect("entries");
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].path, ["mcp_servers", "github"]);
    assert_eq!(e[0].value["env"]["GITHUB_TOKEN"], "ghp_secret");
    assert_eq!(e[0].value["startup_timeout_sec"], 20);
    assert_eq!(e[1].value["http_headers"]["X-Team"], "core");
    assert!(CODEX[e[0].span.clone()].starts_with("[mcp_servers.github]\n"));
    assert!(CODEX[e[0].span.clone()].ends_with("\"ghp_secret\"\n"));

    let dotted = "mcp_servers.a.command = \"x\"\nmcp_servers.a.args = []\n";
    let e = doc(dotted).entries(&["mcp_servers"]).expect("entries");
    assert_eq!(e[0].value, json!({"command": "x", "args": []}));
    assert_eq!(e[0].span, 0..dotted.len());

    let inline = "[mcp_servers]\nb = { command = \"y\", env = { K = \"v\" } }\n";
    let e = doc(inline).entries(&["mcp_servers"]).expect("entries");
    assert_eq!(e[0].value, json!({"command": "y", "env": {"K": "v"}}));
    assert_eq!(
        &inline[e[0].span.clone()],
        "{ command = \"y\", env = { K = \"v\" } }"
    );
    assert!(
        doc("x = 1\n")
            .entries(&["mcp_servers"])
            .expect("none")
            .is_empty()
    );
    assert!(doc("mcp_servers = 3\n").entries(&["mcp_servers"]).is_err());
}

#[test]
fn replacing_values_changes_only_them_and_keeps_quoting_and_layout() {
    let out = set(CODEX, "github", "command", Some(json!("/bin/mcptape")));
    assert_eq!(
        out,
        CODEX.replace("command = \"npx\"", "command = \"/bin/mcptape\"")
    );
    let out = set(
        CODEX,
        "github",
        "args",
        Some(json!(["proxy", "--", "npx", "-y"])),
    );
    assert!(out.contains("args = [\"proxy\", \"--\", \"npx\", \"-y\"]\n"));
    let out = set(CODEX, "docs", "url", Some(json!("https://x/mcp")));
    assert!(out.contains("url = 'https://x/mcp'\n"), "{out}");
    let multi = "[mcp_servers.m]\ncommand = \"a\"\nargs = [\n  \"one\",\n  \"two\",\n]\n";
    let out = set(multi, "m", "args", Some(json!(["x", "y", "z"])));
    assert_eq!(
        out,
        "[mcp_servers.m]\ncommand = \"a\"\nargs = [\n  \"x\",\n  \"y\",\n  \"z\",\n]\n"
    );
    // And back: byte-identical.
    assert_eq!(set(&out, "m", "args", Some(json!(["one", "two"]))), multi);
}

#[test]
fn members_are_added_in_the_entry_style() {
    let out = set(CODEX, "github", "cwd", Some(json!("/work")));
    assert!(
        out.contains(
            "unknown_key = { nested = true }\ncwd = \"/work\"\n\n[mcp_servers.github.env]"
        ),
        "{out}"
    );
    let dotted = "# top\nmcp_servers.a.command = \"x\"  # c\nother = 1\n";
    let out = set(dotted, "a", "args", Some(json!(["p"])));
    assert_eq!(
        out,
        "# top\nmcp_servers.a.command = \"x\"  # c\nmcp_servers.a.args = [\"p\"]\nother = 1\n"
    );
    let inline = "[mcp_servers]\nb = { command = \"y\", args = [] }\n";
    let out = set(inline, "b", "cwd", Some(json!("/w")));
    assert_eq!(
        out,
        "[mcp_servers]\nb = { command = \"y\", args = [], cwd = \"/w\" }\n"
    );
    // Removal undoes each addition byte for byte.
    assert_eq!(set(&out, "b", "cwd", None), inline);
    let added = set(CODEX, "github", "cwd", Some(json!("/work")));
    assert_eq!(set(&added, "github", "cwd", None), CODEX);
}

#[test]
fn a_subtable_is_edited_key_by_key() {
    let out = set(
        CODEX,
        "github",
        "env",
        Some(json!({"GITHUB_TOKEN": "ghp_secret", "MCPTAPE_HEADER_X": "1"})),
    );
    assert_eq!(
        out,
        CODEX.replace(
            "GITHUB_TOKEN = \"ghp_secret\"\n",
            "GITHUB_TOKEN = \"ghp_secret\"\nMCPTAPE_HEADER_X = \"1\"\n"
        )
    );
    let back = set(
        &out,
        "github",
        "env",
        Some(json!({"GITHUB_TOKEN": "ghp_secret"})),
    );
    assert_eq!(back, CODEX);
    let out = set(CODEX, "docs", "http_headers", Some(json!({})));
    assert!(
        out.contains("http_headers = {}\n") || out.contains("http_headers = {  }\n"),
        "{out}"
    );
}

#[test]
fn crlf_files_keep_crlf() {
    let text = "[mcp_servers.c]\r\ncommand = \"a\"\r\n\r\n[other]\r\nx = 1\r\n";
    let out = set(text, "c", "args", Some(json!(["b"])));
    assert_eq!(
        out,
        "[mcp_servers.c]\r\ncommand = \"a\"\r\nargs = [\"b\"]\r\n\r\n[other]\r\nx = 1\r\n"
    );
    assert_eq!(set(&out, "c", "args", None), text);
}

#[test]
fn bad_input_is_a_syntax_error_with_its_line() {
    let err = TomlDocument::parse("a = 1\n[mcp_servers.x\ncommand = 1\n").expect_err("bad");
    assert!(matches!(err, DocError::Syntax { line: 2, .. }), "{err:?}");
    let err = TomlDocument::parse("a = 1\nb = \"unterminated\n").expect_err("bad");
    assert!(matches!(err, DocError::Syntax { line: 2, .. }), "{err:?}");
    let deep = format!("a = {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    assert!(TomlDocument::parse(&deep).is_err());
    let dotted = format!("{} = 1\n", vec!["k"; 5_000].join("."));
    if let Ok(d) = TomlDocument::parse(&dotted) {
        assert!(d.entries(&["k"]).is_err());
    }
}

#[test]
fn null_and_non_tables_are_refused() {
    let d = doc(CODEX);
    let e = d.entries(&["mcp_servers"]).expect("entries");
    assert!(d.set_member(&e[0], "command", Some(&json!(null))).is_err());
    let d = doc("[mcp_servers]\nx = 5\n");
    let e = d.entries(&["mcp_servers"]).expect("entries");
    assert_eq!(e[0].value, json!(5));
    assert!(d.set_member(&e[0], "command", Some(&json!("a"))).is_err());
}

#[test]
fn an_inline_table_that_loses_keys_is_written_anew() {
    // Found by the config_toml fuzz target on the codex fixture: removing the only
    // member while adding others left `{ , A = …}`.
    let out = set(
        CODEX,
        "docs",
        "http_headers",
        Some(json!({"A": "v", "B": "w"})),
    );
    assert!(
        out.contains("http_headers = { A = \"v\", B = \"w\" }\n"),
        "{out}"
    );
    let d = doc(&out);
    let e = d.entries(&["mcp_servers"]).expect("entries");
    assert_eq!(e[1].value["http_headers"], json!({"A": "v", "B": "w"}));
    let out = set(CODEX, "docs", "http_headers", Some(json!({})));
    assert!(out.contains("http_headers = {}\n"), "{out}");
}

#[test]
fn a_table_that_exists_only_through_its_subtable_takes_no_new_member() {
    // Found by the config_toml fuzz target: `command` went under `[mcp_servers.g.env]`.
    let text = "[mcp_servers.g.env]\nK = \"v\"\n";
    let d = doc(text);
    let e = d.entries(&["mcp_servers"]).expect("entries");
    assert_eq!(e[0].value, json!({"env": {"K": "v"}}));
    assert!(d.set_member(&e[0], "command", Some(&json!("x"))).is_err());
    let empty_header = "[mcp_servers.h]\n\n[other]\n";
    assert_eq!(
        set(empty_header, "h", "command", Some(json!("x"))),
        "[mcp_servers.h]\ncommand = \"x\"\n\n[other]\n"
    );
}

#[test]
fn removing_the_subtable_an_entry_starts_with_keeps_the_blank_lines_before_the_entry() {
    // Found by the config_toml fuzz target: removing `[mcp_servers.rem.x]`, the entry's
    // first line, took the blank line between it and the table before it.
    let text = "[other]\nurl = \"u\"\n\n[mcp_servers.rem.x]\nK = \"v\"\n";
    assert_eq!(set(text, "rem", "x", None), "[other]\nurl = \"u\"\n\n");
    // A subtable further inside the entry still takes its own blank lines along.
    let two = "[mcp_servers.a]\ncommand = \"c\"\n\n[mcp_servers.a.env]\nK = \"v\"\n";
    assert_eq!(
        set(two, "a", "env", None),
        "[mcp_servers.a]\ncommand = \"c\"\n"
    );
}
