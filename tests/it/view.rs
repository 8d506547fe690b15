//! `mcptape view`: the page of a real server-everything tape, opened in a real browser
//! (Debian's Chromium, headless, driven by playwright-core: tests/peers/view_check.mjs),
//! a tape of script-shaped payloads, a 100,000-entry tape, and the receipts of a real
//! verify and a real replay shown beside their tape.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::{Env, everything_server, peer, python, record_everything, run, stderr, text};

/// Where tests/peers/install puts the browser.
const CHROMIUM: &str = "/usr/bin/chromium";

/// Opens `page` in Chromium and returns what view_check.mjs saw (`mode`: tape, xss, big,
/// verify). A missing Chromium fails, naming how to install it.
fn browse(env: &Env, page: &Path, mode: &str, shot: Option<&Path>) -> Value {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: `apt-get install chromium` (tests/peers/install does), then run again"
    );
    let mut cmd = env.cmd("node");
    cmd.arg(peer("view_check.mjs")).arg(page).arg(mode);
    if let Some(s) = shot {
        cmd.arg(s);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", text(&out));
    let line = String::from_utf8_lossy(&out.stdout);
    let facts: Value = serde_json::from_str(line.trim())
        .unwrap_or_else(|e| panic!("view_check.mjs printed no JSON ({e}): {}", text(&out)));
    assert_eq!(facts["failure"], Value::Null, "{facts:#}");
    // Nothing but the page itself was asked for, and nothing went wrong in it.
    let url = facts["url"].as_str().expect("url").to_owned();
    assert_eq!(facts["requests"], json!([url]), "{facts:#}");
    assert_eq!(facts["errors"], json!([]), "{facts:#}");
    assert_eq!(facts["console"], json!([]), "{facts:#}");
    assert_eq!(facts["dialogs"], json!([]), "{facts:#}");
    facts
}

/// `mcptape view ARGS…`, which must succeed.
fn view(env: &Env, args: &[&str]) -> std::process::Output {
    let mut all = vec!["view"];
    all.extend_from_slice(args);
    let out = run(env.mcptape(all));
    assert!(out.status.success(), "{}", text(&out));
    out
}

/// The view of tape `s` with `receipt` beside it, written to `html` and read in the
/// browser's `verify` mode.
fn browse_receipt(env: &Env, receipt: &Path, html: &str) -> Value {
    let page = env.path(html);
    let (receipt, out) = (
        receipt.to_str().expect("utf-8"),
        page.to_str().expect("utf-8"),
    );
    view(env, &["s", "--verify", receipt, "-o", out]);
    browse(env, &page, "verify", None)
}

/// A `$note` line at `ts`, as `mcptape note` writes one (in no connection).
fn note_line(text: &str, ts: &str) -> String {
    json!({"jsonrpc": "2.0", "method": "$note", "params": {"text": text},
        "_meta": {"dir": "lifecycle", "server": "", "ts": ts}})
    .to_string()
}

/// Inserts a note after the echo call's answer (at its time).
fn add_note(tape: &Path, text: &str) {
    let body = std::fs::read_to_string(tape).expect("tape");
    let mut out = Vec::new();
    let mut done = false;
    for l in body.lines() {
        out.push(l.to_owned());
        let v: Value = serde_json::from_str(l).expect("entry");
        if !done && v.get("result").is_some() && l.contains("Echo: hello replay") {
            out.push(note_line(text, v["_meta"]["ts"].as_str().expect("ts")));
            done = true;
        }
    }
    assert!(done, "no echo answer on the tape");
    std::fs::write(tape, out.join("\n") + "\n").expect("write tape");
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_server_everything_tape_opens_in_chromium_with_lanes_a_detail_search_and_keys() {
    let env = Env::new();
    record_everything(&env, "s");
    let tape = env.tape("s");
    add_note(&tape, "echo answered; the long call is next");
    let out = view(&env, &["s"]);
    let page = tape.with_file_name("s.html");
    assert!(
        stderr(&out).contains(&page.display().to_string()),
        "{}",
        text(&out)
    );
    let meta = std::fs::metadata(&page).expect("the page beside the tape");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    eprintln!(
        "view: the page of the server-everything tape is {} bytes",
        meta.len()
    );

    let update = std::env::var_os("UPDATE_SCREENSHOT").is_some();
    let shot = if update {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/images/view.png")
    } else {
        env.path("view.png")
    };
    let f = browse(&env, &page, "tape", Some(&shot));
    assert!(std::fs::metadata(&shot).expect("a screenshot").len() > 10_000);
    eprintln!(
        "view: Chromium loaded it in {} ms (script ready at {:.0} ms)",
        f["load_ms"], f["ready_ms"]
    );
    // One lane, for the one connection, named by its server.
    assert_eq!(f["lanes"], 1, "{f:#}");
    assert!(
        strings(&f["lane_labels"])[0].starts_with("everything · "),
        "{f:#}"
    );
    // Every entry has a row (the tape is small).
    let entries = tape_lines(&tape);
    assert_eq!(f["rows_in_dom"], entries, "{f:#}");
    // The note: a heading in the list, a flag on the timeline.
    assert!(
        strings(&f["notes_in_list"])[0].ends_with("echo answered; the long call is next"),
        "{f:#}"
    );
    assert_eq!(
        strings(&f["note_flags"]),
        ["echo answered; the long call is next"]
    );
    // The click on the echo request: its message, pretty, its duration and its answer.
    assert_eq!(f["detail_title"], "→ tools/call echo #2", "{f:#}");
    let message: Value = serde_json::from_str(f["detail_message"].as_str().expect("message"))
        .expect("the message pretty-printed as JSON");
    assert_eq!(message["params"]["arguments"]["message"], "hello replay");
    assert!(message.get("_meta").is_none(), "{message}");
    assert!(
        strings(&f["detail_terms"]).contains(&"duration".to_owned()),
        "{f:#}"
    );
    assert!(
        strings(&f["detail_values"]).contains(&"ok".to_owned()),
        "{f:#}"
    );
    // The raw line is the tape's line, exactly.
    assert_eq!(f["raw_shown"], true);
    let raw = f["raw_text"].as_str().expect("raw");
    assert!(
        std::fs::read_to_string(&tape)
            .expect("tape")
            .lines()
            .any(|l| l == raw),
        "{raw}"
    );
    let jump = strings(&f["jump"]);
    assert!(jump[0].starts_with("answer at line "), "{f:#}");
    assert_eq!(f["after_jump_title"], "← #2 ok", "{f:#}");
    // A click on the lane's first bar opens that request (the handshake).
    assert_eq!(f["after_bar_values"][0], f["bar_line"].to_string(), "{f:#}");
    assert!(
        strings(&f["after_bar_values"]).contains(&"initialize".to_owned()),
        "{f:#}"
    );
    // `/` focuses the search; `tool:echo` keeps the call, its answer and the note.
    assert_eq!(f["focused_after_slash"], "search");
    assert_eq!(f["count_after_search"], format!("3 of {entries}"), "{f:#}");
    let found = strings(&f["rows_after_search"]);
    assert!(found[0].contains("tools/call echo #2"), "{found:?}");
    assert_eq!(f["rows_after_escape"], entries, "{f:#}");
    // j j j k from the bar's row is two rows down; Enter opens it.
    let cursor: usize = f["cursor_line"]
        .as_str()
        .expect("cursor")
        .parse()
        .expect("a line");
    assert_eq!(
        cursor,
        f["bar_line"].as_u64().expect("line") as usize + 2,
        "{f:#}"
    );
    assert_eq!(f["enter_values"][0], cursor.to_string(), "{f:#}");
}

/// The number of entries of a tape (its non-empty lines).
fn tape_lines(tape: &Path) -> usize {
    std::fs::read_to_string(tape)
        .expect("tape")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .count()
}

/// Payloads that would run, or break out of where they are, if any reached the page as
/// markup.
const PAYLOADS: [&str; 5] = [
    "<script>window.__xss=1</script>",
    "</script><script>window.__xss=2</script>",
    "</textarea><img src=x onerror=\"window.__xss=3\">",
    "\"'><svg onload=\"window.__xss=4\">",
    "<img src=x onerror=alert(5)>\u{2028}</style><b>bold</b>",
];

/// A tape whose server name, connection id, tool name, arguments, result, notification,
/// invalid line and note are all payloads.
fn xss_tape(path: &Path) {
    let [a, b, c, d, e] = PAYLOADS;
    let meta = |dir: &str, ms: u32| json!({"dir": dir, "server": a, "conn": d, "ts": format!("2026-12-01T10:00:00.{ms:03}Z")});
    let entry = |mut v: Value, dir: &str, ms: u32| {
        v["_meta"] = meta(dir, ms);
        v.to_string()
    };
    let lines = [
        entry(
            json!({"jsonrpc":"2.0","method":"$transport/start","params":{"command":[b]}}),
            "lifecycle",
            0,
        ),
        entry(
            json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":b,"arguments":{"x":c,"y":d}}}),
            "send",
            10,
        ),
        entry(
            json!({"jsonrpc":"2.0","method":format!("notifications/{e}"),"params":{"m":a}}),
            "recv",
            20,
        ),
        note_line(c, "2026-12-01T10:00:00.025Z"),
        entry(
            json!({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":e}],"isError":true}}),
            "recv",
            30,
        ),
        entry(
            json!({"jsonrpc":"2.0","method":"$transport/invalid","params":{"text":a}}),
            "lifecycle",
            40,
        ),
        entry(
            json!({"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":d}}),
            "recv",
            50,
        ),
        entry(
            json!({"jsonrpc":"2.0","method":"$transport/close","params":{"reason":b}}),
            "lifecycle",
            60,
        ),
    ];
    std::fs::write(path, lines.join("\n") + "\n").expect("write the tape");
}

#[test]
fn payloads_on_a_tape_are_shown_as_text_and_never_run() {
    let env = Env::new();
    let tape = env.path("xss.ndjson");
    xss_tape(&tape);
    let page = env.path("xss.html");
    view(
        &env,
        &[
            tape.to_str().expect("utf-8"),
            "-o",
            page.to_str().expect("utf-8"),
        ],
    );
    let f = browse(&env, &page, "xss", None);
    // Nothing ran and nothing was added: the page's two scripts, none of the tape's tags.
    assert_eq!(f["injected"]["xss"], Value::Null, "{f:#}");
    assert_eq!(f["injected"]["scripts"], 2, "{f:#}");
    assert_eq!(f["injected"]["elements"], 0, "{f:#}");
    // …and every payload is on the page, literally.
    let [a, b, c, d, e] = PAYLOADS;
    assert!(
        f["lane_text"]
            .as_str()
            .expect("lane")
            .contains(&format!("{a} · {d}")),
        "{f:#}"
    );
    let rows = strings(&f["rows"]).join("\n");
    assert!(rows.contains(&format!("tools/call {b} #1")), "{rows}");
    // The line separator in a name is shown as an escape, as `show` does.
    let e_shown = e.replace('\u{2028}', "\\u{2028}");
    assert!(rows.contains(&format!("notifications/{e_shown}")), "{rows}");
    assert!(rows.contains(c), "the note: {rows}");
    assert!(rows.contains(d), "the error's message: {rows}");
    assert_eq!(strings(&f["flags"]), [c]);
    let details = strings(&f["details"]).join("\n");
    for p in PAYLOADS {
        // The pretty-printed JSON escapes only `"` and `\`: the payload is there as a
        // JSON string, or as it is in the label.
        let quoted = serde_json::to_string(p).expect("json");
        assert!(
            details.contains(p) || details.contains(quoted.trim_matches('"')),
            "{p:?} not shown in {details}"
        );
    }
    // The search finds the two entries that carry the fifth payload, and the note.
    assert_eq!(f["search_rows"], 3, "{f:#}");
}

/// A tape of `n` entries: two connections, each a start, then calls and their answers
/// (`needle-K` in each), then a close.
fn big_tape(path: &Path, n: usize) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let per = n / 2;
    for (c, conn) in ["a-1", "b-1"].into_iter().enumerate() {
        let ts = |k: usize| {
            let ms = (c * per + k) * 7;
            format!(
                "2026-12-01T10:{:02}:{:02}.{:03}Z",
                ms / 60_000,
                ms / 1000 % 60,
                ms % 1000
            )
        };
        let meta = |dir: &str, k: usize| {
            format!(
                r#""_meta":{{"dir":"{dir}","server":"big","conn":"{conn}","ts":"{}"}}"#,
                ts(k)
            )
        };
        writeln!(
            f,
            r#"{{"jsonrpc":"2.0","method":"$transport/start","params":{{}},{}}}"#,
            meta("lifecycle", 0)
        )
        .expect("write");
        let mut k = 1;
        while k + 2 < per {
            let id = c * per + k;
            writeln!(f, r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"m":"needle-{id}"}}}},{}}}"#, meta("send", k)).expect("write");
            writeln!(f, r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"needle-{id}"}}]}},{}}}"#, meta("recv", k + 1)).expect("write");
            k += 2;
        }
        while k + 1 < per {
            writeln!(
                f,
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{}},{}}}"#,
                meta("recv", k)
            )
            .expect("write");
            k += 1;
        }
        writeln!(
            f,
            r#"{{"jsonrpc":"2.0","method":"$transport/close","params":{{"exitCode":0}},{}}}"#,
            meta("lifecycle", k)
        )
        .expect("write");
    }
    f.flush().expect("flush");
}

#[test]
fn a_tape_of_100_000_entries_opens_and_scrolls_to_its_last_entry() {
    let env = Env::new();
    let tape = env.path("big.ndjson");
    big_tape(&tape, 100_000);
    assert_eq!(tape_lines(&tape), 100_000);
    let page = env.path("big.html");
    let started = std::time::Instant::now();
    view(
        &env,
        &[
            tape.to_str().expect("utf-8"),
            "-o",
            page.to_str().expect("utf-8"),
        ],
    );
    let wrote = started.elapsed();
    let f = browse(&env, &page, "big", None);
    eprintln!(
        "view: 100,000 entries: tape {} bytes, page {} bytes, written in {:.2} s (debug build); \
         Chromium: loaded in {} ms (script ready at {:.0} ms), scrolled to the end in {} ms, \
         searched in {} ms",
        std::fs::metadata(&tape).expect("tape").len(),
        std::fs::metadata(&page).expect("page").len(),
        wrote.as_secs_f64(),
        f["load_ms"],
        f["ready_ms"],
        f["scroll_ms"],
        f["search_ms"]
    );
    assert_eq!(f["entries"], 100_000);
    assert_eq!(f["lanes"], 2, "{f:#}");
    // Only the visible rows are in the page, at the top and at the bottom.
    let first = strings(&f["first_rows"]);
    assert!(
        !first.is_empty() && first.len() < 200,
        "{} rows",
        first.len()
    );
    assert!(first[0].contains("start"), "{:?}", first[0]);
    let last = strings(&f["last_rows"]);
    assert!(!last.is_empty() && last.len() < 200, "{} rows", last.len());
    assert_eq!(last.last().map(String::as_str), Some("100000"), "{last:?}");
    // The last call's id is 99997 (ids count entries from 1, the calls are on odd ones):
    // its request and its answer are found among all.
    assert_eq!(f["search_count"], "2 of 100000", "{f:#}");
}

#[test]
fn a_real_verify_receipt_marks_the_changed_call_and_lists_its_path() {
    let env = Env::new();
    record_everything(&env, "s");
    let tape = env.tape("s");
    // The recorded echo said something else: verify reports it changed.
    let body = std::fs::read_to_string(&tape).expect("tape");
    assert!(body.contains("Echo: hello replay"));
    std::fs::write(
        &tape,
        body.replace("Echo: hello replay", "Echo: hello tape"),
    )
    .expect("edit");
    let out = run(env.mcptape(["verify", "s", "--"]).args(everything_server()));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let receipt = tape.with_file_name("s.verify.json");
    let f = browse_receipt(&env, &receipt, "v.html");
    assert!(
        f["receipt"]
            .as_str()
            .expect("receipt")
            .contains("1 changed"),
        "{f:#}"
    );
    // The echo request (line 5 of the handshake-first tape) is the one diverged row.
    let echo_line = body
        .lines()
        .position(|l| l.contains(r#""name":"echo""#))
        .expect("the echo call")
        + 1;
    assert_eq!(
        strings(&f["diverged_lines"]),
        [echo_line.to_string()],
        "{f:#}"
    );
    assert_eq!(f["detail_title"], "→ tools/call echo #2", "{f:#}");
    assert!(
        strings(&f["verify_heading"]).contains(&"verify: changed".to_owned()),
        "{f:#}"
    );
    assert_eq!(strings(&f["paths"]), ["result.content.0.text"], "{f:#}");
    assert!(
        strings(&f["diffs"])[0].contains(r#""Echo: hello tape" → "Echo: hello replay""#),
        "{f:#}"
    );
}

#[test]
fn replay_leaves_a_receipt_whose_mismatch_the_view_shows() {
    let env = Env::new();
    record_everything(&env, "s");
    let tape = env.tape("s");
    // A client that sends another echo than the recorded one diverges at that call.
    let out = run(env
        .mcptape([
            "replay",
            "s",
            "--",
            &python(),
            &peer("py_client.py"),
            "echo",
            "--message",
            "other",
            "--",
        ])
        .args(crate::support::proxy_argv(
            "everything",
            &["absent-server".to_owned()],
        )));
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    let receipt = tape.with_file_name("s.replay.json");
    let meta = std::fs::metadata(&receipt).expect("a replay receipt beside the tape");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let r: Value = serde_json::from_slice(&std::fs::read(&receipt).expect("read")).expect("JSON");
    assert_eq!(r["kind"], "replay");
    assert_eq!(r["verdicts"][0]["server"], "everything");
    let line = r["verdicts"][0]["mismatch"]["line"]
        .as_u64()
        .expect("a mismatch line");

    let f = browse_receipt(&env, &receipt, "r.html");
    assert!(
        f["receipt"]
            .as_str()
            .expect("receipt")
            .starts_with("replay receipt: DIVERGED everything"),
        "{f:#}"
    );
    assert_eq!(strings(&f["diverged_lines"]), [line.to_string()], "{f:#}");
    assert!(
        strings(&f["verify_heading"]).contains(&"replay: mismatch".to_owned()),
        "{f:#}"
    );
}

#[test]
fn bad_receipts_symlinks_and_a_missing_opener_are_reported() {
    let env = Env::new();
    let tape = env.path("t.ndjson");
    xss_tape(&tape);
    let t = tape.to_str().expect("utf-8");
    // A receipt that is not one: usage error naming the file.
    let bad = env.path("bad.json");
    std::fs::write(&bad, "[1]").expect("write");
    let out = run(env.mcptape(["view", t, "--verify", bad.to_str().expect("utf-8")]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("bad.json") && stderr(&out).contains("--verify"),
        "{}",
        text(&out)
    );
    let out = run(env.mcptape(["view", t, "--verify", "nowhere.json"]));
    assert!(
        stderr(&out).contains("cannot read the receipt `nowhere.json`"),
        "{}",
        text(&out)
    );
    // The page is never written through a symlink.
    let target = env.path("elsewhere.txt");
    std::fs::write(&target, "keep").expect("write");
    let link = env.path("t.html");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    let out = run(env.mcptape(["view", t]));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(stderr(&out).contains("t.html"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep");
    // --open with no opener on PATH: the page is written, the failure is a warning.
    std::fs::remove_file(&link).expect("unlink");
    let out = run(env
        .mcptape(["view", t, "--open"])
        .env("PATH", env.path("empty-path")));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("warning: cannot open the page"),
        "{}",
        text(&out)
    );
    assert!(link.exists());
}

#[test]
fn the_page_is_never_written_over_the_tape_it_shows() {
    let env = Env::new();
    let tape = env.path("self.ndjson");
    xss_tape(&tape);
    let before = std::fs::read(&tape).expect("tape");
    // `-o` naming the tape, by another spelling of its path.
    let out = run(env.mcptape(["view", "./self.ndjson", "-o", "self.ndjson"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("`self.ndjson` is the tape `")
            && stderr(&out).contains("self.ndjson` itself"),
        "{}",
        text(&out)
    );
    assert_eq!(std::fs::read(&tape).expect("tape"), before);
    // …or by its absolute path.
    let abs = tape.to_str().expect("utf-8");
    let out = run(env.mcptape(["view", "./self.ndjson", "-o", abs]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(std::fs::read(&tape).expect("tape"), before);
    // Another file is written as always.
    view(&env, &["./self.ndjson", "-o", "other.html"]);
    assert!(env.path("other.html").exists());
    // Every command that writes what it made from a tape refuses the same way.
    for args in [
        &["export", "./self.ndjson", "--format", "jsonl"][..],
        &["check", "./self.ndjson", "--max-calls", "99"][..],
        &["diff", "other.ndjson", "./self.ndjson"][..],
    ] {
        std::fs::copy(&tape, env.path("other.ndjson")).expect("copy");
        let out = run(env.mcptape(args.iter().chain(&["--output", abs])));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(stderr(&out).contains("itself"), "{args:?}: {}", text(&out));
        assert_eq!(std::fs::read(&tape).expect("tape"), before, "{args:?}");
    }
}

/// Writes `receipt` (JSON) to `name` in the temp dir and returns its path as a string.
fn receipt_file(env: &Env, name: &str, receipt: &Value) -> String {
    let path = env.path(name);
    std::fs::write(&path, receipt.to_string()).expect("write the receipt");
    path.to_str().expect("utf-8").to_owned()
}

#[test]
fn a_receipt_of_another_tape_or_server_is_refused_by_view_and_check() {
    let env = Env::new();
    let (t, u) = (env.path("t.ndjson"), env.path("u.ndjson"));
    xss_tape(&t);
    xss_tape(&u);
    let [server, ..] = PAYLOADS;
    let call = json!({"server": server, "conn": "c", "line": 2, "method": "tools/call",
        "class": "changed", "differences": [{"path": "result", "old": 1, "new": 2}]});
    let other = receipt_file(
        &env,
        "u.verify.json",
        &json!({"kind": "verify", "tape": u, "server": server, "calls": [call]}),
    );
    let t_arg = t.to_str().expect("utf-8");
    let out = run(env.mcptape(["view", t_arg, "--verify", &other]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("u.verify.json")
            && err.contains(&format!("is not of the tape `{}`", t.display()))
            && err.contains(&format!("made for `{}`", u.display())),
        "{}",
        text(&out)
    );
    // check --fail-on diverged reads receipts the same way.
    let out = run(env.mcptape(["check", t_arg, "--fail-on", "diverged", "--receipt", &other]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("u.verify.json") && stderr(&out).contains("is not of the tape"),
        "{}",
        text(&out)
    );
    // No `tape` (an older receipt): taken at its word, but its server must be on the tape.
    let stranger = receipt_file(
        &env,
        "s.verify.json",
        &json!({"kind": "verify", "server": "elsewhere", "calls": []}),
    );
    let out = run(env.mcptape(["view", t_arg, "--verify", &stranger]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("no connection to the server `elsewhere`"),
        "{}",
        text(&out)
    );
    // This tape's receipt, named by another spelling of the path, is shown.
    let own = receipt_file(
        &env,
        "t.verify.json",
        &json!({"kind": "verify", "tape": env.path("./t.ndjson"), "server": server, "calls": [call]}),
    );
    view(&env, &[t_arg, "--verify", &own]);
    // A verify receipt without its server says so; a missing receipt is not a "tape".
    let bare = receipt_file(&env, "bare.json", &json!({"kind": "verify"}));
    let out = run(env.mcptape(["view", t_arg, "--verify", &bare]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("a verify receipt with no `server`"),
        "{}",
        text(&out)
    );
    let out = run(env.mcptape(["view", t_arg, "--verify", "nowhere.json"]));
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        stderr(&out).contains("cannot read the receipt `nowhere.json`")
            && !stderr(&out).contains("tape"),
        "{}",
        text(&out)
    );
}

/// A tape recorded `ago` before now, one connection of server `ev\u{202e}il`: a start,
/// three calls to tool `a\u{200b}b` over its first second, and a close.
fn old_tape(path: &Path, ago: std::time::Duration) {
    let t0 = std::time::SystemTime::now() - ago;
    let ts = |ms: u64| {
        humantime::format_rfc3339_millis(t0 + std::time::Duration::from_millis(ms)).to_string()
    };
    let entry = |mut v: Value, dir: &str, ms: u64| {
        v["_meta"] = json!({"dir": dir, "server": "ev\u{202e}il", "conn": "c1", "ts": ts(ms)});
        v.to_string()
    };
    let mut lines = vec![entry(
        json!({"jsonrpc": "2.0", "method": "$transport/start", "params": {}}),
        "lifecycle",
        0,
    )];
    for (id, (a, b)) in [(0, 100), (300, 600), (700, 1000)].into_iter().enumerate() {
        lines.push(entry(
            json!({"jsonrpc": "2.0", "id": id + 1, "method": "tools/call",
                "params": {"name": "a\u{200b}b", "arguments": {}}}),
            "send",
            a,
        ));
        lines.push(entry(
            json!({"jsonrpc": "2.0", "id": id + 1, "result": {"content": []}}),
            "recv",
            b,
        ));
    }
    lines.push(entry(
        json!({"jsonrpc": "2.0", "method": "$transport/close", "params": {"exitCode": 0}}),
        "lifecycle",
        1000,
    ));
    std::fs::write(path, lines.join("\n") + "\n").expect("write the tape");
}

#[test]
fn a_note_added_hours_later_keeps_the_axis_to_the_traffic_and_names_are_shown_escaped() {
    let env = Env::new();
    let tape = env.path("old.ndjson");
    old_tape(
        &tape,
        std::time::Duration::from_secs(3 * 3600 + 23 * 60 + 10),
    );
    let t = tape.to_str().expect("utf-8");
    // The README's workflow: a note on an old tape, with the real command.
    let out = run(env.mcptape(["note", t, "greeted Ada"]));
    assert!(out.status.success(), "{}", text(&out));
    let page = env.path("old.html");
    view(&env, &[t, "-o", page.to_str().expect("utf-8")]);
    let f = browse(&env, &page, "span", None);
    // The axis is the traffic's second, and the bars spread over the lane (three bars
    // covering 70 % of it), not into one pixel.
    assert_eq!(
        strings(&f["ticks"]).last().map(String::as_str),
        Some("+1.00 s"),
        "{f:#}"
    );
    let width = f["lane_box"]["width"].as_f64().expect("width");
    let painted = f["bar_columns"].as_f64().expect("columns");
    assert!(
        painted > width * 0.5,
        "{painted} of {width} px painted: {f:#}"
    );
    // The note is three hours in, said readably, and its flag is pinned inside the lane.
    let note_at = strings(&f["note_at"]);
    assert!(note_at[0].starts_with("3 h 2"), "{f:#}");
    let (flag, lane) = (&f["flag_box"], &f["lane_box"]);
    let right = flag["x"].as_f64().expect("x") + flag["width"].as_f64().expect("w");
    let lane_right = lane["x"].as_f64().expect("x") + width;
    assert!(
        right <= lane_right + 1.0
            && flag["x"].as_f64().expect("x") >= lane["x"].as_f64().expect("x"),
        "{f:#}"
    );
    assert!(
        f["flag_title"]
            .as_str()
            .expect("title")
            .contains("outside the traffic"),
        "{f:#}"
    );
    assert_eq!(f["flag_detail"], "note: greeted Ada", "{f:#}");
    // The first call's row says 0 ms, the last answer 1.00 s.
    let at = strings(&f["at_texts"]);
    assert_eq!(
        (at[1].as_str(), at[6].as_str()),
        ("0 ms", "1.00 s"),
        "{f:#}"
    );
    // Bidi and zero-width characters in names are shown as escapes, in the lane, the
    // list, the detail and the pretty message.
    assert_eq!(strings(&f["lane_labels"]), ["ev\\u{202e}il · c1"], "{f:#}");
    let rows = strings(&f["rows"]).join("\n");
    assert!(rows.contains("tools/call a\\u{200b}b #1"), "{rows}");
    assert_eq!(f["detail_title"], "→ tools/call a\\u{200b}b #1", "{f:#}");
    let message = f["detail_message"].as_str().expect("message");
    assert!(message.contains(r#""name": "a\u200bb""#), "{message}");
    let all = format!("{f}");
    for hidden in ['\u{202e}', '\u{200b}'] {
        assert!(
            !all.contains(hidden),
            "{hidden:?} reached the page as it is: {f:#}"
        );
    }
}
