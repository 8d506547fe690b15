//! `mcptape servers [--json]`: the configured servers, how each starts, and the file it
//! comes from. For people an aligned table ([`crate::table`]); `--json` for programs.
//!
//! Neither ever shows the values of a server's `env` or `headers` (they hold API keys
//! and tokens): `--json` names them, the table leaves them out. A command line or URL may
//! carry a credential too: both show them redacted as `verify` shows its server's
//! ([`Redactor::shown`]: the value after a credential-named flag, `user:password@`,
//! credential URL parameters, known key shapes, the `MCPTAPE_REDACT` values), whatever
//! `MCPTAPE_NO_REDACT` says (it is about recording, and this is not one).

use std::io::Write;

use serde_json::{Value, json};

use crate::cli;
use crate::config::{self, Config, ServerEntry};
use crate::error::{Error, Result};
use crate::mode::{self, ENV_HOME};
use crate::outcome::Outcome;
use crate::process;
use crate::redact::Redactor;
use crate::table::{Align, Table};
use crate::tape::store;

impl cli::Servers {
    /// Prints the servers as a table, or as JSON.
    pub fn run(self) -> Result<Outcome> {
        let own = mode::own()?;
        let home = store::home(own.get(ENV_HOME))?;
        let path = config::locate(self.config.config.as_deref(), None, &own.cwd, &home)?;
        let config = Config::load(&path)?;
        let (redactor, _) = Redactor::from_env(&|name| std::env::var(name).ok());
        let text = if self.json {
            format!(
                "{}\n",
                crate::term::json_pretty(&document(&config, &redactor))
            )
        } else {
            table(&config, &redactor)
        };
        std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(Error::Stdout)?;
        Ok(Outcome::Ok)
    }
}

/// How a server is reached: `stdio` (a command) or `http` (a Streamable HTTP URL).
fn transport(entry: &ServerEntry) -> &'static str {
    match (&entry.command, &entry.url) {
        (None, Some(_)) => "http",
        _ => "stdio",
    }
}

/// The file's name, then `NAME  TRANSPORT  CWD  COMMAND OR URL`, aligned.
fn table(config: &Config, redactor: &Redactor) -> String {
    let mut text = format!(
        "servers of `{}` (key `{}`):\n",
        crate::term::line(&config.path.display().to_string()),
        config.key
    );
    let mut t = Table::new(&[
        ("NAME", Align::Left),
        ("TRANSPORT", Align::Left),
        ("CWD", Align::Left),
        ("COMMAND OR URL", Align::Left),
    ]);
    for (name, entry) in &config.servers {
        let how = match (&entry.command, &entry.url) {
            (Some(_), _) => process::display(&redactor.shown_argv(&entry.argv())),
            (None, Some(url)) => redactor.shown(url),
            (None, None) => String::new(),
        };
        let cwd = entry
            .cwd
            .as_ref()
            .map_or_else(|| "-".to_owned(), |c| c.display().to_string());
        t.row(&[name.as_str(), transport(entry), &cwd, &how]);
    }
    text.push_str(&t.render("  "));
    text
}

/// `servers --json`: the file, its key, and each server with the names (never the
/// values) of its variables and headers.
fn document(config: &Config, redactor: &Redactor) -> Value {
    let file = config.path.display().to_string();
    let servers: Vec<Value> = config
        .servers
        .iter()
        .map(|(name, entry)| {
            let names = |pairs: &[(String, String)]| -> Vec<String> {
                pairs.iter().map(|(n, _)| n.clone()).collect()
            };
            // The program first, so that an argument after it is read as a flag's value.
            let argv = redactor.shown_argv(&entry.argv());
            let (command, args) = match &entry.command {
                Some(_) => (argv.first().cloned(), argv.get(1..).unwrap_or_default()),
                None => (None, &argv[..]),
            };
            json!({
                "name": name,
                "transport": transport(entry),
                "command": command,
                "args": args,
                "url": entry.url.as_deref().map(|u| redactor.shown(u)),
                "cwd": entry.cwd.as_ref().map(|c| c.display().to_string()),
                "env": names(&entry.env),
                "headers": names(&entry.headers),
                "config": file,
            })
        })
        .collect();
    json!({"config": file, "key": config.key, "servers": servers})
}
