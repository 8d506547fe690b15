//! The report directory (`MCPTAPE_REPORT`) between `record`/`replay` and their proxies.
//!
//! The parent makes a private temporary directory and passes it down. Each proxy holds a
//! shared lock on `running.lock` in it for as long as it runs, and leaves there what the
//! parent must know: a recording problem (`record-<pid>.json`) or a replay verdict
//! ([`crate::verdict::Verdict`]). After its command exits the parent takes the lock
//! exclusively — waiting for proxies that outlive their client — then reads everything.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::tape::{Connection, Tape};

/// How long the parent waits for proxies still stopping their servers.
pub const PROXY_WAIT: Duration = Duration::from_secs(10);

const LOCK_FILE: &str = "running.lock";

/// A private report directory, removed when dropped unless proxies are still running.
pub struct ReportDir {
    dir: Option<tempfile::TempDir>,
}

impl ReportDir {
    /// Makes the directory.
    pub fn new() -> std::io::Result<ReportDir> {
        let dir = tempfile::Builder::new()
            .prefix("mcptape-report-")
            .tempdir()?;
        File::create(dir.path().join(LOCK_FILE))?;
        Ok(ReportDir { dir: Some(dir) })
    }

    /// Its path, for `MCPTAPE_REPORT`.
    pub fn path(&self) -> &Path {
        self.dir.as_ref().map_or(Path::new(""), |d| d.path())
    }

    /// Waits until no proxy holds the directory any more (up to [`PROXY_WAIT`]); false
    /// when some still do, in which case the directory is left in place for them.
    pub fn wait_for_proxies(&mut self) -> bool {
        let lock = self.path().join(LOCK_FILE);
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let done = File::open(&lock).and_then(|f| f.lock());
            let _ = tx.send(done.is_ok());
        });
        let done = rx.recv_timeout(PROXY_WAIT).unwrap_or(false);
        if !done && let Some(dir) = self.dir.take() {
            let kept: PathBuf = dir.keep();
            eprintln!(
                "mcptape: warning: some proxies were still running {}s after the command exited; their reports in `{}` are not counted",
                PROXY_WAIT.as_secs(),
                kept.display()
            );
        }
        done
    }
}

/// Held by a proxy for its whole life (a shared lock), so that the parent can wait for it.
pub fn hold(dir: &Path) -> Option<File> {
    let file = OpenOptions::new()
        .read(true)
        .open(dir.join(LOCK_FILE))
        .ok()?;
    file.lock_shared().ok()?;
    Some(file)
}

/// Tells the `record` parent that a proxy's recording is incomplete.
pub fn leave_problem(dir: &Path, server: &str, problem: &str) {
    let report = json!({"server": server, "error": problem});
    let path = dir.join(format!("record-{}.json", std::process::id()));
    if let Err(e) = std::fs::write(&path, report.to_string()) {
        eprintln!(
            "mcptape: cannot leave a report in `{}`: {e}",
            path.display()
        );
    }
}

/// The recording problems proxies left, one line each.
pub fn problems(dir: &Path) -> Vec<String> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<String> = read
        .flatten()
        .filter(|f| f.file_name().to_string_lossy().starts_with("record-"))
        .filter_map(|f| std::fs::read_to_string(f.path()).ok())
        .filter_map(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .map(|v| {
            format!(
                "the recording of server `{}` is incomplete: {}",
                v["server"].as_str().unwrap_or("?"),
                v["error"].as_str().unwrap_or("?")
            )
        })
        .collect();
    out.sort();
    out
}

/// Takes the next recorded connection of `server` nobody has taken yet. Proxies of one
/// `mcptape replay` run coordinate through claim files in the report directory; a proxy
/// without one takes the first.
pub fn claim(tape: &Tape, server: &str, report: Option<&Path>) -> Result<Connection, String> {
    let conns: Vec<_> = tape
        .connections()
        .into_iter()
        .filter(|c| c.server == server)
        .collect();
    if conns.is_empty() {
        let mut held: Vec<String> = tape.connections().into_iter().map(|c| c.server).collect();
        held.sort();
        held.dedup();
        return Err(format!(
            "the tape `{}` holds no connection of server `{server}`; it holds: {}",
            tape.path.display(),
            if held.is_empty() {
                "nothing".to_owned()
            } else {
                held.join(", ")
            }
        ));
    }
    let Some(dir) = report else {
        return Ok(conns[0].clone());
    };
    let total = conns.len();
    for conn in conns {
        let hex: String = format!("{server}\0{}", conn.id)
            .bytes()
            .map(|b| format!("{b:02x}"))
            .collect();
        let claim = dir.join(format!("claim-{hex}"));
        if std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&claim)
            .is_ok()
        {
            return Ok(conn);
        }
    }
    Err(format!(
        "all {total} recorded connection{} of server `{server}` in `{}` are already used",
        if total == 1 { "" } else { "s" },
        tape.path.display()
    ))
}
