//! Tapes from elsewhere and from before: mcporter's samples, the example recordings,
//! and `show`/`list` on them.

use std::path::Path;

use mcptape::Tape;

use crate::support::*;

#[test]
fn mcporter_sample_tapes_load_with_their_connections() {
    let mut seen = 0;
    for file in std::fs::read_dir(samples()).expect("tests/fixtures") {
        let path = file.expect("entry").path();
        if path.extension().is_none_or(|e| e != "ndjson") {
            continue;
        }
        seen += 1;
        let tape = Tape::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(tape.warnings.is_empty(), "{:?}", tape.warnings);
        let conns = tape.connections();
        assert_eq!(conns.len(), 1, "{}", path.display());
        assert_eq!(conns[0].server, "everything");
        let methods: Vec<&str> = tape
            .entries
            .iter()
            .filter_map(|e| e.message.method())
            .collect();
        assert_eq!(methods.first(), Some(&"$transport/start"));
        assert_eq!(methods.last(), Some(&"$transport/close"));
        assert!(methods.contains(&"tools/call"));
        // The reader cuts `_meta` out exactly: the rest is the message as mcporter wrote it.
        let raw = std::fs::read_to_string(&path).expect("read");
        for (entry, line) in tape.entries.iter().zip(raw.lines()) {
            let meta = meta_after_message(line, entry.message.text(), entry.line);
            assert_eq!(meta["dir"], entry.meta.dir.as_str(), "line {}", entry.line);
            assert_eq!(
                meta["server"],
                entry.meta.server.as_str(),
                "line {}",
                entry.line
            );
        }
    }
    assert_eq!(seen, 2, "both mcporter versions' samples are read");
}

/// The `_meta` object of tape line `line` (number `n`), checked to follow the message
/// `text` exactly: the line is the message's bytes without its closing `}`, then
/// `,"_meta":`, one JSON object and the `}` that closes the message again.
fn meta_after_message(line: &str, text: &str, n: usize) -> serde_json::Value {
    let body = text
        .strip_suffix('}')
        .unwrap_or_else(|| panic!("line {n}: the message does not end with `}}`: {text}"));
    let rest = line
        .strip_prefix(body)
        .unwrap_or_else(|| panic!("line {n}: the line is not the message's bytes: {line}"));
    let meta = rest
        .strip_prefix(",\"_meta\":")
        .and_then(|m| m.strip_suffix('}'))
        .unwrap_or_else(|| panic!("line {n}: `,\"_meta\":{{…}}}}` does not follow: {rest}"));
    let meta: serde_json::Value = serde_json::from_str(meta)
        .unwrap_or_else(|e| panic!("line {n}: `_meta` is not one JSON value ({e}): {meta}"));
    assert!(
        meta.is_object(),
        "line {n}: `_meta` is not an object: {meta}"
    );
    meta
}

#[test]
fn example_recordings_load_and_hold_both_directions() {
    for name in ["example.ndjson", "everything.ndjson"] {
        let path = recordings_example().join(name);
        let tape = Tape::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(tape.entries.iter().any(|e| e.meta.dir.as_str() == "send"));
        assert!(tape.entries.iter().any(|e| e.meta.dir.as_str() == "recv"));
        assert!(
            tape.entries.iter().all(|e| e.meta.conn.is_some()),
            "{name} was written by mcptape"
        );
    }
}

fn golden(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (UPDATE_GOLDEN=1 writes it)", path.display()));
    similar_asserts::assert_eq!(expected, actual);
}

#[test]
fn show_prints_a_readable_trace() {
    let env = Env::new();
    let sample = samples().join("mcporter-0.13.7-everything-echo.ndjson");
    let out = run(env.mcptape(["show", "--full"]).arg(&sample));
    assert!(out.status.success(), "{}", text(&out));
    let stdout =
        String::from_utf8_lossy(&out.stdout).replace(&sample.display().to_string(), "SAMPLE");
    golden("show-mcporter-0.13.7.txt", &stdout);

    // Truncated to the width, one line per entry.
    let out = run(env.mcptape(["show"]).arg(&sample).env("COLUMNS", "60"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.lines().all(|l| l.chars().count() <= 60), "{stdout}");
    assert_eq!(stdout.lines().count(), 2 + 12);

    let out = run(env.mcptape(["show", "--json"]).arg(&sample));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(
        doc["connections"][0]["entries"][1]["message"]["method"],
        "server/discover"
    );
}

#[test]
fn list_shows_sessions_with_their_servers() {
    let env = Env::new();
    let dir = env.mcptape_home().join("recordings");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(
        recordings_example().join("example.ndjson"),
        dir.join("ex.ndjson"),
    )
    .expect("copy");
    std::fs::write(dir.join("broken.ndjson"), "nope\nnope\n").expect("write");
    let out = run(&mut env.mcptape(["list"]));
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ex = stdout
        .lines()
        .find(|l| l.starts_with("ex "))
        .expect("ex listed");
    assert!(ex.ends_with(" example"), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("broken ") && l.contains("unreadable")),
        "{stdout}"
    );
    let out = run(&mut env.mcptape(["list", "--json"]));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(rows[1]["connections"], 1);
}

#[test]
fn sample_tapes_are_vendored_inside_the_repository() {
    // A clone of the repository alone must test: nothing is read from beside it.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .canonicalize()
        .expect("root");
    let dir = samples().canonicalize().expect("samples");
    assert!(
        dir.starts_with(&root),
        "{} is outside {}",
        dir.display(),
        root.display()
    );
    for name in [
        "mcporter-0.12.3-everything-echo.ndjson",
        "mcporter-0.13.7-everything-echo.ndjson",
    ] {
        assert!(
            dir.join(name).is_file(),
            "{name} is not in {}",
            dir.display()
        );
    }
}
