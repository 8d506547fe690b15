//! The agent registry: for each [`AgentName`], its config files per scope, their format,
//! the servers' container(s) inside each, and the entry [`Dialect`].
//!
//! Paths are resolved from a [`Place`] (home, working directory, the variables the agents
//! themselves honour, the OS), never from the process directly, so tests and `--list`
//! see the same files. Adding an agent is one arm of [`files`] plus, when it spells
//! entries its own way, a [`Dialect`] constant: the engine does not change.

use std::path::{Path, PathBuf};

use crate::agents::dialect::Dialect;
use crate::agents::document::Format;
use crate::cli::{AgentName, Scope};

/// Every agent, in the order `--list` and the engine visit them.
pub const ALL: &[AgentName] = &[
    AgentName::ClaudeCode,
    AgentName::ClaudeDesktop,
    AgentName::Cursor,
    AgentName::Vscode,
    AgentName::Windsurf,
    AgentName::Codex,
    AgentName::Gemini,
    AgentName::Zed,
    AgentName::Cline,
    AgentName::Goose,
];

/// The operating systems whose per-user config directories differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    /// Linux and other Unix systems (XDG directories).
    Linux,
    /// macOS (`~/Library/Application Support`).
    Mac,
    /// Windows (`%APPDATA%`).
    Windows,
}

impl Os {
    /// The OS this binary was built for.
    pub fn current() -> Os {
        if cfg!(target_os = "macos") {
            Os::Mac
        } else if cfg!(windows) {
            Os::Windows
        } else {
            Os::Linux
        }
    }
}

/// Where paths are resolved from: the user's home, the working directory, the variables
/// agents honour (`CLAUDE_CONFIG_DIR`, `XDG_CONFIG_HOME`, `APPDATA`, `CODEX_HOME`), and
/// the OS.
#[derive(Debug, Clone)]
pub struct Place {
    /// The home directory (`HOME`).
    pub home: PathBuf,
    /// The working directory (absolute): the project.
    pub cwd: PathBuf,
    /// `CLAUDE_CONFIG_DIR`, when set and not empty.
    pub claude_config_dir: Option<PathBuf>,
    /// `XDG_CONFIG_HOME`, when set and not empty.
    pub xdg_config_home: Option<PathBuf>,
    /// `APPDATA`, when set and not empty.
    pub appdata: Option<PathBuf>,
    /// `CODEX_HOME`, when set and not empty.
    pub codex_home: Option<PathBuf>,
    /// The OS whose directory layout applies.
    pub os: Os,
}

impl Place {
    /// The place of this process: its environment and working directory.
    pub fn from_env(home: PathBuf, cwd: PathBuf) -> Place {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Place {
            home,
            cwd,
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
            appdata: var("APPDATA"),
            codex_home: var("CODEX_HOME"),
            os: Os::current(),
        }
    }

    /// The per-user application config directory: `$XDG_CONFIG_HOME` or `~/.config` on
    /// Linux, `~/Library/Application Support` on macOS, `%APPDATA%` on Windows.
    pub fn app_config_dir(&self) -> PathBuf {
        match self.os {
            Os::Linux => self.xdg_config(),
            Os::Mac => self.home.join("Library/Application Support"),
            Os::Windows => self
                .appdata
                .clone()
                .unwrap_or_else(|| self.home.join("AppData/Roaming")),
        }
    }

    /// `$XDG_CONFIG_HOME`, else `~/.config` (used by Zed and Goose on every Unix).
    pub fn xdg_config(&self) -> PathBuf {
        self.xdg_config_home
            .clone()
            .unwrap_or_else(|| self.home.join(".config"))
    }
}

/// One config file of an agent.
#[derive(Debug, Clone)]
pub struct ConfigFile {
    /// Whose file it is.
    pub agent: AgentName,
    /// Its scope.
    pub scope: Scope,
    /// Where it is.
    pub path: PathBuf,
    /// Its format.
    pub format: Format,
    /// The key paths of its servers' containers (more than one in `~/.claude.json`).
    pub containers: Vec<Vec<String>>,
    /// How its entries are spelled.
    pub dialect: Dialect,
}

fn file(
    agent: AgentName,
    scope: Scope,
    path: PathBuf,
    format: Format,
    containers: &[&[&str]],
    dialect: Dialect,
) -> ConfigFile {
    ConfigFile {
        agent,
        scope,
        path,
        format,
        containers: containers
            .iter()
            .map(|c| c.iter().map(|s| (*s).to_owned()).collect())
            .collect(),
        dialect,
    }
}

/// The VS Code user directory (`Code/User`) under the OS's application config directory.
fn vscode_user(place: &Place) -> PathBuf {
    place.app_config_dir().join("Code").join("User")
}

/// The config files `agent` may have, in this place, user scope first. Whether they
/// exist is the caller's question.
pub fn files(agent: AgentName, place: &Place) -> Vec<ConfigFile> {
    use AgentName as A;
    use Format::Json;
    use Scope::{Project, User};
    let home = &place.home;
    let cwd = &place.cwd;
    match agent {
        A::ClaudeCode => {
            // `~/.claude.json` (or `$CLAUDE_CONFIG_DIR/.claude.json`): its top-level
            // `mcpServers` is user scope, `projects["<abs cwd>"].mcpServers` the
            // project's own ("local") servers; `.mcp.json` is the shared project file.
            let main = match &place.claude_config_dir {
                Some(dir) => dir.join(".claude.json"),
                None => home.join(".claude.json"),
            };
            let cwd_key = cwd.to_string_lossy().into_owned();
            let local: &[&str] = &["projects", &cwd_key, "mcpServers"];
            vec![
                file(
                    agent,
                    User,
                    main.clone(),
                    Json,
                    &[&["mcpServers"]],
                    Dialect::STANDARD,
                ),
                file(agent, Project, main, Json, &[local], Dialect::STANDARD),
                file(
                    agent,
                    Project,
                    cwd.join(".mcp.json"),
                    Json,
                    &[&["mcpServers"]],
                    Dialect::STANDARD,
                ),
            ]
        }
        A::ClaudeDesktop => vec![file(
            agent,
            User,
            place
                .app_config_dir()
                .join("Claude")
                .join("claude_desktop_config.json"),
            Json,
            &[&["mcpServers"]],
            Dialect::STANDARD,
        )],
        A::Cursor => vec![
            file(
                agent,
                User,
                home.join(".cursor/mcp.json"),
                Json,
                &[&["mcpServers"]],
                Dialect::STANDARD,
            ),
            file(
                agent,
                Project,
                cwd.join(".cursor/mcp.json"),
                Json,
                &[&["mcpServers"]],
                Dialect::STANDARD,
            ),
        ],
        A::Vscode => vec![
            file(
                agent,
                User,
                vscode_user(place).join("mcp.json"),
                Json,
                &[&["servers"]],
                Dialect::VSCODE,
            ),
            file(
                agent,
                Project,
                cwd.join(".vscode/mcp.json"),
                Json,
                &[&["servers"]],
                Dialect::VSCODE,
            ),
        ],
        A::Windsurf => vec![file(
            agent,
            User,
            home.join(".codeium/windsurf/mcp_config.json"),
            Json,
            &[&["mcpServers"]],
            Dialect::WINDSURF,
        )],
        A::Gemini => vec![
            file(
                agent,
                User,
                home.join(".gemini/settings.json"),
                Json,
                &[&["mcpServers"]],
                Dialect::GEMINI,
            ),
            file(
                agent,
                Project,
                cwd.join(".gemini/settings.json"),
                Json,
                &[&["mcpServers"]],
                Dialect::GEMINI,
            ),
        ],
        A::Zed => {
            // Zed keeps its settings in `~/.config/zed` on Linux and macOS alike
            // (`$XDG_CONFIG_HOME/zed` on Linux), `%APPDATA%\Zed` on Windows.
            let user = match place.os {
                Os::Linux => place.xdg_config().join("zed"),
                Os::Mac => home.join(".config/zed"),
                Os::Windows => place.app_config_dir().join("Zed"),
            };
            vec![
                file(
                    agent,
                    User,
                    user.join("settings.json"),
                    Json,
                    &[&["context_servers"]],
                    Dialect::ZED,
                ),
                file(
                    agent,
                    Project,
                    cwd.join(".zed/settings.json"),
                    Json,
                    &[&["context_servers"]],
                    Dialect::ZED,
                ),
            ]
        }
        A::Cline => vec![file(
            agent,
            User,
            vscode_user(place)
                .join("globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"),
            Json,
            &[&["mcpServers"]],
            Dialect::CLINE,
        )],
        A::Codex => {
            // `$CODEX_HOME/config.toml` (default `~/.codex`); a project's own
            // `.codex/config.toml` is read by Codex in trusted projects.
            let user = match &place.codex_home {
                Some(dir) => dir.join("config.toml"),
                None => home.join(".codex/config.toml"),
            };
            vec![
                file(
                    agent,
                    User,
                    user,
                    Format::Toml,
                    &[&["mcp_servers"]],
                    Dialect::CODEX,
                ),
                file(
                    agent,
                    Project,
                    cwd.join(".codex/config.toml"),
                    Format::Toml,
                    &[&["mcp_servers"]],
                    Dialect::CODEX,
                ),
            ]
        }
        A::Goose => {
            // Goose's config directory (the `etcetera` app strategy): XDG on Linux and
            // macOS alike, `%APPDATA%\Block\goose\config` on Windows.
            let dir = match place.os {
                Os::Linux | Os::Mac => place.xdg_config().join("goose"),
                Os::Windows => place.app_config_dir().join("Block/goose/config"),
            };
            vec![file(
                agent,
                User,
                dir.join("config.yaml"),
                Format::Yaml,
                &[&["extensions"]],
                Dialect::GOOSE,
            )]
        }
    }
}

/// `path` shown to people: `~/…` under the home directory.
pub fn shown_path(path: &Path, home: &Path) -> String {
    match path.strip_prefix(home) {
        Ok(rest) if !home.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(os: Os) -> Place {
        Place {
            home: PathBuf::from("/h"),
            cwd: PathBuf::from("/w/p"),
            claude_config_dir: None,
            xdg_config_home: None,
            appdata: None,
            codex_home: None,
            os,
        }
    }

    fn paths(agent: AgentName, place: &Place) -> Vec<String> {
        files(agent, place)
            .into_iter()
            .map(|f| f.path.display().to_string())
            .collect()
    }

    #[test]
    fn claude_code_has_two_containers_in_its_main_file_and_honours_its_config_dir() {
        let mut p = place(Os::Linux);
        let f = files(AgentName::ClaudeCode, &p);
        assert_eq!(f[0].path, PathBuf::from("/h/.claude.json"));
        assert_eq!(
            f[1].containers,
            vec![vec!["projects", "/w/p", "mcpServers"]]
        );
        assert_eq!(f[2].path, PathBuf::from("/w/p/.mcp.json"));
        p.claude_config_dir = Some(PathBuf::from("/c"));
        assert_eq!(
            files(AgentName::ClaudeCode, &p)[0].path,
            PathBuf::from("/c/.claude.json")
        );
    }

    #[test]
    fn codex_honours_codex_home_and_goose_xdg_config_home() {
        let mut p = place(Os::Linux);
        assert_eq!(
            paths(AgentName::Codex, &p),
            ["/h/.codex/config.toml", "/w/p/.codex/config.toml"]
        );
        assert_eq!(
            paths(AgentName::Goose, &p),
            ["/h/.config/goose/config.yaml"]
        );
        p.codex_home = Some(PathBuf::from("/ch"));
        p.xdg_config_home = Some(PathBuf::from("/x"));
        assert_eq!(paths(AgentName::Codex, &p)[0], "/ch/config.toml");
        assert_eq!(paths(AgentName::Goose, &p), ["/x/goose/config.yaml"]);
        let f = files(AgentName::Goose, &p);
        assert_eq!(f[0].format, Format::Yaml);
        assert_eq!(f[0].containers, vec![vec!["extensions"]]);
        assert_eq!(files(AgentName::Codex, &p)[0].format, Format::Toml);
    }

    #[test]
    fn per_os_directories() {
        let mut linux = place(Os::Linux);
        assert_eq!(
            paths(AgentName::ClaudeDesktop, &linux),
            ["/h/.config/Claude/claude_desktop_config.json"]
        );
        linux.xdg_config_home = Some(PathBuf::from("/x"));
        assert_eq!(paths(AgentName::Vscode, &linux)[0], "/x/Code/User/mcp.json");
        assert_eq!(paths(AgentName::Zed, &linux)[0], "/x/zed/settings.json");
        let mac = place(Os::Mac);
        assert_eq!(
            paths(AgentName::Cline, &mac),
            [
                "/h/Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json"
            ]
        );
        assert_eq!(
            paths(AgentName::Zed, &mac)[0],
            "/h/.config/zed/settings.json"
        );
        let mut win = place(Os::Windows);
        win.appdata = Some(PathBuf::from("/a"));
        assert_eq!(
            paths(AgentName::ClaudeDesktop, &win),
            ["/a/Claude/claude_desktop_config.json"]
        );
    }
}
