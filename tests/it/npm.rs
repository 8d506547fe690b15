//! The npm packages (packaging/npm): `packaging/npm/build --binary` packs the launcher
//! package and the host's platform package from this test's own binary, npm installs the
//! two tarballs into a temporary project with no network (`--offline`, an empty private
//! cache, and a registry address whose listener must see no connection), and `npx
//! mcptape` runs as an agent's MCP config runs it.

use std::net::TcpListener;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

use crate::support::*;

/// The host's platform package, as the launcher and the build script name it.
const PLATFORM: &str = if cfg!(target_arch = "aarch64") {
    "linux-arm64"
} else {
    "linux-x64"
};

/// The two tarballs (launcher, platform), built once for the whole test binary.
fn tarballs() -> &'static [PathBuf; 2] {
    static BUILT: OnceLock<[PathBuf; 2]> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("npm");
        let mut cmd = Command::new(root().join("packaging/npm/build"));
        // npm pack, offline, with its home and cache in the build directory.
        cmd.arg("--binary")
            .arg(bin())
            .arg("--out")
            .arg(&out)
            .env("HOME", out.join("home"))
            .env("npm_config_cache", out.join("home/npm-cache"))
            .env("npm_config_offline", "true")
            .env("npm_config_update_notifier", "false");
        let built = run(cmd);
        assert!(built.status.success(), "{}", text(&built));
        let stdout = String::from_utf8_lossy(&built.stdout);
        let paths: Vec<PathBuf> = stdout.lines().map(PathBuf::from).collect();
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(
            paths,
            [
                out.join(format!("mcptape-{version}.tgz")),
                out.join(format!("mcptape-{PLATFORM}-{version}.tgz"))
            ],
            "{}",
            text(&built)
        );
        [paths[0].clone(), paths[1].clone()]
    })
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A temporary npm project with both tarballs installed, and the npm settings that keep
/// every later npm/npx command off the network.
pub(crate) struct Project {
    pub(crate) env: Env,
    /// Accepts the connections of anyone who tries the registry: there must be none.
    registry: TcpListener,
}

impl Project {
    pub(crate) fn install() -> Project {
        let env = Env::new();
        let registry = TcpListener::bind("127.0.0.1:0").expect("bind");
        registry.set_nonblocking(true).expect("nonblocking");
        let project = Project { env, registry };
        std::fs::create_dir_all(project.dir()).expect("project dir");
        std::fs::write(
            project.dir().join("package.json"),
            r#"{"name":"agent","version":"1.0.0","private":true}"#,
        )
        .expect("write package.json");
        let [launcher, platform] = tarballs();
        let mut cmd = project.npm("npm");
        cmd.args(["install", "--no-audit", "--no-fund"])
            .arg(launcher)
            .arg(platform);
        let out = run(cmd);
        assert!(out.status.success(), "{}", text(&out));
        project.assert_nothing_fetched();
        project
    }

    pub(crate) fn dir(&self) -> PathBuf {
        self.env.path("agent")
    }

    /// `program` (npm, npx, node…) in the project, offline, with a private cache.
    pub(crate) fn npm(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let addr = self.registry.local_addr().expect("addr");
        let mut cmd = self.env.cmd(program);
        cmd.current_dir(self.dir())
            .env("npm_config_offline", "true")
            .env("npm_config_cache", self.env.path("npm-cache"))
            .env("npm_config_registry", format!("http://{addr}/"))
            .env("npm_config_update_notifier", "false")
            .env("npm_config_userconfig", self.env.path("npmrc"));
        cmd
    }

    fn npx(&self, args: &[&str]) -> Command {
        let mut cmd = self.npm("npx");
        cmd.args(args);
        cmd
    }

    fn assert_nothing_fetched(&self) {
        match self.registry.accept() {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            other => panic!("npm reached for the registry: {other:?}"),
        }
    }

    fn manifest(&self, package: &str) -> Value {
        let path = self
            .dir()
            .join("node_modules")
            .join(package)
            .join("package.json");
        let text = std::fs::read_to_string(&path).expect("installed package.json");
        serde_json::from_str(&text).expect("package.json is JSON")
    }
}

#[test]
fn npx_mcptape_version_runs_the_binary_installed_offline_from_the_two_tarballs() {
    let project = Project::install();
    let version = env!("CARGO_PKG_VERSION");

    let launcher = project.manifest("mcptape");
    assert_eq!(launcher["version"], version);
    assert_eq!(launcher["bin"]["mcptape"], "bin/mcptape.js");
    assert!(
        launcher.get("scripts").is_none(),
        "no install scripts: {launcher}"
    );
    assert!(launcher.get("dependencies").is_none(), "{launcher}");
    let optional = launcher["optionalDependencies"]
        .as_object()
        .expect("optionalDependencies");
    let names: Vec<&str> = optional.keys().map(String::as_str).collect();
    for platform in [
        "linux-x64",
        "linux-arm64",
        "darwin-x64",
        "darwin-arm64",
        "win32-x64",
    ] {
        let name = format!("@mcptape/{platform}");
        assert_eq!(
            optional.get(&name),
            Some(&Value::from(version)),
            "{names:?}"
        );
    }
    assert_eq!(names.len(), 5, "{names:?}");

    let binary = project.manifest(&format!("@mcptape/{PLATFORM}"));
    assert_eq!(binary["version"], version);
    assert_eq!(binary["os"], serde_json::json!(["linux"]));
    assert_eq!(
        binary["cpu"],
        serde_json::json!([PLATFORM.trim_start_matches("linux-")])
    );
    assert!(binary.get("scripts").is_none(), "{binary}");

    let out = run(project.npx(&["mcptape", "--version"]));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("mcptape {version}\n")
    );
    project.assert_nothing_fetched();
}

#[test]
fn npx_mcptape_proxy_serves_a_real_client_over_the_inherited_pipes_and_records() {
    let project = Project::install();
    let client = bin()
        .parent()
        .expect("target dir")
        .join("examples/example-client");
    let tape = project.env.path("npx.ndjson");
    let mut cmd = project.npm(&client);
    cmd.args(["--", "npx", "mcptape", "proxy", "--server", "example", "--"])
        .arg(example_server())
        .env("MCPTAPE_RECORD", &tape);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("connected to \"mcptape-example\""),
        "{shown}"
    );
    assert!(shown.contains("echo → \"Echo: hello 0\""), "{shown}");
    assert!(shown.contains("add → {\"sum\":42}"), "{shown}");

    // The proxy behind npx recorded what crossed: it was mcptape, not a pass-through.
    let entries = tape_entries(&tape);
    let calls: Vec<&Value> = entries
        .iter()
        .filter(|e| e["method"] == "tools/call" && e["_meta"]["server"] == "example")
        .collect();
    assert!(calls.len() >= 2, "{entries:?}");
    project.assert_nothing_fetched();
}

#[test]
fn exit_statuses_pass_through_npx_and_the_launcher() {
    let project = Project::install();
    let usage = run(project.npx(&["mcptape", "no-such-command"]));
    assert_eq!(usage.status.code(), Some(2), "{}", text(&usage));
    assert!(
        stderr(&usage).contains("unrecognized subcommand 'no-such-command'"),
        "{}",
        text(&usage)
    );

    let config = serde_json::json!({"mcpServers": {"example": {"command": example_server()}}});
    std::fs::write(project.dir().join(".mcp.json"), config.to_string()).expect("config");
    let failed = run(project.npx(&["mcptape", "call", "example.fail"]));
    assert_eq!(failed.status.code(), Some(1), "{}", text(&failed));

    let echoed = run(project.npx(&["mcptape", "call", "example.echo", "message=npx"]));
    assert_eq!(echoed.status.code(), Some(0), "{}", text(&echoed));
    assert!(
        String::from_utf8_lossy(&echoed.stdout).contains("Echo: npx"),
        "{}",
        text(&echoed)
    );
}

/// The launcher's child (the mcptape binary), once it is known to be serving: the pid
/// whose parent is `launcher`.
fn child_of(launcher: u32) -> u32 {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc") {
        let entry = entry.expect("entry");
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(launcher) {
            found.push(pid);
        }
    }
    assert_eq!(found.len(), 1, "children of the launcher: {found:?}");
    found[0]
}

/// The installed launcher (`node_modules/.bin/mcptape`) in front of the example server,
/// once it has answered `initialize`: the binary behind it is up.
pub(crate) fn serving(project: &Project) -> (Proc, u32) {
    serving_with(project, |_| {})
}

/// [`serving`], with the launcher's command changed by `adjust` first (its environment).
pub(crate) fn serving_with(project: &Project, adjust: impl FnOnce(&mut Command)) -> (Proc, u32) {
    let launcher = project.dir().join("node_modules/.bin/mcptape");
    let mut cmd = project.npm(&launcher);
    cmd.args(["proxy", "--server", "example", "--"])
        .arg(example_server());
    adjust(&mut cmd);
    let mut proc = Proc::spawn(&mut cmd);
    proc.send(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    let answer = proc.recv();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    let binary = child_of(proc.child.id());
    (proc, binary)
}

#[test]
fn the_launcher_dies_of_the_signal_that_killed_the_binary() {
    let project = Project::install();
    let (mut proc, binary) = serving(&project);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(binary as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .expect("kill the binary");
    let status = proc.wait();
    assert_eq!(status.signal(), Some(9), "{status:?}");
}

#[test]
fn sigterm_to_the_launcher_reaches_the_binary_and_its_status_comes_back() {
    let project = Project::install();
    let (mut proc, binary) = serving(&project);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(proc.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM the launcher");
    // stdin stays open: only the SIGTERM passed on can end the binary.
    let status = proc.wait();
    assert!(!alive(binary), "the binary outlived its launcher");
    // mcptape proxy passes SIGTERM to its server and exits with the server's status
    // (143, or death by SIGTERM): whichever, the launcher reports it as its own.
    assert!(
        status.code() == Some(143) || status.signal() == Some(15),
        "{status:?}"
    );
}

#[test]
fn a_missing_platform_package_is_named_with_the_command_that_installs_it() {
    let project = Project::install();
    std::fs::remove_dir_all(project.dir().join("node_modules/@mcptape").join(PLATFORM))
        .expect("remove the platform package");
    let out = run(project.npx(&["mcptape", "--version"]));
    assert_eq!(out.status.code(), Some(127), "{}", text(&out));
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        stderr(&out).contains(&format!("npm install @mcptape/{PLATFORM}@{version}")),
        "{}",
        text(&out)
    );
}

/// The tarballs are what the build script says, from the checkout alone.
#[test]
fn the_build_script_refuses_a_missing_binary_and_an_unknown_flag() {
    let env = Env::new();
    let build = root().join("packaging/npm/build");
    let mut missing = env.cmd(&build);
    missing
        .args(["--binary", "no/such/mcptape", "--out"])
        .arg(env.path("out"));
    let out = run(missing);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(stderr(&out).contains("no binary at"), "{}", text(&out));
    assert!(!Path::new(&env.path("out/stage")).exists());

    let mut unknown = env.cmd(&build);
    unknown.arg("--bogus");
    let out = run(unknown);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        stderr(&out).contains("unknown argument `--bogus`"),
        "{}",
        text(&out)
    );
}
