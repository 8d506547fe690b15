//! The row harness of the interop matrix: one real client, one real server, and the four
//! checks every row gets.
//!
//! - `recorded_equals_direct`: the client's stdout through the recorder (`mcptape record
//!   TAPE -- CLIENT … mcptape proxy …` over stdio, the HTTP front `proxy --listen --url …
//!   --record TAPE` over HTTP, or the client's own `MCPTAPE_RECORD` for `mcptape call`)
//!   equals a direct run, byte for byte.
//! - `replay_equals_recorded`: the same client against the tape with the server absent
//!   (`mcptape replay`, `proxy --listen --replay`) prints the same bytes, and the verdict
//!   is clean.
//! - `verify_same_is_clean`: `mcptape verify` of the tape against the same server reports
//!   every call the same (`0 changed`, nothing skipped, no error).
//! - `verify_changed_is_flagged`: against the changed server (a changed env var, file or
//!   memory file) verify exits 1 and names the changed call.
//!
//! Every process is real; HTTP servers bind port 0 and say their port on stderr, which
//! is waited for with a deadline (no sleeps, no retries).

use std::process::{Child, Command, Output, Stdio};

use crate::http::{Front, after_stderr_line};
use crate::support::*;

/// How a client reaches its server.
pub(crate) enum Target {
    /// A stdio server command line the client spawns.
    Cmd(Vec<String>),
    /// A Streamable HTTP endpoint.
    Url(String),
}

/// The client's command line for a target; it may write files in the env first.
pub(crate) type ClientArgv = Box<dyn Fn(&Env, &Target) -> Vec<String>>;

/// An HTTP server to start: its command, its environment, and the stderr text after which
/// it prints the port it bound.
#[derive(Clone)]
pub(crate) struct Launch {
    pub(crate) argv: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    /// Clear the inherited environment first (for servers that print theirs).
    pub(crate) clear_env: bool,
    pub(crate) said: &'static str,
}

/// A started HTTP server, killed when dropped.
pub(crate) struct Served {
    child: Child,
    pub(crate) url: String,
}

impl Launch {
    pub(crate) fn start(&self) -> Served {
        let mut cmd = Command::new(&self.argv[0]);
        cmd.args(&self.argv[1..]);
        if self.clear_env {
            cmd.env_clear();
        }
        let mut child = cmd
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn the HTTP server");
        let rest = after_stderr_line(&mut child, self.said, "the HTTP server");
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let port: u16 = digits
            .parse()
            .unwrap_or_else(|_| panic!("the HTTP server said `{}{rest}`, not a port", self.said));
        assert_ne!(port, 0, "the HTTP server said the port it was given");
        Served {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Where the server is and how the recorder sits in between.
pub(crate) enum Upstream {
    /// A stdio server behind `mcptape proxy --server NAME -- ARGV`.
    Stdio {
        same: Vec<String>,
        changed: Vec<String>,
    },
    /// An HTTP server behind the HTTP front (`proxy --listen`).
    Http { same: Launch, changed: Launch },
    /// An HTTP server the client itself reaches, recording through `MCPTAPE_RECORD`
    /// (`mcptape call`).
    Ambient { same: Launch, changed: Launch },
}

/// One row of the matrix.
pub(crate) struct Row {
    /// The server's name in the tape (`--server`).
    pub(crate) server: &'static str,
    pub(crate) client: ClientArgv,
    pub(crate) upstream: Upstream,
    /// Turns the world into the changed server's before verify-changed (rewrites a file);
    /// `None` when the changed command or launch alone is the change.
    pub(crate) change: Option<Change>,
    /// The tool whose answer the change changes.
    pub(crate) changed_tool: &'static str,
}

/// What turns a row's world into the changed server's.
pub(crate) type Change = Box<dyn Fn(&Env)>;

/// A row builder: rows may put fixtures in the test's env.
pub(crate) type Build = fn(&Env) -> Row;

fn tape(env: &Env) -> String {
    env.path("matrix.ndjson").display().to_string()
}

fn out_text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn client_run(env: &Env, row: &Row, target: &Target) -> Output {
    let argv = (row.client)(env, target);
    run(env.cmd(&argv[0]).args(&argv[1..]))
}

fn ok(out: Output, what: &str) -> Output {
    assert!(out.status.success(), "{what}: {}", text(&out));
    out
}

/// A command that must never run: replay starts no server.
fn absent() -> Vec<String> {
    vec!["/nonexistent/server-that-must-not-start".into()]
}

/// Runs the client direct, against the same server the recording will use (for HTTP, the
/// same server process, started by the caller).
fn direct(env: &Env, row: &Row, url: Option<&str>) -> Output {
    let target = match (&row.upstream, url) {
        (Upstream::Stdio { same, .. }, _) => Target::Cmd(same.clone()),
        (_, Some(url)) => Target::Url(url.to_owned()),
        (_, None) => unreachable!("an HTTP row runs direct against its started server"),
    };
    ok(client_run(env, row, &target), "the direct run")
}

/// Runs the client through the recorder into the env's tape.
fn record(env: &Env, row: &Row, url: Option<&str>) -> Output {
    let tape = tape(env);
    match (&row.upstream, url) {
        (Upstream::Stdio { same, .. }, _) => {
            let argv = (row.client)(env, &Target::Cmd(proxy_argv(row.server, same)));
            ok(
                run(env.mcptape(["record", &tape, "--"]).args(&argv)),
                "the recorded run",
            )
        }
        (Upstream::Http { .. }, Some(url)) => {
            let front = Front::start_as(env, row.server, &["--url", url, "--record", &tape]);
            let out = client_run(env, row, &Target::Url(front.url.clone()));
            assert!(front.stop().success(), "the recording front failed");
            ok(out, "the recorded run")
        }
        (Upstream::Ambient { .. }, Some(url)) => {
            let argv = (row.client)(env, &Target::Url(url.to_owned()));
            ok(
                run(env.mcptape(["record", &tape, "--"]).args(&argv)),
                "the recorded run",
            )
        }
        (_, None) => unreachable!("an HTTP row records against its started server"),
    }
}

/// Records once, the server stopped afterwards: the recorded run's output, and the URL
/// the HTTP server had (nothing answers there any more).
fn recorded(env: &Env, row: &Row) -> (Output, Option<String>) {
    match &row.upstream {
        Upstream::Stdio { .. } => (record(env, row, None), None),
        Upstream::Http { same, .. } | Upstream::Ambient { same, .. } => {
            let server = same.start();
            let out = record(env, row, Some(&server.url));
            (out, Some(server.url.clone()))
        }
    }
}

fn verify(env: &Env, row: &Row, changed: bool) -> Output {
    let tape = tape(env);
    let mut cmd = env.mcptape(["verify", &tape, "--allow-writes"]);
    match &row.upstream {
        Upstream::Stdio {
            same,
            changed: other,
        } => {
            let argv = if changed { other } else { same };
            run(cmd.arg("--").args(argv))
        }
        Upstream::Http {
            same,
            changed: other,
        }
        | Upstream::Ambient {
            same,
            changed: other,
        } => {
            let server = if changed { other } else { same }.start();
            run(cmd.args(["--url", &server.url]))
        }
    }
}

/// Check 1: the client's output through the recorder equals a direct run.
pub(crate) fn recorded_equals_direct(build: Build) {
    let env = Env::new();
    let row = build(&env);
    let (direct, recorded) = match &row.upstream {
        Upstream::Stdio { .. } => (direct(&env, &row, None), record(&env, &row, None)),
        Upstream::Http { same, .. } | Upstream::Ambient { same, .. } => {
            let server = same.start();
            (
                direct(&env, &row, Some(&server.url)),
                record(&env, &row, Some(&server.url)),
            )
        }
    };
    assert!(!direct.stdout.is_empty(), "the client printed nothing");
    similar_asserts::assert_eq!(out_text(&direct), out_text(&recorded));
}

/// Check 2: replay with the server absent gives identical output and a clean verdict.
pub(crate) fn replay_equals_recorded(build: Build) {
    let env = Env::new();
    let row = build(&env);
    let (recorded, gone) = recorded(&env, &row);
    let tape = tape(&env);
    let replayed = match &row.upstream {
        Upstream::Stdio { .. } => {
            let argv = (row.client)(&env, &Target::Cmd(proxy_argv(row.server, &absent())));
            run(env.mcptape(["replay", &tape, "--"]).args(&argv))
        }
        Upstream::Http { .. } => {
            let front = Front::start_as(&env, row.server, &["--replay", &tape]);
            let out = client_run(&env, &row, &Target::Url(front.url.clone()));
            let verdict = front.stop();
            assert!(
                verdict.success(),
                "the replaying front's verdict: {verdict:?}; client: {}",
                text(&out)
            );
            out
        }
        Upstream::Ambient { .. } => {
            // The recorded server is gone; the client still names its address.
            let gone = gone.expect("an HTTP row has a URL");
            let argv = (row.client)(&env, &Target::Url(gone));
            run(env.mcptape(["replay", &tape, "--"]).args(&argv))
        }
    };
    assert!(
        replayed.status.success(),
        "the replayed run: {}",
        text(&replayed)
    );
    similar_asserts::assert_eq!(out_text(&recorded), out_text(&replayed));
}

/// Check 3: verify against the same server reports every call the same.
pub(crate) fn verify_same_is_clean(build: Build) {
    let env = Env::new();
    let row = build(&env);
    recorded(&env, &row);
    let out = verify(&env, &row, false);
    let report = out_text(&out);
    assert!(out.status.success(), "verify, same server: {}", text(&out));
    assert!(
        report.contains(" same, 0 changed")
            && !report.contains("skipped")
            && !report.contains("error"),
        "verify, same server: {}",
        text(&out)
    );
}

/// Check 4: verify against the changed server flags the changed call.
pub(crate) fn verify_changed_is_flagged(build: Build) {
    let env = Env::new();
    let row = build(&env);
    recorded(&env, &row);
    if let Some(change) = &row.change {
        change(&env);
    }
    let out = verify(&env, &row, true);
    let report = out_text(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "verify, changed server: {}",
        text(&out)
    );
    let flagged = format!("changed    tools/call {}", row.changed_tool);
    assert!(
        report.contains(&flagged),
        "verify, changed server: {}",
        text(&out)
    );
}
