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

/// How long the parent waits for proxies still stopping their servers.
pub const PROXY_WAIT: Duration = Duration::from_secs(10);

const LOCK_FILE: &str = "running.lock";

/// A private report directory, removed when dropped unless proxies are still running.
pub struct ReportDir {
    dir: Option<tempfile::TempDir>,
    /// Where the directory is, once it is kept for proxies still running.
    kept: Option<PathBuf>,
}

impl ReportDir {
    /// Makes the directory.
    pub fn new() -> std::io::Result<ReportDir> {
        let dir = tempfile::Builder::new()
            .prefix("mcptape-report-")
            .tempdir()?;
        File::create(dir.path().join(LOCK_FILE))?;
        Ok(ReportDir {
            dir: Some(dir),
            kept: None,
        })
    }

    /// Its path, for `MCPTAPE_REPORT`.
    pub fn path(&self) -> &Path {
        match (&self.dir, &self.kept) {
            (Some(d), _) => d.path(),
            (None, Some(k)) => k,
            (None, None) => Path::new(""),
        }
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
            self.kept = Some(kept.clone());
            crate::term::eprintln_escaped!(
                "mcptape: warning: some proxies were still running {}s after the command exited; what they report later in `{}` is not counted",
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
        crate::term::eprintln_escaped!(
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

fn claim_path(dir: &Path, server: &str, conn: &str) -> PathBuf {
    let hex: String = format!("{server}\0{conn}")
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect();
    dir.join(format!("claim-{hex}"))
}

/// True when another proxy of this run already serves that recorded connection.
pub fn is_claimed(dir: &Path, server: &str, conn: &str) -> bool {
    claim_path(dir, server, conn).exists()
}

/// Claims a recorded connection for this proxy: `Ok(false)` when another one has it.
pub fn try_claim(dir: &Path, server: &str, conn: &str) -> Result<bool, String> {
    let path = claim_path(dir, server, conn);
    match OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(format!(
            "cannot claim a recorded connection in `{}`: {e}",
            dir.display()
        )),
    }
}
