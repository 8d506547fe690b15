//! A small but real MCP server over stdio, used by mcptape's tests and docs.
//!
//! It speaks MCP 2025-06-18 and 2025-11-25: newline-delimited JSON-RPC 2.0 on
//! stdin and stdout. Stdout carries protocol lines only; every diagnostic goes
//! to stderr. It is built from std and serde_json alone, and it writes every
//! line itself, so the bytes it puts on the wire are easy to reason about.
//!
//! Tools: `echo`, `add` (with structured output), `slow` (sends progress when
//! the request carries a progress token), `fail` (an `isError` result),
//! `greet`, `exact` (a hand-written response line, for byte-exact recording
//! checks), `big` (a text of a chosen size), `write_note` (the one tool that
//! is not read-only). One more tool is callable but not listed, so that the catalogue
//! stays as the tests know it: `deep`, an answer nested `levels` arrays deep (by default
//! as deep as its arguments nest), for tests of messages too deep to parse.
//!
//! Flags, mostly for tests that need a misbehaving server:
//!
//! - `--variant`: `greet` answers "Hi, NAME!" instead of "Hello, NAME!".
//! - `--drift`: a new build that changed (for `mcptape verify`): `--variant`, and `add`
//!   becomes a tool error, `fail` succeeds, `echo` adds a field to its result.
//! - `--garbage`: right after answering `initialize`, write `this is not json`.
//! - `--long-line BYTES`: right after answering `initialize`, write one
//!   `notifications/message` line exactly BYTES bytes long (newline excluded).
//! - `--exit-mid-call TOOL`: when a `tools/call` names TOOL, exit at once with
//!   status 3 without answering.
//! - `--ignore-stdin-eof`: at stdin EOF, sleep until killed instead of exiting.
//! - `--log`: write `example-server: METHOD` to stderr for each received method.
//!
//! An unknown flag prints the usage to stderr and exits with status 2.
//!
//! Run it with `cargo run --example example-server -- [FLAGS]`.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use std::thread;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Number, Value, json};

const USAGE: &str = "usage: example-server [--variant] [--drift] [--garbage] [--long-line BYTES] \
                     [--exit-mid-call TOOL] [--ignore-stdin-eof] [--log]";

/// Protocol versions this server accepts as the client's request.
const SUPPORTED_VERSIONS: [&str; 2] = ["2025-06-18", "2025-11-25"];
/// The version answered when the client asks for one we do not speak.
const LATEST_VERSION: &str = "2025-11-25";

/// The `--long-line` notification, split around its run of `x` characters.
const LONG_HEAD: &str =
    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":""#;
const LONG_TAIL: &str = r#""}}"#;

/// The `exact` tool's response, split around the request id's raw text. It is
/// written by hand: keys out of alphabetical order, `1.0`, `1e2`, `-0.0`, and
/// the escapes `\u00e9` and `\/`, none of which serde_json would produce.
const EXACT_HEAD: &str = r#"{"jsonrpc":"2.0","id":"#;
const EXACT_TAIL: &str =
    r#","result":{"z":1.0,"content":[{"type":"text","text":"caf\u00e9 \/ 1.0"}],"a":[1e2,-0.0]}}"#;

#[derive(Default)]
struct Options {
    variant: bool,
    drift: bool,
    garbage: bool,
    long_line: Option<usize>,
    exit_mid_call: Option<String>,
    ignore_stdin_eof: bool,
    log: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--variant" => opts.variant = true,
            "--drift" => {
                opts.variant = true;
                opts.drift = true;
            }
            "--garbage" => opts.garbage = true,
            "--ignore-stdin-eof" => opts.ignore_stdin_eof = true,
            "--log" => opts.log = true,
            "--long-line" => {
                let value = args.next().ok_or("--long-line needs BYTES")?;
                let bytes: usize = value
                    .parse()
                    .map_err(|err| format!("--long-line {value}: {err}"))?;
                let min = LONG_HEAD.len() + LONG_TAIL.len();
                if bytes < min {
                    return Err(format!("--long-line must be at least {min} bytes"));
                }
                opts.long_line = Some(bytes);
            }
            "--exit-mid-call" => {
                opts.exit_mid_call = Some(args.next().ok_or("--exit-mid-call needs TOOL")?);
            }
            other => return Err(format!("unknown flag: {other}")),
        }
    }
    Ok(opts)
}

fn main() -> ExitCode {
    let opts = match parse_args() {
        Ok(opts) => opts,
        Err(msg) => {
            eprintln!("example-server: {msg}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match serve(&opts) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("example-server: i/o error: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Answers stdin line by line until EOF.
fn serve(opts: &Options) -> io::Result<()> {
    let mut input = io::stdin().lock();
    let mut out = io::stdout().lock();
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        handle_line(opts, &line, &mut out)?;
    }
    if opts.ignore_stdin_eof {
        eprintln!("example-server: stdin closed; ignoring it (--ignore-stdin-eof)");
        loop {
            thread::sleep(Duration::from_secs(3600));
        }
    }
    Ok(())
}

fn handle_line(opts: &Options, line: &[u8], out: &mut impl Write) -> io::Result<()> {
    let Ok(text) = std::str::from_utf8(line) else {
        return send_error(out, "null", -32700, "parse error: line is not UTF-8");
    };
    if text.trim().is_empty() {
        return Ok(());
    }
    // Raw values are skipped without recursion: any depth is valid JSON here.
    if let Err(err) = serde_json::from_str::<&RawValue>(text) {
        return send_error(out, "null", -32700, &format!("parse error: {err}"));
    }
    // Parse the members as raw text, so the id is echoed exactly as it came.
    let Ok(fields) = serde_json::from_str::<BTreeMap<String, Box<RawValue>>>(text) else {
        return send_error(out, "null", -32600, "invalid request: not a JSON object");
    };
    let id = fields.get("id").map(|raw| raw.get());
    let member = |key: &str| -> Value {
        fields
            .get(key)
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or(Value::Null)
    };
    if !fields.contains_key("method") {
        // A response from the client (to a request we never send): ignore it.
        return Ok(());
    }
    let Value::String(method) = member("method") else {
        return send_error(
            out,
            id.unwrap_or("null"),
            -32600,
            "invalid request: bad method",
        );
    };
    if opts.log {
        eprintln!("example-server: {method}");
    }
    match id {
        // Notifications (`notifications/*` or any other) get no reply.
        None => Ok(()),
        Some(id) if method == "tools/call" => match deep_levels(fields.get("params").map(|p| &**p))
        {
            Some(levels) => send_line(out, &deep_answer(id, levels)),
            None => call_tool(opts, id, &member("params"), out),
        },
        Some(id) => handle_request(opts, id, &method, &member("params"), out),
    }
}

fn handle_request(
    opts: &Options,
    id: &str,
    method: &str,
    params: &Value,
    out: &mut impl Write,
) -> io::Result<()> {
    match method {
        "initialize" => {
            let version = params
                .get("protocolVersion")
                .and_then(Value::as_str)
                .filter(|v| SUPPORTED_VERSIONS.contains(v))
                .unwrap_or(LATEST_VERSION);
            let result = json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}, "logging": {}},
                "serverInfo": {"name": "mcptape-example", "version": env!("CARGO_PKG_VERSION")},
                "instructions": "A tiny test server: call echo, add, slow, greet and friends.",
            });
            send_result(out, id, &result)?;
            if opts.garbage {
                send_line(out, "this is not json")?;
            }
            if let Some(bytes) = opts.long_line {
                let fill = bytes - LONG_HEAD.len() - LONG_TAIL.len();
                send_line(out, &format!("{LONG_HEAD}{}{LONG_TAIL}", "x".repeat(fill)))?;
            }
            Ok(())
        }
        "ping" | "logging/setLevel" => send_result(out, id, &json!({})),
        "tools/list" => send_result(out, id, &json!({ "tools": tool_list() })),
        "tools/call" => call_tool(opts, id, params, out),
        _ => send_error(out, id, -32601, &format!("method not found: {method}")),
    }
}

/// An object schema with the given properties and required names.
fn schema(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required})
}

/// The tool catalogue; `add` also declares the shape of its structured output.
fn tool_list() -> Value {
    let read_only = json!({"readOnlyHint": true});
    let string = json!({"type": "string"});
    let number = json!({"type": "number"});
    json!([
        {"name": "echo", "description": "Echoes the message back.",
         "inputSchema": schema(json!({"message": string}), &["message"]),
         "annotations": read_only},
        {"name": "add", "description": "Adds two numbers.",
         "inputSchema": schema(json!({"a": number, "b": number}), &["a", "b"]),
         "outputSchema": schema(json!({"sum": number}), &["sum"]),
         "annotations": read_only},
        {"name": "slow",
         "description": "Sleeps `ms` milliseconds `steps` times, sending progress after each step.",
         "inputSchema": schema(json!({
             "steps": {"type": "integer", "default": 3, "minimum": 0},
             "ms": {"type": "integer", "default": 50, "minimum": 0},
         }), &[]),
         "annotations": read_only},
        {"name": "fail", "description": "Always returns a tool error.",
         "inputSchema": schema(json!({}), &[]), "annotations": read_only},
        {"name": "greet", "description": "Greets someone by name.",
         "inputSchema": schema(json!({"name": string}), &["name"]), "annotations": read_only},
        {"name": "now", "description": "The current time, as JSON in text (volatile on purpose).",
         "inputSchema": schema(json!({}), &[]), "annotations": read_only},
        {"name": "exact", "description": "Answers with a hand-written, byte-exact line.",
         "inputSchema": schema(json!({}), &[]), "annotations": read_only},
        {"name": "big", "description": "Returns a text of `bytes` 'x' characters.",
         "inputSchema": schema(json!({"bytes": {"type": "integer", "minimum": 0}}), &["bytes"]),
         "annotations": read_only},
        {"name": "write_note", "description": "Pretends to write a note (not read-only).",
         "inputSchema": schema(json!({"text": string}), &["text"]),
         "annotations": {"readOnlyHint": false, "destructiveHint": false}},
    ])
}

fn text_result(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

fn tool_error(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

fn call_tool(opts: &Options, id: &str, params: &Value, out: &mut impl Write) -> io::Result<()> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return send_error(out, id, -32602, "tools/call needs a string `name`");
    };
    if opts.exit_mid_call.as_deref() == Some(name) {
        eprintln!("example-server: exiting in the middle of a call to {name} (--exit-mid-call)");
        std::process::exit(3);
    }
    let args = params.get("arguments").unwrap_or(&Value::Null);
    let str_arg = |key: &str| args.get(key).and_then(Value::as_str);
    let result = match name {
        "echo" => match str_arg("message") {
            Some(message) if opts.drift => {
                let mut r = text_result(&format!("Echo: {message}"));
                r["length"] = json!(message.chars().count());
                r
            }
            Some(message) => text_result(&format!("Echo: {message}")),
            None => tool_error("echo needs a string `message`"),
        },
        "add" if opts.drift => tool_error("add is disabled in this build"),
        "add" => add(args),
        "slow" => return slow(id, params, args, out),
        "fail" if opts.drift => text_result("fail works now"),
        "fail" => tool_error("this tool always fails"),
        "now" => {
            // Volatile on purpose: JSON in text whose `time` changes from run to run.
            let ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0);
            text_result(&json!({"time": ms.to_string(), "zone": "UTC"}).to_string())
        }
        "greet" => match str_arg("name") {
            Some(who) if opts.variant => text_result(&format!("Hi, {who}!")),
            Some(who) => text_result(&format!("Hello, {who}!")),
            None => tool_error("greet needs a string `name`"),
        },
        "exact" => return send_line(out, &format!("{EXACT_HEAD}{id}{EXACT_TAIL}")),
        "big" => match args.get("bytes").and_then(Value::as_u64) {
            Some(bytes) => match usize::try_from(bytes) {
                Ok(bytes) => text_result(&"x".repeat(bytes)),
                Err(_) => tool_error("`bytes` is too large"),
            },
            None => tool_error("big needs a non-negative integer `bytes`"),
        },
        "write_note" => match str_arg("text") {
            Some(text) => text_result(&format!("noted: {text}")),
            None => tool_error("write_note needs a string `text`"),
        },
        _ => return send_error(out, id, -32602, &format!("unknown tool: {name}")),
    };
    send_result(out, id, &result)
}

fn add(args: &Value) -> Value {
    let (a, b) = (args.get("a"), args.get("b"));
    let int_sum = a
        .and_then(Value::as_i64)
        .zip(b.and_then(Value::as_i64))
        .and_then(|(a, b)| a.checked_add(b))
        .map(Number::from);
    let sum = int_sum.or_else(|| {
        let (a, b) = (a.and_then(Value::as_f64)?, b.and_then(Value::as_f64)?);
        Number::from_f64(a + b)
    });
    match sum {
        Some(sum) => json!({
            "content": [{"type": "text", "text": sum.to_string()}],
            "structuredContent": {"sum": sum},
        }),
        None => tool_error("add needs two numbers `a` and `b` with a finite sum"),
    }
}

fn slow(id: &str, params: &Value, args: &Value, out: &mut impl Write) -> io::Result<()> {
    let steps = args.get("steps").and_then(Value::as_u64).unwrap_or(3);
    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(50);
    let token = params
        .get("_meta")
        .and_then(|meta| meta.get("progressToken"));
    for step in 1..=steps {
        thread::sleep(Duration::from_millis(ms));
        if let Some(token) = token {
            let note = json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {
                    "progressToken": token,
                    "progress": step,
                    "total": steps,
                    "message": format!("step {step}"),
                },
            });
            send_line(out, &note.to_string())?;
        }
    }
    send_result(out, id, &text_result(&format!("done after {steps} steps")))
}

/// For a call of `deep`: how many levels to answer with, `arguments.levels` or else how
/// deep the raw arguments nest. Read from raw text, so that arguments of any depth do.
fn deep_levels(params: Option<&RawValue>) -> Option<usize> {
    let params: BTreeMap<String, Box<RawValue>> = serde_json::from_str(params?.get()).ok()?;
    if serde_json::from_str::<String>(params.get("name")?.get()).ok()? != "deep" {
        return None;
    }
    let args = params.get("arguments").map_or("{}", |a| a.get());
    let asked = serde_json::from_str::<Value>(args)
        .ok()
        .and_then(|a| a.get("levels")?.as_u64());
    let (mut level, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in args.bytes() {
        match (in_string, escaped, b) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (_, false, b'"') => in_string = !in_string,
            (false, _, b'[' | b'{') => {
                level += 1;
                max = max.max(level);
            }
            (false, _, b']' | b'}') => level = level.saturating_sub(1),
            _ => {}
        }
    }
    Some(asked.map_or(max, |n| n as usize).max(1))
}

/// The answer of `deep`, written as text (a `Value` that deep could not be dropped).
fn deep_answer(id: &str, levels: usize) -> String {
    let mut line = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"nested {levels} levels"}}],"structuredContent":{{"nested":"#
    );
    line.reserve(2 * levels + 3);
    line.extend(std::iter::repeat_n('[', levels));
    line.extend(std::iter::repeat_n(']', levels));
    line.push_str("}}}");
    line
}

/// Writes one protocol line and flushes it.
fn send_line(out: &mut impl Write, line: &str) -> io::Result<()> {
    out.write_all(line.as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Writes a response; `id` is the request id's raw JSON text.
fn send_result(out: &mut impl Write, id: &str, result: &Value) -> io::Result<()> {
    send_line(
        out,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
    )
}

/// Writes an error response; `id` is the request id's raw JSON text.
fn send_error(out: &mut impl Write, id: &str, code: i64, message: &str) -> io::Result<()> {
    let error = json!({"code": code, "message": message});
    send_line(
        out,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{error}}}"#),
    )
}
