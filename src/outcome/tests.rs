use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;

use super::*;
use crate::error::{ClientError, ConfigError};

#[test]
fn every_outcome_has_its_exit_status() {
    let table = [
        (Outcome::Ok, 0),
        (Outcome::Help, 0),
        (Outcome::Differences, 1),
        (Outcome::SecretsLeft, 1),
        (Outcome::Failed, 1),
        (Outcome::Diverged, 3),
        (Outcome::RecordingIncomplete, 3),
        (Outcome::Unfinished, 3),
        (Outcome::Timeout, 124),
        (Outcome::Exited(7), 7),
        (Outcome::Exited(255), 255),
        (Outcome::Signaled(15), 143),
        (Outcome::Signaled(9), 137),
    ];
    for (outcome, code) in table {
        assert_eq!(outcome.exit_code(), code, "{outcome:?}");
    }
}

#[test]
fn a_childs_status_passes_through() {
    // Raw wait statuses: the code in the high byte, a signal in the low one.
    assert_eq!(Outcome::of_status(ExitStatus::from_raw(0)), Outcome::Ok);
    assert_eq!(
        Outcome::of_status(ExitStatus::from_raw(42 << 8)),
        Outcome::Exited(42)
    );
    assert_eq!(
        Outcome::of_status(ExitStatus::from_raw(15)),
        Outcome::Signaled(15)
    );
    assert_eq!(crate::process::exit_code(ExitStatus::from_raw(15)), 143);
    assert_eq!(Outcome::exited(0), Outcome::Ok);
    assert_eq!(Outcome::exited(2), Outcome::Exited(2));
}

#[test]
fn an_incomplete_recording_fails_only_a_clean_exit() {
    assert_eq!(Outcome::Ok.recorded(false), Outcome::RecordingIncomplete);
    assert_eq!(Outcome::Ok.recorded(true), Outcome::Ok);
    assert_eq!(Outcome::Exited(5).recorded(false), Outcome::Exited(5));
    assert_eq!(Outcome::Exited(5).replayed(false), Outcome::Diverged);
    assert_eq!(Outcome::Exited(5).replayed(true), Outcome::Exited(5));
    assert_eq!(
        Outcome::Failed.max(Outcome::RecordingIncomplete),
        Outcome::RecordingIncomplete
    );
    assert_eq!(
        Outcome::Timeout.max(Outcome::RecordingIncomplete),
        Outcome::Timeout
    );
}

fn io(kind: io::ErrorKind) -> io::Error {
    io::Error::new(kind, "because")
}

#[test]
fn every_error_has_its_exit_status() {
    let path = PathBuf::from("t.ndjson");
    let table: Vec<(Error, u8)> = vec![
        (Error::Usage("bad".into()), 2),
        (
            Error::Io {
                what: "cannot listen on 127.0.0.1:1".into(),
                source: io(io::ErrorKind::AddrInUse),
            },
            2,
        ),
        (Error::Config(ConfigError::NotFound { looked: vec![] }), 2),
        (
            Error::Tape(TapeError::Missing {
                path: path.clone(),
                hint: String::new(),
            }),
            2,
        ),
        (
            Error::Tape(TapeError::Write {
                path: path.clone(),
                source: io(io::ErrorKind::StorageFull),
            }),
            3,
        ),
        (
            Error::Tape(TapeError::Full {
                path: path.clone(),
                max: 1,
            }),
            3,
        ),
        (
            Error::Tape(TapeError::WriterPanicked {
                path,
                message: "boom".into(),
            }),
            3,
        ),
        (
            Error::Client(ClientError::NoAnswer {
                server: "s".into(),
                method: "m".into(),
            }),
            1,
        ),
        (
            Error::Process(ProcessError::Spawn {
                command: "x".into(),
                source: io(io::ErrorKind::NotFound),
            }),
            127,
        ),
        (
            Error::Process(ProcessError::Spawn {
                command: "x".into(),
                source: io(io::ErrorKind::PermissionDenied),
            }),
            126,
        ),
        (
            Error::Process(ProcessError::Signals(io(io::ErrorKind::Other))),
            2,
        ),
        (Error::Stdout(io(io::ErrorKind::Other)), 2),
        (Error::Stdout(io(io::ErrorKind::BrokenPipe)), 0),
    ];
    for (err, code) in table {
        assert_eq!(err.exit_code(), code, "{err:?}");
    }
}

#[test]
fn a_usage_error_from_clap_is_2() {
    use clap::Parser;
    let bad =
        crate::cli::Cli::try_parse_from(["mcptape", "no-such-command"]).expect_err("not a command");
    let err = parse_failed(bad).expect_err("usage error");
    assert_eq!(err.exit_code(), 2);
    // Help and version, printed on stdout, are `Outcome::Help`: tests/it/exit.rs.
}

#[test]
fn the_printer_escapes_each_line_and_names_each_cause() {
    let err = Error::Io {
        what: "cannot write `r\u{1b}]0;x\u{7}.txt`".into(),
        source: io::Error::other("disk\nfull"),
    };
    assert_eq!(
        format(&err),
        "error: cannot write `r\\x1b]0;x\\x07.txt`\ncaused by: disk\\nfull\n"
    );
    let bare = Error::Usage("bad flag".into());
    assert_eq!(format(&bare), "error: bad flag\n");
}

#[test]
fn durations_and_headers_are_refused_by_clap_naming_the_flag() {
    use clap::Parser;
    let parse = |args: &[&str]| crate::cli::Cli::try_parse_from(args);
    for (args, flag) in [
        (
            &["mcptape", "call", "s.t", "--timeout", "0"][..],
            "--timeout",
        ),
        (
            &[
                "mcptape",
                "proxy",
                "--listen",
                "0",
                "--header-timeout",
                "0",
                "--",
                "x",
            ][..],
            "--header-timeout",
        ),
        (
            &[
                "mcptape",
                "proxy",
                "--listen",
                "0",
                "--max-connections",
                "0",
                "--",
                "x",
            ][..],
            "--max-connections",
        ),
        (
            &[
                "mcptape", "proxy", "--url", "http://h", "--header", "no colon",
            ][..],
            "--header",
        ),
    ] {
        let err = parse(args).expect_err(flag);
        assert_eq!(
            err.kind(),
            clap::error::ErrorKind::ValueValidation,
            "{flag}"
        );
        assert!(err.to_string().contains(&format!("'{flag}")), "{err}");
    }
    let ok = parse(&[
        "mcptape",
        "proxy",
        "--url",
        "http://h",
        "--header",
        " Authorization :  Bearer x ",
    ])
    .expect("a header");
    let crate::cli::Command::Proxy(proxy) = ok.command else {
        panic!("proxy");
    };
    assert_eq!(
        proxy.headers,
        [("Authorization".to_owned(), "Bearer x".to_owned())]
    );
}
