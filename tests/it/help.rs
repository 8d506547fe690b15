//! `mcptape completions SHELL` and `mcptape man [SUBCOMMAND]`: generated from the command
//! line's own definition, checked with the real bash and the real `man`.

use crate::support::*;

#[test]
fn every_shell_gets_a_completion_script_and_bash_loads_it() {
    let env = Env::new();
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let out = run(env.mcptape(["completions", shell]));
        assert!(out.status.success(), "{shell}: {}", text(&out));
        let script = String::from_utf8_lossy(&out.stdout);
        for word in [
            "mcptape",
            "record",
            "replay",
            "verify",
            "skip-unanswered-requests",
        ] {
            assert!(script.contains(word), "{shell}'s script lacks {word}");
        }
    }
    let script = env.path("mcptape.bash");
    std::fs::write(&script, run(env.mcptape(["completions", "bash"])).stdout).expect("write");
    // bash sources it, and completing `mcptape re` offers the subcommands that start so.
    let probe = format!(
        "source {}; COMP_WORDS=(mcptape re); COMP_CWORD=1; _mcptape mcptape re mcptape; echo \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let mut cmd = env.cmd("bash");
    cmd.args(["--norc", "-c", &probe]);
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    let offered = String::from_utf8_lossy(&out.stdout);
    for word in ["record", "replay", "redact"] {
        assert!(offered.split_whitespace().any(|w| w == word), "{offered}");
    }
    let bad = run(env.mcptape(["completions", "tcsh"]));
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
}

#[test]
fn the_manual_pages_render_with_man_and_name_their_subcommands() {
    let env = Env::new();
    let page = run(env.mcptape(["man"]));
    assert!(page.status.success(), "{}", text(&page));
    let roff = String::from_utf8_lossy(&page.stdout);
    assert!(roff.contains(".TH mcptape 1"), "{roff}");
    assert!(roff.contains("mcptape\\-record(1)"), "{roff}");

    let sub = run(env.mcptape(["man", "verify"]));
    assert!(sub.status.success(), "{}", text(&sub));
    let file = env.path("mcptape-verify.1");
    std::fs::write(&file, &sub.stdout).expect("write");
    let mut cmd = env.cmd("man");
    cmd.arg("-l")
        .arg(&file)
        .env("MANPAGER", "cat")
        .env("MANWIDTH", "100");
    let out = run(cmd);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("mcptape-verify"), "{shown}");
    assert!(shown.contains("--allow-writes"), "{shown}");
    // The help's lists are sections of their own, kept line by line (roff used to refill
    // them into one paragraph, splitting words and running the rows together).
    assert!(shown.contains("\nEXIT STATUS\n"), "{shown}");
    assert!(shown.contains("\nENVIRONMENT\n"), "{shown}");
    assert!(
        shown
            .lines()
            .any(|l| l.trim_start().starts_with("1    an answer changed")),
        "{shown}"
    );
    assert!(
        shown
            .lines()
            .any(|l| l.trim_start().starts_with("MCPTAPE_MATCH_META")),
        "{shown}"
    );

    // clap's `help` subcommand has no page of its own.
    let help = run(env.mcptape(["man", "help"]));
    assert_eq!(help.status.code(), Some(2), "{}", text(&help));

    let bad = run(env.mcptape(["man", "nope"]));
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        text(&bad).contains("no subcommand `nope`"),
        "{}",
        text(&bad)
    );
}
