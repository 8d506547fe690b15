//! Command lines and URLs as reports and listings show them (`verify`'s report and
//! receipt, `servers`, errors naming a command): the value after a credential-named flag,
//! then the string rules of a tape, so that what may be shared carries no credential.

use super::{REDACTED, Redactor, is_secret_name};

impl Redactor {
    /// A command line with the value after each credential-named flag replaced
    /// (`--api-key X`, `--password X`); `--token=X` is left to the assignment rule.
    pub fn argv(&self, argv: &[String]) -> Vec<String> {
        let mut out = argv.to_vec();
        if self.off {
            return out;
        }
        for i in 1..out.len() {
            let flag = &argv[i - 1];
            if flag.starts_with('-')
                && !flag.contains('=')
                && is_secret_name(flag.trim_start_matches('-'))
            {
                out[i] = REDACTED.to_owned();
            }
        }
        out
    }

    /// A command line or URL as a tape's `$transport/start` shows it, for a report or a
    /// listing that may be shared: [`Redactor::argv`], then the string rules (`--token=X`,
    /// `user:password@`, credential URL parameters, known key shapes, the
    /// `MCPTAPE_REDACT` values).
    pub fn shown(&self, text: &str) -> String {
        let quoted = serde_json::Value::from(text).to_string();
        let redacted = self.message(&quoted);
        serde_json::from_str::<String>(&redacted).unwrap_or_else(|_| redacted.into_owned())
    }

    /// A command line as one readable string ([`crate::process::display`]), shown as
    /// [`Redactor::shown`] shows it after [`Redactor::argv`].
    pub fn shown_command(&self, argv: &[String]) -> String {
        self.shown(&crate::process::display(&self.argv(argv)))
    }

    /// A command line as [`Redactor::shown`] shows it, one word at a time (the program
    /// first).
    pub fn shown_argv(&self, argv: &[String]) -> Vec<String> {
        self.argv(argv).iter().map(|w| self.shown(w)).collect()
    }
}
