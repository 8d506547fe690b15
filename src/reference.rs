//! The one source of the exit-status and environment lists: the top-level `--help` shows
//! them whole, each subcommand's `--help` the lines that concern it, and a test checks
//! them against docs/reference.md's tables and against every `MCPTAPE_*` variable the
//! code reads, both ways.
//!
//! The codes are the exit table's constants ([`crate::error`]); what a code means for a
//! command is said once, here.

use crate::error::{
    EXIT_DIFFERENT, EXIT_NOT_EXECUTABLE, EXIT_NOT_FOUND, EXIT_OK, EXIT_TAPE, EXIT_TIMEOUT,
    EXIT_USAGE,
};

/// Commands that take a wrapped command (its own status is passed on) or start a server.
const WRAPPERS: &[&str] = &["record", "replay", "proxy"];
/// Commands that start a server or a wrapped command by name.
const STARTERS: &[&str] = &["record", "replay", "proxy", "call", "tools"];
/// Commands that read named tapes (or, `servers`, a config in the mcptape home).
const HOMES: &[&str] = &[
    "record",
    "replay",
    "verify",
    "proxy",
    "call",
    "tools",
    "servers",
    "redact",
    "show",
    "list",
    "import",
    "scan",
    "commitments",
    "approvals",
    "approve",
    "deny",
    "view",
    "diff",
    "check",
    "export",
    "note",
];
/// Commands that read an MCP config.
const CONFIGS: &[&str] = &["call", "tools", "servers"];
/// Commands that record.
const RECORDERS: &[&str] = &["record", "proxy", "call", "tools"];
/// Commands with the policy gate and commitments (`--policy`, `--commit`).
const GUARDS: &[&str] = &["record", "proxy", "call"];
/// Commands that replay.
const REPLAYERS: &[&str] = &["replay", "proxy", "call", "tools"];

/// An exit status, as the lists show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    /// This status.
    Is(u8),
    /// The wrapped command's own status, passed on.
    Passed,
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Code::Is(code) => write!(f, "{code}"),
            Code::Passed => f.write_str("N"),
        }
    }
}

/// What an exit status means for some commands (all, when `commands` is empty).
#[derive(Debug)]
pub struct Exit {
    /// The status.
    pub code: Code,
    /// The commands it is about (with a flag where it needs one: `redact --check`); empty
    /// for every command.
    pub commands: &'static [&'static str],
    /// What it means.
    pub meaning: &'static str,
}

/// Every exit status, in the order the lists show them.
pub const EXITS: &[Exit] = &[
    Exit {
        code: Code::Is(EXIT_OK),
        commands: &[],
        meaning: "success",
    },
    Exit {
        code: Code::Is(EXIT_OK),
        commands: &["verify"],
        meaning: "every played call answered the same (skipped calls are counted, not \
                  failed)",
    },
    Exit {
        code: Code::Is(EXIT_DIFFERENT),
        commands: &["verify"],
        meaning: "an answer changed, errors now, or stopped erroring",
    },
    Exit {
        code: Code::Is(EXIT_DIFFERENT),
        commands: &["verify"],
        meaning: "--fail-on-skip: a request was skipped, or nothing was compared",
    },
    Exit {
        code: Code::Is(EXIT_DIFFERENT),
        commands: &["call", "tools"],
        meaning: "the tool answered isError, a JSON-RPC error, or the server failed",
    },
    Exit {
        code: Code::Is(EXIT_DIFFERENT),
        commands: &["redact"],
        meaning: "--check: something still looks like a secret (with --strict, a possible \
                  secret too)",
    },
    Exit {
        code: Code::Is(EXIT_DIFFERENT),
        commands: &["install", "uninstall"],
        meaning: "a backup, the install record or the config could not be written (the \
                  config is as it was)",
    },
    Exit {
        code: Code::Is(EXIT_DIFFERENT),
        commands: &["commitments"],
        meaning: "a commitment does not match its answer on the tape (verify), or the \
                  answer matches none of the tape's commitments (check)",
    },
    Exit {
        code: Code::Is(EXIT_DIFFERENT),
        commands: &["diff"],
        meaning: "--fail-on breaking: a change that breaks the server's clients; --fail-on \
                  any: any change",
    },
    Exit {
        code: Code::Is(EXIT_DIFFERENT),
        commands: &["check"],
        meaning: "a rule failed (an expected tool not called, a forbidden one called, a \
                  limit passed, a --fail-on kind found)",
    },
    Exit {
        code: Code::Passed,
        commands: WRAPPERS,
        meaning: "the wrapped command's own status; 128+N when it was killed by signal N",
    },
    Exit {
        code: Code::Is(EXIT_USAGE),
        commands: &[],
        meaning: "usage or configuration error (bad flag, bad session name, unusable \
                  MCPTAPE_HOME, unreadable tape, a file mcptape refuses to write)",
    },
    Exit {
        code: Code::Is(EXIT_USAGE),
        commands: &["approve", "deny"],
        meaning: "no such call is waiting: an unknown id, one decided already (or timed out, \
                  or withdrawn), or one whose holding process is gone",
    },
    Exit {
        code: Code::Is(EXIT_TAPE),
        commands: &["record"],
        meaning: "the tape reached --max-bytes, or a recording could not be written whole \
                  (when CMD itself succeeded)",
    },
    Exit {
        code: Code::Is(EXIT_TAPE),
        commands: &["replay"],
        meaning: "a connection diverged, left recorded messages unsent, was incomplete (the \
                  tape ended before the client was done), or was never used",
    },
    Exit {
        code: Code::Is(EXIT_TAPE),
        commands: &["proxy"],
        meaning: "--replay: its connection did not replay as recorded; or its recording \
                  could not be written whole (when its server exited 0)",
    },
    Exit {
        code: Code::Is(EXIT_TAPE),
        commands: &["call", "tools"],
        meaning: "replay diverged (or the tape ended before the answer), or the recording \
                  could not be written whole",
    },
    Exit {
        code: Code::Is(EXIT_TAPE),
        commands: &["verify"],
        meaning: "the run could not be completed (the server failed to start, went away \
                  or refused to initialize)",
    },
    Exit {
        code: Code::Is(EXIT_TIMEOUT),
        commands: &["call", "tools"],
        meaning: "no answer within --timeout",
    },
    Exit {
        code: Code::Is(EXIT_NOT_EXECUTABLE),
        commands: STARTERS,
        meaning: "the command could not be executed",
    },
    Exit {
        code: Code::Is(EXIT_NOT_FOUND),
        commands: STARTERS,
        meaning: "the command was not found",
    },
];

/// An environment variable mcptape reads, and the commands that read it.
#[derive(Debug)]
pub struct Var {
    /// Its name.
    pub name: &'static str,
    /// The commands that read it (or set it for their children).
    pub commands: &'static [&'static str],
    /// What it does.
    pub meaning: &'static str,
}

/// Every variable mcptape reads (its own `MCPTAPE_*`, then the colour conventions'), in
/// the order the lists show them.
pub const VARS: &[Var] = &[
    Var {
        name: "MCPTAPE_HOME",
        commands: HOMES,
        meaning: "where named tapes live: $MCPTAPE_HOME/recordings/<session>.ndjson \
                  (default ~/.mcptape)",
    },
    Var {
        name: "MCPTAPE_RECORD",
        commands: RECORDERS,
        meaning: "a session name or tape path: every `mcptape proxy` records into it (set \
                  by `mcptape record`; set but empty: off)",
    },
    Var {
        name: "MCPTAPE_REPLAY",
        commands: REPLAYERS,
        meaning: "a session name or tape path: every `mcptape proxy` answers from it (set \
                  by `mcptape replay`; set but empty: off)",
    },
    Var {
        name: "MCPTAPE_IGNORE",
        commands: REPLAYERS,
        meaning: "replay's --ignore (comma-separated), set by `mcptape replay`",
    },
    Var {
        name: "MCPTAPE_STRICT_INITIALIZE",
        commands: REPLAYERS,
        meaning: "`1`: replay's --strict-initialize, set by `mcptape replay`",
    },
    Var {
        name: "MCPTAPE_UNORDERED",
        commands: REPLAYERS,
        meaning: "`1`: replay's --unordered, set by `mcptape replay`",
    },
    Var {
        name: "MCPTAPE_MATCH",
        commands: REPLAYERS,
        meaning: "replay's --match (`strict`, `unordered`, `any`), set by `mcptape replay`",
    },
    Var {
        name: "MCPTAPE_FAIL_ON_UNUSED",
        commands: REPLAYERS,
        meaning: "`1`: replay's --fail-on-unused, set by `mcptape replay`",
    },
    Var {
        name: "MCPTAPE_MODE",
        commands: &["replay", "proxy"],
        meaning: "replay's --record-mode (`none`, `once`, `new`, `all`); `new` is passed to \
                  the proxies under `mcptape replay`",
    },
    Var {
        name: "MCPTAPE_FAULT",
        commands: &["record", "replay", "proxy"],
        meaning: "fault rules (a JSON array of rule texts, or one a line): --fault, set by `mcptape record`/`replay` for \
                  the proxies under them",
    },
    Var {
        name: "MCPTAPE_FAULTS",
        commands: &["record", "replay", "proxy"],
        meaning: "a fault rules file's path: --faults, set by `mcptape record`/`replay`",
    },
    Var {
        name: "MCPTAPE_POLICY",
        commands: GUARDS,
        meaning: "a policy file's path: --policy, set by `mcptape record` for the proxies \
                  under it",
    },
    Var {
        name: "MCPTAPE_APPROVAL_TIMEOUT",
        commands: GUARDS,
        meaning: "--approval-timeout in seconds, set by `mcptape record`",
    },
    Var {
        name: "MCPTAPE_COMMIT",
        commands: GUARDS,
        meaning: "`1`: --commit (commitments to tools/call results), set by `mcptape record`",
    },
    Var {
        name: "MCPTAPE_REDACT_RESULTS",
        commands: GUARDS,
        meaning: "`1`: --redact-results (result bodies left out, commitments kept), set by \
                  `mcptape record`; `1` in the proxy's own or `record`'s environment wins",
    },
    Var {
        name: "MCPTAPE_PACE",
        commands: REPLAYERS,
        meaning: "`1`: replay's --pace, set by `mcptape replay`",
    },
    Var {
        name: "MCPTAPE_MATCH_META",
        commands: &["replay", "verify", "proxy", "call", "tools"],
        meaning: "`1`: replay's and verify's --match-meta (compare `_meta`)",
    },
    Var {
        name: "MCPTAPE_SKIP_UNANSWERED",
        commands: REPLAYERS,
        meaning: "`1`: replay's --skip-unanswered-requests, set by `mcptape replay`",
    },
    Var {
        name: "MCPTAPE_SERVERS",
        commands: &["record", "replay", "proxy", "call", "tools"],
        meaning: "comma-separated server names the mode applies to (set by --server); \
                  others pass through",
    },
    Var {
        name: "MCPTAPE_REPORT",
        commands: &["record", "replay", "proxy", "call", "tools"],
        meaning: "a directory where proxies leave reports for their record/replay parent \
                  (set by it)",
    },
    Var {
        name: "MCPTAPE_MAX_BYTES",
        commands: &["record", "proxy", "call", "tools"],
        meaning: "the tape size limit (set by `record --max-bytes`)",
    },
    Var {
        name: "MCPTAPE_REDACT",
        commands: &[
            "record", "proxy", "call", "tools", "redact", "verify", "servers", "import", "scan",
        ],
        meaning: "comma-separated names of variables whose values are redacted from tapes, \
                  reports and listings",
    },
    Var {
        name: "MCPTAPE_NO_REDACT",
        commands: &["record", "proxy", "call", "tools", "import", "scan"],
        meaning: "`1`: record without redaction (the tape is marked so); never turns off \
                  `redact`, verify's reports or `servers`",
    },
    Var {
        name: "MCPTAPE_CONFIG",
        commands: CONFIGS,
        meaning: "the MCP config file (--config)",
    },
    Var {
        name: "MCPTAPE_MAX_LINE_BYTES",
        commands: &["proxy"],
        meaning: "the proxy's --max-line-bytes",
    },
    Var {
        name: "MCPTAPE_RELAY",
        commands: &["proxy"],
        meaning: "the proxy's --relay: `bytes` (default) or `lines`, a diagnostic switch",
    },
    Var {
        name: "MCPTAPE_MAX_CONNECTIONS",
        commands: &["proxy"],
        meaning: "the HTTP front's --max-connections",
    },
    Var {
        name: "MCPTAPE_HEADER_TIMEOUT",
        commands: &["proxy"],
        meaning: "the HTTP front's --header-timeout",
    },
    Var {
        name: "MCPTAPE_BODY_TIMEOUT",
        commands: &["proxy"],
        meaning: "the HTTP front's --body-timeout",
    },
    Var {
        name: "MCPTAPE_SESSION_IDLE",
        commands: &["proxy"],
        meaning: "the HTTP front's --session-idle",
    },
    Var {
        name: "MCPTAPE_PROGRESS",
        commands: &["verify", "call", "tools", "redact", "show"],
        meaning: "`0`: no progress bars (drawn on stderr only when it is a terminal)",
    },
    Var {
        name: "MCPTAPE_HEADER_<NAME>",
        commands: &["install", "proxy"],
        meaning: "a remote entry's header value, in the entry's env, which install wraps \
                  as `proxy --header-env NAME=MCPTAPE_HEADER_<NAME>` (never in argv)",
    },
    Var {
        name: "NO_COLOR",
        commands: &[],
        meaning: "set and not empty: no colour with --color auto",
    },
    Var {
        name: "CLICOLOR_FORCE",
        commands: &[],
        meaning: "set, not empty and not `0`: colour with --color auto, also into pipes",
    },
    Var {
        name: "CLICOLOR",
        commands: &[],
        meaning: "`0`: no colour with --color auto",
    },
    Var {
        name: "CLAUDE_CONFIG_DIR",
        commands: &["import", "scan"],
        meaning: "Claude Code's config directory: `import claude-code` and `scan` read \
                  $CLAUDE_CONFIG_DIR/projects (default ~/.claude/projects)",
    },
    Var {
        name: "TERM",
        commands: &[],
        meaning: "`dumb` (or unset): no colour with --color auto, and no progress bars",
    },
    Var {
        name: "CODEX_HOME",
        commands: &["import", "scan"],
        meaning: "where Codex CLI keeps its rollouts: $CODEX_HOME/sessions (default \
                  ~/.codex)",
    },
];

/// The ancestor rule, said where proxies read the modes.
const ANCESTOR_NOTE: &str = "A proxy whose own environment has neither MCPTAPE_RECORD nor \
    MCPTAPE_REPLAY takes them from its nearest ancestor process that has one (Linux), so \
    clients that scrub their servers' environment still record and replay.";

/// The width the lists are wrapped to.
const WIDTH: usize = 80;
/// Where a list's meanings start.
const EXIT_COLUMN: usize = 7;
/// Where the environment list's meanings start.
const VAR_COLUMN: usize = 20;

/// The top-level `--help`'s text after the options: both lists whole.
pub fn top_level() -> String {
    compose(None, "")
}

/// A subcommand's `--help` text after the options: `notes` (its own paragraphs, may be
/// empty), then the exit statuses and variables that concern it.
pub fn for_command(command: &str, notes: &str) -> String {
    compose(Some(command), notes)
}

fn compose(command: Option<&str>, notes: &str) -> String {
    let mut out = String::new();
    if !notes.is_empty() {
        out.push_str(notes.trim_end());
        out.push_str("\n\n");
    }
    out.push_str("Exit status:\n");
    out.push_str(&exit_lines(command));
    let vars = var_lines(command);
    if !vars.is_empty() {
        out.push_str("\nEnvironment:\n");
        out.push_str(&vars);
        if command.is_none_or(|c| c == "proxy") {
            out.push_str(&wrap(ANCESTOR_NOTE, 0, 0));
        }
    }
    out.trim_end().to_owned()
}

/// True when a row about `commands` concerns `command` (every row does at the top level).
fn concerns(commands: &[&str], command: Option<&str>) -> bool {
    match command {
        None => true,
        Some(c) => commands.is_empty() || commands.contains(&c),
    }
}

/// The exit lines: one per code; at the top level each meaning names its commands.
fn exit_lines(command: Option<&str>) -> String {
    let mut out = String::new();
    for (code, meanings) in exit_meanings(command) {
        let head = format!("  {code}");
        out.push_str(
            &wrap(&meanings.join("; "), EXIT_COLUMN, head.len()).replacen(
                &" ".repeat(head.len()),
                &head,
                1,
            ),
        );
    }
    out
}

/// What each code means for `command` (every command's meaning, each naming its
/// commands, at the top level), in the table's order; codes that mean nothing for it are
/// left out.
fn exit_meanings(command: Option<&str>) -> Vec<(Code, Vec<String>)> {
    let mut codes: Vec<Code> = Vec::new();
    for e in EXITS {
        if !codes.contains(&e.code) {
            codes.push(e.code);
        }
    }
    codes
        .into_iter()
        .map(|code| {
            let meanings: Vec<String> = EXITS
                .iter()
                .filter(|e| e.code == code && concerns(e.commands, command))
                .map(|e| match (command, e.commands) {
                    (Some(_), _) | (None, []) => e.meaning.to_owned(),
                    // `redact --check: …`, `proxy --replay: …`
                    (None, cmds) if e.meaning.starts_with("--") => {
                        format!("{} {}", cmds.join(", "), e.meaning)
                    }
                    (None, cmds) => format!("{}: {}", cmds.join(", "), e.meaning),
                })
                .collect();
            (code, meanings)
        })
        .filter(|(_, meanings)| !meanings.is_empty())
        .collect()
}

/// The exit-status table of docs/reference.md, as its Markdown rows: made from the same
/// table as `--help`'s lists (a test keeps the page equal to it).
#[cfg(test)]
pub fn exit_markdown() -> String {
    let mut out = String::from("| status | meaning |\n| --- | --- |\n");
    for (code, meanings) in exit_meanings(None) {
        out.push_str(&format!("| {code} | {} |\n", meanings.join("; ")));
    }
    out
}

/// The variable lines that concern `command` (all at the top level).
fn var_lines(command: Option<&str>) -> String {
    let mut out = String::new();
    for v in VARS.iter().filter(|v| concerns(v.commands, command)) {
        let head = format!("  {}", v.name);
        if head.len() + 1 >= VAR_COLUMN {
            out.push_str(&head);
            out.push('\n');
            out.push_str(&wrap(v.meaning, VAR_COLUMN, 0));
        } else {
            out.push_str(&wrap(v.meaning, VAR_COLUMN, head.len()).replacen(
                &" ".repeat(head.len()),
                &head,
                1,
            ));
        }
    }
    out
}

/// `text` wrapped to [`WIDTH`], every line indented to `column`; the first line's first
/// `taken` columns are left as spaces for a head the caller puts there.
fn wrap(text: &str, column: usize, taken: usize) -> String {
    let mut out = String::new();
    let mut line = " ".repeat(column.max(taken));
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.len() + 1 + word.len() > WIDTH {
            out.push_str(&line);
            out.push('\n');
            line = " ".repeat(column);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests;
