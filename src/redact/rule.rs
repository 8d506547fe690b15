//! Which redaction rule saw a secret: a value, chosen where the rule matches and named
//! once, by [`Rule::name`], for `redact --check` and the docs.
//!
//! Nothing dispatches on a rule's display name: the rule that needs a check of its own
//! (a `Bearer`/`Basic` token must look like one) is told by its variant. The key formats
//! of the providers are data, one table row each in [`crate::redact::rules`]; their rule
//! is [`Rule::Key`] with the row's [`Provider`].

use std::fmt;
use std::str::FromStr;

/// A redaction rule, as reported by `redact --check` (`path (rule)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The value of a member whose name is a credential name (`apiKey`, `password`).
    CredentialName,
    /// A string that is itself JSON, holding a secret by any rule.
    CredentialInJsonText,
    /// `Bearer <token>`.
    Bearer,
    /// `Basic <base64>`.
    Basic,
    /// A JSON Web Token (`eyJ….eyJ….…`).
    Jwt,
    /// The `user:password` of a URL.
    UrlUserInfo,
    /// A PEM private key block.
    PemPrivateKey,
    /// A credential-named URL or connection-string parameter (`?access_token=`, `;PWD=`).
    UrlParameter,
    /// A `name=value` / `name: "value"` assignment of a credential name in plain text.
    Assignment,
    /// The value of a variable `MCPTAPE_REDACT` names.
    Literal,
    /// One provider's key format (`sk_live_…`, `ghp_…`).
    Key(Provider),
}

/// A provider whose keys have a known format: the name its row in the key-format table
/// gives it (`GitHub token`), for display only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Provider(&'static str);

impl Provider {
    /// The provider of a key-format table row.
    pub(crate) const fn new(name: &'static str) -> Provider {
        Provider(name)
    }

    /// Its name for people (`Stripe key`).
    pub fn name(self) -> &'static str {
        self.0
    }
}

/// The rules that are not a provider's key format, each once.
pub const GENERIC: [Rule; 10] = [
    Rule::CredentialName,
    Rule::CredentialInJsonText,
    Rule::Bearer,
    Rule::Basic,
    Rule::Jwt,
    Rule::UrlUserInfo,
    Rule::PemPrivateKey,
    Rule::UrlParameter,
    Rule::Assignment,
    Rule::Literal,
];

impl Rule {
    /// The rule's name for people, as `redact --check` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Rule::CredentialName => "credential name",
            Rule::CredentialInJsonText => "credential in JSON text",
            Rule::Bearer => "bearer credential",
            Rule::Basic => "basic credential",
            Rule::Jwt => "JWT",
            Rule::UrlUserInfo => "URL user:password",
            Rule::PemPrivateKey => "PEM private key",
            Rule::UrlParameter => "credential URL parameter",
            Rule::Assignment => "credential assignment",
            Rule::Literal => "MCPTAPE_REDACT value",
            Rule::Key(provider) => provider.name(),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A rule name that no rule has.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no redaction rule is named `{0}`")]
pub struct UnknownRule(pub String);

impl FromStr for Rule {
    type Err = UnknownRule;

    /// Reads a rule back from its [`Rule::name`] (the text `redact --check` prints).
    fn from_str(name: &str) -> Result<Rule, UnknownRule> {
        GENERIC
            .into_iter()
            .chain(
                crate::redact::rules::key_providers()
                    .into_iter()
                    .map(Rule::Key),
            )
            .find(|rule| rule.name() == name)
            .ok_or_else(|| UnknownRule(name.to_owned()))
    }
}

/// The table tests name the rule they expect as text, as `redact --check` prints it.
#[cfg(test)]
impl PartialEq<&str> for Rule {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

#[cfg(test)]
mod tests;
