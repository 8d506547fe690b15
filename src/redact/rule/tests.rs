use super::*;
use crate::redact::Redactor;
use crate::redact::rules::key_providers;

#[test]
fn every_rule_reads_back_from_its_name() {
    let all: Vec<Rule> = GENERIC
        .into_iter()
        .chain(key_providers().into_iter().map(Rule::Key))
        .collect();
    assert!(all.len() > GENERIC.len() + 50, "{} rules", all.len());
    for rule in &all {
        assert_eq!(rule.name().parse::<Rule>(), Ok(*rule), "{rule}");
        assert_eq!(rule.to_string(), rule.name());
    }
    let mut names: Vec<&str> = all.iter().map(|r| r.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all.len(), "every rule has its own name");
    assert_eq!(
        "no such rule".parse::<Rule>(),
        Err(UnknownRule("no such rule".into()))
    );
}

#[test]
fn the_generic_rules_keep_their_report_texts() {
    let texts: Vec<&str> = GENERIC.iter().map(|r| r.name()).collect();
    assert_eq!(
        texts,
        [
            "credential name",
            "credential in JSON text",
            "bearer credential",
            "basic credential",
            "JWT",
            "URL user:password",
            "PEM private key",
            "credential URL parameter",
            "credential assignment",
            "MCPTAPE_REDACT value",
        ]
    );
}

/// Each generic rule is the one `findings` reports for a secret only it sees.
#[test]
fn findings_name_the_rule_that_saw_the_secret() {
    let r = Redactor::new(&["literal-secret-value".to_owned()]);
    let jwt = format!(
        "eyJ{}.eyJ{}.{}",
        "hbGciOiJIUzI1NiJ9", "zdWIiOiIxMjM0NTY3ODkwIn0", "sig_nature"
    );
    let cases: [(String, Rule); 9] = [
        (r#"{"password":"x"}"#.into(), Rule::CredentialName),
        // In JSON text, `findings` names the inner rule (the writer's change is reported
        // as `credential in JSON text`).
        (
            r#"{"t":"{\"token\":\"abc\"}"}"#.into(),
            Rule::CredentialName,
        ),
        (
            r#"{"t":"Bearer abcdefGHIJ1234567890"}"#.into(),
            Rule::Bearer,
        ),
        (r#"{"t":"Basic dXNlcjpQYXNzMTIz"}"#.into(), Rule::Basic),
        (format!(r#"{{"t":"{jwt}"}}"#), Rule::Jwt),
        (
            r#"{"t":"see https://bob:hunter2@example.com/x"}"#.into(),
            Rule::UrlUserInfo,
        ),
        (
            r#"{"t":"https://h/p?access_token=abcdef123"}"#.into(),
            Rule::UrlParameter,
        ),
        (
            r#"{"t":"login with secret=abcdef123"}"#.into(),
            Rule::Assignment,
        ),
        (
            r#"{"t":"it is literal-secret-value"}"#.into(),
            Rule::Literal,
        ),
    ];
    for (msg, rule) in cases {
        let found = r.findings(&msg);
        assert_eq!(
            found.iter().map(|f| f.rule).collect::<Vec<_>>(),
            [rule],
            "{msg}"
        );
    }
}
