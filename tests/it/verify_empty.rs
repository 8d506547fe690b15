//! `mcptape verify` on a tape that holds no connection: it says so, naming the file,
//! instead of asking to choose among no servers.

use crate::support::*;

#[test]
fn verify_on_an_empty_tape_says_it_is_empty() {
    let env = Env::new();
    let tape = env.path("e.ndjson");
    std::fs::write(&tape, "").expect("write");
    for server in [None, Some("example")] {
        let mut cmd = env.mcptape(["verify".as_ref(), tape.as_os_str()]);
        if let Some(s) = server {
            cmd.args(["--server", s]);
        }
        cmd.arg("--").arg(example_server());
        let out = run(cmd);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{server:?}: {stderr}");
        let want = format!(
            "the tape `{}` is empty: there is nothing to verify",
            tape.display()
        );
        assert!(stderr.contains(&want), "{server:?}: {stderr}");
        assert!(!stderr.contains("several servers"), "{stderr}");
        assert!(
            !stderr.contains("holds no connection of server"),
            "{stderr}"
        );
    }
}
