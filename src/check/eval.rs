//! Each rule run over a tape: one [`Verdict`] per rule, in a fixed order (tools expected,
//! tools forbidden, calls, durations, then `--fail-on` kinds as given).

use std::time::{Duration, SystemTime};

use super::rules::{Rules, shown, word};
use super::{CheckError, Finding, Verdict};
use crate::cli::CheckFailOn;
use crate::exchange::{Exchange, Exchanges, Status, time};
use crate::message::Kind;
use crate::receipt::Receipt;
use crate::tape::lifecycle::Lifecycle;
use crate::tape::policy::Resolution;
use crate::tape::{Direction, Tape};

/// A tape, its exchanges, and which of them the check looks at.
pub struct Scope<'a> {
    tape: &'a Tape,
    x: &'a Exchanges,
    /// Per connection: in scope.
    conns: Vec<bool>,
    /// Per entry: its connection's index, when it has one.
    conn_of: Vec<Option<usize>>,
    /// True when no `--server` narrows the scope (notes count).
    whole: bool,
}

impl<'a> Scope<'a> {
    /// The scope of `servers` (every connection when empty); a server the tape does not
    /// have is an error.
    pub fn new(tape: &'a Tape, x: &'a Exchanges, servers: &[String]) -> Result<Self, CheckError> {
        for s in servers {
            if !x.connections.iter().any(|c| &c.server == s) {
                let mut known: Vec<&str> =
                    x.connections.iter().map(|c| c.server.as_str()).collect();
                known.sort_unstable();
                known.dedup();
                return Err(CheckError::NoServer {
                    server: s.clone(),
                    tape: tape.path.display().to_string(),
                    known: if known.is_empty() {
                        "none".into()
                    } else {
                        known.join(", ")
                    },
                });
            }
        }
        let conns = x
            .connections
            .iter()
            .map(|c| servers.is_empty() || servers.contains(&c.server))
            .collect();
        let mut conn_of = vec![None; tape.entries.len()];
        for (c, conn) in x.connections.iter().enumerate() {
            for &i in &conn.entries {
                conn_of[i] = Some(c);
            }
        }
        Ok(Scope {
            tape,
            x,
            conns,
            conn_of,
            whole: servers.is_empty(),
        })
    }

    /// The entries in scope, by index, in tape order.
    fn entries(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.tape.entries.len()).filter(|&i| match self.conn_of[i] {
            Some(c) => self.conns[c],
            None => self.whole,
        })
    }

    /// The client requests in scope.
    fn requests(&self) -> impl Iterator<Item = &'a Exchange> + '_ {
        self.x
            .exchanges
            .iter()
            .filter(|e| self.conns[e.conn] && e.from == Direction::Send)
    }

    fn calls(&self) -> impl Iterator<Item = &'a Exchange> + '_ {
        self.requests().filter(|e| e.method == "tools/call")
    }

    /// True when a connection of `server` is in scope.
    fn has_server(&self, server: &str) -> bool {
        self.x
            .connections
            .iter()
            .zip(&self.conns)
            .any(|(c, &on)| on && c.server == server)
    }

    fn conn_id(&self, i: usize) -> Option<String> {
        self.conn_of[i].map(|c| self.x.connections[c].id.clone())
    }

    /// A finding about an exchange.
    fn about(&self, e: &Exchange, message: String) -> Finding {
        Finding {
            line: Some(self.tape.entries[e.request].line),
            conn: Some(self.x.connections[e.conn].id.clone()),
            id: Some(e.id.clone()),
            tool: e.tool.clone(),
            message,
        }
    }

    /// A finding about one entry.
    fn at(&self, i: usize, message: String) -> Finding {
        Finding {
            line: Some(self.tape.entries[i].line),
            conn: self.conn_id(i),
            id: None,
            tool: None,
            message,
        }
    }
}

/// Every rule's verdict. `receipt` is what `--fail-on diverged` reads (the caller
/// loads it, and refuses `diverged` without one).
pub fn run(
    scope: &Scope<'_>,
    rules: &Rules,
    receipt: Option<&Receipt>,
) -> Result<Vec<Verdict>, CheckError> {
    let mut out = Vec::new();
    for g in &rules.expect {
        // A call the policy gate refused (or dry-ran) never reached the server: the tool
        // did not run, so it does not meet the expectation.
        let reached = |e: &&Exchange| {
            !matches!(
                e.status,
                Status::Policy(Resolution::Refused | Resolution::DryRun)
            )
        };
        let hits: Vec<&Exchange> = scope
            .calls()
            .filter(reached)
            .filter(|e| e.tool.as_deref().is_some_and(|t| g.glob.is_match(t)))
            .collect();
        let findings = if hits.is_empty() {
            let mut called: Vec<&str> = scope.calls().filter_map(|e| e.tool.as_deref()).collect();
            called.sort_unstable();
            called.dedup();
            let called = if called.is_empty() {
                "no tool at all".to_owned()
            } else {
                called.join(", ")
            };
            vec![Finding {
                line: None,
                conn: None,
                id: None,
                tool: None,
                message: format!(
                    "no tools/call named a tool matching `{}`; called: {called}",
                    g.text
                ),
            }]
        } else {
            Vec::new()
        };
        out.push(verdict(
            "expect-tool",
            g.text.clone(),
            !hits.is_empty(),
            hits.len(),
            format!("{} matching call(s)", hits.len()),
            findings,
        ));
    }
    for g in &rules.forbid {
        let findings: Vec<Finding> = scope
            .calls()
            .filter(|e| e.tool.as_deref().is_some_and(|t| g.glob.is_match(t)))
            .map(|e| {
                scope.about(
                    e,
                    format!(
                        "tools/call `{}` ({})",
                        e.tool.as_deref().unwrap_or(""),
                        e.status.as_str()
                    ),
                )
            })
            .collect();
        let n = findings.len();
        out.push(verdict(
            "forbid-tool",
            g.text.clone(),
            n == 0,
            n,
            format!("{n} matching call(s)"),
            findings,
        ));
    }
    if let Some(max) = rules.max_calls {
        let calls: Vec<&Exchange> = scope.calls().collect();
        let findings: Vec<Finding> = calls
            .iter()
            .enumerate()
            .skip(max)
            .map(|(k, e)| {
                let tool = e.tool.as_deref().unwrap_or("");
                scope.about(
                    e,
                    format!("tools/call `{tool}`: call {} (at most {max})", k + 1),
                )
            })
            .collect();
        out.push(verdict(
            "max-calls",
            max.to_string(),
            calls.len() <= max,
            calls.len(),
            format!("{} tools/call request(s), at most {max}", calls.len()),
            findings,
        ));
    }
    if let Some(max) = rules.max_duration {
        out.push(whole_run(scope, max)?);
    }
    if let Some(max) = rules.max_call_duration {
        out.push(slowest(scope, max)?);
    }
    for &kind in &rules.fail_on {
        let findings = fail_on(scope, kind, receipt);
        let n = findings.len();
        out.push(verdict(
            "fail-on",
            word(kind).to_owned(),
            n == 0,
            n,
            format!("{n} found"),
            findings,
        ));
    }
    Ok(out)
}

fn verdict(
    rule: &'static str,
    arg: String,
    pass: bool,
    count: usize,
    summary: String,
    findings: Vec<Finding>,
) -> Verdict {
    Verdict {
        rule,
        arg,
        pass,
        count,
        summary,
        findings,
    }
}

fn no_times(scope: &Scope<'_>, flag: &'static str) -> CheckError {
    CheckError::NoTimes {
        flag,
        tape: scope.tape.path.display().to_string(),
    }
}

/// `--max-duration`: the first entry's time to the last one's.
fn whole_run(scope: &Scope<'_>, max: Duration) -> Result<Verdict, CheckError> {
    let times: Vec<(usize, SystemTime)> = scope
        .entries()
        .filter_map(|i| time(&scope.tape.entries[i]).map(|t| (i, t)))
        .collect();
    let (Some(first), Some(last)) = (
        times.iter().min_by_key(|t| t.1),
        times.iter().max_by_key(|t| t.1),
    ) else {
        return Err(no_times(scope, "max-duration"));
    };
    let took = last.1.duration_since(first.1).unwrap_or_default();
    let pass = took <= max;
    let findings = if pass {
        Vec::new()
    } else {
        vec![scope.at(
            last.0,
            format!(
                "the run took {} (line {} to line {}), at most {}",
                shown(took),
                scope.tape.entries[first.0].line,
                scope.tape.entries[last.0].line,
                shown(max)
            ),
        )]
    };
    Ok(verdict(
        "max-duration",
        humantime::format_duration(max).to_string(),
        pass,
        took.as_millis() as usize,
        format!("the run took {}, at most {}", shown(took), shown(max)),
        findings,
    ))
}

/// `--max-call-duration`: every client request answered slower, slowest first.
fn slowest(scope: &Scope<'_>, max: Duration) -> Result<Verdict, CheckError> {
    if !scope
        .entries()
        .any(|i| time(&scope.tape.entries[i]).is_some())
    {
        return Err(no_times(scope, "max-call-duration"));
    }
    let mut timed: Vec<(&Exchange, Duration)> = scope
        .requests()
        .filter_map(|e| e.duration().map(|d| (e, d)))
        .collect();
    timed.sort_by_key(|t| std::cmp::Reverse(t.1));
    // A request never answered took at least until its connection's last entry: a hung
    // call is what this rule is for, so it fails once that passes the limit.
    let open: Vec<(&Exchange, Duration)> = scope
        .requests()
        .filter(|e| e.answer.is_none())
        .filter_map(|e| {
            let last = scope.x.connections[e.conn]
                .entries
                .iter()
                .filter_map(|&i| time(&scope.tape.entries[i]))
                .max()?;
            Some((e, last.duration_since(e.started?).ok()?))
        })
        .collect();
    let summary = match timed.first() {
        Some((e, d)) => format!(
            "the slowest answer took {} ({} at line {}), at most {}",
            shown(*d),
            title(e),
            scope.tape.entries[e.request].line,
            shown(max)
        ),
        None => "no request has an answer with a time".to_owned(),
    };
    let mut findings: Vec<Finding> = timed
        .iter()
        .filter(|(_, d)| *d > max)
        .map(|(e, d)| {
            scope.about(
                e,
                format!("{} took {}, at most {}", title(e), shown(*d), shown(max)),
            )
        })
        .collect();
    findings.extend(open.iter().filter(|(_, d)| *d > max).map(|(e, d)| {
        scope.about(
            e,
            format!(
                "{} was never answered: open {} when its connection's last entry came, at most {}",
                title(e),
                shown(*d),
                shown(max)
            ),
        )
    }));
    let summary = match (
        open.iter().filter(|(_, d)| *d > max).count(),
        timed.is_empty(),
    ) {
        (0, _) => summary,
        (n, true) => format!(
            "{n} request{} never answered",
            if n == 1 { "" } else { "s" }
        ),
        (n, false) => format!(
            "{summary}; {n} request{} never answered",
            if n == 1 { "" } else { "s" }
        ),
    };
    let n = findings.len();
    Ok(verdict(
        "max-call-duration",
        humantime::format_duration(max).to_string(),
        n == 0,
        n,
        summary,
        findings,
    ))
}

/// An error code as reports show it.
fn code_of(code: Option<i64>) -> String {
    code.map_or_else(|| "with no integer code".to_owned(), |c| c.to_string())
}

/// `tools/call echo`, `initialize`.
fn title(e: &Exchange) -> String {
    match &e.tool {
        Some(t) => format!("{} `{t}`", e.method),
        None => e.method.clone(),
    }
}

/// The findings of one `--fail-on` kind.
fn fail_on(scope: &Scope<'_>, kind: CheckFailOn, receipt: Option<&Receipt>) -> Vec<Finding> {
    match kind {
        CheckFailOn::Error => {
            let mut found: Vec<Finding> = scope
                .requests()
                .filter_map(|e| match &e.status {
                    Status::Error { code, message } => Some(scope.about(
                        e,
                        format!("{} answered error {}: {message}", title(e), code_of(*code)),
                    )),
                    _ => None,
                })
                .collect();
            // An error the server sent that answers no open request (`id: null` for a
            // parse error, a second answer to an id): still an error the server sent.
            for (c, marks) in scope.x.marks.iter().enumerate() {
                if !scope.conns[c] {
                    continue;
                }
                for &i in marks {
                    let e = &scope.tape.entries[i];
                    if e.meta.dir != Direction::Recv || e.message.kind() != Kind::Error {
                        continue;
                    }
                    let v = e.message.value();
                    let message = v["error"]["message"].as_str().unwrap_or("");
                    let id = e.message.id().unwrap_or("null");
                    found.push(scope.at(
                        i,
                        format!(
                            "an error {} for no open request (id {id}): {message}",
                            code_of(v["error"]["code"].as_i64())
                        ),
                    ));
                }
            }
            found.sort_by_key(|f| f.line);
            found
        }
        CheckFailOn::ToolError => scope
            .requests()
            .filter(|e| e.status == Status::ToolError)
            .map(|e| scope.about(e, format!("{} answered isError: true", title(e))))
            .collect(),
        CheckFailOn::Diverged => {
            let Some(receipt) = receipt else {
                return Vec::new();
            };
            let mut lines = receipt.diverged_lines();
            lines.sort_unstable();
            lines.dedup();
            lines
                .into_iter()
                .filter_map(|line| {
                    let i = scope.tape.entries.iter().position(|e| e.line == line);
                    match i {
                        Some(i) if scope.entries().any(|j| j == i) => {
                            let method = scope.tape.entries[i]
                                .message
                                .method()
                                .unwrap_or("the message");
                            Some(scope.at(i, format!("`{method}` diverged in the receipt")))
                        }
                        Some(_) => None,
                        None => Some(Finding {
                            line: Some(line),
                            conn: None,
                            id: None,
                            tool: None,
                            message: "diverged in the receipt (a line the tape does not have)"
                                .into(),
                        }),
                    }
                })
                .chain(receipt.unplaced().into_iter().map(|message| Finding {
                    line: None,
                    conn: None,
                    id: None,
                    tool: None,
                    message,
                }))
                .collect()
        }
        // A torn line (a writer cut mid-write) lost what it held: the tape is cut there.
        CheckFailOn::Truncated => {
            let mut found: Vec<Finding> = scope
                .tape
                .torn
                .iter()
                .filter(|t| scope.whole || t.conns.iter().any(|(s, _)| scope.has_server(s)))
                .map(|t| Finding {
                    line: Some(t.line),
                    conn: t.conns.first().map(|(_, id)| id.clone()),
                    id: None,
                    tool: None,
                    message: format!("a torn line (cut mid-write): {}", t.reason),
                })
                .chain(scope.entries().filter_map(|i| {
                    lifecycle_finding(&scope.tape.entries[i], kind).map(|m| scope.at(i, m))
                }))
                .collect();
            found.sort_by_key(|f| f.line);
            found
        }
        _ => scope
            .entries()
            .filter_map(|i| lifecycle_finding(&scope.tape.entries[i], kind).map(|m| scope.at(i, m)))
            .collect(),
    }
}

/// What a lifecycle entry says for `--fail-on invalid|truncated|fault|policy-denied`.
fn lifecycle_finding(entry: &crate::tape::Entry, kind: CheckFailOn) -> Option<String> {
    let event = Lifecycle::of(entry)?;
    match (kind, event) {
        (CheckFailOn::Invalid, Lifecycle::Invalid(inv)) => {
            let side = inv.dir.map_or("a", |d| {
                if d == Direction::Send {
                    "the client's"
                } else {
                    "the server's"
                }
            });
            let text: String = inv.text.chars().take(80).collect();
            Some(format!("{side} line was not a JSON-RPC message: {text}"))
        }
        (CheckFailOn::Invalid, Lifecycle::Oversize(o)) => {
            Some(format!("a line too long to record ({})", o.size()))
        }
        (CheckFailOn::Truncated, Lifecycle::Truncated(t)) => Some(match t.max_bytes {
            Some(n) => format!("the tape reached --max-bytes {n}: the recording stops here"),
            None => "the tape was truncated here".to_owned(),
        }),
        (CheckFailOn::Fault, Lifecycle::Fault(f)) => {
            let on = f
                .tool
                .as_deref()
                .map(|t| format!(" on `{t}`"))
                .unwrap_or_default();
            Some(format!(
                "injected fault {}{on} (rule {}: {})",
                f.effect.as_str(),
                f.index,
                f.rule
            ))
        }
        (CheckFailOn::PolicyDenied, Lifecycle::Policy(p))
            if matches!(p.resolution, Resolution::Refused | Resolution::DryRun) =>
        {
            let tool = p
                .tool
                .as_deref()
                .map(|t| format!(" `{t}`"))
                .unwrap_or_default();
            Some(format!(
                "policy {} → {}: {}{tool}",
                p.decision.as_str(),
                p.resolution.as_str(),
                p.method
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
#[path = "eval_tests.rs"]
mod tests;
