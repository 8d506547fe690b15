//! The lists against the exit table's constants, docs/reference.md's tables, and the
//! variables the code reads.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::*;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The first column of the rows of the table under `heading` in docs/reference.md.
fn doc_column(heading: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(root().join("docs/reference.md")).expect("reference.md");
    let start = doc.find(heading).expect("heading");
    doc[start..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|l| l.split('|').nth(1).expect("a cell").trim().to_owned())
        .collect()
}

/// Every `MCPTAPE_*` name in the sources under `dir`.
fn names_in(dir: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("read_dir") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            names_in(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).expect("source");
            let mut rest = text.as_str();
            while let Some(at) = rest.find("MCPTAPE_") {
                let tail = &rest[at + "MCPTAPE_".len()..];
                let len = tail
                    .find(|c: char| !(c.is_ascii_uppercase() || c == '_'))
                    .unwrap_or(tail.len());
                let name = tail[..len].trim_end_matches('_');
                if !name.is_empty() {
                    out.insert(format!("MCPTAPE_{name}"));
                }
                rest = &tail[len..];
            }
        }
    }
}

#[test]
fn every_exit_code_is_listed_and_documented_both_ways() {
    let listed: BTreeSet<String> = EXITS.iter().map(|e| e.code.to_string()).collect();
    for code in [
        EXIT_OK,
        EXIT_DIFFERENT,
        EXIT_USAGE,
        EXIT_TAPE,
        EXIT_TIMEOUT,
        EXIT_NOT_EXECUTABLE,
        EXIT_NOT_FOUND,
    ] {
        assert!(listed.contains(&code.to_string()), "{code} is not listed");
    }
    let documented: BTreeSet<String> = doc_column("### Exit status").into_iter().collect();
    assert_eq!(listed, documented, "the list vs docs/reference.md");
}

#[test]
fn every_variable_the_code_reads_is_listed_and_documented_both_ways() {
    let listed: BTreeSet<String> = VARS.iter().map(|v| v.name.to_owned()).collect();
    let mut read = BTreeSet::new();
    names_in(&root().join("src"), &mut read);
    // `MCPTAPE_HEADER_<NAME>` is a family: install names one per header of a remote entry.
    let read: BTreeSet<String> = read
        .into_iter()
        .map(|n| match n.strip_prefix("MCPTAPE_HEADER") {
            Some(rest) if rest != "_TIMEOUT" => "MCPTAPE_HEADER_<NAME>".to_owned(),
            _ => n,
        })
        .collect();
    // The colour conventions' variables (NO_COLOR, …) are listed too; src/ is searched
    // for ours.
    let ours: BTreeSet<String> = listed
        .iter()
        .filter(|n| n.starts_with("MCPTAPE_"))
        .cloned()
        .collect();
    assert_eq!(ours, read, "the list vs the variables in src/");
    let documented: BTreeSet<String> = doc_column("### Environment")
        .iter()
        .flat_map(|cell| cell.split(','))
        .map(|name| name.trim().trim_matches('`').to_owned())
        .collect();
    assert_eq!(listed, documented, "the list vs docs/reference.md");
}

#[test]
fn the_top_level_shows_everything_and_a_subcommand_its_own() {
    let top = top_level();
    for e in EXITS {
        assert!(
            top.contains(&format!("\n  {} ", e.code)),
            "{}\n{top}",
            e.code
        );
    }
    for v in VARS {
        assert!(top.contains(v.name), "{}\n{top}", v.name);
    }
    assert!(top.lines().all(|l| l.len() <= WIDTH), "{top}");
    let verify = for_command("verify", "");
    assert!(verify.contains("  1    an answer changed"), "{verify}");
    assert!(!verify.contains("124"), "{verify}");
    assert!(!verify.contains("MCPTAPE_RECORD"), "{verify}");
    assert!(verify.contains("MCPTAPE_MATCH_META"), "{verify}");
    let call = for_command("call", "Notes first.");
    assert!(call.starts_with("Notes first.\n\nExit status:\n"), "{call}");
    assert!(call.contains("  124  no answer within --timeout"), "{call}");
}

/// docs/reference.md's exit-status table is [`exit_markdown`], word for word
/// (`UPDATE_GOLDEN=1` rewrites it).
#[test]
fn the_pages_exit_table_is_the_helps_table() {
    let path = root().join("docs/reference.md");
    let doc = std::fs::read_to_string(&path).expect("reference.md");
    let start = doc.find("### Exit status").expect("heading");
    let table = start
        + doc[start..]
            .find("| status | meaning |")
            .expect("the table");
    let end = table + doc[table..].find("\n\n").expect("the table's end") + 1;
    let want = exit_markdown();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let updated = format!("{}{want}{}", &doc[..table], &doc[end..]);
        std::fs::write(&path, updated).expect("rewrite reference.md");
        return;
    }
    similar_asserts::assert_eq!(&doc[table..end], want.as_str());
}
