//! `mcptape call SERVER.TOOL [ARG]...`: one tool call through the built-in client
//! ([`crate::downstream::client`]), recorded or replayed in process when a mode is on.
//! It lists the server's tools first ([`listing`]), so its tapes say which are read-only.
//!
//! The connection machinery here ([`Endpoint`], [`Conversation`]) is shared with
//! `mcptape tools`: the mode decides the endpoint, a recording is a
//! [`RecordSession`] whose tap is the first layer of the session's link, and what the
//! tap or the replay found is filed once the conversation is over.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::cli::{self, Output};
use crate::cmd::proxy::file_verdict;
use crate::config::{self, Config, ServerEntry};
use crate::downstream::client::{ClientError, Reply, Session};
use crate::error::{Error, ProcessError, Result};
use crate::framing::MAX_LINE_BYTES;
use crate::layer::Stack;
use crate::mode::{self, ENV_HOME, Mode, Recording, ReplaySettings};
use crate::outcome::{self, Outcome};
use crate::record::session::{self, RecordSession};
use crate::report;
use crate::tape::close::CloseReason;
use crate::tape::{ServerTape, store};
use crate::upstream::Closed;
use crate::upstream::pick::Picker;

/// Where the built-in client's messages go, decided before anything starts.
// One per process: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Endpoint {
    /// A live server from the config, recorded when `recording` is set.
    Live {
        entry: ServerEntry,
        recording: Option<RecordSession>,
        report: Option<PathBuf>,
    },
    /// The replay engine on a recorded connection chosen by the client's messages.
    Replay {
        picker: Box<Picker>,
        report: Option<PathBuf>,
        running: Option<std::fs::File>,
    },
    /// Replay was asked for but there is nothing to serve.
    Unservable {
        problem: String,
        report: Option<PathBuf>,
    },
}

/// What is left to file once the conversation is over.
enum Filing {
    /// A live session: its recording, if any, is finished and reported.
    Live {
        recording: Option<RecordSession>,
        report: Option<PathBuf>,
    },
    /// A replayed session: its verdict goes to `report`; `_running` holds the `replay`
    /// parent's lock until then.
    Replay {
        report: Option<PathBuf>,
        _running: Option<std::fs::File>,
    },
    /// Nothing could be replayed: the problem goes to `report` as a failed verdict.
    Unservable {
        problem: String,
        report: Option<PathBuf>,
    },
}

/// What the caller does with a session; the endpoint does the rest.
pub(crate) struct Conversation<'a> {
    /// The server's name (config key, tape `server`).
    pub server: &'a str,
    /// `--config`.
    pub config: Option<&'a Path>,
    /// `--record`.
    pub record: Option<&'a str>,
    /// `--replay`.
    pub replay: Option<&'a str>,
    /// `--timeout`.
    pub timeout: Duration,
    /// `--no-redact`.
    pub no_redact: bool,
    /// `--fault`, `--faults`.
    pub faults: &'a cli::Faults,
    /// `--policy`, `--commit`, … (`call` only; `tools` has none).
    pub guard: cli::Guard,
}

impl Conversation<'_> {
    fn load_config(&self) -> Result<Config> {
        let own = mode::own()?;
        let home = store::home(own.get(ENV_HOME))?;
        let path = config::locate(self.config, None, &own.cwd, &home)?;
        Ok(Config::load(&path)?)
    }

    /// Decides the endpoint: the mode first (a replayed server needs no config).
    pub fn endpoint(&self) -> Result<Endpoint> {
        let mode = mode::decide(
            self.record,
            self.replay,
            &ReplaySettings::default(),
            self.no_redact,
            self.server,
        )?;
        match mode {
            Mode::Passthrough => self.live(None, None),
            Mode::RecordFailed { error, report } => {
                let problem = crate::error::chain(&error);
                crate::term::eprintln_escaped!(
                    "mcptape: warning: not recording server `{}`: {problem}",
                    self.server
                );
                if let Some(dir) = &report {
                    report::leave_problem(dir, self.server, &problem);
                }
                self.live(None, None)
            }
            Mode::Record {
                tape,
                report,
                source,
                recording,
            } => self.recorded(&tape, report, &source, &recording),
            Mode::Replay {
                tape,
                report,
                source,
                settings,
            } => self.replayed(&tape, report, &source, &settings),
        }
    }

    /// The live endpoint from the config, recorded when `recording` is given.
    fn live(&self, recording: Option<RecordSession>, report: Option<PathBuf>) -> Result<Endpoint> {
        let config = self.load_config()?;
        let mut entry = config.server(self.server)?;
        if recording.is_some() {
            // This process records the connection: a `mcptape proxy` the config names
            // must not record it a second time. Set but empty turns the mode off.
            entry
                .env
                .extend(mode::OFF.map(|name| (name.to_owned(), String::new())));
        }
        Ok(Endpoint::Live {
            entry,
            recording,
            report,
        })
    }

    /// The live endpoint recorded into `tape`.
    fn recorded(
        &self,
        tape: &Path,
        report: Option<PathBuf>,
        source: &str,
        recording: &Recording,
    ) -> Result<Endpoint> {
        // The config is checked before the tape is touched.
        self.load_config()?.server(self.server)?;
        let recording = RecordSession::open(tape, self.server, recording)?;
        crate::term::eprintln_escaped!(
            "mcptape: recording server `{}` into `{}` ({source})",
            self.server,
            tape.display()
        );
        self.live(Some(recording), report)
    }

    /// The replay endpoint for `tape`, or the problem that leaves it unservable.
    fn replayed(
        &self,
        tape: &Path,
        report: Option<PathBuf>,
        source: &str,
        settings: &ReplaySettings,
    ) -> Result<Endpoint> {
        let loaded = std::sync::Arc::new(ServerTape::load_warning(tape, self.server)?);
        let running = report.as_deref().and_then(report::hold);
        let picker = Picker::new(loaded, self.server, report.as_deref(), &settings.options()?);
        if let Some(problem) = picker.problem() {
            return Ok(Endpoint::Unservable {
                problem: problem.to_owned(),
                report,
            });
        }
        crate::term::eprintln_escaped!(
            "mcptape: replaying server `{}` from `{}` ({source}); no server is started",
            self.server,
            tape.display()
        );
        Ok(Endpoint::Replay {
            picker: Box::new(picker),
            report,
            running,
        })
    }

    /// Runs `talk` on a session with the endpoint, within the timeout, then closes the
    /// session and files what the tap or the replay found. Comes to `talk`'s outcome (or
    /// a timeout, a failed replay, an incomplete recording).
    pub fn run<F>(&self, talk: F) -> Result<Outcome>
    where
        F: AsyncFnOnce(&mut Session) -> Result<Outcome, ClientError>,
    {
        let endpoint = self.endpoint()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(ProcessError::Signals)?;
        let (outcome, filing) = runtime.block_on(self.converse(endpoint, talk))?;
        runtime.shutdown_background();
        Ok(self.file(filing, outcome))
    }

    /// Starts the session, runs `talk` within the timeout, and closes the session.
    async fn converse<F>(&self, endpoint: Endpoint, talk: F) -> Result<(Outcome, Filing)>
    where
        F: AsyncFnOnce(&mut Session) -> Result<Outcome, ClientError>,
    {
        let (mut session, filing) = match self.open(endpoint)? {
            Opened::Talking(session, filing) => (session, filing),
            Opened::Unservable(filing) => return Ok((Outcome::Diverged, filing)),
        };
        let (outcome, reason) = self.talk(&mut session, talk).await;
        let closed = match session.close(reason).await {
            Ok(closed) => closed,
            Err(e) => {
                // The recording is still finished and its fate said.
                let _ = self.file(filing, outcome);
                return Err(e);
            }
        };
        let outcome = match (closed, &filing) {
            (Closed::Replayed { verdict, .. }, Filing::Replay { report, .. }) => {
                file_verdict(&verdict, report.as_deref());
                outcome.replayed(verdict.ok())
            }
            _ => outcome,
        };
        Ok((outcome, filing))
    }

    /// The session the endpoint talks through (the tap as its link's first layer when
    /// recording), or the problem that leaves it unservable, said now.
    fn open(&self, endpoint: Endpoint) -> Result<Opened> {
        let stack = Stack::from_flags(self.faults, &self.guard, self.server)?;
        Ok(match endpoint {
            Endpoint::Unservable { problem, report } => {
                outcome::problem(&problem);
                Opened::Unservable(Filing::Unservable { problem, report })
            }
            Endpoint::Live {
                entry,
                recording,
                report,
            } => {
                let layers = stack.layers(recording.as_ref().map(RecordSession::layer));
                match Session::start(self.server, &entry, layers, MAX_LINE_BYTES) {
                    Ok(session) => Opened::Talking(session, Filing::Live { recording, report }),
                    Err(e) => {
                        if let Some(recording) = recording {
                            // The session never started: its error is the one reported.
                            let _unstarted = recording.finish();
                        }
                        return Err(e);
                    }
                }
            }
            Endpoint::Replay {
                picker,
                report,
                running,
            } => Opened::Talking(
                Session::replay(self.server, *picker, {
                    stack.say_replay_ungated();
                    stack.replay_layers()
                }),
                Filing::Replay {
                    report,
                    _running: running,
                },
            ),
        })
    }

    /// Runs `talk` within the timeout: its outcome, and why the session ends.
    async fn talk<F>(&self, session: &mut Session, talk: F) -> (Outcome, CloseReason)
    where
        F: AsyncFnOnce(&mut Session) -> Result<Outcome, ClientError>,
    {
        match tokio::time::timeout(self.timeout, talk(session)).await {
            Ok(Ok(outcome)) => (outcome, CloseReason::ClientDone),
            // The server's answer was a failure: the conversation still ended as meant.
            Ok(Err(e)) if e.is_answer() => {
                outcome::print(&e);
                (Outcome::Failed, CloseReason::ClientDone)
            }
            Ok(Err(e)) => {
                outcome::print(&e);
                (Outcome::Failed, CloseReason::ClientFailed)
            }
            Err(_) => {
                outcome::print(&ClientError::Timeout {
                    server: self.server.to_owned(),
                    secs: self.timeout.as_secs_f64(),
                });
                (Outcome::Timeout, CloseReason::ClientTimeout)
            }
        }
    }

    /// Files what the tap found (an incomplete recording outranks a failed tool) or the
    /// problem that left a replay unservable.
    fn file(&self, filing: Filing, outcome: Outcome) -> Outcome {
        match filing {
            Filing::Live {
                recording: Some(recording),
                report,
            } => {
                let recorded = recording.finish();
                if !session::report(&recorded, self.server, report.as_deref()) {
                    return outcome.max(Outcome::RecordingIncomplete);
                }
            }
            Filing::Unservable {
                problem,
                report: Some(dir),
            } => {
                let verdict = crate::verdict::Verdict {
                    server: self.server.to_owned(),
                    problems: vec![problem],
                    ..Default::default()
                };
                let _ = verdict.leave(&dir);
            }
            _ => {}
        }
        outcome
    }
}

/// A session ready to talk, or a replay with nothing to serve.
// One per process: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
enum Opened {
    /// The session, and what to file after it.
    Talking(Session, Filing),
    /// Nothing to talk to.
    Unservable(Filing),
}

impl cli::Client {
    /// The conversation these flags describe with `server`.
    pub(crate) fn conversation<'a>(&'a self, server: &'a str) -> Conversation<'a> {
        Conversation {
            server,
            config: self.config.config.as_deref(),
            record: self.record.as_deref(),
            replay: self.replay.as_deref(),
            timeout: self.timeout,
            no_redact: self.no_redact,
            faults: &self.faults,
            guard: cli::Guard::default(),
        }
    }
}

/// Builds the arguments object from `--args` and the ARGs.
pub fn arguments(json: Option<&str>, args: &[String]) -> Result<Map<String, Value>> {
    let mut out = match json {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(Error::Usage("--args must be a JSON object".into())),
            Err(e) => return Err(Error::Usage(format!("--args is not valid JSON: {e}"))),
        },
    };
    for arg in args {
        let split = arg.find([':', '=']).filter(|&i| i > 0).ok_or_else(|| {
            Error::Usage(format!(
                "invalid argument `{arg}`: write key:value or key=value"
            ))
        })?;
        let (key, value) = (&arg[..split], &arg[split + 1..]);
        // `key=@FILE` reads a file; `key:@x` is the text `@x`.
        let from_file = arg.as_bytes()[split] == b'=' && value.starts_with('@');
        let text = if from_file {
            let file = &value[1..];
            let mut text = std::fs::read_to_string(file).map_err(|source| Error::Io {
                what: format!("argument `{key}`: cannot read `{file}`"),
                source,
            })?;
            // `echo secret > file` leaves a newline that is not part of the value.
            if text.ends_with('\n') {
                text.pop();
                if text.ends_with('\r') {
                    text.pop();
                }
            }
            text
        } else {
            value.to_owned()
        };
        let value = serde_json::from_str(text.trim()).unwrap_or(Value::String(text));
        out.insert(key.to_owned(), value);
    }
    Ok(out)
}

/// The result for a person: text as text, the rest readable (escape it with
/// [`crate::term::block`] before printing).
pub fn render(result: &Value) -> String {
    let mut out = String::new();
    for item in result["content"].as_array().into_iter().flatten() {
        let line = match item["type"].as_str() {
            Some("text") => item["text"].as_str().unwrap_or("").to_owned(),
            Some(kind @ ("image" | "audio")) => format!(
                "[{kind}: {}, {} bytes of base64]",
                item["mimeType"].as_str().unwrap_or("?"),
                item["data"].as_str().map_or(0, str::len)
            ),
            Some("resource") => {
                let r = &item["resource"];
                let body = r["text"]
                    .as_str()
                    .map(|t| format!("\n{t}"))
                    .unwrap_or_else(|| {
                        format!(
                            " ({} bytes of base64)",
                            r["blob"].as_str().map_or(0, str::len)
                        )
                    });
                format!("[resource: {}]{body}", r["uri"].as_str().unwrap_or("?"))
            }
            Some("resource_link") => format!(
                "[resource link: {} {}]",
                item["uri"].as_str().unwrap_or("?"),
                item["name"].as_str().unwrap_or("")
            ),
            _ => format!("{item:#}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    if let Some(structured) = result.get("structuredContent") {
        out.push_str(&format!("structured content:\n{structured:#}\n"));
    }
    out
}

impl cli::Call {
    /// Calls the tool; the outcome says how it went.
    pub fn run(self) -> Result<Outcome> {
        let (server, tool) = self
            .target
            .split_once('.')
            .filter(|(s, t)| !s.is_empty() && !t.is_empty())
            .ok_or_else(|| {
                Error::Usage(format!(
                    "`{}` is not SERVER.TOOL (`mcptape tools {}` lists the server's tools)",
                    self.target, self.target
                ))
            })?;
        let args = arguments(self.args_json.as_deref(), &self.arguments)?;
        let mut conversation = self.client.conversation(server);
        conversation.guard = self.guard.clone();
        let output = self.output;
        conversation.run(async |session: &mut Session| {
            initialized(&session.connect().await?, server)?;
            let listed = listing::before_call(session).await?;
            let params = serde_json::json!({"name": tool, "arguments": args});
            // Progress is for people: JSON and raw output keep stderr for errors.
            session.show_progress(output == Output::Text);
            let reply = session.request_with_progress("tools/call", params).await?;
            print_reply(server, tool, &reply, output)
                .map_err(|e| listing::explain(e, server, tool, listed.as_deref()))
        })
    }
}

/// The server's refusal of `initialize`, when it refused.
pub(crate) fn initialized(init: &Reply, server: &str) -> Result<(), ClientError> {
    match init.error() {
        Some(err) => Err(ClientError::Refused {
            server: server.to_owned(),
            error: err.to_string(),
        }),
        None => Ok(()),
    }
}

/// A JSON-RPC error answer to `request`, as the failure it is.
pub(crate) fn answered(reply: &Reply, server: &str, request: &str) -> ClientError {
    let err = reply.error().unwrap_or(&Value::Null);
    ClientError::Answered {
        server: server.to_owned(),
        request: request.to_owned(),
        code: err["code"].to_string(),
        message: err["message"].as_str().unwrap_or("").to_owned(),
    }
}

/// Prints the answer as `--output` says; a JSON-RPC error or `isError: true` is the
/// failure it returns (printed by the caller, the one printer).
fn print_reply(
    server: &str,
    tool: &str,
    reply: &Reply,
    output: Output,
) -> Result<Outcome, ClientError> {
    if reply.error().is_some() {
        if output == Output::Raw {
            println!("{}", reply.raw);
        }
        return Err(answered(reply, server, &format!("tools/call {tool}")));
    }
    let result = &reply.value["result"];
    let failed = result["isError"] == Value::Bool(true);
    match output {
        Output::Raw => println!("{}", reply.raw),
        Output::Json => println!("{}", crate::term::json_pretty(result)),
        Output::Text if failed => eprint!("{}", crate::term::block(&render(result))),
        Output::Text => print!("{}", crate::term::block(&render(result))),
    }
    if failed {
        return Err(ClientError::ToolFailed {
            server: server.to_owned(),
            tool: tool.to_owned(),
        });
    }
    Ok(Outcome::Ok)
}

pub(crate) mod listing;
#[cfg(test)]
mod tests;
