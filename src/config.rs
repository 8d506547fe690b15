//! MCP client configuration: which servers exist and how to start them.
//!
//! Found as `--config FILE`, else `MCPTAPE_CONFIG`, else the first that exists of
//! [`CANDIDATES`] in the working directory, else `~/.mcptape/config.json`. The format is
//! the common one: `{"mcpServers": {"NAME": {"command", "args", "env", "cwd"}}}` (VS Code's
//! `servers` key is read too). `${VAR}` and `${VAR:-default}` in any string expand from
//! the environment. Every error names the file and the key.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::ConfigError;

/// Config files looked for in the working directory, in order.
pub const CANDIDATES: &[&str] = &[
    ".mcp.json",
    "mcp.json",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
];

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerEntry {
    /// The program (absent for HTTP servers).
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables added to its environment.
    pub env: Vec<(String, String)>,
    /// Its working directory (relative to the config file's directory).
    pub cwd: Option<PathBuf>,
    /// For HTTP servers: the URL.
    pub url: Option<String>,
    /// For HTTP servers: headers for every request.
    pub headers: Vec<(String, String)>,
}

impl ServerEntry {
    /// The command line, program first.
    pub fn argv(&self) -> Vec<String> {
        self.command
            .iter()
            .cloned()
            .chain(self.args.iter().cloned())
            .collect()
    }
}

/// A loaded config file.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file.
    pub path: PathBuf,
    /// The key the servers were under (`mcpServers` or `servers`).
    pub key: &'static str,
    /// The servers, in file order.
    pub servers: Vec<(String, ServerEntry)>,
}

/// Which config file to read: the flag, the variable, the candidates, the home one.
pub fn locate(
    flag: Option<&Path>,
    env: Option<&str>,
    cwd: &Path,
    home: &Path,
) -> Result<PathBuf, ConfigError> {
    if let Some(path) = flag {
        return Ok(path.to_path_buf());
    }
    if let Some(path) = env.filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let home_config = home.join("config.json");
    let mut looked = Vec::new();
    for candidate in CANDIDATES.iter().map(|c| cwd.join(c)).chain([home_config]) {
        if candidate.is_file() {
            return Ok(candidate);
        }
        looked.push(candidate.display().to_string());
    }
    Err(ConfigError::NotFound { looked })
}

impl Config {
    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Config::parse(path, &text)
    }

    /// Parses and checks config text; `${VAR}`s are left for [`Config::server`], so that
    /// one entry's unset variable (or VS Code's `${input:…}`) does not stop the others.
    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let doc: Value = serde_json::from_str(text).map_err(|e| ConfigError::Json {
            path: path.to_path_buf(),
            line: e.line(),
            column: e.column(),
            reason: e.to_string(),
        })?;
        let shape = |key: String, reason: &str| ConfigError::Shape {
            path: path.to_path_buf(),
            key,
            reason: reason.to_owned(),
        };
        let (key, servers) = match (doc.get("mcpServers"), doc.get("servers")) {
            (Some(s), _) => ("mcpServers", s),
            (None, Some(s)) => ("servers", s),
            (None, None) => {
                return Err(shape(
                    "mcpServers".into(),
                    "is missing (no `mcpServers` or `servers` object)",
                ));
            }
        };
        let servers = servers
            .as_object()
            .ok_or_else(|| shape(key.into(), "must be an object"))?;
        let out = servers
            .iter()
            .map(|(name, entry)| {
                let fields = Fields { path, key, name };
                Ok((name.clone(), fields.entry(entry)?))
            })
            .collect::<Result<_, ConfigError>>()?;
        Ok(Config {
            path: path.to_path_buf(),
            key,
            servers: out,
        })
    }

    /// The server of that name, ready to start over stdio: `${VAR}`s expanded from the
    /// environment, `cwd` made relative to the config file.
    pub fn server(&self, name: &str) -> Result<ServerEntry, ConfigError> {
        self.server_with(name, &|v| std::env::var(v).ok())
    }

    /// [`Config::server`] with `var` looking up variables.
    pub fn server_with(
        &self,
        name: &str,
        var: &dyn Fn(&str) -> Option<String>,
    ) -> Result<ServerEntry, ConfigError> {
        let Some((_, raw)) = self.servers.iter().find(|(n, _)| n == name) else {
            return Err(ConfigError::UnknownServer {
                path: self.path.clone(),
                name: name.to_owned(),
                known: self.servers.iter().map(|(n, _)| n.clone()).collect(),
            });
        };
        let at = |field: &str| format!("{}.{name}.{field}", self.key);
        let x = |field: &str, s: &str| {
            expand(s, var).map_err(|missing| ConfigError::Env {
                path: self.path.clone(),
                key: at(field),
                why: unset_why(&missing),
                var: missing,
            })
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        Ok(ServerEntry {
            command: raw
                .command
                .as_deref()
                .map(|c| x("command", c))
                .transpose()?,
            args: raw
                .args
                .iter()
                .enumerate()
                .map(|(i, a)| x(&format!("args[{i}]"), a))
                .collect::<Result<_, _>>()?,
            env: raw
                .env
                .iter()
                .map(|(k, v)| Ok((k.clone(), x(&format!("env.{k}"), v)?)))
                .collect::<Result<_, ConfigError>>()?,
            cwd: match &raw.cwd {
                Some(c) => Some(dir.join(x("cwd", &c.to_string_lossy())?)),
                None => None,
            },
            url: raw.url.as_deref().map(|u| x("url", u)).transpose()?,
            headers: raw
                .headers
                .iter()
                .map(|(k, v)| Ok((k.clone(), x(&format!("headers.{k}"), v)?)))
                .collect::<Result<_, ConfigError>>()?,
        })
    }
}

/// Expands `${VAR}` and `${VAR:-default}`; an unset variable without default is an error
/// naming it. A `$` not followed by `{` is kept.
fn expand(s: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        match (
            var(name).filter(|v| !v.is_empty() || default.is_none()),
            default,
        ) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(name.to_owned()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Where one server entry of a config is, for its errors: `mcpServers.NAME.field`.
struct Fields<'a> {
    path: &'a Path,
    key: &'a str,
    name: &'a str,
}

impl Fields<'_> {
    fn at(&self, field: &str) -> String {
        match field {
            "" => format!("{}.{}", self.key, self.name),
            f => format!("{}.{}.{f}", self.key, self.name),
        }
    }

    fn shape(&self, field: &str, reason: &str) -> ConfigError {
        ConfigError::Shape {
            path: self.path.to_path_buf(),
            key: self.at(field),
            reason: reason.to_owned(),
        }
    }

    fn string(&self, field: &str, v: &Value) -> Result<String, ConfigError> {
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.shape(field, "must be a string"))
    }

    fn optional(
        &self,
        obj: &Map<String, Value>,
        field: &str,
    ) -> Result<Option<String>, ConfigError> {
        obj.get(field).map(|v| self.string(field, v)).transpose()
    }

    /// An object of strings (`env`, `headers`) as pairs; absent is empty.
    fn pairs(
        &self,
        obj: &Map<String, Value>,
        field: &str,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        match obj.get(field) {
            None => Ok(Vec::new()),
            Some(Value::Object(vars)) => vars
                .iter()
                .map(|(k, v)| Ok((k.clone(), self.string(&format!("{field}.{k}"), v)?)))
                .collect(),
            Some(_) => Err(self.shape(field, "must be an object of strings")),
        }
    }

    /// One server entry, checked.
    fn entry(&self, entry: &Value) -> Result<ServerEntry, ConfigError> {
        let obj = entry
            .as_object()
            .ok_or_else(|| self.shape("", "must be an object"))?;
        // Checked in the order the fields are documented, so the first error is stable.
        let command = self.optional(obj, "command")?;
        let args = match obj.get("args") {
            None => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| self.string(&format!("args[{i}]"), v))
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(self.shape("args", "must be an array of strings")),
        };
        let env = self.pairs(obj, "env")?;
        let cwd = self.optional(obj, "cwd")?.map(PathBuf::from);
        let url = self.optional(obj, "url")?;
        let headers = self.pairs(obj, "headers")?;
        let entry = ServerEntry {
            command,
            args,
            env,
            cwd,
            url,
            headers,
        };
        if entry.command.is_none() && entry.url.is_none() {
            return Err(ConfigError::MissingCommand {
                path: self.path.to_path_buf(),
                key: self.at("command"),
            });
        }
        Ok(entry)
    }
}

/// Why a variable could not be read: unset, or set to bytes that are not UTF-8 (a value
/// that JSON text and a command line built from it cannot hold as given).
pub fn unset_why(name: &str) -> &'static str {
    match std::env::var_os(name) {
        Some(v) if v.to_str().is_none() => "is not valid UTF-8",
        _ => "is not set",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(name: &str) -> Option<String> {
        (name == "TOKEN").then(|| "t0k".to_owned())
    }

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("/p/.mcp.json"), text)
    }

    #[test]
    fn common_format_with_expansion() {
        let c = parse(
            r#"{"mcpServers":{"a":{"command":"srv","args":["--t","${TOKEN}","${NOPE:-dflt}","$HOME"],
                "env":{"K":"${TOKEN}"},"cwd":"sub"}}}"#,
        )
        .expect("config");
        let a = c.server_with("a", &vars).expect("a");
        assert_eq!(a.argv(), ["srv", "--t", "t0k", "dflt", "$HOME"]);
        assert_eq!(a.env, [("K".to_owned(), "t0k".to_owned())]);
        assert_eq!(a.cwd.as_deref(), Some(Path::new("/p/sub")));
    }

    #[test]
    fn vscode_servers_key() {
        let c = parse(r#"{"servers":{"a":{"command":"x"}}}"#).expect("config");
        assert_eq!(c.key, "servers");
    }

    #[test]
    fn errors_name_file_and_key() {
        let e = parse("{\n  \"mcpServers\": {,\n}").expect_err("json");
        assert!(
            e.to_string()
                .contains("/p/.mcp.json` is not valid JSON at line 2, column"),
            "{e}"
        );
        let e = parse(r#"{"mcpServers":{"a":{"args":[]}}}"#).expect_err("command");
        assert_eq!(
            e.to_string(),
            "`/p/.mcp.json`: `mcpServers.a.command` is missing"
        );
        let e = parse(r#"{"mcpServers":{"a":{"command":"x","args":[1]}}}"#).expect_err("args");
        assert_eq!(
            e.to_string(),
            "`/p/.mcp.json`: `mcpServers.a.args[0]` must be a string"
        );
        let c = parse(r#"{"mcpServers":{"a":{"command":"${MISSING}"},"b":{"command":"ok"}}}"#)
            .expect("lazy");
        assert!(
            c.server_with("b", &vars).is_ok(),
            "another entry's unset variable does not matter"
        );
        let e = c.server_with("a", &vars).expect_err("env");
        assert!(
            e.to_string()
                .contains("`mcpServers.a.command` uses `${MISSING}`, which is not set"),
            "{e}"
        );
        let c = parse(r#"{"mcpServers":{"a":{"command":"x"},"web":{"url":"https://h/mcp"}}}"#)
            .expect("config");
        let e = c.server("b").expect_err("unknown");
        assert_eq!(
            e.to_string(),
            "`/p/.mcp.json` has no server `b`; it has: a, web"
        );
        let web = c.server("web").expect("an HTTP server");
        assert_eq!(web.url.as_deref(), Some("https://h/mcp"));
    }
}
