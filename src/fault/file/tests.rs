use super::*;

fn write(name: &str, text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("written");
    (dir, path)
}

#[test]
fn json_and_toml_files_give_the_same_rules() {
    let (_a, json) = write(
        "f.json",
        r#"{"rules": [{"method": "tools/call", "name": "s", "nth": 2, "effect": "error", "code": -32000, "message": "rate limited"}, "notifications/progress: drop"]}"#,
    );
    let (_b, toml) = write(
        "f.toml",
        "[[rules]]\nmethod = \"tools/call\"\nname = \"s\"\nnth = 2\neffect = \"error\"\ncode = -32000\nmessage = \"rate limited\"\n\n[[rules]]\nrule = \"notifications/progress: drop\"\n",
    );
    let a = load(&json).expect("json");
    let b = load(&toml).expect("toml");
    assert_eq!(a.len(), 2);
    assert_eq!(a[0].0, b[0].0);
    assert_eq!(a[0].1, b[0].1);
    assert_eq!(a[1].1, Effect::Drop);
    assert_eq!(
        a[0].2,
        "tools/call name=s nth=2: error -32000 \"rate limited\""
    );
}

#[test]
fn a_bad_entry_is_named_by_file_rule_and_line() {
    let (_a, json) = write(
        "f.json",
        "[\n  \"x: drop\",\n  {\"effect\": \"error\", \"code\": \"big\"}\n]",
    );
    let err = load(&json).expect_err("bad code").to_string();
    assert!(err.contains("f.json"), "{err}");
    assert!(err.contains("rule 2 (line 3)"), "{err}");
    assert!(err.contains("`big`"), "{err}");
    let (_b, toml) = write(
        "f.toml",
        "[[rules]]\neffect = \"drop\"\n\n[[rules]]\nnth = 0\neffect = \"drop\"\n",
    );
    let err = load(&toml).expect_err("bad nth").to_string();
    assert!(
        err.contains("rule 2 (line 4)") && err.contains("nth=0"),
        "{err}"
    );
    let (_c, odd) = write("f.toml", "[[rules]]\ncolour = \"red\"\n");
    let err = load(&odd).expect_err("unknown field").to_string();
    assert!(err.contains("`colour`"), "{err}");
    let (_d, broken) = write("rules", "{\"rules\": [");
    let err = load(&broken).expect_err("not JSON").to_string();
    assert!(err.contains("not JSON"), "{err}");
}

#[test]
fn a_fifo_is_refused_before_it_is_opened() {
    // Found by review: opening a FIFO blocked for ever.
    let dir = tempfile::tempdir().expect("a temp dir");
    let fifo = dir.path().join("rules.json");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).expect("mkfifo");
    let err = load(&fifo).expect_err("a FIFO");
    assert!(err.to_string().contains("not a regular file"), "{err}");
}

#[test]
fn a_file_of_too_many_rules_is_refused_before_they_are_read() {
    // Found by review: each rule's line was counted from the start of the file (quadratic),
    // and the limit checked only after all were read.
    let many: Vec<&str> = vec!["*: drop"; crate::fault::MAX_RULES + 1];
    let (_d, path) = write("many.json", &serde_json::to_string(&many).expect("json"));
    let err = load(&path).expect_err("too many");
    assert!(
        err.to_string().contains("at most 10000 fault rules"),
        "{err}"
    );
    // Lines are still named right deep in a file.
    let text = format!("[{}\"bad rule\"]", "\"*: drop\",\n".repeat(500));
    let (_e, path) = write("late.json", &text);
    let err = load(&path).expect_err("a bad rule");
    assert!(err.to_string().contains("rule 501 (line 501)"), "{err}");
}
