//! `mcptape list`: the sessions in `$MCPTAPE_HOME/recordings`, with size, servers,
//! connections and the time of their last entry. Each tape is read in one streaming
//! pass ([`crate::tape::census`]), never held. For people an aligned table with sizes in
//! binary units ([`crate::table`]); `--json` keeps the exact byte counts.

use std::io::Write;

use serde_json::{Value, json};

use crate::cli;
use crate::error::{Error, Result};
use crate::mode::{self, ENV_HOME};
use crate::outcome::Outcome;
use crate::table::{Align, Table, human_bytes};
use crate::tape::{Census, store};

impl cli::List {
    /// Prints one line (or JSON object) per tape.
    pub fn run(self) -> Result<Outcome> {
        let home = store::home(mode::own()?.get(ENV_HOME))?;
        let mut rows = Vec::new();
        for listed in store::list(&home)? {
            let size = std::fs::metadata(&listed.path)
                .map(|m| m.len())
                .unwrap_or(0);
            // One streaming pass per tape: memory is its largest line, not its size.
            let row = match Census::scan(&listed.path) {
                Ok(tape) => {
                    json!({"session": listed.name, "path": listed.path, "bytes": size,
                        "connections": tape.conns.len(), "servers": tape.servers, "last": tape.last_ts})
                }
                Err(e) => json!({"session": listed.name, "path": listed.path, "bytes": size,
                    "error": e.to_string()}),
            };
            rows.push(row);
        }
        let text = if self.json {
            format!("{}\n", crate::term::json_pretty(&rows))
        } else if rows.is_empty() {
            let dir = store::recordings_dir(&home);
            format!(
                "no tapes in {}\n",
                super::show::printable(&dir.to_string_lossy())
            )
        } else {
            table(&rows)
        };
        std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(Error::Stdout)?;
        Ok(Outcome::Ok)
    }
}

/// The sessions as an aligned table: `SESSION  SIZE  CONNS  LAST  SERVERS`.
fn table(rows: &[Value]) -> String {
    let mut t = Table::new(&[
        ("SESSION", Align::Left),
        ("SIZE", Align::Right),
        ("CONNS", Align::Right),
        ("LAST", Align::Left),
        ("SERVERS", Align::Left),
    ]);
    for r in rows {
        let servers = r["servers"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .unwrap_or_else(|| format!("unreadable: {}", r["error"].as_str().unwrap_or("")));
        t.row(&[
            r["session"].as_str().unwrap_or("").to_owned(),
            human_bytes(r["bytes"].as_u64().unwrap_or(0)),
            r["connections"]
                .as_u64()
                .map_or_else(|| "-".into(), |c| c.to_string()),
            r["last"].as_str().unwrap_or("-").to_owned(),
            servers,
        ]);
    }
    t.render("")
}
