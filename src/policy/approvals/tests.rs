//! Unit tests of [`super`]: a desk in a temporary mcptape home, held and decided from
//! "both sides" in one process (the integration tests run the commands as processes).

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::error::Error;

fn request(tool: &str) -> Request {
    Request {
        server: "everything".into(),
        method: "tools/call".into(),
        tool: Some(tool.into()),
        arguments: json!({"message": "hi", "token": "[REDACTED]"}),
        rules: vec!["ask-writes".into()],
    }
}

/// A desk in a fresh home, and the home (kept alive).
fn desk() -> (Desk, tempfile::TempDir) {
    let home = tempfile::tempdir().expect("tempdir");
    (Desk::in_home(home.path()), home)
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).expect("meta").mode() & 0o7777
}

fn approval_error(result: Result<Pending>) -> ApprovalError {
    match result {
        Err(Error::Approval(e)) => e,
        other => panic!("not an approval error: {other:?}"),
    }
}

#[test]
fn a_held_call_is_a_private_file_in_a_private_directory_and_is_listed() {
    let (desk, home) = desk();
    let held = desk.hold(request("echo")).expect("hold");
    assert!(crate::ids::is_approval_id(&held.id), "{}", held.id);
    assert_eq!(desk.dir(), home.path().join("recordings/.approvals"));
    assert_eq!(mode(desk.dir()), 0o700);
    let file = desk.dir().join(format!("{}.json", held.id));
    assert_eq!(mode(&file), 0o600);
    let on_disk: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    assert_eq!(on_disk["server"], "everything");
    assert_eq!(on_disk["tool"], "echo");
    assert_eq!(on_disk["arguments"]["token"], "[REDACTED]");
    assert_eq!(on_disk["rules"], json!(["ask-writes"]));
    assert_eq!(on_disk["pid"], std::process::id());
    assert!(on_disk["since"].as_str().is_some_and(|s| s.ends_with('Z')));
    let listed = desk.pending().expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, held.id);
    assert_eq!(listed[0].what(), "echo");
    // Nothing else in the directory: no temporary file was left.
    let names: Vec<_> = std::fs::read_dir(desk.dir())
        .expect("dir")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // The desk is not a session.
    let tapes = crate::tape::store::list(home.path()).expect("list tapes");
    assert!(tapes.is_empty(), "{tapes:?}");
}

#[test]
fn an_empty_or_missing_desk_has_nothing_waiting() {
    let (desk, _home) = desk();
    assert!(desk.pending().expect("list").is_empty());
    assert!(!desk.dir().exists(), "listing makes nothing");
    let err = approval_error(desk.decide("abcdef", Choice::Approve));
    assert!(matches!(err, ApprovalError::Unknown { .. }), "{err}");
}

#[test]
fn a_desk_that_is_a_symlink_is_refused_and_its_target_untouched() {
    let (desk, home) = desk();
    let elsewhere = home.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o700)).expect("chmod");
    std::fs::create_dir_all(desk.dir().parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, desk.dir()).expect("symlink");
    let err = desk.hold(request("echo")).expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("symbolic link") && text.contains("rm "),
        "{text}"
    );
    assert!(text.contains(".approvals"), "names the directory: {text}");
    assert_eq!(std::fs::read_dir(&elsewhere).expect("dir").count(), 0);
    let err = desk.pending().expect_err("refused too");
    assert!(err.to_string().contains("symbolic link"), "{err}");
}

#[test]
fn a_desk_others_can_reach_is_refused_with_the_chmod_that_fixes_it() {
    let (desk, _home) = desk();
    std::fs::create_dir_all(desk.dir()).expect("mkdir");
    for open in [0o750, 0o705, 0o777] {
        std::fs::set_permissions(desk.dir(), std::fs::Permissions::from_mode(open)).expect("chmod");
        let err = desk.hold(request("echo")).expect_err("refused");
        let text = err.to_string();
        assert!(text.contains(&format!("mode {open:04o}")), "{text}");
        assert!(text.contains("chmod 700"), "{text}");
        assert_eq!(mode(desk.dir()), open, "not ours to change");
    }
    std::fs::set_permissions(desk.dir(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    desk.hold(request("echo")).expect("private again");
}

#[test]
fn a_desk_of_another_user_is_refused() {
    let (desk, _home) = desk();
    std::fs::create_dir_all(desk.dir()).expect("mkdir");
    std::fs::set_permissions(desk.dir(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let other = nix::unistd::Uid::from_raw(nix::unistd::geteuid().as_raw() + 4242);
    if nix::unistd::chown(desk.dir(), Some(other), None).is_err() {
        // Only root can give a directory away; the rule is the same as the mode's.
        return;
    }
    let err = desk.hold(request("echo")).expect_err("refused");
    assert!(err.to_string().contains("another user"), "{err}");
}

#[test]
fn a_file_where_the_desk_should_be_is_refused() {
    let (desk, _home) = desk();
    std::fs::create_dir_all(desk.dir().parent().expect("parent")).expect("mkdir");
    std::fs::write(desk.dir(), "x").expect("write");
    let err = desk.hold(request("echo")).expect_err("refused");
    assert!(err.to_string().contains("is not a directory"), "{err}");
}

#[tokio::test]
async fn an_approval_from_the_other_side_reaches_the_holder_and_a_second_is_told_so() {
    let (desk, _home) = desk();
    let mut held = desk.hold(request("echo")).expect("hold");
    let id = held.id.clone();
    let waiting = tokio::spawn(async move {
        let answer = held.wait(Duration::from_secs(60)).await;
        (answer, held)
    });
    let person = Desk::at(desk.dir().to_path_buf());
    let decided = person.decide(&id, Choice::Approve).expect("approve");
    assert_eq!(
        (decided.server.as_str(), decided.what()),
        ("everything", "echo")
    );
    let (answer, held) = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("in time")
        .expect("join");
    assert_eq!(answer, Answer::Approved { by: record::who() });
    assert!(record::who().contains('@'));
    assert!(
        !desk.dir().join(format!("{id}.json")).exists(),
        "off the desk"
    );
    assert!(desk.pending().expect("list").is_empty());
    let err = approval_error(person.decide(&id, Choice::Deny { reason: None }));
    assert!(
        err.to_string()
            .contains("no longer waiting: it was approved by "),
        "{err}"
    );
    drop(held);
    assert!(
        !desk.dir().join(format!("{id}.decision")).exists() || {
            let kept: Decision = load(&desk.dir().join(format!("{id}.decision"))).expect("kept");
            kept.decision == Verdict::Approved
        },
        "a drop after the answer withdraws nothing"
    );
}

#[tokio::test]
async fn a_denial_carries_its_reason_to_the_holder() {
    let (desk, _home) = desk();
    let mut held = desk.hold(request("rm")).expect("hold");
    desk.decide(
        &held.id,
        Choice::Deny {
            reason: Some("not on prod".into()),
        },
    )
    .expect("deny");
    let answer = held.wait(Duration::from_secs(60)).await;
    assert_eq!(
        answer,
        Answer::Denied {
            by: record::who(),
            reason: Some("not on prod".into())
        }
    );
    assert_eq!(
        held.wait(Duration::from_secs(60)).await,
        answer,
        "given again"
    );
}

#[tokio::test(start_paused = true)]
async fn a_call_nobody_decides_times_out_and_is_then_told_so() {
    let (desk, _home) = desk();
    let mut held = desk.hold(request("echo")).expect("hold");
    let start = tokio::time::Instant::now();
    let answer = held.wait(Duration::from_secs(5)).await;
    assert_eq!(answer, Answer::TimedOut);
    assert!(start.elapsed() >= Duration::from_secs(5));
    assert!(desk.pending().expect("list").is_empty());
    let err = approval_error(desk.decide(&held.id, Choice::Approve));
    assert!(err.to_string().contains("it timed out"), "{err}");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_is_shown_once_the_holder_waits() {
    let (desk, _home) = desk();
    let mut held = desk.hold(request("echo")).expect("hold");
    assert_eq!(desk.pending().expect("list")[0].deadline, None);
    let wait = held.wait(Duration::from_secs(300));
    tokio::pin!(wait);
    assert!(futures_util::FutureExt::now_or_never(&mut wait).is_none());
    let listed = desk.pending().expect("list");
    let left = listed[0].left(SystemTime::now()).expect("a deadline");
    assert!(
        left > Duration::from_secs(290) && left <= Duration::from_secs(300),
        "{left:?}"
    );
}

#[tokio::test]
async fn an_approval_written_before_the_time_ran_out_wins_over_the_clock() {
    let (desk, _home) = desk();
    let mut held = desk.hold(request("echo")).expect("hold");
    desk.decide(&held.id, Choice::Approve).expect("approve");
    let answer = held.wait(Duration::ZERO).await;
    assert!(matches!(answer, Answer::Approved { .. }), "{answer:?}");
}

#[test]
fn a_dropped_hold_is_withdrawn_and_deciding_it_says_so() {
    let (desk, _home) = desk();
    let held = desk.hold(request("echo")).expect("hold");
    let id = held.id.clone();
    drop(held);
    assert!(desk.pending().expect("list").is_empty());
    assert!(!desk.dir().join(format!("{id}.json")).exists());
    let err = approval_error(desk.decide(&id, Choice::Approve));
    assert!(err.to_string().contains("withdrawn"), "{err}");
}

#[test]
fn a_call_whose_holder_is_gone_is_stale_skipped_swept_and_refused() {
    let (desk, _home) = desk();
    let held = desk.hold(request("echo")).expect("hold");
    let id = held.id.clone();
    // Its holder was a process that has exited.
    let mut gone = std::process::Command::new("true").spawn().expect("spawn");
    let pid = gone.id();
    gone.wait().expect("wait");
    let path = desk.dir().join(format!("{id}.json"));
    let mut pending: Pending = load(&path).expect("pending");
    pending.pid = pid;
    files::replace(desk.dir(), &format!("{id}.json"), &to_json(&pending)).expect("write");
    std::mem::forget(held);
    let err = approval_error(desk.decide(&id, Choice::Approve));
    assert!(
        matches!(err, ApprovalError::Stale { pid: p, .. } if p == pid),
        "{err}"
    );
    assert!(err.to_string().contains("is gone"), "{err}");
    assert!(!path.exists(), "swept");

    // Listing skips and sweeps one too.
    let held = desk.hold(request("echo")).expect("hold");
    let path = desk.dir().join(format!("{}.json", held.id));
    let mut pending: Pending = load(&path).expect("pending");
    pending.pid = pid;
    files::replace(desk.dir(), &format!("{}.json", held.id), &to_json(&pending)).expect("write");
    std::mem::forget(held);
    assert!(desk.pending().expect("list").is_empty());
    assert!(!path.exists(), "swept");
}

#[test]
fn an_unknown_id_is_refused_naming_it_and_the_calls_that_wait() {
    let (desk, _home) = desk();
    let a = desk.hold(request("echo")).expect("hold");
    let b = desk.hold(request("add")).expect("hold");
    for bad in ["zzzzzz", "../../x", "ABCDEF", "a\u{1b}[2J"] {
        let err = approval_error(desk.decide(bad, Choice::Approve));
        let text = err.to_string();
        assert!(text.contains("no call `"), "{text}");
        assert!(!text.contains('\u{1b}'), "escaped: {text:?}");
        assert!(text.contains(&a.id) && text.contains(&b.id), "{text}");
    }
    assert_eq!(
        desk.pending().expect("list").len(),
        2,
        "nothing was decided"
    );
}

#[test]
fn a_reason_too_long_to_pass_on_is_refused() {
    let (desk, _home) = desk();
    let held = desk.hold(request("echo")).expect("hold");
    let reason = "x".repeat(MAX_REASON_BYTES + 1);
    let err = approval_error(desk.decide(
        &held.id,
        Choice::Deny {
            reason: Some(reason),
        },
    ));
    assert!(matches!(err, ApprovalError::ReasonTooLong { .. }), "{err}");
    assert_eq!(desk.pending().expect("list").len(), 1, "still waiting");
}

#[test]
fn huge_arguments_are_kept_as_the_start_of_their_text() {
    let (desk, _home) = desk();
    let mut big = request("write");
    big.arguments = json!({"content": "é".repeat(100_000)});
    let held = desk.hold(big).expect("hold");
    let listed = desk.pending().expect("list");
    let shown = listed[0].arguments.as_str().expect("cut to a string");
    assert!(shown.len() <= record::ARGUMENTS_SHOWN_BYTES);
    assert!(shown.starts_with(r#"{"content":"éé"#), "{}", &shown[..20]);
    assert!(listed[0].arguments_bytes.is_some_and(|n| n > 200_000));
    drop(held);
}

#[test]
fn concurrent_holds_get_distinct_ids_and_one_of_two_racing_decisions_wins() {
    let (desk, _home) = desk();
    let desk = Arc::new(desk);
    let holders: Vec<_> = (0..16)
        .map(|i| {
            let desk = Arc::clone(&desk);
            std::thread::spawn(move || desk.hold(request(&format!("t{i}"))).expect("hold"))
        })
        .collect();
    let held: Vec<Held> = holders
        .into_iter()
        .map(|h| h.join().expect("join"))
        .collect();
    let mut ids: Vec<&str> = held.iter().map(|h| h.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 16);
    assert_eq!(desk.pending().expect("list").len(), 16);

    let id = held[0].id.clone();
    let racers: Vec<_> = (0..8)
        .map(|i| {
            let (desk, id) = (Arc::clone(&desk), id.clone());
            std::thread::spawn(move || {
                let choice = match i % 2 {
                    0 => Choice::Approve,
                    _ => Choice::Deny { reason: None },
                };
                desk.decide(&id, choice).is_ok()
            })
        })
        .collect();
    let won = racers
        .into_iter()
        .map(|r| r.join().expect("join"))
        .filter(|&ok| ok)
        .count();
    assert_eq!(won, 1, "exactly one decision counts");
    assert_eq!(desk.pending().expect("list").len(), 15);
}

#[test]
fn old_decisions_and_temporary_files_are_swept() {
    let (desk, _home) = desk();
    let held = desk.hold(request("echo")).expect("hold");
    let id = held.id.clone();
    drop(held);
    let decision = desk.dir().join(format!("{id}.decision"));
    let tmp = desk.dir().join(".abcdef.json.1234abcd-1.tmp");
    std::fs::write(&tmp, "{").expect("write");
    let old = SystemTime::now() - STALE_AFTER - Duration::from_secs(5);
    for path in [&decision, &tmp] {
        std::fs::File::options()
            .write(true)
            .open(path)
            .expect("open")
            .set_modified(old)
            .expect("touch");
    }
    assert!(desk.pending().expect("list").is_empty());
    assert!(!decision.exists() && !tmp.exists());
}
