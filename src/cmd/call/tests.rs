//! Unit tests of [`super`]: arguments and rendering.

use super::*;
use serde_json::json;

#[test]
fn arguments_are_json_when_they_parse() {
    let args: Vec<String> = [
        "n:5",
        "flag=true",
        "list:[1,2]",
        "obj={\"a\":1}",
        "s:hello world",
        "url=http://x:1/?a=b",
    ]
    .map(String::from)
    .to_vec();
    let got = arguments(Some(r#"{"n":1,"keep":"k"}"#), &args).expect("args");
    assert_eq!(
        Value::Object(got),
        json!({"n":5,"keep":"k","flag":true,"list":[1,2],"obj":{"a":1},"s":"hello world","url":"http://x:1/?a=b"})
    );
    assert!(arguments(None, &["novalue".into()]).is_err());
    assert!(arguments(Some("[1]"), &[]).is_err());
}

#[test]
fn arguments_from_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("v.json");
    std::fs::write(&f, "{\"deep\": [1]}\n").expect("write");
    let got = arguments(None, &[format!("x=@{}", f.display())]).expect("args");
    assert_eq!(got["x"], json!({"deep": [1]}));
    std::fs::write(&f, "plain text\n").expect("write");
    let got =
        arguments(None, &[format!("y=@{}", f.display()), "user:@alice".into()]).expect("args");
    assert_eq!(got["y"], json!("plain text"));
    assert_eq!(got["user"], json!("@alice"));
    let err = arguments(None, &["x=@/nonexistent/file".into()]).expect_err("missing");
    assert!(
        err.to_string().contains("cannot read `/nonexistent/file`"),
        "{err}"
    );
}

#[test]
fn render_is_readable() {
    let r = json!({"content":[{"type":"text","text":"hi"},{"type":"image","mimeType":"image/png","data":"AAAA"},
        {"type":"resource","resource":{"uri":"test://a","text":"body"}}],"structuredContent":{"sum":5}});
    assert_eq!(
        render(&r),
        "hi\n[image: image/png, 4 bytes of base64]\n[resource: test://a]\nbody\nstructured content:\n{\n  \"sum\": 5\n}\n"
    );
}
