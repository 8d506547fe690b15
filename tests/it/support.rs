//! Shared test support: a temp home per test, the binaries and peers, and processes
//! driven over real pipes with deadlines (no sleeps, no retries).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

/// Generous upper bound for anything a test waits for.
pub const DEADLINE: Duration = Duration::from_secs(60);

/// The mcptape binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_mcptape"))
}

/// The example server (cargo builds examples for `cargo test`).
pub fn example_server() -> String {
    let path = bin()
        .parent()
        .expect("target dir")
        .join("examples/example-server");
    assert!(
        path.exists(),
        "{} is missing: run `cargo test`, which builds examples",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A file of tests/peers.
pub fn peer(name: &str) -> String {
    root()
        .join("tests/peers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// The Python of the checkout's venv, which has the official `mcp` SDK.
pub fn python() -> String {
    let py = root().join(".venv/bin/python");
    assert!(
        py.exists(),
        "{} is missing: run tests/peers/install first (the README's test command does)",
        py.display()
    );
    py.to_string_lossy().into_owned()
}

/// The command line that starts @modelcontextprotocol/server-everything over stdio.
pub fn everything_server() -> Vec<String> {
    let entry = root()
        .join("tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        entry.exists(),
        "{} is missing: run tests/peers/install first",
        entry.display()
    );
    vec![
        "node".into(),
        entry.to_string_lossy().into_owned(),
        "stdio".into(),
    ]
}

/// The directory of mcporter's sample tapes, vendored so that a clone alone tests.
pub fn samples() -> PathBuf {
    root().join("tests/fixtures")
}

/// The repository's example recordings.
pub fn recordings_example() -> PathBuf {
    root().join("recordings-example")
}

/// A private temporary home for one test.
pub struct Env {
    /// Keeps the directory alive.
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// `$MCPTAPE_HOME`.
    pub fn mcptape_home(&self) -> PathBuf {
        self.dir.path().join("home/.mcptape")
    }

    /// The tape of a session name.
    pub fn tape(&self, session: &str) -> PathBuf {
        self.mcptape_home()
            .join("recordings")
            .join(format!("{session}.ndjson"))
    }

    /// A path inside the temp dir.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A command with HOME and MCPTAPE_HOME inside the temp dir and no inherited mode.
    pub fn cmd(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        for (k, _) in std::env::vars() {
            if k.starts_with("MCPTAPE_") {
                cmd.env_remove(k);
            }
        }
        // Colour is decided by each test (`--color`, the variables), never by the caller's.
        for k in ["NO_COLOR", "CLICOLOR_FORCE", "CLICOLOR"] {
            cmd.env_remove(k);
        }
        cmd.env("HOME", self.dir.path().join("home"))
            .env("MCPTAPE_HOME", self.mcptape_home())
            .current_dir(self.dir.path());
        cmd
    }

    /// `mcptape ARGS`.
    pub fn mcptape<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.cmd(bin());
        cmd.args(args);
        cmd
    }
}

/// Runs a command to completion within the deadline, capturing its output.
pub fn run(mut cmd: impl std::borrow::BorrowMut<Command>) -> Output {
    let cmd = cmd.borrow_mut();
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(DEADLINE) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("{cmd:?} did not finish within {DEADLINE:?}");
        }
    }
}

/// What a finished process wrote on stderr.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A finished process's stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A file's permission bits (`0o600`).
pub fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    meta.permissions().mode() & 0o777
}

/// Output as text, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A running process whose stdout is read line by line on a thread.
pub struct Proc {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Vec<u8>>,
    stderr: mpsc::Receiver<String>,
}

impl Proc {
    pub fn spawn(cmd: &mut Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (etx, erx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            let _ = etx.send(text);
        });
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        Proc {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            stderr: erx,
        }
    }

    /// Writes raw bytes to the process's stdin.
    pub fn write(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write");
        stdin.flush().expect("flush");
    }

    /// Writes one line (adds `\n`).
    pub fn send(&mut self, line: &str) {
        self.write(format!("{line}\n").as_bytes());
    }

    /// The next stdout line, raw (with its `\n`), or None at EOF.
    pub fn recv_raw(&self) -> Option<Vec<u8>> {
        match self.lines.recv_timeout(DEADLINE) {
            Ok(line) => Some(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("no line within {DEADLINE:?}"),
        }
    }

    /// The next stdout line parsed as JSON.
    pub fn recv(&self) -> Value {
        let line = self.recv_raw().expect("a line before EOF");
        serde_json::from_slice(&line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&line)))
    }

    /// Closes stdin (the MCP way for a client to end a stdio session).
    pub fn close_stdin(&mut self) {
        self.stdin.take();
    }

    /// Everything written to stderr, once every holder of the pipe closed it: the process
    /// and every child it started that inherited stderr (so this also proves they exited).
    pub fn stderr(&self) -> String {
        self.stderr
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|_| panic!("stderr still open after {DEADLINE:?}: a process survived"))
    }

    /// Waits for exit within the deadline.
    pub fn wait(&mut self) -> ExitStatus {
        wait_child(&mut self.child)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits for a child within the deadline, without sleeping: a thread waits on its pid.
pub fn wait_child(child: &mut Child) -> ExitStatus {
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        // waitid with WNOWAIT leaves the zombie for Child::wait to reap.
        let status = nix::sys::wait::waitid(
            nix::sys::wait::Id::Pid(nix::unistd::Pid::from_raw(pid)),
            nix::sys::wait::WaitPidFlag::WEXITED | nix::sys::wait::WaitPidFlag::WNOWAIT,
        );
        let _ = tx.send(status.is_ok());
    });
    if rx.recv_timeout(DEADLINE).is_err() {
        let _ = child.kill();
        panic!("process {pid} did not exit within {DEADLINE:?}");
    }
    child.wait().expect("wait")
}

/// The lines of a tape, parsed.
pub fn tape_entries(path: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    text.lines()
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| panic!("tape line is not JSON ({e}): {l}"))
        })
        .collect()
}

/// The raw message text of each tape line of one direction, `_meta` cut out by mcptape's
/// own reader.
pub fn tape_messages(path: &Path, dir: &str) -> Vec<String> {
    let tape = mcptape::Tape::load(path).expect("load tape");
    tape.entries
        .iter()
        .filter(|e| e.meta.dir.as_str() == dir)
        .map(|e| e.message.text().to_owned())
        .collect()
}

/// The lifecycle entries of a tape with this method.
pub fn lifecycle<'a>(entries: &'a [Value], method: &str) -> Vec<&'a Value> {
    entries
        .iter()
        .filter(|e| e["_meta"]["dir"] == "lifecycle" && e["method"] == method)
        .collect()
}

/// True while a process with this pid exists and is not a zombie.
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            stat.rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next())
                != Some("Z")
        }
        Err(_) => false,
    }
}

/// `mcptape proxy --server NAME -- SERVER...`, as argv.
pub fn proxy_argv(name: &str, server: &[String]) -> Vec<String> {
    let mut argv = vec![
        bin().to_string_lossy().into_owned(),
        "proxy".into(),
        "--server".into(),
        name.into(),
        "--".into(),
    ];
    argv.extend(server.iter().cloned());
    argv
}

/// Records the Python SDK client's `scenario` against `server` (behind `mcptape proxy
/// --server NAME`) into `session`.
pub fn record_py(env: &Env, session: &str, scenario: &str, name: &str, server: &[String]) {
    let out = run(env
        .mcptape([
            "record",
            session,
            "--",
            &python(),
            &peer("py_client.py"),
            scenario,
            "--",
        ])
        .args(proxy_argv(name, server)));
    assert!(out.status.success(), "{}", text(&out));
}

/// Records the `replayable` scenario against server-everything (stdio) into `session`.
pub fn record_everything(env: &Env, session: &str) {
    record_py(
        env,
        session,
        "replayable",
        "everything",
        &everything_server(),
    );
}

/// Runs a command that used to hang, under a short deadline: a regression fails here
/// instead of hanging the suite.
pub fn run_or_hang(cmd: &mut std::process::Command) -> std::process::Output {
    use std::process::Stdio;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let hang = std::time::Duration::from_secs(20);
    match rx.recv_timeout(hang) {
        Ok(out) => out.expect("wait"),
        Err(_) => {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
            panic!("{cmd:?} hung for {hang:?}");
        }
    }
}

/// `n` characters of `charset`, pseudo-random from `seed`: fake keys are generated, so
/// the test files hold no secret-shaped literal for scanners to trip on.
pub fn fake(charset: &str, n: usize, seed: u64) -> String {
    let cs = charset.as_bytes();
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            char::from(cs[(x % cs.len() as u64) as usize])
        })
        .collect()
}
