//! The error types. The table that maps them to exit codes, beside the one for
//! [`crate::outcome::Outcome`], is in [`crate::outcome`].
//!
//! Messages are lowercase, name the object they are about, and keep the cause in
//! `#[source]` so that the top level prints it once, as `caused by: …`.

use std::path::PathBuf;

use thiserror::Error;

pub use crate::tape::TapeError;

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status: `verify` found differences; `call`'s tool or server failed.
pub const EXIT_DIFFERENT: u8 = 1;
/// Exit status: usage or configuration error.
pub const EXIT_USAGE: u8 = 2;
/// Exit status: replay diverged, or a recording could not be written whole.
pub const EXIT_TAPE: u8 = 3;
/// Exit status: no answer in time (`call`, `tools`; as `timeout` does).
pub const EXIT_TIMEOUT: u8 = 124;
/// Exit status: the wrapped command could not be executed (as `env` and `timeout` do).
pub const EXIT_NOT_EXECUTABLE: u8 = 126;
/// Exit status: the wrapped command was not found (as `env` and `timeout` do).
pub const EXIT_NOT_FOUND: u8 = 127;

/// Every error mcptape reports.
#[derive(Debug, Error)]
pub enum Error {
    /// Reading, writing or naming a tape.
    #[error(transparent)]
    Tape(#[from] TapeError),
    /// Starting or supervising a process.
    #[error(transparent)]
    Process(#[from] ProcessError),
    /// A bad argument or environment variable.
    #[error("{0}")]
    Usage(String),
    /// Talking to a server with the built-in client.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A file or socket mcptape needs (a report directory, a listening socket, a file an
    /// argument names) cannot be used.
    #[error("{what}")]
    Io {
        /// What could not be done, naming the object: ``cannot listen on 127.0.0.1:80``.
        what: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The command line does not parse (clap prints it in its own words).
    #[error(transparent)]
    Cli(#[from] clap::Error),
    /// The MCP client configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Writing to our own stdout failed (a closed pipe ends quietly, see `main`).
    #[error("cannot write to standard output")]
    Stdout(#[source] std::io::Error),
    /// An agent's config file (`install`, `uninstall`).
    #[error(transparent)]
    Agent(#[from] crate::agents::AgentError),
    /// An agent transcript that cannot be imported.
    #[error(transparent)]
    Import(#[from] crate::import::ImportError),
    /// The approvals desk (`approvals`, `approve`, `deny`, a policy's `ask`).
    #[error(transparent)]
    Approval(#[from] crate::policy::approvals::ApprovalError),
    /// Two sides that `diff` cannot compare (a tape's servers, a listing's shape).
    #[error(transparent)]
    Diff(#[from] crate::diff::DiffError),
}

/// What can go wrong talking to a server.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The server's stdout closed before the answer came.
    #[error("server `{server}` closed its output before answering `{method}`")]
    Closed {
        /// The server.
        server: String,
        /// The request.
        method: String,
    },
    /// Writing to the server failed.
    #[error("cannot write to server `{server}`")]
    Write {
        /// The server.
        server: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The tape has nothing to answer with.
    #[error("the tape holds no answer of server `{server}` to `{method}`")]
    NoAnswer {
        /// The server.
        server: String,
        /// The request.
        method: String,
    },
    /// The server answered `initialize` with an error.
    #[error("server `{server}` refused to initialize: {error}")]
    Refused {
        /// The server.
        server: String,
        /// The JSON-RPC error object, as JSON.
        error: String,
    },
    /// The server answered a request with a JSON-RPC error.
    #[error("server `{server}` answered {request} with error {code}: {message}")]
    Answered {
        /// The server.
        server: String,
        /// The request: its method, and for `tools/call` the tool.
        request: String,
        /// The error's `code`, as JSON.
        code: String,
        /// The error's `message`.
        message: String,
    },
    /// No answer within `--timeout`.
    #[error("no answer from server `{server}` within {secs}s (--timeout)")]
    Timeout {
        /// The server.
        server: String,
        /// The limit, in seconds.
        secs: f64,
    },
    /// The tool answered `isError: true`.
    #[error("tool `{tool}` of server `{server}` answered isError: true")]
    ToolFailed {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The call failed, and the tool is not in the server's `tools/list`.
    #[error("server `{server}` has no tool `{tool}`{hint}")]
    UnknownTool {
        /// The server.
        server: String,
        /// The tool asked for.
        tool: String,
        /// "; did you mean `echo`?" and the server's tools, as one sentence.
        hint: String,
        /// The server's refusal of the call.
        #[source]
        source: Box<ClientError>,
    },
}

impl ClientError {
    /// True when the server did answer (a refusal, a JSON-RPC error, `isError: true`):
    /// the client then ends the conversation as it meant to, and the tape says so.
    pub fn is_answer(&self) -> bool {
        matches!(
            self,
            ClientError::Refused { .. }
                | ClientError::Answered { .. }
                | ClientError::ToolFailed { .. }
                | ClientError::UnknownTool { .. }
        )
    }
}

/// Errors about MCP client configuration files.
#[derive(Debug, Error)]
pub enum ConfigError {
    /// No config file anywhere.
    #[error("no MCP config found (looked for {}); use --config FILE or MCPTAPE_CONFIG", looked.join(", "))]
    NotFound {
        /// Where it was looked for.
        looked: Vec<String>,
    },
    /// The file cannot be read.
    #[error("cannot read config `{}`", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("`{}` is not valid JSON at line {line}, column {column}: {reason}", path.display())]
    Json {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's words.
        reason: String,
    },
    /// A key has the wrong shape.
    #[error("`{}`: `{key}` {reason}", path.display())]
    Shape {
        /// The file.
        path: PathBuf,
        /// The key, dotted.
        key: String,
        /// What is wrong.
        reason: String,
    },
    /// A server entry without `command` (or `url`).
    #[error("`{}`: `{key}` is missing", path.display())]
    MissingCommand {
        /// The file.
        path: PathBuf,
        /// The key, dotted.
        key: String,
    },
    /// `${VAR}` of an unset variable (or of one whose value is not UTF-8).
    #[error("`{}`: `{key}` uses `${{{var}}}`, which {why}", path.display())]
    Env {
        /// The file.
        path: PathBuf,
        /// The key, dotted.
        key: String,
        /// The variable.
        var: String,
        /// `is not set`, or `is not valid UTF-8`.
        why: &'static str,
    },
    /// No server of that name.
    #[error("`{}` has no server `{name}`; it has: {}", path.display(), if known.is_empty() { "none".to_owned() } else { known.join(", ") })]
    UnknownServer {
        /// The file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The names it has.
        known: Vec<String>,
    },
}

/// Why a remote Streamable HTTP server did not take or answer a client message. The
/// stdio downstream turns it into a JSON-RPC error for the client; the HTTP front passes a
/// [`HttpError::Status`] on as it came.
#[derive(Debug, Clone, Error)]
pub enum HttpError {
    /// The server could not be reached (connection refused, DNS, TLS…). Said as
    /// mcptape's (`mcptape: …`): a client reads it in a JSON-RPC error, where it must not
    /// pass for the server's own words.
    #[error("mcptape: cannot reach `{url}`: {why}")]
    Unreachable {
        /// The server's URL.
        url: String,
        /// The HTTP client's words, with their causes.
        why: String,
    },
    /// The server answered a status other than 2xx.
    #[error("HTTP {status} from `{url}`: {}", String::from_utf8_lossy(body))]
    Status {
        /// The server's URL.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the body (at most 1024 bytes), passed on as it came.
        body: bytes::Bytes,
    },
    /// A request's stream ended (and could not be resumed) before its answer.
    #[error("the server at `{url}` closed the stream without answering")]
    Unanswered {
        /// The server's URL.
        url: String,
    },
    /// An answer, or one event of a stream, larger than the framing maximum.
    #[error("the answer from `{url}` is larger than {max} bytes")]
    TooLarge {
        /// The server's URL.
        url: String,
        /// The limit.
        max: usize,
    },
    /// The body or event stream broke off.
    #[error("the answer from `{url}` was cut: {why}")]
    Cut {
        /// The server's URL.
        url: String,
        /// The HTTP client's words.
        why: String,
    },
    /// The HTTP client could not be set up.
    #[error("cannot set up the HTTP client: {0}")]
    Setup(String),
}

/// Why an upstream ([`crate::upstream::Link`]) cannot take a client message.
#[derive(Debug, Clone, Error)]
pub enum LinkError {
    /// The upstream is gone (the server process stopped reading, the session ended).
    #[error("the server is gone")]
    Gone,
    /// A remote server refused or failed the message.
    #[error(transparent)]
    Http(#[from] HttpError),
}

/// Errors about child processes.
#[derive(Debug, Error)]
pub enum ProcessError {
    /// The command could not be started.
    #[error("cannot start `{command}`")]
    Spawn {
        /// The program as given.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Waiting for the command failed.
    #[error("cannot wait for `{command}`")]
    Wait {
        /// The program as given.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Setting up signal handling failed.
    #[error("cannot install signal handlers")]
    Signals(#[source] std::io::Error),
}

/// Convenience alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The error and its causes on one line: `cannot write to tape `x`: No space left on device`.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        source = cause.source();
    }
    out
}
