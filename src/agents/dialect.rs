//! How an agent spells a server entry: the member names of a stdio and of a remote entry,
//! the values of its `type`, and what it can express. [`crate::agents::wrap`] reads and
//! writes entries only through a [`Dialect`], so a new agent is a new table value here,
//! never a change of the wrapping logic.

/// Where a stdio entry keeps its command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandShape {
    /// `"command": "prog", "args": [..], "env": {..}` at the entry's top level.
    Flat,
    /// Zed's older shape, also accepted in its current one:
    /// `"command": {"path": "prog", "args": [..], "env": {..}}`.
    ZedNested,
}

/// The member names and values one agent uses in a server entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dialect {
    /// The member holding the program (`command`).
    pub command: &'static str,
    /// The member holding the program's arguments (`args`).
    pub args: &'static str,
    /// The member holding the server's environment (`env`); `None` when the agent has none.
    pub env: Option<&'static str>,
    /// The members that hold a remote server's URL, in the order they are looked for
    /// (`url`, Windsurf's `serverUrl`, Gemini's `httpUrl`).
    pub url: &'static [&'static str],
    /// Of [`Dialect::url`], the members whose URL uses the legacy SSE transport, which
    /// `mcptape proxy --url` does not speak (Gemini's `url`).
    pub sse_url: &'static [&'static str],
    /// The member holding a remote server's HTTP headers (`headers`).
    pub headers: &'static str,
    /// The member naming the transport (`type`), if the agent has one.
    pub kind: Option<&'static str>,
    /// The value of [`Dialect::kind`] that means a stdio server (`stdio`); `None` when
    /// the agent has no such value, and a wrapped remote entry loses its `type`.
    pub kind_stdio: Option<&'static str>,
    /// Values of [`Dialect::kind`] that mean the legacy SSE transport (`sse`).
    pub kind_sse: &'static [&'static str],
    /// Members of a remote entry that cannot be carried through a stdio front (OAuth
    /// settings, auth providers): an entry with one is skipped with a reason.
    pub remote_only: &'static [&'static str],
    /// Where the command line lives.
    pub shape: CommandShape,
    /// A remote entry's member mapping header names to variables of the agent's own
    /// environment (Codex's `env_http_headers`): each becomes `--header-env NAME=VAR`,
    /// the variable forwarded to the front through [`Dialect::env_forward`].
    pub env_headers: Option<&'static str>,
    /// The member listing variables of the agent's environment a stdio server inherits
    /// (Codex's `env_vars`).
    pub env_forward: Option<&'static str>,
    /// Values of [`Dialect::kind`] for extensions that run inside the agent, with no
    /// server process to wrap (Goose's `builtin`, `platform`, …).
    pub kind_in_process: &'static [&'static str],
}

impl Dialect {
    /// The dialect of most agents (Claude Code, Claude Desktop, Cursor, Cline):
    /// `command`/`args`/`env`, remote `url` + `headers`, `type`.
    pub const STANDARD: Dialect = Dialect {
        command: "command",
        args: "args",
        env: Some("env"),
        url: &["url"],
        sse_url: &[],
        headers: "headers",
        kind: Some("type"),
        kind_stdio: Some("stdio"),
        kind_sse: &["sse"],
        remote_only: &["oauth", "auth"],
        shape: CommandShape::Flat,
        env_headers: None,
        env_forward: None,
        kind_in_process: &[],
    };

    /// Windsurf: a remote entry's URL is `serverUrl` (`url` is read too).
    pub const WINDSURF: Dialect = Dialect {
        url: &["serverUrl", "url"],
        ..Dialect::STANDARD
    };

    /// Gemini CLI: `httpUrl` (older) or `url` is Streamable HTTP, `url` with
    /// `"type": "sse"` is SSE; `type` is only `http` or `sse`, so a wrapped entry drops
    /// it; `authProviderType`/`oauth` cannot be carried by a stdio front.
    pub const GEMINI: Dialect = Dialect {
        url: &["httpUrl", "url"],
        kind_stdio: None,
        remote_only: &["oauth", "authProviderType"],
        ..Dialect::STANDARD
    };

    /// Cline: `type` is `stdio`, `sse` or `streamableHttp`.
    pub const CLINE: Dialect = Dialect::STANDARD;

    /// VS Code: `type` is `stdio`, `http` or `sse`; `envFile` and `dev` are kept.
    pub const VSCODE: Dialect = Dialect::STANDARD;

    /// Zed: `context_servers` entries with `command`/`args`/`env` (or the older nested
    /// `command` object), remote `url` + `headers`, no `type`.
    pub const ZED: Dialect = Dialect {
        kind: None,
        shape: CommandShape::ZedNested,
        ..Dialect::STANDARD
    };

    /// Codex CLI (`config.toml`, `[mcp_servers.NAME]`, read from `codex-rs/config`'s
    /// `RawMcpServerConfig`): no `type`; a stdio entry may not keep `url`,
    /// `http_headers`, `env_http_headers`, `bearer_token_env_var` or OAuth members;
    /// `env_vars` forwards variables of Codex's environment. A bearer token read from a
    /// variable needs `Bearer ` before its value, which `--header-env` cannot add.
    pub const CODEX: Dialect = Dialect {
        headers: "http_headers",
        kind: None,
        kind_sse: &[],
        remote_only: &[
            "bearer_token_env_var",
            "bearer_token",
            "oauth",
            "oauth_resource",
        ],
        env_headers: Some("env_http_headers"),
        env_forward: Some("env_vars"),
        ..Dialect::STANDARD
    };

    /// Goose (`config.yaml`, `extensions:`, read from `crates/goose`'s
    /// `ExtensionConfig`): `cmd`/`args`/`envs`, `type` `stdio` or `streamable_http`
    /// (`uri` + `headers`); `sse` is no longer run by Goose, and the in-process kinds
    /// have no server.
    pub const GOOSE: Dialect = Dialect {
        command: "cmd",
        env: Some("envs"),
        url: &["uri"],
        kind_in_process: &["builtin", "platform", "frontend", "inline_python"],
        ..Dialect::STANDARD
    };
}
