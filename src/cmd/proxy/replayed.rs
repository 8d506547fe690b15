//! The stdio proxy in replay mode: one client served from the tape, with the real
//! server behind it for what the tape does not hold when `MCPTAPE_MODE=new`
//! ([`crate::upstream::fallback`]).

use std::path::Path;
use std::sync::Arc;

use crate::cli;
use crate::downstream::pump;
use crate::error::Result;
use crate::layer::{Layered, Stack};
use crate::mode::{self, ReplaySettings};
use crate::outcome;
use crate::tape::ServerTape;
use crate::tape::close::CloseReason;
use crate::upstream::Closed;
use crate::upstream::fallback::{Fallback, FallbackLink, LiveServer};
use crate::upstream::pick::Picker;
use crate::upstream::replay;
use crate::verdict::Verdict;

/// Serves one client from the tape until it hangs up (or the recorded server ended the
/// connection: then with its exit status); returns the verdict.
pub(super) async fn serve_replay(
    proxy: &cli::Proxy,
    tape: Arc<ServerTape>,
    server: &str,
    report: Option<&Path>,
    settings: &ReplaySettings,
    stack: &Stack,
    max_line: usize,
) -> Result<(Verdict, Option<u8>)> {
    let picker = Picker::new(Arc::clone(&tape), server, report, &settings.options()?);
    if let Some(problem) = picker.problem() {
        outcome::problem(problem);
    }
    let link = replay::ReplayLink::new(picker, settings.pace);
    let pumped = if settings.record_new {
        if let Some(gate) = &stack.gate {
            // The calls the tape lacks would reach the live server past no gate.
            return Err(crate::error::Error::Usage(crate::term::line(&format!(
                "a policy ({}) and --record-mode new do not go together yet: the calls the tape lacks would reach server `{server}` ungated; record them with `mcptape record --policy` instead",
                gate.policy.source
            )).into_owned()));
        }
        let live = match &proxy.url {
            Some(url) => LiveServer::Url {
                url: url.clone(),
                headers: proxy.headers.clone(),
            },
            None => LiveServer::Command(proxy.command.clone()),
        };
        let fallback = Fallback {
            server: live,
            name: server.to_owned(),
            recording: mode::find()?.recording(proxy.no_redact, &tape.path),
            tape,
            max_line,
        };
        let link = FallbackLink::new(link, fallback);
        pump::stdio(Layered::new(link, stack.replay_layers()), max_line).await?
    } else {
        stack.say_replay_ungated();
        pump::stdio(Layered::new(link, stack.replay_layers()), max_line).await?
    };
    let disconnect = pumped.disconnect_exit();
    match pumped.closed {
        Closed::Replayed {
            verdict,
            server_exit,
        } => Ok((
            *verdict,
            disconnect.or(server_exit.filter(|_| pumped.reason == CloseReason::ServerExited)),
        )),
        _ => unreachable!("a replay link ends replayed"),
    }
}
