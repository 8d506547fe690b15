//! The GitHub Action's run step and the npm launcher at their edges: a tape file name
//! that holds a workflow command (a pull request controls the names its globs expand
//! to), a user's own `--format` beside the action's `--format github`, and a binary
//! killed by a signal that Node keeps for itself (SIGUSR1 opens its debugger).

use std::os::unix::process::ExitStatusExt;

use crate::action::{PLAIN, record_fixture, run_action, stdout};
use crate::npm::{Project, serving_with};
use crate::support::*;

/// A tape line whose argument still looks like an OpenAI key: `redact --check` names it.
fn dirty_line() -> String {
    let key = format!(
        "sk-proj-{}",
        fake("abcdefghijklmnopqrstuvwxyz0123456789", 28, 5)
    );
    format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"{key}"}}}},"_meta":{{"dir":"send","server":"example","ts":"2026-11-30T04:35:01.266Z","conn":"c9"}}}}"#
    )
}

#[test]
fn the_action_escapes_tape_names_that_hold_a_workflow_command() {
    let env = Env::new();
    let tapes = env.path("project/recordings");
    std::fs::create_dir_all(&tapes).expect("dirs");
    // A newline, then a command of the name's own; and a name with `%`, an escape
    // sequence and a bidi control.
    let forged = "a\n::warning file=README.md,line=1::PR-INJECTED\nx.ndjson";
    std::fs::write(tapes.join(forged), format!("{}\n", dirty_line())).expect("write");
    std::fs::write(tapes.join("b%0A\u{1b}]0;t\u{7}\u{202e}.ndjson"), "").expect("write");

    for annotations in ["true", "false"] {
        let given = [
            ("install", "none"),
            ("annotations", annotations),
            ("redact-check", "recordings/**/*.ndjson"),
            ("working-directory", "project"),
        ];
        let out = run_action(&env, &given);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let shown = stdout(&out);
        assert!(
            !shown
                .lines()
                .any(|l| l.starts_with("::warning file=README.md")),
            "a file name forged an annotation: {}",
            text(&out)
        );
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{202e}'),
            "{shown:?}"
        );
        let group = shown
            .lines()
            .find(|l| l.starts_with("::group::mcptape redact --check "))
            .unwrap_or_else(|| panic!("no group: {}", text(&out)));
        for name in [
            "recordings/a%0A::warning file=README.md,line=1::PR-INJECTED%0Ax.ndjson",
            "recordings/b%250A\\x1b]0;t\\x07\\u{202e}.ndjson",
        ] {
            assert!(group.contains(name), "{name} in {group}");
        }
        // The summary annotation names the same command line, escaped the same way.
        let summary = shown
            .lines()
            .find(|l| l.starts_with("::error title=mcptape redact::"))
            .unwrap_or_else(|| panic!("no summary: {}", text(&out)));
        assert!(
            summary.contains("PR-INJECTED%0Ax.ndjson") && summary.ends_with("exited with status 1"),
            "{summary}"
        );
    }
}

#[test]
fn the_action_adds_no_format_of_its_own_when_the_input_gives_one() {
    let env = Env::new();
    record_fixture(&env);
    std::fs::copy(env.tape("fx"), env.path("fx.ndjson")).expect("copy");
    let verify = format!("fx --format junit -- {}", example_server());
    let given = [
        ("install", "none"),
        ("redact-check", "--format=json fx.ndjson"),
        ("verify", &verify),
    ];
    let out = run_action(&env, &given);
    assert!(out.status.success(), "{}", text(&out));
    let shown = stdout(&out);
    assert!(
        shown.contains("::group::mcptape redact --check --format=json fx.ndjson\n"),
        "{}",
        text(&out)
    );
    assert!(
        shown.contains(&format!("::group::mcptape verify {verify}\n")),
        "{}",
        text(&out)
    );
    assert!(shown.contains("<testsuite"), "the junit report: {shown}");
    assert!(!shown.contains("--format github"), "{shown}");

    // A `--format` after `--` belongs to the wrapped command: the action still adds its own.
    let replay = "fx -- sh -c 'exit 0' sh --format junit";
    let out = run_action(&env, &[PLAIN[0], ("replay", replay)]);
    assert!(
        stdout(&out).contains("::group::mcptape replay --format github fx -- sh -c exit 0 sh"),
        "{}",
        text(&out)
    );
}

/// SIGUSR1 starts Node's inspector: re-raised on the launcher it would open a debugger
/// port instead of ending it (whether "Debugger listening" is printed before the exit
/// is a race). A preloaded script reports each signal the launcher sends itself, so the
/// test sees the launcher's choice, not the race: it exits 128+10, raising nothing.
#[test]
fn the_launcher_exits_138_without_a_debugger_when_the_binary_dies_of_sigusr1() {
    let project = Project::install();
    let preload = project.env.path("report-self-signals.js");
    std::fs::write(
        &preload,
        "const kill = process.kill.bind(process);\n\
         process.kill = (pid, signal) => {\n\
         \x20 if (pid === process.pid) process.stderr.write(`raised ${signal} on itself\\n`);\n\
         \x20 return kill(pid, signal);\n\
         };\n",
    )
    .expect("write the preload");
    let (mut proc, binary) = serving_with(&project, |cmd| {
        cmd.env("NODE_OPTIONS", format!("--require={}", preload.display()));
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(binary as i32),
        nix::sys::signal::Signal::SIGUSR1,
    )
    .expect("SIGUSR1 the binary");
    let status = proc.wait();
    let stderr = proc.stderr();
    assert_eq!(status.code(), Some(138), "{status:?} {stderr}");
    assert!(!stderr.contains("raised"), "{stderr}");
    assert!(!stderr.contains("Debugger"), "{stderr}");

    // SIGALRM is re-raised (Node leaves its default alone): the launcher dies of it. (Not
    // SIGTERM: mcptape proxy catches that one and exits 143.)
    let (mut proc, binary) = serving_with(&project, |cmd| {
        cmd.env("NODE_OPTIONS", format!("--require={}", preload.display()));
    });
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(binary as i32),
        nix::sys::signal::Signal::SIGALRM,
    )
    .expect("SIGALRM the binary");
    let status = proc.wait();
    let stderr = proc.stderr();
    assert_eq!(status.signal(), Some(14), "{status:?} {stderr}");
    assert!(stderr.contains("raised SIGALRM on itself"), "{stderr}");
}

/// `kill -INT` of a launcher whose stdin is a terminal it is not in the foreground of
/// (here a pty that is not its controlling terminal, as for a background job): no
/// terminal's Ctrl-C reached the binary, so the launcher passes the SIGINT on, as
/// src/process.rs does for a wrapped command. (In the foreground it is not passed on.)
#[test]
fn sigint_reaches_the_binary_when_the_launchers_terminal_is_not_in_the_foreground() {
    use std::io::{BufRead, Write};
    use std::process::Stdio;

    let project = Project::install();
    let pty = nix::pty::openpty(None, None).expect("openpty");
    let mut master = std::fs::File::from(pty.master);
    let launcher = project.dir().join("node_modules/.bin/mcptape");
    let mut cmd = project.npm(&launcher);
    cmd.args(["proxy", "--server", "example", "--"])
        .arg(example_server())
        .stdin(Stdio::from(pty.slave))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn the launcher");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    let mut stderr = child.stderr.take().expect("stderr");
    let (etx, erx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
        let _ = etx.send(text);
    });

    // The binary answers `initialize`: the launcher's handlers are in place.
    writeln!(
        master,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
    )
    .expect("write to the pty");
    let answer = rx.recv_timeout(DEADLINE).expect("an answer to initialize");
    assert!(answer.contains(r#""serverInfo""#), "{answer}");

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT the launcher");
    // The pty stays open (`master` lives on): only the SIGINT passed on ends the binary.
    let status = wait_child(&mut child);
    // The binary holds the stderr too: it closes only once the binary is gone (a launcher
    // that died of the SIGINT without passing it on leaves the binary running).
    let errors = erx
        .recv_timeout(DEADLINE)
        .expect("stderr closed: the SIGINT reached the binary");
    assert!(
        status.code() == Some(130) || status.signal() == Some(2),
        "{status:?} {errors}"
    );
    drop(master);
}
