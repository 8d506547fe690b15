//! The published crate: `cargo package --list` of this checkout (no warnings, what a
//! build and the docs need, nothing of the test peers), and its metadata as `cargo
//! metadata` reads it. `cargo publish --dry-run` itself (a full build) runs in .ci/run.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::support::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The cargo that runs these tests.
fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

#[test]
fn the_crate_packages_without_a_warning_holding_its_targets_licences_and_docs() {
    let mut cmd = cargo();
    cmd.args([
        "package",
        "--locked",
        "--offline",
        "--list",
        "--allow-dirty",
    ]);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!stderr(&out).contains("warning"), "{}", text(&out));
    let listing = String::from_utf8_lossy(&out.stdout);
    let files: Vec<&str> = listing.lines().collect();
    for file in [
        "Cargo.toml",
        "Cargo.lock",
        "LICENSE-MIT",
        "LICENSE-APACHE",
        "README.md",
        "CHANGELOG.md",
        "src/main.rs",
        "src/lib.rs",
        "examples/example-server.rs",
        "benches/proxy.rs",
        "docs/FORMAT.md",
        "docs/install.md",
        "docs/ci.md",
    ] {
        assert!(files.contains(&file), "{file} is not packaged: {files:?}");
    }
    for outside in [
        "tests/peers/",
        "tests/fixtures/",
        "fuzz/",
        "packaging/",
        ".ci/",
        "target/",
        ".venv/",
    ] {
        assert!(
            !files.iter().any(|f| f.starts_with(outside)),
            "{outside} is packaged: {files:?}"
        );
    }
}

#[test]
fn the_crate_metadata_names_its_home_keywords_and_categories() {
    let mut cmd = cargo();
    cmd.args([
        "metadata",
        "--no-deps",
        "--offline",
        "--locked",
        "--format-version",
        "1",
    ]);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    let metadata: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let package = &metadata["packages"][0];
    assert_eq!(package["name"], "mcptape");
    assert_eq!(package["repository"], "https://github.com/mcptape/mcptape");
    assert_eq!(package["homepage"], "https://github.com/mcptape/mcptape");
    assert_eq!(package["license"], "MIT OR Apache-2.0");
    assert!(
        package["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    assert!(package["rust_version"].is_string(), "{package}");
    let keywords = package["keywords"].as_array().expect("keywords");
    assert!(
        (1..=5).contains(&keywords.len()),
        "crates.io takes 5: {keywords:?}"
    );
    let categories = package["categories"].as_array().expect("categories");
    for slug in ["development-tools::testing", "command-line-utilities"] {
        assert!(categories.contains(&Value::from(slug)), "{categories:?}");
    }
}
