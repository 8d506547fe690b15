//! Notes (`$note`): `record --note`, `mcptape note` from a hook while a real recording
//! runs, shown as headings by `show`, passed over by replay and verify, and kept by
//! `redact`, `verify --update` and a second `import`.

use std::path::Path;

use serde_json::Value;

use crate::support::{
    Env, bin, everything_server, peer, proxy_argv, python, run, stderr, stdout, tape_entries, text,
};

/// The notes of a tape, in tape order: (line, text).
fn notes(tape: &Path) -> Vec<(usize, String)> {
    tape_entries(tape)
        .iter()
        .enumerate()
        .filter(|(_, e)| e["method"] == "$note")
        .map(|(i, e)| (i + 1, e["params"]["text"].as_str().unwrap_or("").to_owned()))
        .collect()
}

/// The Python SDK client's `scenario` against server-everything, behind a proxy, as a
/// shell command line.
fn client(scenario: &str) -> String {
    let mut argv = vec![python(), peer("py_client.py"), scenario.into(), "--".into()];
    argv.extend(proxy_argv("everything", &everything_server()));
    argv.iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Records two client runs with a note between them, written by a hook inside CMD (as
/// another shell would, through the `MCPTAPE_RECORD` the recording exported).
fn record_with_notes(env: &Env, session: &str) {
    let script = format!(
        "set -e\n{c}\n'{m}' note \"$MCPTAPE_RECORD\" second run: the echo again\n{c}\n",
        c = client("echo"),
        m = bin().display()
    );
    let out = run(env.mcptape([
        "record",
        session,
        "--note",
        "first run: echo once",
        "--",
        "sh",
        "-c",
        &script,
    ]));
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn notes_written_while_recording_are_headings_and_replay_passes_over_them() {
    let env = Env::new();
    record_with_notes(&env, "noted");
    let tape = env.tape("noted");
    let found = notes(&tape);
    let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        texts,
        ["first run: echo once", "second run: the echo again"]
    );
    // The first note comes before anything the proxies recorded; the second between the
    // two connections.
    assert_eq!(found[0].0, 1);
    let entries = tape_entries(&tape);
    let conns: Vec<&str> = entries
        .iter()
        .filter_map(|e| e["_meta"]["conn"].as_str())
        .collect();
    let (first, last) = (conns[0], conns[conns.len() - 1]);
    assert_ne!(first, last, "two connections");
    let second = &entries[found[1].0 - 1];
    assert!(
        second["_meta"].get("conn").is_none(),
        "a note is in no connection"
    );
    assert!(second["_meta"]["ts"].is_string(), "a note has its time");
    assert!(
        entries[..found[1].0]
            .iter()
            .any(|e| e["_meta"]["conn"] == first)
    );
    assert!(
        entries[found[1].0..]
            .iter()
            .all(|e| e["_meta"]["conn"] != first)
    );

    // show: each note once, as a heading, where it falls.
    let out = run(env.mcptape(["show", "noted", "--full"]));
    assert!(out.status.success(), "{}", text(&out));
    let shown = stdout(&out);
    let lines: Vec<&str> = shown.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("{needle} in {shown}"))
    };
    assert!(
        lines[1].starts_with("══ NOTE first run: echo once · "),
        "{shown}"
    );
    let second_note = at("══ NOTE second run: the echo again");
    let headings: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("── everything"))
        .collect();
    assert_eq!(headings.len(), 2, "{shown}");
    assert!(
        headings[0] < second_note && second_note < headings[1],
        "{shown}"
    );
    let out = run(env.mcptape(["show", "noted", "--json"]));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(doc["notes"].as_array().map(Vec::len), Some(2));
    assert_eq!(doc["connections"].as_array().map(Vec::len), Some(2));

    // list counts two connections of one server (the notes are of none).
    let out = run(env.mcptape(["list", "--json"]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !stdout(&out).contains("\"\""),
        "no server without a name: {}",
        text(&out)
    );

    // Replay: the same two runs pass; nobody waits for a note.
    let script = format!("set -e\n{c}\n{c}\n", c = client("echo"));
    let out = run(env.mcptape(["replay", "noted", "--", "sh", "-c", &script]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(!stderr(&out).contains("never used"), "{}", text(&out));
}

#[test]
fn notes_survive_verify_update_and_redact() {
    let env = Env::new();
    record_with_notes(&env, "kept");
    let tape = env.tape("kept");
    // An answer edited after the recording: verify finds it changed and --update puts the
    // live one back, line by line, the notes where they were.
    let body = std::fs::read_to_string(&tape).expect("tape");
    let edited = body.replacen("Echo: hi", "Echo: bye", 1);
    assert_ne!(body, edited, "the tape holds an echo answer");
    std::fs::write(&tape, &edited).expect("edit");
    let before = notes(&tape);
    let mut verify = env.mcptape(["verify", "kept", "--update", "--"]);
    verify.args(everything_server());
    let out = run(verify);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stdout(&out).contains("1 changed"), "{}", text(&out));
    assert!(
        std::fs::read_to_string(&tape)
            .expect("tape")
            .contains("Echo: hi")
    );
    assert_eq!(notes(&tape), before);
    // A note holding a secret (written with redaction off): redact takes the secret and
    // keeps the note.
    let key = format!(
        "sk-{}",
        crate::support::fake("abcdefghijklmnopqrstuvwxyz0123456789", 40, 7)
    );
    let out = run(env
        .mcptape(["note", "kept", "the key was", &key])
        .env("MCPTAPE_NO_REDACT", "1"));
    assert!(out.status.success(), "{}", text(&out));
    assert!(std::fs::read_to_string(&tape).expect("tape").contains(&key));
    let out = run(env.mcptape(["redact", "kept"]));
    assert!(out.status.success(), "{}", text(&out));
    let after = notes(&tape);
    assert_eq!(after.len(), 3);
    assert_eq!(after[..2], before[..]);
    assert!(!after[2].1.contains(&key), "{after:?}");
    assert!(after[2].1.starts_with("the key was "), "{after:?}");
    let out = run(env.mcptape(["redact", "kept", "--check"]));
    assert!(out.status.success(), "{}", text(&out));
    // And the tape still verifies: the notes are nobody's requests.
    let mut verify = env.mcptape(["verify", "kept", "--"]);
    verify.args(everything_server());
    let out = run(verify);
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_note_on_an_imported_tape_survives_the_next_import() {
    let env = Env::new();
    let transcript = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code/subagent-and-blocks");
    let file = std::fs::read_dir(&transcript)
        .expect("fixture")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .expect("a transcript");
    let import = || {
        let out = run(env.mcptape(["import", "claude-code", &file.to_string_lossy()]));
        assert!(out.status.success(), "{}", text(&out));
        out
    };
    import();
    let tape = env.tape("claude-code-1a84d610");
    let out = run(env.mcptape(["note", "claude-code-1a84d610", "the bug is call 3"]));
    assert!(out.status.success(), "{}", text(&out));
    let noted = std::fs::read(&tape).expect("tape");
    // Imported again: the calls are the same, and so is the note, so nothing changes.
    let again = import();
    assert!(stdout(&again).contains("(unchanged)"), "{}", text(&again));
    assert_eq!(std::fs::read(&tape).expect("tape"), noted);
    // A tape edited since is rewritten (the edit goes to .prev), the note carried over.
    let mut edited = noted.clone();
    edited.extend_from_slice(b"\n");
    std::fs::write(&tape, &edited).expect("edit");
    import();
    assert_eq!(std::fs::read(&tape).expect("tape"), noted);
    assert_eq!(
        notes(&tape).into_iter().map(|(_, t)| t).collect::<Vec<_>>(),
        ["the bug is call 3"]
    );
}

#[test]
fn bad_notes_are_refused_naming_what_is_wrong_and_touch_nothing() {
    let env = Env::new();
    // No such tape: nothing is created.
    let out = run(env.mcptape(["note", "nosuch", "hello"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("nosuch.ndjson"), "{}", text(&out));
    assert!(!env.tape("nosuch").exists());
    // Blank and oversize text.
    let tape = env.tape("t");
    std::fs::create_dir_all(tape.parent().expect("dir")).expect("dir");
    std::fs::write(&tape, "").expect("tape");
    let out = run(env.mcptape(["note", "t", "  "]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("a note needs some text"),
        "{}",
        text(&out)
    );
    let long = "x".repeat(20_000);
    let out = run(env.mcptape(["note", "t", &long]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("at most 16384 bytes"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(&tape).expect("tape"), b"");
    // A tape that is a symlink is never written through.
    let target = env.path("elsewhere.ndjson");
    std::fs::write(&target, "").expect("target");
    let link = env.tape("link");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let out = run(env.mcptape(["note", "link", "hello"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(std::fs::read(&target).expect("target"), b"");
    // record --note without CMD touches no tape; with a command that is not found, the
    // previous tape comes back as it was.
    let out = run(env.mcptape(["record", "t", "--note", "x"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("--note needs CMD"), "{}", text(&out));
    std::fs::write(&tape, "{\"jsonrpc\":\"2.0\",\"method\":\"$transport/start\",\"params\":{},\"_meta\":{\"dir\":\"lifecycle\",\"server\":\"s\"}}\n").expect("tape");
    let before = std::fs::read(&tape).expect("tape");
    let out = run(env.mcptape([
        "record",
        "t",
        "--note",
        "x",
        "--",
        "mcptape-no-such-command",
    ]));
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    assert_eq!(std::fs::read(&tape).expect("tape"), before);
    // A note's control characters reach the terminal escaped.
    let out = run(env.mcptape(["note", "t", "red \u{1b}[31m\u{7}bell"]));
    assert!(out.status.success(), "{}", text(&out));
    let out = run(env.mcptape(["show", "t"]));
    let shown = stdout(&out);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown:?}"
    );
    assert!(shown.contains("NOTE red \\x1b[31m"), "{shown}");
}

#[test]
fn a_note_is_refused_by_a_file_that_is_not_a_tape() {
    let env = Env::new();
    for (name, body) in [
        ("plain.txt", "shopping list\nmilk\n"),
        ("object.json", "{\"name\": \"not an entry\"}\n"),
        ("binary.ndjson", "\u{0}\u{1}\u{2} no newline"),
    ] {
        let file = env.path(name);
        std::fs::write(&file, body).expect("write");
        let out = run(env.mcptape(["note", &format!("./{name}"), "hi"]));
        assert_eq!(out.status.code(), Some(2), "{name}: {}", text(&out));
        assert!(
            stderr(&out).contains(&format!(
                "{name}` is not a tape (its first line is not a tape entry"
            )),
            "{name}: {}",
            text(&out)
        );
        assert_eq!(
            std::fs::read_to_string(&file).expect("read"),
            body,
            "{name}"
        );
    }
    // An empty file (a recording that wrote nothing yet) and a tape take the note.
    let empty = env.path("empty.ndjson");
    std::fs::write(&empty, "").expect("write");
    let out = run(env.mcptape(["note", "./empty.ndjson", "first"]));
    assert!(out.status.success(), "{}", text(&out));
    let out = run(env.mcptape(["note", "./empty.ndjson", "second"]));
    assert!(out.status.success(), "{}", text(&out));
    let texts: Vec<String> = notes(&empty).into_iter().map(|(_, t)| t).collect();
    assert_eq!(texts, ["first", "second"]);
}
