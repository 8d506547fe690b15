//! `--format otlp`: an OTLP/JSON `ExportTraceServiceRequest`
//! (<https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding>): ids in hex, as
//! OTLP/JSON wants (not protobuf JSON's base64), enums as integers, 64-bit integers and
//! times as decimal strings.
//!
//! - a resource per server (`service.name`), one scope `mcptape`;
//! - a trace per connection: its id the first 16 bytes of SHA-256 over the tape's path
//!   and the connection's id (the same tape exports the same ids), a root span over the
//!   connection's lifetime, and a `CLIENT` span per request, either way (the
//!   conventions' `mcp.client` span is the initiator's, and a server's own request is
//!   initiated by the server), named `{mcp.method.name} {target}`;
//! - span events: notifications (on the request a progress token names, else on the
//!   root), lifecycle entries (a fault or policy decision on its request), and notes.
//!
//! Attributes follow the OpenTelemetry semantic conventions for MCP (Development status)
//! and the GenAI and RPC ones they use; what they do not cover is `mcptape.*`.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::facts::Facts;
use super::{nanos, raw};
use crate::exchange::{Exchange, Exchanges, Status, time};
use crate::tape::lifecycle::Lifecycle;
use crate::tape::policy::Resolution;
use crate::tape::{Direction, Tape};

/// `SPAN_KIND_INTERNAL`.
const KIND_INTERNAL: u8 = 1;
/// `SPAN_KIND_CLIENT`.
const KIND_CLIENT: u8 = 3;
/// `STATUS_CODE_ERROR`.
const STATUS_ERROR: u8 = 2;

/// The request document of a whole tape.
pub fn document(tape: &Tape, x: &Exchanges) -> Document {
    let mut by_server: Vec<(String, Vec<Box<RawValue>>)> = Vec::new();
    let notes = tape.notes();
    for (c, conn) in x.connections.iter().enumerate() {
        let spans = Trace::new(tape, x, c).spans(&notes_of(x, c, &notes));
        match by_server.iter_mut().find(|(s, _)| *s == conn.server) {
            Some((_, v)) => v.extend(spans),
            None => by_server.push((conn.server.clone(), spans)),
        }
    }
    let resource_spans = by_server
        .into_iter()
        .map(|(server, spans)| ResourceSpans {
            resource: json!({"attributes": [
                attr("service.name", &server),
                attr("telemetry.sdk.name", "mcptape"),
                attr("telemetry.sdk.version", env!("CARGO_PKG_VERSION")),
            ]}),
            scope_spans: [ScopeSpans {
                scope: json!({"name": "mcptape", "version": env!("CARGO_PKG_VERSION")}),
                spans,
            }],
        })
        .collect();
    Document { resource_spans }
}

/// An `ExportTraceServiceRequest`, its spans kept as JSON text ([`super::raw`]).
#[derive(Serialize)]
pub struct Document {
    #[serde(rename = "resourceSpans")]
    resource_spans: Vec<ResourceSpans>,
}

#[derive(Serialize)]
struct ResourceSpans {
    resource: Value,
    #[serde(rename = "scopeSpans")]
    scope_spans: [ScopeSpans; 1],
}

#[derive(Serialize)]
struct ScopeSpans {
    scope: Value,
    spans: Vec<Box<RawValue>>,
}

/// The notes that fall within connection `c` (between its first and last entry), or, for
/// the first connection, the notes that fall within none.
fn notes_of(x: &Exchanges, c: usize, notes: &[usize]) -> Vec<usize> {
    let within = |c: usize, n: usize| {
        let e = &x.connections[c].entries;
        matches!((e.first(), e.last()), (Some(&a), Some(&b)) if a <= n && n <= b)
    };
    notes
        .iter()
        .copied()
        .filter(|&n| within(c, n) || (c == 0 && !(0..x.connections.len()).any(|k| within(k, n))))
        .collect()
}

/// A string attribute.
fn attr(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

/// An integer attribute (int64: a decimal string in OTLP/JSON).
fn int(key: &str, value: i64) -> Value {
    json!({"key": key, "value": {"intValue": value.to_string()}})
}

/// The first `n` bytes of SHA-256 over `parts`, in hex.
fn id(parts: &[&str], n: usize) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for p in parts {
        ctx.update(p.as_bytes());
        ctx.update(&[0]);
    }
    let d = ctx.finish();
    d.as_ref()[..n].iter().map(|b| format!("{b:02x}")).collect()
}

/// One connection's trace.
struct Trace<'a> {
    tape: &'a Tape,
    x: &'a Exchanges,
    c: usize,
    facts: Facts,
    trace_id: String,
    root_id: String,
}

impl<'a> Trace<'a> {
    fn new(tape: &'a Tape, x: &'a Exchanges, c: usize) -> Trace<'a> {
        // What names this connection in the tape itself, wherever the tape lies and
        // however its path is spelled: the file's name, the connection's id and the time
        // of its first entry.
        let name = tape
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let conn = &x.connections[c];
        let first = conn
            .entries
            .first()
            .and_then(|&i| tape.entries[i].meta.ts.as_deref())
            .unwrap_or("");
        let parts = [name.as_str(), conn.id.as_str(), first];
        Trace {
            tape,
            x,
            c,
            facts: Facts::of(tape, x, c),
            trace_id: id(&parts, 16),
            root_id: id(&[&parts[..], &["connection"]].concat(), 8),
        }
    }

    fn span_id(&self, request: usize) -> String {
        id(&[&self.trace_id, &request.to_string()], 8)
    }

    /// An entry's time in Unix nanoseconds, or `fallback`'s.
    fn at(&self, i: usize, fallback: u128) -> u128 {
        time(&self.tape.entries[i]).map_or(fallback, nanos)
    }

    /// The root span, then every request's span.
    fn spans(&self, notes: &[usize]) -> Vec<Box<RawValue>> {
        let conn = &self.x.connections[self.c];
        let start = self.facts.first.map_or(0, nanos);
        let end = self.facts.last.map_or(start, nanos);
        let mine: Vec<&Exchange> = self
            .x
            .exchanges
            .iter()
            .filter(|e| e.conn == self.c)
            .collect();
        // progress token (JSON text) → the request it names.
        let mut tokens: HashMap<String, usize> = HashMap::new();
        let mut by_request: HashMap<usize, usize> = HashMap::new();
        for (k, e) in mine.iter().enumerate() {
            by_request.insert(e.request, k);
            let v = self.tape.entries[e.request].message.value();
            let token = &v["params"]["_meta"]["progressToken"];
            if !token.is_null() {
                tokens.insert(token.to_string(), k);
            }
        }
        let mut by_fault: HashMap<usize, usize> = HashMap::new();
        let mut by_policy: HashMap<usize, usize> = HashMap::new();
        for (k, e) in mine.iter().enumerate() {
            by_fault.extend(e.fault.map(|f| (f, k)));
            by_policy.extend(e.policy.map(|p| (p, k)));
        }
        let mut events: Vec<Vec<Value>> = vec![Vec::new(); mine.len()];
        let mut root_events = Vec::new();
        for &m in self.x.marks[self.c].iter().chain(notes) {
            let e = &self.tape.entries[m];
            let v = e.message.value();
            let target = match Lifecycle::of(e) {
                Some(Lifecycle::Fault(_)) => by_fault.get(&m).copied(),
                Some(Lifecycle::Policy(_)) => by_policy.get(&m).copied(),
                _ => tokens
                    .get(&v["params"]["progressToken"].to_string())
                    .copied(),
            };
            let event = self.event(m, &v, start);
            match target {
                Some(k) => events[k].push(event),
                None => root_events.push(event),
            }
        }
        let mut root_attrs = vec![
            attr("mcptape.conn", &conn.id),
            attr("network.transport", self.facts.transport()),
        ];
        self.common(&mut root_attrs, usize::MAX);
        let mut spans = vec![raw(&json!({
            "traceId": self.trace_id,
            "spanId": self.root_id,
            "name": format!("mcp connection {}", conn.server),
            "kind": KIND_INTERNAL,
            "startTimeUnixNano": start.to_string(),
            "endTimeUnixNano": end.to_string(),
            "attributes": root_attrs,
            "events": root_events,
            "status": {},
        }))];
        for (k, e) in mine.iter().enumerate() {
            spans.push(raw(&self.request_span(
                e,
                std::mem::take(&mut events[k]),
                start,
                end,
            )));
        }
        spans
    }

    /// The attributes every span of an HTTP connection has, known at entry `i`.
    fn common(&self, attrs: &mut Vec<Value>, i: usize) {
        if self.facts.http {
            attrs.push(attr("network.protocol.name", "http"));
            if let Some((host, port)) = self.facts.url.as_deref().and_then(host_port) {
                attrs.push(attr("server.address", &host));
                if let Some(p) = port {
                    attrs.push(int("server.port", i64::from(p)));
                }
            }
        }
        if let Some(s) = self.facts.session_at(i).filter(|s| *s != "[REDACTED]") {
            attrs.push(attr("mcp.session.id", s));
        }
        if let Some(p) = self.facts.protocol_at(i) {
            attrs.push(attr("mcp.protocol.version", p));
        }
    }

    fn request_span(&self, e: &Exchange, events: Vec<Value>, start: u128, end: u128) -> Value {
        let req = &self.tape.entries[e.request];
        let params = req.message.value()["params"].clone();
        let begin = self.at(e.request, start);
        let finish = e.answer.map_or(end.max(begin), |a| self.at(a, begin));
        let prompt = (e.method == "prompts/get")
            .then(|| params["name"].as_str())
            .flatten();
        let target = e.tool.as_deref().or(prompt);
        let name = match target {
            Some(t) => format!("{} {t}", e.method),
            None => e.method.clone(),
        };
        let request_id = serde_json::from_str::<Value>(&e.id)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| e.id.clone());
        let mut attrs = vec![
            attr("mcp.method.name", &e.method),
            attr("jsonrpc.request.id", &request_id),
            attr("network.transport", self.facts.transport()),
            int("mcptape.tape.line", req.line as i64),
            attr(
                "mcptape.direction",
                if e.from == Direction::Recv {
                    "server-to-client"
                } else {
                    "client-to-server"
                },
            ),
            attr("mcptape.status", e.status.as_str()),
        ];
        if let Some(t) = &e.tool {
            attrs.push(attr("gen_ai.tool.name", t));
            attrs.push(attr("gen_ai.operation.name", "execute_tool"));
        }
        if let Some(p) = prompt {
            attrs.push(attr("gen_ai.prompt.name", p));
        }
        if let Some(uri) = params["uri"].as_str() {
            attrs.push(attr("mcp.resource.uri", uri));
        }
        self.common(&mut attrs, e.request);
        let status = match &e.status {
            Status::Error { code, message } => {
                // `error.type` is required on a failed span: `_OTHER` when the code is
                // not an integer, as the conventions say for an unknown type.
                match code {
                    Some(code) => {
                        attrs.push(attr("error.type", &code.to_string()));
                        attrs.push(attr("rpc.response.status_code", &code.to_string()));
                    }
                    None => attrs.push(attr("error.type", "_OTHER")),
                }
                json!({"code": STATUS_ERROR, "message": message})
            }
            Status::ToolError => {
                attrs.push(attr("error.type", "tool_error"));
                json!({"code": STATUS_ERROR, "message": "the tool answered isError: true"})
            }
            Status::Fault => {
                attrs.push(attr("error.type", "mcptape.fault"));
                let what = match e.answer {
                    Some(_) => "an injected fault changed the answer",
                    None => "an injected fault withheld the answer",
                };
                json!({"code": STATUS_ERROR, "message": what})
            }
            Status::Policy(r) => {
                attrs.push(attr("mcptape.policy.resolution", r.as_str()));
                if *r == Resolution::Refused {
                    attrs.push(attr("error.type", "mcptape.policy.refused"));
                    json!({"code": STATUS_ERROR, "message": "refused by the policy gate"})
                } else {
                    json!({})
                }
            }
            Status::Unanswered => match super::facts::http_status(self.tape, self.x, e) {
                // Answered in HTTP, not JSON-RPC (a `404` for a lost session).
                Some((code, body)) => {
                    attrs.push(attr("error.type", &code.to_string()));
                    attrs.push(int("http.response.status_code", i64::from(code)));
                    json!({"code": STATUS_ERROR, "message": format!("HTTP {code}: {body}")})
                }
                None => {
                    attrs.push(attr("error.type", "mcptape.unanswered"));
                    json!({"code": STATUS_ERROR, "message": "no answer on the tape"})
                }
            },
            Status::Ok => json!({}),
        };
        json!({
            "traceId": self.trace_id,
            "spanId": self.span_id(e.request),
            "parentSpanId": self.root_id,
            "name": name,
            "kind": KIND_CLIENT,
            "startTimeUnixNano": begin.to_string(),
            "endTimeUnixNano": finish.max(begin).to_string(),
            "attributes": attrs,
            "events": events,
            "status": status,
        })
    }

    /// A span event for a notification, lifecycle entry or note.
    fn event(&self, i: usize, v: &Value, fallback: u128) -> Value {
        let e = &self.tape.entries[i];
        let method = e.message.method().unwrap_or("(no method)");
        let mut attrs = vec![
            int("mcptape.tape.line", e.line as i64),
            attr("mcptape.direction", e.meta.dir.as_str()),
        ];
        let name = match Lifecycle::of(e) {
            Some(Lifecycle::Note(n)) => {
                attrs.push(attr("mcptape.note", &n.text));
                "mcptape.note".to_owned()
            }
            Some(_) => {
                attrs.push(attr(
                    "mcptape.params",
                    &crate::term::json_compact(&v["params"]),
                ));
                method.to_owned()
            }
            None => {
                attrs.push(attr("mcp.method.name", method));
                let p = &v["params"];
                for key in ["progress", "total", "level", "logger", "message"] {
                    match &p[key] {
                        Value::Null => {}
                        Value::String(s) => attrs.push(attr(&format!("mcptape.params.{key}"), s)),
                        other => {
                            attrs.push(attr(&format!("mcptape.params.{key}"), &other.to_string()))
                        }
                    }
                }
                method.to_owned()
            }
        };
        json!({
            "timeUnixNano": self.at(i, fallback).to_string(),
            "name": name,
            "attributes": attrs,
        })
    }
}

/// The host and port of an `http(s)://` URL (the scheme's default port when none).
fn host_port(url: &str) -> Option<(String, Option<u16>)> {
    let u: hyper::Uri = url.parse().ok()?;
    let default = match u.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    };
    Some((u.host()?.to_owned(), u.port_u16().or(default)))
}
