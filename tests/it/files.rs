//! What mcptape writes, and where it refuses to: no tape, `.prev`, receipt or temporary
//! file is written through a symlink; directories it did not create keep their mode; a
//! tape in a world-writable directory is refused unless the directory is sticky and the
//! file ours. A recording that could not be written whole reaches the exit status on
//! every path (a full disk is the kernel's `/dev/full`, which fails every write with
//! ENOSPC), and durations are checked when the command line is parsed.

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use crate::http::after_stderr_line;
use crate::support::*;

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

const VICTIM: &str = "a file nobody asked mcptape to touch\n";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("stat {}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// `record`'s CMD that appends one entry to its tape, as a proxy would: a tape nothing
/// reached is undone, and these tests look at the file a recording leaves.
fn appending(env: &Env) -> Vec<String> {
    let entry = env.path("entry.ndjson");
    std::fs::write(
        &entry,
        "{\"jsonrpc\":\"2.0\",\"method\":\"$transport/start\",\"params\":{},\"_meta\":{\"dir\":\"lifecycle\",\"server\":\"t\",\"ts\":\"2026-12-01T00:00:00.000Z\",\"conn\":\"c\"}}\n",
    )
    .expect("write entry");
    vec![
        "sh".into(),
        "-c".into(),
        "cat \"$0\" >> \"$MCPTAPE_RECORD\"".into(),
        entry.to_string_lossy().into_owned(),
    ]
}

fn chmod(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

/// A 0644 file with [`VICTIM`] in it (or empty), and a symlink named `link` to it.
fn victim_behind(env: &Env, link: &str, content: &str) -> (PathBuf, PathBuf) {
    let victim = env.path("victim");
    std::fs::write(&victim, content).expect("write victim");
    chmod(&victim, 0o644);
    let link = env.path(link);
    symlink(&victim, &link).expect("symlink");
    (victim, link)
}

fn assert_untouched(victim: &Path, content: &str) {
    assert_eq!(
        std::fs::read_to_string(victim).expect("read victim"),
        content,
        "the symlink's target was written"
    );
    assert_eq!(mode(victim), 0o644, "the symlink's target was chmodded");
}

/// The example tape of the repository, copied to `name` in the test's directory.
fn example_tape(env: &Env, name: &str) -> PathBuf {
    let tape = env.path(name);
    std::fs::copy(recordings_example().join("example.ndjson"), &tape).expect("copy tape");
    tape
}

#[test]
fn proxy_record_through_a_symlink_is_refused_and_its_target_untouched() {
    let env = Env::new();
    let (victim, link) = victim_behind(&env, "link.ndjson", VICTIM);
    let out = run(env
        .mcptape(["proxy", "--server", "example", "--record"])
        .arg(&link)
        .arg("--")
        .arg(example_server()));
    refused(&out, "link.ndjson`: it is a symbolic link", &victim, VICTIM);
}

#[test]
fn mcptape_record_through_a_symlink_passes_through_and_record_exits_3() {
    let env = Env::new();
    let (victim, link) = victim_behind(&env, "link.ndjson", VICTIM);
    // The SDK client scrubs its server's environment: the proxy takes MCPTAPE_RECORD
    // (the link) and MCPTAPE_REPORT from its nearest ancestor that has them.
    let mut cmd = env.mcptape(["record", "s", "--", "env"]);
    cmd.arg(format!("MCPTAPE_RECORD={}", link.display()))
        .args([python(), peer("py_client.py")])
        .args(["echo", "--message", "still here", "--"])
        .args(proxy_argv("example", &[example_server()]));
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Echo: still here"),
        "the session went on: {}",
        text(&out)
    );
    let err = stderr(&out);
    assert!(err.contains("not recording server `example`"), "{err}");
    assert!(
        err.contains("the recording of server `example` is incomplete: refusing to write"),
        "{err}"
    );
    assert_untouched(&victim, VICTIM);
}

#[test]
fn record_into_a_symlink_to_an_empty_file_is_refused_before_the_command() {
    let env = Env::new();
    let (victim, link) = victim_behind(&env, "link.ndjson", "");
    let marker = env.path("ran");
    let out = run(env
        .mcptape(["record"])
        .arg(&link)
        .args(["--", "touch"])
        .arg(&marker));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("link.ndjson`: it is a symbolic link"),
        "{}",
        text(&out)
    );
    assert!(!marker.exists(), "the command ran");
    assert_untouched(&victim, "");
}

#[test]
fn a_symlinked_prev_is_never_written_through() {
    let env = Env::new();
    let tape = example_tape(&env, "t.ndjson");
    let before = std::fs::read(&tape).expect("read");
    let (victim, _link) = victim_behind(&env, "t.prev.ndjson", VICTIM);

    // verify --update keeps a copy of the tape as .prev before re-blessing it.
    let out = run(env
        .mcptape(["verify", "--update"])
        .arg(&tape)
        .arg("--")
        .arg(example_server())
        .arg("--drift"));
    refused(
        &out,
        "t.prev.ndjson`: it is a symbolic link",
        &victim,
        VICTIM,
    );
    assert_eq!(
        std::fs::read(&tape).expect("read"),
        before,
        "tape rewritten"
    );

    // record rotates the previous tape into .prev.
    let out = run(env.mcptape(["record"]).arg(&tape).args(["--", "true"]));
    refused(
        &out,
        "t.prev.ndjson`: it is a symbolic link",
        &victim,
        VICTIM,
    );
    assert_eq!(std::fs::read(&tape).expect("read"), before, "tape moved");
}

#[test]
fn verify_never_writes_its_receipt_through_a_symlink() {
    let env = Env::new();
    record_py(&env, "t.ndjson", "example", "example", &[example_server()]);
    let tape = env.path("t.ndjson");
    let (victim, link) = victim_behind(&env, "t.verify.json", VICTIM);
    let out = run(env
        .mcptape(["verify"])
        .arg(&tape)
        .arg("--")
        .arg(example_server()));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("7 same, 0 changed"),
        "the report is still printed: {}",
        text(&out)
    );
    assert!(
        stderr(&out).contains("t.verify.json`: it is a symbolic link"),
        "{}",
        text(&out)
    );
    assert_untouched(&victim, VICTIM);
    assert!(std::fs::symlink_metadata(&link).expect("link").is_symlink());

    // Without the link, the receipt is written beside the tape.
    std::fs::remove_file(&link).expect("rm");
    let out = run(env
        .mcptape(["verify"])
        .arg(&tape)
        .arg("--")
        .arg(example_server()));
    assert!(out.status.success(), "{}", text(&out));
    let receipt = std::fs::read_to_string(&link).expect("receipt");
    assert!(receipt.contains("\"complete\": true"), "{receipt}");
}

#[test]
fn redact_refuses_a_symlinked_tape_and_leaves_both_as_they_were() {
    let env = Env::new();
    let real = env.path("real.ndjson");
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2-but-longer"}},"_meta":{"dir":"send","server":"s","ts":"2026-11-30T04:35:01.266Z","conn":"c-1"}}"#;
    std::fs::write(&real, format!("{line}\n")).expect("write");
    let link = env.path("link.ndjson");
    symlink(&real, &link).expect("symlink");
    let out = run(env.mcptape(["redact"]).arg(&link));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("link.ndjson`: it is a symbolic link"),
        "{}",
        text(&out)
    );
    assert!(std::fs::symlink_metadata(&link).expect("link").is_symlink());
    assert_eq!(
        std::fs::read_to_string(&real).expect("read"),
        format!("{line}\n")
    );
    // The real tape itself is redacted in place.
    let out = run(env.mcptape(["redact"]).arg(&real));
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !std::fs::read_to_string(&real)
            .expect("read")
            .contains("hunter2")
    );
}

#[test]
fn a_symlinked_recordings_directory_keeps_its_targets_mode() {
    let env = Env::new();
    let shared = env.path("shared");
    std::fs::create_dir(&shared).expect("mkdir");
    chmod(&shared, 0o755);
    std::fs::create_dir_all(env.mcptape_home()).expect("mkdir home");
    symlink(&shared, env.mcptape_home().join("recordings")).expect("symlink");
    let out = run(env.mcptape(["record", "s", "--"]).args(appending(&env)));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(mode(&shared), 0o755, "the link's target was chmodded");
    assert_eq!(mode(&shared.join("s.ndjson")), 0o600);
}

#[test]
fn only_directories_mcptape_creates_get_its_mode() {
    let env = Env::new();
    let named = env.path("project/recordings");
    std::fs::create_dir_all(&named).expect("mkdir");
    chmod(&named, 0o755);
    let out = run(env
        .mcptape(["record", "project/recordings/x.ndjson", "--"])
        .args(appending(&env)));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        mode(&named),
        0o755,
        "a directory the user named was chmodded"
    );
    assert_eq!(mode(&named.join("x.ndjson")), 0o600);

    let out = run(env.mcptape(["record", "fresh/recordings/x.ndjson", "--", "true"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(mode(&env.path("fresh")), 0o700);
    assert_eq!(mode(&env.path("fresh/recordings")), 0o700);
}

#[test]
fn a_world_writable_directory_is_refused_unless_sticky_and_the_tape_ours() {
    let env = Env::new();
    let open = env.path("open");
    std::fs::create_dir(&open).expect("mkdir");
    chmod(&open, 0o777);
    let out = run(env.mcptape(["record", "open/x.ndjson", "--", "true"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("open/x.ndjson`: its directory is writable by every user"),
        "{}",
        text(&out)
    );
    assert!(!open.join("x.ndjson").exists());

    // The /tmp case: sticky, so nobody else can swap our file.
    chmod(&open, 0o1777);
    let out = run(env
        .mcptape(["record", "open/x.ndjson", "--"])
        .args(appending(&env)));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(mode(&open.join("x.ndjson")), 0o600);
    assert_eq!(mode(&open), 0o1777);
}

#[test]
fn a_standalone_proxy_record_to_a_full_disk_exits_3() {
    let env = Env::new();
    let mut p = Proc::spawn(
        env.mcptape([
            "proxy",
            "--server",
            "example",
            "--record",
            "/dev/full",
            "--",
        ])
        .arg(example_server()),
    );
    p.send(INIT);
    assert_eq!(p.recv()["id"], 1, "the session goes on");
    p.close_stdin();
    assert_eq!(p.wait().code(), Some(3));
    let err = p.stderr();
    assert!(err.contains("cannot write to tape `/dev/full`"), "{err}");
    assert!(
        err.contains("the recording of server `example` is incomplete"),
        "{err}"
    );
}

#[test]
fn the_http_front_recording_to_a_full_disk_exits_3() {
    use std::io::{Read, Write};
    let env = Env::new();
    // A port nobody listens on (held bound, so nothing else takes it): the upstream
    // refuses, the session is still recorded.
    let refusing = crate::http::RefusingPort::bind();
    let closed = refusing.addr;
    let mut front = env
        .mcptape(["proxy", "--server", "remote", "--listen", "127.0.0.1:0"])
        .args([
            "--url",
            &format!("http://{closed}/mcp"),
            "--record",
            "/dev/full",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn the front");
    let url = after_stderr_line(&mut front, "listening on http://", "the front");
    let addr = url.split('/').next().expect("host:port").to_owned();
    let mut conn = std::net::TcpStream::connect(&addr).expect("connect");
    conn.set_read_timeout(Some(DEADLINE)).expect("timeout");
    write!(
        conn,
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{INIT}",
        INIT.len()
    )
    .expect("post");
    let mut answer = String::new();
    conn.read_to_string(&mut answer).expect("answer");
    assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(front.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("kill");
    assert_eq!(wait_child(&mut front).code(), Some(3));
}

#[test]
fn timeouts_that_are_not_a_sane_number_of_seconds_are_refused_at_parse_time() {
    let env = Env::new();
    let tape = example_tape(&env, "t.ndjson");
    for bad in ["inf", "1e30", "-1", "nan", "0"] {
        let out = run(env
            .mcptape(["verify", "--timeout", bad])
            .arg(&tape)
            .arg("--")
            .arg(example_server()));
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out));
        assert!(
            stderr(&out).contains(&format!("invalid value '{bad}' for '--timeout")),
            "{bad}: {}",
            text(&out)
        );
    }
    let config = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("write config");
    for bad in ["inf", "1e30"] {
        let out = run(env.mcptape(["call", "example.echo", "message:hi", "--timeout", bad]));
        assert_eq!(out.status.code(), Some(2), "{bad}: {}", text(&out));
        assert!(stderr(&out).contains("'--timeout"), "{bad}: {}", text(&out));
    }
    let out = run(env.mcptape(["call", "example.echo", "message:hi", "--timeout", "2.5"]));
    assert!(out.status.success(), "{}", text(&out));
}

fn mkfifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600)).expect("mkfifo");
}

fn is_fifo(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo())
}

#[test]
fn verify_refuses_a_fifo_receipt_instead_of_hanging_also_another_users_in_a_sticky_dir() {
    let env = Env::new();
    let tape = example_tape(&env, "v.ndjson");
    let receipt = env.path("v.verify.json");
    mkfifo(&receipt);
    let out = run_or_hang(
        env.mcptape(["verify"])
            .arg(&tape)
            .arg("--")
            .arg(example_server()),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("same"),
        "the report is still printed: {}",
        text(&out)
    );
    assert!(
        stderr(&out).contains("refusing to write `")
            && stderr(&out).contains("v.verify.json`: it is a FIFO"),
        "{}",
        text(&out)
    );
    assert!(is_fifo(&receipt));

    // The /tmp case: a sticky directory every user writes to, and a FIFO of `nobody`'s
    // there (when the tests run as root; otherwise ours, refused all the same).
    let open = env.path("open");
    std::fs::create_dir(&open).expect("mkdir");
    chmod(&open, 0o1777);
    let tape = example_tape(&env, "open/v.ndjson");
    let receipt = open.join("v.verify.json");
    mkfifo(&receipt);
    if nix::unistd::geteuid().is_root() {
        let nobody = nix::unistd::Uid::from_raw(65534);
        nix::unistd::chown(&receipt, Some(nobody), None).expect("chown");
    }
    let out = run_or_hang(
        env.mcptape(["verify"])
            .arg(&tape)
            .arg("--")
            .arg(example_server()),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("open/v.verify.json`: it is a FIFO"),
        "{}",
        text(&out)
    );
    assert!(is_fifo(&receipt));
}

#[test]
fn verify_update_refuses_a_fifo_prev_and_leaves_the_tape() {
    let env = Env::new();
    let tape = example_tape(&env, "u.ndjson");
    let before = std::fs::read(&tape).expect("read");
    let prev = env.path("u.prev.ndjson");
    mkfifo(&prev);
    let out = run_or_hang(
        env.mcptape(["verify", "--update"])
            .arg(&tape)
            .arg("--")
            .arg(example_server())
            .arg("--drift"),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("u.prev.ndjson`: it is a FIFO"),
        "{}",
        text(&out)
    );
    assert!(is_fifo(&prev));
    assert_eq!(
        std::fs::read(&tape).expect("read"),
        before,
        "tape rewritten"
    );
}

#[test]
fn list_reports_a_fifo_in_the_recordings_directory_as_unreadable_and_goes_on() {
    let env = Env::new();
    let dir = env.mcptape_home().join("recordings");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::copy(
        recordings_example().join("example.ndjson"),
        dir.join("a.ndjson"),
    )
    .expect("copy");
    mkfifo(&dir.join("b.ndjson"));
    let out = run_or_hang(&mut env.mcptape(["list"]));
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let row = |name: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {stdout}"))
            .to_owned()
    };
    assert!(row("a ").contains("example"), "{stdout}");
    assert!(
        row("b ").contains("unreadable: cannot read tape"),
        "{stdout}"
    );
}

#[test]
fn redact_check_and_show_refuse_a_fifo_and_a_device_without_reading_them() {
    let env = Env::new();
    let fifo = env.path("f.ndjson");
    mkfifo(&fifo);
    for tape in [fifo.as_path(), Path::new("/dev/zero")] {
        for args in [&["redact"][..], &["redact", "--check"], &["show"]] {
            let out = run_or_hang(env.mcptape(args).arg(tape));
            assert_eq!(
                out.status.code(),
                Some(2),
                "{args:?} {tape:?}: {}",
                text(&out)
            );
            let err = stderr(&out);
            assert!(
                err.contains(&format!("cannot read tape `{}`", tape.display()))
                    && err.contains("not a regular file: it is a"),
                "{args:?} {tape:?}: {err}"
            );
        }
    }
    assert!(is_fifo(&fifo));
}

#[test]
fn proxy_record_refuses_a_fifo_tape() {
    let env = Env::new();
    let fifo = env.path("p.ndjson");
    mkfifo(&fifo);
    let out = run_or_hang(
        env.mcptape(["proxy", "--server", "example", "--record"])
            .arg(&fifo)
            .arg("--")
            .arg(example_server()),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("p.ndjson`: it is a FIFO (named pipe), not a regular file"),
        "{}",
        text(&out)
    );
    assert!(is_fifo(&fifo));
}

/// A 0644 file with [`VICTIM`] in it, and a second name (hard link) `name` for it.
fn victim_linked(env: &Env, name: &str) -> (PathBuf, PathBuf) {
    let victim = env.path("victim");
    std::fs::write(&victim, VICTIM).expect("write victim");
    chmod(&victim, 0o644);
    let second = env.path(name);
    std::fs::hard_link(&victim, &second).expect("hard link");
    (victim, second)
}

#[test]
fn call_record_refuses_a_hard_linked_tape_and_leaves_the_other_name_alone() {
    let env = Env::new();
    let config = serde_json::json!({"mcpServers": {"ex": {"command": example_server()}}});
    std::fs::write(env.path(".mcp.json"), config.to_string()).expect("write config");
    let (victim, _second) = victim_linked(&env, "hl.ndjson");
    let out =
        run_or_hang(&mut env.mcptape(["call", "ex.echo", "message:hi", "--record", "./hl.ndjson"]));
    refused(
        &out,
        "hl.ndjson`: it has 2 names (hard links)",
        &victim,
        VICTIM,
    );
}

#[test]
fn record_refuses_a_hard_linked_tape_before_the_command() {
    let env = Env::new();
    let (victim, second) = victim_linked(&env, "hl.ndjson");
    let marker = env.path("ran");
    let out = run_or_hang(
        env.mcptape(["record"])
            .arg(&second)
            .args(["--", "touch"])
            .arg(&marker),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("hl.ndjson`: it has 2 names (hard links)"),
        "{}",
        text(&out)
    );
    assert!(!marker.exists(), "the command ran");
    assert!(!env.path("hl.prev.ndjson").exists(), "the tape was rotated");
    assert_untouched(&victim, VICTIM);
}

#[test]
fn redact_refuses_a_hard_linked_tape_so_no_name_keeps_the_secret_silently() {
    let env = Env::new();
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"password":"hunter2-but-longer"}},"_meta":{"dir":"send","server":"s","ts":"2026-11-30T04:35:01.266Z","conn":"c-1"}}"#;
    let real = env.path("real.ndjson");
    std::fs::write(&real, format!("{line}\n")).expect("write");
    let second = env.path("second.ndjson");
    std::fs::hard_link(&real, &second).expect("hard link");
    let out = run_or_hang(env.mcptape(["redact"]).arg(&second));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("second.ndjson`: it has 2 names (hard links)"),
        "{}",
        text(&out)
    );
    for name in [&real, &second] {
        assert_eq!(
            std::fs::read_to_string(name).expect("read"),
            format!("{line}\n")
        );
    }
    // Checking only reads: it still reports the secret.
    let out = run_or_hang(env.mcptape(["redact", "--check"]).arg(&second));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

/// The command was refused as a usage error (exit 2) saying `why`, and `victim` still
/// holds `content`.
fn refused(out: &std::process::Output, why: &str, victim: &std::path::Path, content: &str) {
    assert_eq!(out.status.code(), Some(2), "{}", text(out));
    assert!(stderr(out).contains(why), "{}", text(out));
    assert_untouched(victim, content);
}
