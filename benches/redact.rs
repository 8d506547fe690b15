//! Redaction cost on adversarial inputs: prints MB/s at n = 1 MiB and 4n for each input,
//! so that linear time shows as a steady rate (a quadratic scanner would slow 4x).
//!
//! Run: `cargo bench --bench redact` (`-- --smoke`: 64 KiB and 256 KiB). Figures, not
//! assertions.

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcptape::Redactor;

fn string_message(body: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": body}]}}).to_string()
}

fn repeat_to(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len() + 1)
}

/// Valid JSON: nested objects of a given key, 100 deep, repeated to `bytes`.
fn nested(key: &str, bytes: usize) -> String {
    let one = format!(
        "{}1{}",
        format!("{{\"{key}\":").repeat(100),
        "}".repeat(100)
    );
    let mut out = String::from("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[");
    while out.len() < bytes {
        out.push_str(&one);
        out.push(',');
    }
    out.push_str("1]}");
    out
}

/// Makes an input of about the given size.
type Maker = Box<dyn Fn(usize) -> String>;

fn measure(r: &Redactor, text: &str) -> (f64, Duration) {
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        black_box(r.message(black_box(text)));
        best = best.min(start.elapsed());
    }
    (text.len() as f64 / best.as_secs_f64() / 1e6, best)
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    // The same inputs, 16 times smaller, for CI's smoke run.
    let (small_size, big_size) = if smoke {
        (64 << 10, 256 << 10)
    } else {
        (1 << 20, 4 << 20)
    };
    let r = Redactor::new(&["a-literal-secret".to_owned()]);
    let inputs: Vec<(&str, Maker)> = vec![
        (
            "a:a:a:… in a string",
            Box::new(|n| string_message(&repeat_to("a:", n))),
        ),
        (
            "token=token=… in a string",
            Box::new(|n| string_message(&repeat_to("token=", n))),
        ),
        (
            "Bearer Bearer … in a string",
            Box::new(|n| string_message(&repeat_to("Bearer ", n))),
        ),
        (
            "password: \"… unclosed quotes",
            Box::new(|n| string_message(&repeat_to("password: \"x ", n))),
        ),
        (
            "nested {\"token\": 100 deep",
            Box::new(|n| nested("token", n)),
        ),
        ("nested {\"a\": 100 deep", Box::new(|n| nested("a", n))),
        (
            "JSON text full of secrets",
            Box::new(|n| {
                string_message(&format!(
                    "[{}0]",
                    repeat_to("{\"api_key\":\"sk-proj-abcdefghijklmnopqrstuvwx\"},", n)
                ))
            }),
        ),
        (
            "a provider key after another",
            Box::new(|n| {
                // Fake keys, cut so that this file does not trip secret scanners.
                let keys = [
                    concat!("AKIA", "ABCDEFGHIJKLMNOP"),
                    concat!("sk_", "live_abcDEF0123456789ghiJKL"),
                    concat!(
                        "AKCp",
                        "abcdefghijABCDEFGHIJ0123456789abcdefghij",
                        "ABCDEFGHIJ0123456789abcdefghi"
                    ),
                    concat!("glpat-", "abcDEF0123456789ghij"),
                ];
                string_message(&repeat_to(&format!("{} ", keys.join(" , ")), n))
            }),
        ),
        (
            "prose with the formats' prefixes",
            Box::new(|n| {
                string_message(&repeat_to(
                    "The key-value pattern. See sk-learn, SKU 12, AIza docs, dp.example, en-us. ",
                    n,
                ))
            }),
        ),
        (
            "plain prose, nothing to find",
            Box::new(|n| {
                string_message(&repeat_to(
                    "the quick brown fox jumps over the lazy dog ",
                    n,
                ))
            }),
        ),
    ];
    // What the tap does with one big answer: validate, redact, frame with `_meta`.
    let answer = string_message(&"x".repeat(small_size));
    let meta = mcptape::Meta {
        dir: mcptape::Direction::Recv,
        server: "s".into(),
        ts: Some("2026-11-30T00:00:00.000Z".into()),
        conn: Some("c-1".into()),
        batch: None,
        stream: None,
        source: None,
    };
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        black_box(mcptape::lines::shape(answer.as_bytes()));
        let text = r.message(&answer);
        black_box(mcptape::lines::encode(text.as_bytes(), &meta));
        best = best.min(t.elapsed());
    }
    println!(
        "tap path (validate + redact + frame) of one answer: {:.0} MB/s\n",
        answer.len() as f64 / best.as_secs_f64() / 1e6
    );
    println!(
        "{:<34} {:>12} {:>12} {:>10}",
        "input", "n MB/s", "4n MB/s", "4n/n time"
    );
    for (name, make) in inputs {
        let (small_rate, small) = measure(&r, &make(small_size));
        let (big_rate, big) = measure(&r, &make(big_size));
        println!(
            "{name:<34} {small_rate:>12.1} {big_rate:>12.1} {:>10.2}",
            big.as_secs_f64() / small.as_secs_f64()
        );
    }
}
