//! Wrapping and unwrapping one server entry: pure logic over the entry's JSON value and
//! its agent's [`Dialect`], with no file in sight.
//!
//! A stdio entry's `command`/`args` become `LAUNCHER… proxy --server KEY -- COMMAND
//! ARGS…`; every other member is left alone. A remote entry becomes a stdio front,
//! `LAUNCHER… proxy --server KEY --url URL --header-env NAME=MCPTAPE_HEADER_NAME…`, whose
//! header values move into the entry's `env`, never into argv. What a stdio front
//! cannot express is a [`Wrap::Skip`] with the reason.

use clap::{Args, FromArgMatches};
use serde_json::{Map, Value};

use crate::agents::dialect::{CommandShape, Dialect};
use crate::{cli, mode};

/// The words after the launcher that open a wrapper's arguments.
const PROXY: &str = "proxy";
/// The environment variable prefix that carries a remote entry's header values.
pub const HEADER_ENV_PREFIX: &str = "MCPTAPE_HEADER_";

/// A member to set (`Some`) or remove (`None`), in the order given.
pub type Member = (String, Option<Value>);

/// What to do with one entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Wrap {
    /// Already wrapped: nothing to change.
    Wrapped,
    /// Cannot be wrapped, for this reason.
    Skip(String),
    /// Set these members, in order.
    Members(Vec<Member>),
}

/// What a wrapped entry holds behind the launcher.
#[derive(Debug, Clone, PartialEq)]
pub enum Inner {
    /// `-- COMMAND ARGS…`.
    Stdio {
        /// The original program.
        command: String,
        /// The original arguments.
        args: Vec<String>,
    },
    /// `--url URL …`.
    Url(String),
    /// Neither: a front answering from a tape (`--listen` with `--replay`).
    Tape,
}

/// A wrapped entry's `proxy` arguments, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Wrapped {
    /// The `--server` name, if it gives one.
    pub server: Option<String>,
    /// What it wraps.
    pub inner: Inner,
}

/// `env`'s name for header `name`: `MCPTAPE_HEADER_` + the name uppercased, every
/// character other than an ASCII letter or digit made `_`.
pub fn header_env_name(name: &str) -> String {
    let tail: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{HEADER_ENV_PREFIX}{tail}")
}

fn strings(value: Option<&Value>, what: &str) -> Result<Vec<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| format!("`{what}` holds a value that is not a string")),
        Some(_) => Err(format!("`{what}` is not a list of strings")),
    }
}

/// The entry's command line: `(program, args)`, and whether it is Zed's nested form.
fn command_line(
    entry: &Map<String, Value>,
    d: &Dialect,
) -> Option<Result<(String, Vec<String>), String>> {
    match entry.get(d.command)? {
        Value::String(cmd) => Some(strings(entry.get(d.args), d.args).map(|a| (cmd.clone(), a))),
        Value::Object(nested) if d.shape == CommandShape::ZedNested => {
            let path = match nested.get("path") {
                Some(Value::String(p)) => p.clone(),
                _ => return Some(Err("`command.path` is not a string".into())),
            };
            Some(strings(nested.get("args"), "command.args").map(|a| (path, a)))
        }
        _ => Some(Err(format!("`{}` is not a string", d.command))),
    }
}

/// Reads a wrapper back from its program and arguments: a launcher word naming
/// `mcptape…`, then `proxy` and arguments the proxy's own clap parser ([`cli::Proxy`])
/// accepts, its flags in any order. "Wrapped" means the entry runs `mcptape proxy`,
/// whatever `--server` it names.
pub fn parse_wrapper(command: &str, args: &[String]) -> Option<Wrapped> {
    let argv: Vec<&str> = std::iter::once(command)
        .chain(args.iter().map(String::as_str))
        .collect();
    let p = argv.iter().position(|w| *w == PROXY)?;
    let launcher_named = argv[..p].iter().any(|w| {
        std::path::Path::new(w)
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("mcptape"))
    });
    if !launcher_named {
        return None;
    }
    thread_local! {
        // Built once: building clap's command costs more than parsing with it, and a
        // file may hold thousands of wrapped entries.
        static PARSER: std::cell::RefCell<clap::Command> = std::cell::RefCell::new(
            cli::Proxy::augment_args(clap::Command::new(PROXY).no_binary_name(true)),
        );
    }
    let matches = PARSER
        .with(|parser| parser.borrow_mut().try_get_matches_from_mut(&argv[p + 1..]))
        .ok()?;
    let proxy = cli::Proxy::from_arg_matches(&matches).ok()?;
    let inner = match (proxy.url, proxy.command.split_first()) {
        (Some(url), _) => Inner::Url(url),
        (None, Some((command, args))) => Inner::Stdio {
            command: command.clone(),
            args: args.to_vec(),
        },
        (None, None) => Inner::Tape,
    };
    Some(Wrapped {
        server: proxy.server,
        inner,
    })
}

/// The wrapper an entry holds, if it is wrapped.
pub fn wrapped(entry: &Value, d: &Dialect) -> Option<Wrapped> {
    let (command, args) = command_line(entry.as_object()?, d)?.ok()?;
    parse_wrapper(&command, &args)
}

/// The program and arguments of a wrapper around `inner`. A key that starts with `-`
/// goes as `--server=KEY`, which clap reads as the flag's value, never as a flag.
fn wrapper(launcher: &[String], key: &str, tail: &[&str]) -> (String, Vec<String>) {
    let mut args: Vec<String> = launcher[1..].to_vec();
    args.push(PROXY.to_owned());
    if key.starts_with('-') {
        args.push(format!("--server={key}"));
    } else {
        args.extend(["--server", key].map(str::to_owned));
    }
    args.extend(tail.iter().map(|s| (*s).to_owned()));
    (launcher[0].clone(), args)
}

/// The command members for `(program, args)` in the entry's shape.
fn command_members(
    entry: &Map<String, Value>,
    d: &Dialect,
    program: String,
    args: Vec<String>,
) -> Vec<Member> {
    let args_value = Value::Array(args.into_iter().map(Value::String).collect());
    match entry.get(d.command) {
        Some(Value::Object(nested)) => {
            let mut nested = nested.clone();
            nested.insert("path".into(), Value::String(program));
            nested.insert("args".into(), args_value);
            vec![(d.command.to_owned(), Some(Value::Object(nested)))]
        }
        _ => vec![
            (d.command.to_owned(), Some(Value::String(program))),
            (d.args.to_owned(), Some(args_value)),
        ],
    }
}

/// How to wrap entry `key` so it starts through `launcher` (its words: `["/abs/mcptape"]`,
/// `["npx", "-y", "mcptape"]`).
pub fn wrap(entry: &Value, key: &str, d: &Dialect, launcher: &[String]) -> Wrap {
    let Some(obj) = entry.as_object() else {
        return Wrap::Skip("the entry is not an object".into());
    };
    if launcher.is_empty() {
        return Wrap::Skip("no launcher command".into());
    }
    if let Err(invalid) = mode::check_server_name(key) {
        return Wrap::Skip(invalid.to_string());
    }
    let kind = d.kind.and_then(|k| obj.get(k)).and_then(Value::as_str);
    if let Some(k) = kind.filter(|k| d.kind_in_process.contains(k)) {
        return Wrap::Skip(format!(
            "a `{k}` extension runs inside the agent: there is no server to wrap"
        ));
    }
    if let Some(line) = command_line(obj, d) {
        let (program, args) = match line {
            Ok(line) => line,
            Err(why) => return Wrap::Skip(why),
        };
        if parse_wrapper(&program, &args).is_some() {
            return Wrap::Wrapped;
        }
        let mut tail = vec!["--", program.as_str()];
        tail.extend(args.iter().map(String::as_str));
        let (program, args) = wrapper(launcher, key, &tail);
        return Wrap::Members(command_members(obj, d, program, args));
    }
    wrap_remote(obj, key, d, launcher)
}

fn wrap_remote(obj: &Map<String, Value>, key: &str, d: &Dialect, launcher: &[String]) -> Wrap {
    let Some((url_key, url)) = d.url.iter().find_map(|k| obj.get(*k).map(|v| (*k, v))) else {
        return Wrap::Skip(format!("neither `{}` nor a URL member", d.command));
    };
    let Some(url) = url.as_str() else {
        return Wrap::Skip(format!("`{url_key}` is not a string"));
    };
    let kind = d.kind.and_then(|k| obj.get(k)).and_then(Value::as_str);
    if d.sse_url.contains(&url_key) || kind.is_some_and(|k| d.kind_sse.contains(&k)) {
        return Wrap::Skip(
            "the legacy SSE transport, which `mcptape proxy --url` does not speak".into(),
        );
    }
    if let Some(k) = d.remote_only.iter().find(|k| obj.contains_key(**k)) {
        return Wrap::Skip(format!(
            "`{k}` (OAuth/auth settings) cannot pass through a stdio front"
        ));
    }
    let headers = match obj.get(d.headers) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(h)) => h.clone(),
        Some(_) => return Wrap::Skip(format!("`{}` is not an object", d.headers)),
    };
    let mut tail: Vec<String> = vec!["--url".into(), url.to_owned()];
    let mut env = match d.env.and_then(|e| obj.get(e)) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(e)) => e.clone(),
        Some(_) => return Wrap::Skip("`env` is not an object".into()),
    };
    for (name, value) in &headers {
        let Some(value) = value.as_str() else {
            return Wrap::Skip(format!("header `{name}` is not a string"));
        };
        let var = header_env_name(name);
        if env.contains_key(&var) {
            return Wrap::Skip(format!("`env` already has `{var}`"));
        }
        env.insert(var.clone(), Value::String(value.to_owned()));
        tail.push("--header-env".into());
        tail.push(format!("{name}={var}"));
    }
    let forwarded = match env_headers(obj, d, &mut tail) {
        Ok(vars) => vars,
        Err(why) => return Wrap::Skip(why),
    };
    let Some(env_key) = d.env else {
        if headers.is_empty() {
            return Wrap::Skip("the agent has no `env` for a stdio entry".into());
        }
        return Wrap::Skip(
            "its headers would have to go into argv (the agent has no `env`)".into(),
        );
    };
    let tail: Vec<&str> = tail.iter().map(String::as_str).collect();
    let (program, args) = wrapper(launcher, key, &tail);
    let mut members = command_members(obj, d, program, args);
    if !headers.is_empty() {
        members.push((env_key.to_owned(), Some(Value::Object(env))));
    }
    if let (Some(k), Some(_)) = (d.kind, kind) {
        members.push((
            k.to_owned(),
            d.kind_stdio.map(|v| Value::String(v.to_owned())),
        ));
    }
    members.push((url_key.to_owned(), None));
    if obj.contains_key(d.headers) {
        members.push((d.headers.to_owned(), None));
    }
    if let (Some(eh), Some(fwd)) = (d.env_headers, d.env_forward) {
        if !forwarded.is_empty() {
            let mut list: Vec<Value> = match obj.get(fwd) {
                Some(Value::Array(items)) => items.clone(),
                _ => Vec::new(),
            };
            for var in forwarded {
                if !list.iter().any(|v| v.as_str() == Some(var.as_str())) {
                    list.push(Value::String(var));
                }
            }
            members.push((fwd.to_owned(), Some(Value::Array(list))));
        }
        if obj.contains_key(eh) {
            members.push((eh.to_owned(), None));
        }
    }
    Wrap::Members(members)
}

/// A remote entry's headers whose values are variables of the agent's environment
/// ([`Dialect::env_headers`]): `--header-env NAME=VAR` each, and the variables the front
/// must be given ([`Dialect::env_forward`]).
fn env_headers(
    obj: &Map<String, Value>,
    d: &Dialect,
    tail: &mut Vec<String>,
) -> Result<Vec<String>, String> {
    let Some(eh) = d.env_headers else {
        return Ok(Vec::new());
    };
    let map = match obj.get(eh) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(m)) => m,
        Some(_) => return Err(format!("`{eh}` is not a table of variable names")),
    };
    if !map.is_empty() && d.env_forward.is_none() {
        return Err(format!("`{eh}` cannot be forwarded to a stdio front"));
    }
    let mut vars = Vec::new();
    for (name, var) in map {
        let Some(var) = var.as_str().filter(|v| !v.is_empty()) else {
            return Err(format!("`{eh}.{name}` is not a variable name"));
        };
        tail.push("--header-env".into());
        tail.push(format!("{name}={var}"));
        vars.push(var.to_owned());
    }
    Ok(vars)
}

/// How to unwrap a wrapped stdio entry with no install record: its command line from
/// the wrapper's words after `--`. `None` when it is not wrapped or wraps a URL (whose
/// headers and transport only the record keeps).
pub fn unwrap_stdio(entry: &Value, d: &Dialect) -> Option<Vec<Member>> {
    let obj = entry.as_object()?;
    match wrapped(entry, d)?.inner {
        Inner::Stdio { command, args } => Some(command_members(obj, d, command, args)),
        Inner::Url(_) | Inner::Tape => None,
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod formats_tests;
