//! `mcptape proxy`: stands between a client (our stdin/stdout) and a stdio server.
//!
//! With no mode it relays bytes to a child ([`crate::downstream::relay`]); recording
//! puts the tap in front as the first layer (a layer that must read messages first turns
//! the relay into the line-by-line pump, [`crate::downstream::pump`]); `--url` is the pump
//! over a remote; replaying starts no process at all and answers from the tape
//! ([`crate::upstream::replay`]). The mode comes from `--record`/`--replay`, else from
//! `MCPTAPE_RECORD`/`MCPTAPE_REPLAY` in our own or our nearest ancestor's environment
//! ([`crate::mode`]).

use std::path::Path;

use crate::cli;
use crate::error::{Error, ProcessError, Result};

use crate::downstream::front;
use crate::downstream::pump;
use crate::downstream::relay;
use crate::layer::{Layered, Layers, Stack};
use crate::mode::Recording;
use crate::mode::{self, Mode, ReplaySettings};
use crate::outcome::{self, Outcome};
use crate::process::{self, Signals};
use crate::record::session::RecordSession;
use crate::report;
use crate::tape::ServerTape;
use crate::upstream::Closed;
use crate::upstream::child::{self, ChildLink};
use crate::upstream::http::{self, HttpLink};
use crate::upstream::refusals::Refusals;
use crate::verdict::Verdict;

mod replayed;

/// The headers of `--header-env NAME=VAR` pairs, each with `lookup(VAR)`'s value; an
/// unset or empty VAR is a usage error naming the flag and the variable.
fn header_values(
    pairs: &[(String, String)],
    lookup: impl Fn(&str) -> Option<String>,
) -> Result<Vec<(String, String)>> {
    pairs
        .iter()
        .map(|(name, var)| match lookup(var).filter(|v| !v.is_empty()) {
            Some(value) => Ok((name.clone(), value)),
            None => Err(Error::Usage(format!(
                "--header-env {}={}: environment variable `{}` is not set or is empty",
                crate::term::line(name),
                crate::term::line(var),
                crate::term::line(var)
            ))),
        })
        .collect()
}

impl cli::Proxy {
    /// Runs the proxy until the client or the server is gone; comes to its server's
    /// status, unless the recording or the replay failed.
    pub fn run(mut self) -> Result<Outcome> {
        let from_env = header_values(&self.header_envs, |var| std::env::var(var).ok())?;
        self.headers.extend(from_env);
        let server = self.server_name()?;
        let stack = Stack::from_flags_and_env(&self.faults, &self.guard, &server)?;
        let mode = mode::decide(
            self.record.as_deref(),
            self.replay.as_deref(),
            &ReplaySettings::from(&self.matching),
            self.no_redact,
            &server,
        )?;
        let _running = match &mode {
            Mode::Record {
                report: Some(dir), ..
            }
            | Mode::RecordFailed {
                report: Some(dir), ..
            }
            | Mode::Replay {
                report: Some(dir), ..
            } => report::hold(dir),
            _ => None,
        };
        if let Some(addr) = self.listen {
            return self.listen(addr, &server, mode, &stack);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ProcessError::Signals)?;
        let outcome = match mode {
            Mode::Passthrough => runtime
                .block_on(self.upstream(stack.layers(None)))
                .map(Outcome::exited),
            Mode::RecordFailed { error, report } => {
                unrecorded(&server, &crate::error::chain(&error), report.as_deref());
                runtime
                    .block_on(self.upstream(stack.layers(None)))
                    .map(|code| Outcome::exited(code).recorded(false))
            }
            Mode::Record {
                tape,
                report,
                source,
                recording,
            } => self.record_stdio(
                &runtime,
                &server,
                &tape,
                report.as_deref(),
                &source,
                &recording,
                &stack,
            ),
            Mode::Replay {
                tape,
                report,
                source,
                settings,
            } => {
                let loaded = std::sync::Arc::new(ServerTape::load_warning(&tape, &server)?);
                crate::term::eprintln_escaped!(
                    "mcptape: replaying server `{server}` from `{}` ({source}); no server is started",
                    tape.display()
                );
                let (verdict, server_exit) = runtime.block_on(replayed::serve_replay(
                    &self,
                    loaded,
                    &server,
                    report.as_deref(),
                    &settings,
                    &stack,
                    self.max_line_bytes,
                ))?;
                file_verdict(&verdict, report.as_deref());
                Ok(server_exit
                    .map_or(Outcome::Ok, Outcome::exited)
                    .replayed(verdict.ok()))
            }
        };
        // A tokio stdin read may be parked on the blocking pool; do not wait for it.
        runtime.shutdown_background();
        outcome
    }
}

impl cli::Proxy {
    /// The server's name in the tape: `--server`, checked, or one derived from the URL or
    /// the command (said on stderr).
    fn server_name(&self) -> Result<String> {
        if let Some(name) = &self.server {
            mode::check_server_name(name)?;
            return Ok(name.clone());
        }
        let server = match &self.url {
            Some(url) => name_from_url(url),
            None => derive_name(&self.command),
        };
        crate::term::eprintln_escaped!(
            "mcptape: server name `{server}` (derived from the command; --server NAME sets it)"
        );
        Ok(server)
    }

    /// Records the stdio session into `tape`, the tap as the first layer; the exit status
    /// is the server's, or 3 when the recording is not whole. A tape that cannot be opened
    /// is an error with `--record`; from the environment the session goes on unrecorded.
    // The parts of `Mode::Record`, spelled out, and where to run.
    #[allow(clippy::too_many_arguments)]
    fn record_stdio(
        &self,
        runtime: &tokio::runtime::Runtime,
        server: &str,
        tape: &Path,
        report: Option<&Path>,
        source: &str,
        recording: &Recording,
        stack: &Stack,
    ) -> Result<Outcome> {
        let session = match RecordSession::open(tape, server, recording) {
            Ok(session) => session,
            Err(e) if self.record.is_some() => return Err(e.into()),
            Err(e) => {
                unrecorded(server, &crate::error::chain(&e), report);
                let code = runtime.block_on(self.upstream(stack.layers(None)));
                return code.map(|c| Outcome::exited(c).recorded(false));
            }
        };
        crate::term::eprintln_escaped!(
            "mcptape: recording server `{server}` into `{}` ({source})",
            tape.display()
        );
        let code = runtime.block_on(self.upstream(stack.layers(Some(session.layer()))));
        let recorded = session.finish();
        let whole = crate::record::session::report(&recorded, server, report);
        code.map(|c| Outcome::exited(c).recorded(whole))
    }
}

/// A recording from the environment that cannot be made: said on stderr and left for
/// the `record` parent (which then exits 3); the session goes on unrecorded.
fn unrecorded(server: &str, problem: &str, report: Option<&Path>) {
    crate::term::eprintln_escaped!(
        "mcptape: warning: not recording server `{server}`: {problem}; the session goes on unrecorded"
    );
    if let Some(dir) = report {
        report::leave_problem(dir, server, problem);
    }
}

/// Leaves a verdict for the `replay` parent, or, standalone, prints it when it failed.
pub fn file_verdict(verdict: &Verdict, report: Option<&Path>) {
    match report {
        Some(dir) => {
            if let Err(e) = verdict.leave(dir) {
                crate::term::eprintln_escaped!(
                    "mcptape: cannot leave the verdict in `{}`: {e}",
                    dir.display()
                );
            }
        }
        None if !verdict.ok() || !verdict.added.is_empty() => {
            let paint = crate::style::Paint::of(crate::style::Stream::Stderr);
            crate::style::eprint(&format!("mcptape: {}", verdict.render(paint)));
        }
        None => {}
    }
}

impl cli::Proxy {
    /// `--listen`: the HTTP front, forwarding to `--url` or replaying; runs until a
    /// signal, then files the replayed sessions' verdicts.
    fn listen(
        &self,
        addr: std::net::SocketAddr,
        server: &str,
        mode: Mode,
        stack: &Stack,
    ) -> Result<Outcome> {
        let limits = crate::downstream::front::listen::Limits::from_args(&self.front)?;
        // `whole` is false when a recording from the environment could not be made: exit 3.
        let (source, report, mut whole) = self.front_source(server, mode, stack)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ProcessError::Signals)?;
        let served = runtime.block_on(async {
            // Listening for signals before the front says it listens.
            let mut signals = Signals::new()?;
            let shutdown = async move {
                signals.recv().await;
                // A second signal stops the wait for the sessions' ends.
                front::Stop(async move {
                    signals.recv().await;
                })
            };
            front::serve(addr, server, source, limits, shutdown).await
        })?;
        runtime.shutdown_background();
        let mut replayed = true;
        for v in &served.verdicts {
            file_verdict(v, report.as_deref());
            replayed &= v.ok();
        }
        for problem in &served.tape_errors {
            match &report {
                Some(dir) => report::leave_problem(dir, server, problem),
                None => outcome::problem(&format!(
                    "the recording of server `{server}` is incomplete: {problem}"
                )),
            }
            whole = false;
        }
        Ok(Outcome::Ok.recorded(whole).replayed(replayed))
    }

    /// Where the front's answers come from in `mode`, the report directory, and false
    /// when a recording the environment asked for cannot be made.
    fn front_source(
        &self,
        server: &str,
        mode: Mode,
        stack: &Stack,
    ) -> Result<(front::Source, Option<std::path::PathBuf>, bool)> {
        let forward = |record| -> Result<front::Source> {
            let url = self.url.clone().ok_or_else(|| {
                Error::Usage(
                    "--listen forwards to --url, or answers from a tape in replay mode: give one"
                        .into(),
                )
            })?;
            let headers = self.headers.clone();
            Ok(front::Source::Forward {
                url,
                headers,
                record,
                stack: stack.clone(),
            })
        };
        Ok(match mode {
            Mode::Replay {
                tape,
                report,
                settings,
                source,
            } => {
                let loaded = std::sync::Arc::new(ServerTape::load_warning(&tape, server)?);
                crate::term::eprintln_escaped!(
                    "mcptape: replaying server `{server}` from `{}` ({source}); no server is started",
                    tape.display()
                );
                if settings.record_new {
                    crate::term::eprintln_escaped!(
                        "mcptape: warning: --record-mode new is stdio-only for now: the HTTP front only replays, and a request the tape does not hold gets its -32090 error"
                    );
                }
                let options = settings.options()?;
                stack.say_replay_ungated();
                let source = front::Source::Replay {
                    tape: loaded,
                    options,
                    report: report.clone(),
                    stack: stack.clone(),
                    pace: settings.pace,
                };
                (source, report, true)
            }
            Mode::Record {
                tape,
                source,
                recording,
                report,
            } => {
                // --url is asked for before the tape is touched.
                let _unrecorded = forward(None)?;
                // The tape is checked here, as every session's recording will open it.
                let checked = RecordSession::open(&tape, server, &recording)
                    .and_then(|session| session.finish().map(drop));
                match checked {
                    Ok(()) => {
                        crate::term::eprintln_escaped!(
                            "mcptape: recording server `{server}` into `{}` ({source})",
                            tape.display()
                        );
                        (forward(Some((tape, recording)))?, report, true)
                    }
                    Err(e) if self.record.is_some() => return Err(e.into()),
                    // As on stdio: from the environment, a refused tape is not fatal.
                    Err(e) => {
                        unrecorded(server, &crate::error::chain(&e), report.as_deref());
                        (forward(None)?, report, false)
                    }
                }
            }
            Mode::RecordFailed { error, report } => {
                let source = forward(None)?;
                unrecorded(server, &crate::error::chain(&error), report.as_deref());
                (source, report, false)
            }
            Mode::Passthrough => (forward(None)?, None, true),
        })
    }

    /// Relays to the upstream the flags name, through `layers`: the URL, or the
    /// command's process — byte for byte when no layer must read a message first (and
    /// `--relay` does not ask for lines), else line by line through the stdio pump.
    async fn upstream(&self, layers: Layers) -> Result<u8> {
        if let Some(url) = &self.url {
            let remote = http::Remote::new(url, self.headers.clone()).map_err(http::http_usage)?;
            let link = Layered::new(Refusals(HttpLink::new(remote).listening()), layers);
            let pumped = pump::stdio(link, self.max_line_bytes).await?;
            return Ok(pumped.disconnect_exit().unwrap_or(0));
        }
        if !layers.reads_first() && self.relay == cli::Relay::Bytes {
            return relay::relay(&self.command, layers, self.max_line_bytes).await;
        }
        self.lines(layers).await
    }

    /// The command's process as a [`ChildLink`] behind `layers`, driven by the stdio pump
    /// until the client or the server is gone, or a signal comes (passed on to the server).
    async fn lines(&self, mut layers: Layers) -> Result<u8> {
        let max_line = self.max_line_bytes;
        let link = match ChildLink::spawn(&self.command, &[], None, max_line) {
            Ok(link) => link,
            Err(e) => {
                layers.failed_start(child::start_failure(&self.command, &e));
                return Err(e.into());
            }
        };
        let pumped = pump::stdio(Layered::new(link, layers), max_line).await?;
        // An injected disconnect's status; else the server's exit status, through the
        // one table (a child link always ends `Closed::Exited`, or `Closed::Stopped`
        // when the graces ran out).
        if let Some(code) = pumped.disconnect_exit() {
            return Ok(code);
        }
        Ok(match pumped.closed {
            Closed::Exited(status) | Closed::Stopped { status, .. } => process::exit_code(status),
            _ => crate::error::EXIT_OK,
        })
    }
}

/// A name for a remote server: its host, first label (`mcp.example.com` → `mcp`), or
/// the last path segment for loopback addresses.
fn name_from_url(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    // The query and fragment never name it: they may carry a credential (`?token=…`).
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let authority = rest.split('/').next().unwrap_or(rest);
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host);
    let label = if host.parse::<std::net::IpAddr>().is_ok() || host == "localhost" {
        rest.trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or(host)
    } else {
        host.split('.').next().unwrap_or(host)
    };
    clean_name(label)
}

/// A name for the server from its command line: the package or script, not the launcher.
pub fn derive_name(argv: &[String]) -> String {
    const LAUNCHERS: &[&str] = &[
        "npx", "pnpx", "bunx", "uvx", "pipx", "node", "bun", "deno", "python", "python3", "uv",
        "pnpm", "yarn", "npm", "sh", "bash", "env",
    ];
    const SUBCOMMANDS: &[&str] = &["run", "exec", "dlx", "x", "tool"];
    let base = |s: &str| entry_name(s).to_owned();
    let mut words = argv.iter().map(String::as_str);
    let mut name = base(words.next().unwrap_or("server"));
    if LAUNCHERS.contains(&name.as_str()) {
        let mut module = false;
        for w in words {
            if w == "-m" {
                module = true;
                continue;
            }
            if w.starts_with('-') || SUBCOMMANDS.contains(&w) || w.contains('=') {
                continue;
            }
            name = if module { w.to_owned() } else { base(w) };
            break;
        }
    }
    // `@scope/pkg@1.2` → `pkg`; `server.py` → `server`.
    if let Some((pkg, _version)) = name.rsplit_once('@').filter(|(p, _)| !p.is_empty()) {
        name = pkg.to_owned();
    }
    for ext in [".js", ".mjs", ".cjs", ".ts", ".py", ".exe"] {
        if let Some(stem) = name.strip_suffix(ext) {
            name = stem.to_owned();
        }
    }
    let mut short = name.as_str();
    for prefix in ["mcp-server-", "server-", "mcp-"] {
        short = short.strip_prefix(prefix).unwrap_or(short);
    }
    for suffix in ["-mcp-server", "-server", "-mcp"] {
        short = short.strip_suffix(suffix).unwrap_or(short);
    }
    let chosen = if short.is_empty() {
        name.as_str()
    } else {
        short
    };
    clean_name(chosen)
}

/// The name a script's path stands for: its file name, or — for a generic entry point
/// (`index.js`, `main.py`, …) — its package's directory, past build directories
/// (`…/server-everything/dist/index.js` is `server-everything`).
fn entry_name(path: &str) -> &str {
    const ENTRIES: &[&str] = &["index", "main", "cli", "app", "__main__"];
    const BUILD_DIRS: &[&str] = &["dist", "build", "lib", "bin", "src", "out", "esm", "cjs"];
    let mut parts = path.rsplit('/').filter(|p| !p.is_empty() && *p != ".");
    let file = parts.next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    if !ENTRIES.contains(&stem) {
        return file;
    }
    parts
        .find(|dir| !BUILD_DIRS.contains(dir) && *dir != "..")
        .unwrap_or(file)
}

/// A derived name made safe for tapes and messages: letters, digits, `.`, `_`, `-`.
fn clean_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect();
    if clean.is_empty() {
        "server".into()
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::{derive_name, header_values, name_from_url};

    #[test]
    fn a_url_names_its_server_by_host_or_path_never_by_its_query() {
        assert_eq!(
            name_from_url("https://mcp.example.com/mcp?token=abc"),
            "mcp"
        );
        let local = name_from_url("http://127.0.0.1:1/mcp?token=abcdef123456#x");
        assert_eq!(local, "mcp");
    }

    fn name(cmd: &str) -> String {
        let argv: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        derive_name(&argv)
    }

    #[test]
    fn names_from_commands() {
        assert_eq!(
            name("npx -y @modelcontextprotocol/server-everything"),
            "everything"
        );
        assert_eq!(
            name("npx -y @modelcontextprotocol/server-everything@2026.8.31 stdio"),
            "everything"
        );
        assert_eq!(
            name("/usr/bin/python3 -m mcp_server_git --repo ."),
            "mcp_server_git"
        );
        assert_eq!(name("python3 server.py"), "server");
        assert_eq!(
            name("./target/debug/examples/example-server --variant"),
            "example"
        );
        assert_eq!(name("uvx mcp-server-fetch"), "fetch");
        assert_eq!(name("node dist/index.js"), "index");
        assert_eq!(
            name("node /p/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
            "everything"
        );
        assert_eq!(name("python3 weather/src/main.py"), "weather");
        assert_eq!(name("node ./build/esm/cli.mjs"), "cli");
        assert_eq!(name("bun ../tools/mcp-notes/index.ts"), "notes");
        assert_eq!(name("weird$name"), "weird-name");
    }

    #[test]
    fn header_env_takes_values_from_the_environment_and_names_a_missing_one() {
        let pairs = vec![("Authorization".to_owned(), "TOKEN".to_owned())];
        let got = header_values(&pairs, |v| (v == "TOKEN").then(|| "Bearer x".to_owned()));
        assert_eq!(
            got.expect("set"),
            vec![("Authorization".to_owned(), "Bearer x".to_owned())]
        );
        for value in [None, Some(String::new())] {
            let err = header_values(&pairs, |_| value.clone()).expect_err("missing");
            let text = err.to_string();
            assert!(
                text.contains("--header-env Authorization=TOKEN") && text.contains("`TOKEN`"),
                "{text}"
            );
        }
    }
}
