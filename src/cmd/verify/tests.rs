//! Unit tests of [`super`]: which recorded server `mcptape verify` plays.

use super::*;

fn tape(servers: &[&str]) -> Tape {
    let lines: Vec<String> = servers
        .iter()
        .map(|s| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","_meta":{{"dir":"send","server":"{s}","conn":"{s}-1"}}}}"#
            )
        })
        .collect();
    Tape::parse(Path::new("t.ndjson"), lines.join("\n").as_bytes()).expect("tape")
}

fn usage(result: Result<String>) -> String {
    match result {
        Err(Error::Usage(text)) => text,
        other => panic!("a usage error, not {other:?}"),
    }
}

#[test]
fn the_only_server_is_chosen_and_several_need_server() {
    let path = Path::new("t.ndjson");
    let one = tape(&["a"]);
    assert_eq!(choose_server(&one, path, None).expect("the only one"), "a");
    let two = tape(&["b", "a"]);
    assert_eq!(
        choose_server(&two, path, Some(&"b".to_owned())).expect("asked"),
        "b"
    );
    assert_eq!(
        usage(choose_server(&two, path, None)),
        "the tape `t.ndjson` holds several servers (a, b): choose one with --server"
    );
    assert_eq!(
        usage(choose_server(&two, path, Some(&"c".to_owned()))),
        "the tape `t.ndjson` holds no connection of server `c`; it holds: a, b"
    );
    assert_eq!(
        usage(choose_server(&tape(&[]), path, None)),
        "the tape `t.ndjson` is empty: there is nothing to verify"
    );
}
