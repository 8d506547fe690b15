//! `mcptape servers`: the configured servers, how each starts, and the file it comes from.

use std::io::Write;

use crate::cli;
use crate::config::{self, Config};
use crate::error::{Error, Result};
use crate::mode::{self, ENV_HOME};
use crate::outcome::Outcome;
use crate::process;
use crate::tape::store;

impl cli::Servers {
    /// Prints one line per server.
    pub fn run(self) -> Result<Outcome> {
        let own = mode::own();
        let home = store::home(own.get(ENV_HOME))?;
        let path = config::locate(self.config.config.as_deref(), None, &own.cwd, &home)?;
        let config = Config::load(&path)?;
        let mut text = format!(
            "servers of `{}` (key `{}`):\n",
            config.path.display(),
            config.key
        );
        for (name, entry) in &config.servers {
            let how = match (&entry.command, &entry.url) {
                (Some(_), _) => process::display(&entry.argv()),
                (None, Some(url)) => format!("{url}  (Streamable HTTP)"),
                (None, None) => String::new(),
            };
            text.push_str(&format!(
                "  {}  {}\n",
                crate::cmd::show::printable(name),
                crate::cmd::show::printable(&how)
            ));
        }
        std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(Error::Stdout)?;
        Ok(Outcome::Ok)
    }
}
