//! The docs cannot drift: every fenced `sh` block of README.md runs, in order, in one
//! `bash -e` against the example server, and what it prints is checked; every other shell
//! block is marked ` ```sh setup ` (commands that cannot run inside `cargo test`). And the
//! command pages agree with `--help`: a synopsis names only real flags, and every flag is
//! on its command's page.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::support::*;

/// The info strings a README block may have, and what each means.
const RUN: &str = "sh";
/// Set-up commands: cargo itself, the demo (which runs cargo), the peers' install, npx.
const SETUP: &str = "sh setup";
/// What the programs of a set-up block may be: the ones that cannot run in a test.
const SETUP_PROGRAMS: &[&str] = &["cargo", "scripts/demo", "tests/peers/install", "npx"];
/// Blocks that hold no command: an MCP config, and the output of the `sh` block before.
const QUIET: &[&str] = &["json", "text"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One fenced block of a Markdown file.
#[derive(Debug)]
struct Block {
    info: String,
    body: String,
    /// The line of its opening fence (1-based).
    line: usize,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in markdown.lines().enumerate() {
        match (&mut open, line.trim_start().strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    body: String::new(),
                    line: i + 1,
                })
            }
            (Some(_), Some("")) => out.extend(open.take()),
            (Some(block), _) => {
                block.body.push_str(line);
                block.body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README.md: a fence is never closed");
    out
}

fn readme() -> Vec<Block> {
    let text = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    assert!(
        text.lines().count() <= 200,
        "README.md is {} lines: keep it to 200",
        text.lines().count()
    );
    blocks(&text)
}

#[test]
fn every_readme_block_is_run_or_marked_as_set_up() {
    let blocks = readme();
    let mut previous = "";
    for b in &blocks {
        match b.info.as_str() {
            RUN => {}
            SETUP => {
                for command in b.body.lines().filter(|l| !l.trim().is_empty()) {
                    assert!(
                        SETUP_PROGRAMS.iter().any(|p| command.starts_with(p)),
                        "README.md:{}: `{command}` can run in a test: put it in a ```sh block",
                        b.line
                    );
                }
            }
            "text" => assert_eq!(
                previous, RUN,
                "README.md:{}: a text block shows the output of the sh block right before it",
                b.line
            ),
            info if QUIET.contains(&info) => {}
            info => panic!(
                "README.md:{}: a ```{info} block is neither run (```sh) nor marked (```sh setup)",
                b.line
            ),
        }
        previous = &b.info;
    }
    assert!(blocks.iter().filter(|b| b.info == RUN).count() >= 3);
}

/// A copy of what the README's commands need, laid out as in the checkout after
/// `scripts/demo`: the config, and the example server and client where cargo builds them.
fn checkout(env: &Env) -> PathBuf {
    let dir = env.path("checkout");
    std::fs::create_dir_all(dir.join("recordings-example")).expect("mkdir");
    std::fs::copy(
        root().join("recordings-example/mcp.json"),
        dir.join("recordings-example/mcp.json"),
    )
    .expect("copy the config");
    let examples = dir.join("target/debug/examples");
    std::fs::create_dir_all(&examples).expect("mkdir");
    let server = PathBuf::from(example_server());
    let built = server.parent().expect("examples dir");
    for name in ["example-server", "example-client"] {
        std::os::unix::fs::symlink(built.join(name), examples.join(name)).expect("symlink");
    }
    dir
}

/// `# prints: TEXT` comments: the TEXT each line of the block must print.
fn printed(body: &str) -> Vec<&str> {
    body.lines()
        .filter_map(|l| l.split_once("# prints: ").map(|(_, t)| t.trim()))
        .collect()
}

/// Whether `want` (with `…` for any text) matches `line`.
fn matches(want: &str, line: &str) -> bool {
    let mut rest = line;
    for piece in want.split('…') {
        match rest.find(piece) {
            Some(i) => rest = &rest[i + piece.len()..],
            None => return false,
        }
    }
    true
}

/// The output of each block, split at the markers the script prints between them.
fn per_block(output: &str, n: usize) -> Vec<String> {
    let mut out = vec![String::new(); n];
    let mut current = None;
    for line in output.lines() {
        if let Some(i) = line
            .strip_prefix("@@readme block ")
            .and_then(|r| r.strip_suffix("@@"))
        {
            current = i.parse::<usize>().ok();
        } else if let Some(i) = current {
            out[i].push_str(line);
            out[i].push('\n');
        }
    }
    out
}

#[test]
fn the_readme_runs_and_prints_what_it_says() {
    let blocks = readme();
    let env = Env::new();
    let dir = checkout(&env);
    let run_blocks: Vec<&Block> = blocks.iter().filter(|b| b.info == RUN).collect();
    let mut script = String::new();
    for (i, b) in run_blocks.iter().enumerate() {
        script.push_str(&format!(
            "echo '@@readme block {i}@@'; echo '@@readme block {i}@@' >&2\n{}",
            b.body
        ));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![bin().parent().expect("bin dir").to_path_buf()];
    dirs.extend(std::env::split_paths(&path));
    let mut cmd = env.cmd("bash");
    cmd.args(["-e", "-c", &script])
        .current_dir(&dir)
        .env("PATH", std::env::join_paths(dirs).expect("PATH"));
    let out = run(cmd);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    let outs = per_block(&stdout, run_blocks.len());
    let errs = per_block(&stderr, run_blocks.len());
    let last = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("@@readme block "))
        .next_back()
        .unwrap_or("none");
    assert!(
        out.status.success(),
        "a README block failed (the last one started: {last}):\n{}",
        text(&out)
    );
    for (i, b) in run_blocks.iter().enumerate() {
        let output = format!("{}{}", outs[i], errs[i]);
        for want in printed(&b.body) {
            assert!(
                outs[i].contains(want),
                "README.md:{}: the block does not print `{want}`:\n{output}",
                b.line
            );
        }
        // The text block right after it: lines its output holds, in order.
        let next = blocks.iter().skip_while(|x| x.line != b.line).nth(1);
        if let Some(shown) = next.filter(|x| x.info == "text") {
            let mut lines = output.lines();
            for want in shown.body.lines().filter(|l| !l.trim().is_empty()) {
                assert!(
                    lines.any(|l| matches(want, l)),
                    "README.md:{}: the output shown is not what the block printed: no line `{want}` (in order) in\n{output}",
                    shown.line
                );
            }
        }
    }
}

/// The flags a `--help` lists (`--name`, without `--help` and `--version`).
fn help_flags(args: &[&str]) -> BTreeSet<String> {
    let out = run(Env::new().mcptape(args));
    assert!(out.status.success(), "{args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| {
            let indent = l.len() - l.trim_start().len();
            (2..=6).contains(&indent) && l.trim_start().starts_with('-')
        })
        .filter_map(|l| flags_in(l).into_iter().next())
        .filter(|f| f != "--help" && f != "--version")
        .collect()
}

/// Every `--flag` in `text`.
fn flags_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("--") {
        let tail = &rest[i + 2..];
        let end = tail
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(tail.len());
        if end > 0 && tail.as_bytes()[0].is_ascii_lowercase() {
            out.push(format!("--{}", &tail[..end]));
        }
        rest = &tail[end..];
    }
    out
}

/// The subcommands `mcptape --help` lists.
fn subcommands() -> Vec<String> {
    let out = run(Env::new().mcptape(["--help"]));
    assert!(out.status.success(), "{}", text(&out));
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let commands: Vec<String> = help
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .filter(|c| c != "help")
        .collect();
    // A heading that stopped matching would check nothing.
    assert!(
        commands.len() >= 10,
        "the subcommands of --help: {commands:?}"
    );
    commands
}

/// Each command page: its synopses (the `mcptape …` code spans of its `# ` headings) by
/// subcommand, and its text.
fn pages() -> BTreeMap<String, (PathBuf, String, String)> {
    let mut out = BTreeMap::new();
    let dir = root().join("docs/commands");
    for entry in std::fs::read_dir(&dir).expect("docs/commands") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).expect("page");
        for heading in text.lines().filter(|l| l.starts_with("# ")) {
            for span in heading.split('`').skip(1).step_by(2) {
                if let Some(rest) = span.strip_prefix("mcptape ") {
                    let sub = rest.split_whitespace().next().unwrap_or("").to_owned();
                    out.insert(sub, (path.clone(), span.to_owned(), text.clone()));
                }
            }
        }
    }
    out
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_synopsis_names_real_flags_and_every_flag_is_on_its_page() {
    let pages = pages();
    let mut wrong = Vec::new();
    // Global flags (`--color`) show in every subcommand's help; docs/reference.md has them.
    let global = help_flags(&["--help"]);
    for sub in subcommands() {
        let Some((path, synopsis, text)) = pages.get(&sub) else {
            wrong.push(format!(
                "no page of docs/commands has a synopsis `mcptape {sub} …`"
            ));
            continue;
        };
        let listed = help_flags(&[sub.as_str(), "--help"]);
        for flag in flags_in(synopsis) {
            if !listed.contains(&flag) {
                wrong.push(format!(
                    "{}: the synopsis `{synopsis}` names {flag}, which `mcptape {sub} --help` does not list",
                    shown(path)
                ));
            }
        }
        let on_page: BTreeSet<String> = flags_in(text).into_iter().collect();
        for flag in listed.difference(&global) {
            if !on_page.contains(flag) {
                wrong.push(format!(
                    "{}: `mcptape {sub} --help` lists {flag}, which the page never mentions",
                    shown(path)
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_flag_scanner_reads_clap_help() {
    assert_eq!(
        flags_in("  -o, --output <FILE>  also --x-y, not ---, not --1 nor `--`"),
        ["--output", "--x-y"]
    );
    assert!(matches(
        "verify `…f.ndjson` (server `e`)",
        "verify `/h/f.ndjson` (server `e`): 1"
    ));
    assert!(!matches("a…b", "ba"));
}

/// Each `mcptape SUB …` in `line`, up to its own `--` (what follows is another command's):
/// the subcommand and the flags it is given.
fn invocations(line: &str) -> Vec<(String, Vec<String>)> {
    let code = line.split(" # ").next().unwrap_or(line);
    code.split("mcptape ")
        .skip(1)
        .filter_map(|segment| {
            let own = segment.split(" -- ").next().unwrap_or(segment);
            let sub = own.split_whitespace().next()?.to_owned();
            Some((sub, flags_in(own)))
        })
        .collect()
}

#[test]
fn every_command_of_the_readme_and_the_cookbook_uses_flags_its_help_lists() {
    let subs: BTreeSet<String> = subcommands().into_iter().collect();
    let mut helps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for page in ["README.md", "docs/cookbook.md"] {
        let text = std::fs::read_to_string(root().join(page)).expect("page");
        for b in blocks(&text).iter().filter(|b| b.info.starts_with("sh")) {
            for (i, line) in b.body.lines().enumerate() {
                for (sub, flags) in invocations(line) {
                    if !subs.contains(&sub) {
                        wrong.push(format!("{page}:{}: no subcommand `{sub}`", b.line + 1 + i));
                        continue;
                    }
                    let listed = helps
                        .entry(sub.clone())
                        .or_insert_with(|| help_flags(&[sub.as_str(), "--help"]));
                    for flag in flags.iter().filter(|f| !listed.contains(*f)) {
                        wrong.push(format!(
                            "{page}:{}: `mcptape {sub} --help` lists no {flag}",
                            b.line + 1 + i
                        ));
                    }
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(
        invocations("mcptape record f -- mcptape call e.t --timeout 5 -- x --y  # --z"),
        [
            ("record".to_owned(), vec![]),
            ("call".to_owned(), vec!["--timeout".to_owned()])
        ]
    );
}
