//! A live side: the server is started (`--live -- CMD`) or reached (`--url`) through the
//! built-in client ([`crate::downstream::client::Session`]), initialized, and asked for
//! every kind it declares a capability for, page after page (`nextCursor`, at most
//! [`MAX_PAGES`]); nothing is called, nothing recorded. A kind it has no capability for
//! lists nothing (asked of it, it would refuse); a list it answers with an error is
//! "never listed". The whole talk is bounded by `--timeout`.

use std::time::Duration;

use serde_json::json;

use super::lists::{Family, Listing, Side};
use crate::cmd::call::initialized;
use crate::config::ServerEntry;
use crate::downstream::client::{ClientError, Session};
use crate::error::{Error, ProcessError, Result};
use crate::framing::MAX_LINE_BYTES;
use crate::layer::Layers;
use crate::tape::close::CloseReason;

/// Most pages of one list followed.
pub const MAX_PAGES: usize = 100;

/// Where the live side is.
pub enum Target {
    /// A command started over stdio.
    Command(Vec<String>),
    /// A Streamable HTTP server, with headers.
    Url(String, Vec<(String, String)>),
}

impl Target {
    /// For people: the command line or the URL.
    pub fn label(&self) -> String {
        match self {
            Target::Command(argv) => argv.join(" "),
            Target::Url(url, _) => url.clone(),
        }
    }

    fn entry(&self) -> ServerEntry {
        let (command, args, url, headers) = match self {
            Target::Command(argv) => (
                argv.first().cloned(),
                argv[1.min(argv.len())..].to_vec(),
                None,
                Vec::new(),
            ),
            Target::Url(url, headers) => (None, Vec::new(), Some(url.clone()), headers.clone()),
        };
        ServerEntry {
            command,
            args,
            env: Vec::new(),
            cwd: None,
            url,
            headers,
        }
    }
}

/// The side `target` is, as server `server` (its name in messages).
pub fn side(target: &Target, server: &str, timeout: Duration) -> Result<Side> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ProcessError::Signals)?;
    let label = target.label();
    let lists = runtime.block_on(async {
        let mut session = Session::start(server, &target.entry(), Layers::new(), MAX_LINE_BYTES)?;
        session.show_progress(false);
        let talked = tokio::time::timeout(timeout, talk(&mut session, server, &label)).await;
        let reason = match &talked {
            Ok(Ok(_)) => CloseReason::ClientDone,
            Ok(Err(_)) => CloseReason::ClientFailed,
            Err(_) => CloseReason::ClientTimeout,
        };
        let _closed = session.close(reason).await;
        match talked {
            Ok(lists) => lists,
            Err(_) => Err(Error::Client(ClientError::Timeout {
                server: server.to_owned(),
                secs: timeout.as_secs_f64(),
            })),
        }
    });
    runtime.shutdown_background();
    Ok(Side {
        label,
        path: None,
        server: server.to_owned(),
        tape: None,
        lists: lists?,
    })
}

/// The handshake, then each list the server's capabilities promise.
async fn talk(session: &mut Session, server: &str, label: &str) -> Result<[Option<Listing>; 4]> {
    let init = session.initialize().await?;
    initialized(&init, server)?;
    let capabilities = &init.value["result"]["capabilities"];
    let mut lists: [Option<Listing>; 4] = Default::default();
    let side = format!("the live server `{label}`");
    for (i, family) in Family::ALL.into_iter().enumerate() {
        if !capabilities[family.capability()].is_object() {
            lists[i] = Some(Listing::default());
            continue;
        }
        // A list the server declared and then failed lists nothing: its items in A are
        // removals, as for a capability it no longer declares (a release whose
        // tools/list crashes breaks every client).
        lists[i] = match pages(session, family, &side).await? {
            Ok(listing) => Some(listing),
            Err(why) => {
                crate::term::eprintln_escaped!(
                    "mcptape: {side} declares `{}` but answered {} with {why}: it lists nothing",
                    family.capability(),
                    family.method()
                );
                Some(Listing::default())
            }
        };
    }
    Ok(lists)
}

/// Every page of one list, or the error the server answered a page with.
async fn pages(
    session: &mut Session,
    family: Family,
    side: &str,
) -> Result<std::result::Result<Listing, String>> {
    let mut listing = Listing::default();
    let mut cursor = None;
    for _ in 0..MAX_PAGES {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let reply = session.request(family.method(), params).await?;
        if reply.error().is_some() {
            let e = &reply.value["error"];
            return Ok(Err(format!(
                "error {}: {}",
                e["code"],
                e["message"].as_str().unwrap_or("")
            )));
        }
        cursor = listing.add_page(family, &reply.value["result"], side, None)?;
        if cursor.is_none() {
            break;
        }
    }
    Ok(Ok(listing))
}
