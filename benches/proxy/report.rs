//! The bench's report: rows per mode and binary, each binary's added latency over
//! direct pipes and its ratios to the relay's, as JSON or as a table with the binaries
//! side by side.

use serde_json::{Map, Value, json};

use crate::{Bin, Figures, Kind, RELAY_MODE, Table, median};

fn figures(table: &Table, kind: Kind, bin: Option<usize>) -> Option<&Figures> {
    let bin = if kind.floor() { None } else { bin };
    table
        .iter()
        .find(|c| c.0 == kind && c.1 == bin)
        .map(|c| &c.2)
}

fn row(kind: Kind, bin: Option<&Bin>, f: &Figures) -> Value {
    let p = |q: f64| f.small(q);
    json!({
        "mode": kind.name(),
        "binary": bin.map(|b| b.label),
        "small_rtt_us": {"p50": p(0.5), "p90": p(0.9), "p99": p(0.99)},
        "mb1_mbps": median(&f.mb1_mbps),
        "mb16_mbps": median(&f.mb16_mbps),
        "first_answer_ms": median(&f.first_ms),
        "peak_rss_kb": f.rss_kb,
    })
}

/// One binary's ratios: the added latency per round trip over direct pipes, and each
/// mode's added latency ÷ the relay's.
fn ratios(table: &Table, bin: usize) -> Value {
    let get = |k: Kind| figures(table, k, Some(bin));
    let q = |k: Kind, q: f64| get(k).map_or(f64::NAN, |f| f.small(q));
    let added = |k: Kind, p: f64| q(k, p) - q(Kind::Direct, p);
    let vs_relay = |k: Kind, p: f64| added(k, p) / added(Kind::Relay, p);
    let mb = |k: Kind, big: bool| {
        get(k).map_or(f64::NAN, |f| {
            median(if big { &f.mb16_mbps } else { &f.mb1_mbps })
        })
    };
    let first = |k: Kind| get(k).map_or(f64::NAN, |f| median(&f.first_ms));
    let proxy = get(Kind::Proxy).expect("the proxy row");
    let mut added_us = Map::new();
    for k in Kind::ALL.into_iter().filter(|&k| k != Kind::Direct) {
        if get(k).is_some() {
            added_us.insert(
                k.name().into(),
                json!({"p50": added(k, 0.5), "p99": added(k, 0.99)}),
            );
        }
    }
    let mut r = json!({
        "added_latency_us": added_us,
        "passthrough_overhead_vs_relay_p50": vs_relay(Kind::Proxy, 0.5),
        "passthrough_overhead_vs_relay_p99": vs_relay(Kind::Proxy, 0.99),
        "record_overhead_vs_relay_p50": vs_relay(Kind::Record, 0.5),
        "record_overhead_vs_relay_p99": vs_relay(Kind::Record, 0.99),
        "record_mb1_vs_relay": mb(Kind::Record, false) / mb(Kind::Relay, false),
        "record_mb16_vs_relay": mb(Kind::Record, true) / mb(Kind::Relay, true),
        "first_answer_proxy_minus_direct_ms": first(Kind::Proxy) - first(Kind::Direct),
        "replay_latency_vs_direct_p50": q(Kind::Replay, 0.5) / q(Kind::Direct, 0.5),
        "call_record_ms": median(&proxy.call_record_ms),
        "call_replay_ms": median(&proxy.call_replay_ms),
    });
    if get(Kind::Lines).is_some() {
        r["lines_passthrough_overhead_vs_relay_p50"] = json!(vs_relay(Kind::Lines, 0.5));
        r["lines_record_overhead_vs_relay_p50"] = json!(vs_relay(Kind::LinesRecord, 0.5));
        r["lines_record_overhead_vs_relay_p99"] = json!(vs_relay(Kind::LinesRecord, 0.99));
    }
    r
}

/// The whole run as one document: rows per mode and binary, ratios per binary, and the
/// modes a binary skipped.
pub(crate) fn summarize(bins: &[Bin], table: &Table) -> Value {
    let rows: Vec<Value> = table
        .iter()
        .map(|(k, b, f)| row(*k, b.map(|b| &bins[b]), f))
        .collect();
    let mut by_bin = Map::new();
    for (i, b) in bins.iter().enumerate() {
        by_bin.insert(b.label.into(), ratios(table, i));
    }
    let skipped: Vec<Value> = bins
        .iter()
        .filter(|b| !b.lines)
        .map(|b| json!({"binary": b.label, "path": b.path, "modes": [Kind::Lines.name(), Kind::LinesRecord.name()],
            "why": format!("the binary does not read {RELAY_MODE}")}))
        .collect();
    let binaries: Vec<Value> = bins
        .iter()
        .map(|b| json!({"label": b.label, "path": b.path}))
        .collect();
    json!({"binaries": binaries, "modes": rows, "ratios": by_bin, "skipped": skipped})
}

/// `values` joined by ` / ` (before / after), `—` where a binary has no figure.
fn cell(values: &[Option<f64>], decimals: usize) -> String {
    let one = |v: &Option<f64>| match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => "—".to_owned(),
    };
    values.iter().map(one).collect::<Vec<_>>().join(" / ")
}

/// A figure of `mode` for each binary, read from the document's rows (a floor's row is
/// every binary's).
fn across(doc: &Value, bins: &[Bin], kind: Kind, pick: &dyn Fn(&Value) -> f64) -> Vec<Option<f64>> {
    let rows = doc["modes"].as_array().expect("rows");
    let find = |label: Option<&str>| {
        rows.iter()
            .find(|r| r["mode"] == kind.name() && r["binary"].as_str() == label)
            .map(pick)
    };
    if kind.floor() {
        return vec![find(None)];
    }
    bins.iter().map(|b| find(Some(b.label))).collect()
}

pub(crate) fn print_text(bins: &[Bin], doc: &Value) {
    let labels: Vec<&str> = bins.iter().map(|b| b.label).collect();
    if bins.len() > 1 {
        println!(
            "each cell: {} (interleaved in one run)\n",
            labels.join(" / ")
        );
    }
    println!(
        "{:<16} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13} {:>15}",
        "mode",
        "p50 µs",
        "p90 µs",
        "p99 µs",
        "1MB MB/s",
        "16MB MB/s",
        "1st answer ms",
        "peak RSS MB"
    );
    for kind in Kind::ALL {
        let f = |pick: &dyn Fn(&Value) -> f64| across(doc, bins, kind, pick);
        if f(&|_| 0.0).iter().all(Option::is_none) {
            continue;
        }
        let vals = [
            cell(&f(&|r| num(&r["small_rtt_us"]["p50"])), 1),
            cell(&f(&|r| num(&r["small_rtt_us"]["p90"])), 1),
            cell(&f(&|r| num(&r["small_rtt_us"]["p99"])), 1),
            cell(&f(&|r| num(&r["mb1_mbps"])), 0),
            cell(&f(&|r| num(&r["mb16_mbps"])), 0),
            cell(&f(&|r| num(&r["first_answer_ms"])), 2),
            cell(&f(&|r| num(&r["peak_rss_kb"]) / 1024.0), 1),
        ];
        println!(
            "{:<16} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13} {:>15}",
            kind.name(),
            vals[0],
            vals[1],
            vals[2],
            vals[3],
            vals[4],
            vals[5],
            vals[6]
        );
    }
    print_ratios(bins, doc);
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn print_ratios(bins: &[Bin], doc: &Value) {
    let per = |pick: &dyn Fn(&Value) -> Option<f64>| -> Vec<Option<f64>> {
        bins.iter().map(|b| pick(&doc["ratios"][b.label])).collect()
    };
    println!(
        "\nadded latency per round trip over direct pipes (µs), and ÷ the relay's added latency:"
    );
    println!(
        "  {:<16} {:>15} {:>15} {:>13} {:>13}",
        "mode", "added p50", "added p99", "÷ relay p50", "÷ relay p99"
    );
    let targets = [
        (Kind::Relay, "the floor"),
        (Kind::Proxy, "target ≤ 1.2 ×"),
        (Kind::Record, "target ≤ 1.5 ×"),
        (Kind::Replay, "no server"),
        (Kind::Lines, "target ≤ 1.2 ×"),
        (Kind::LinesRecord, "target ≤ 1.5 ×"),
    ];
    for (kind, note) in targets {
        let added =
            |q: &'static str| per(&move |r: &Value| r["added_latency_us"][kind.name()][q].as_f64());
        let relay = |q: &'static str| {
            per(&move |r: &Value| {
                Some(
                    r["added_latency_us"][kind.name()][q].as_f64()?
                        / r["added_latency_us"]["relay"][q].as_f64()?,
                )
            })
        };
        if added("p50").iter().all(Option::is_none) {
            continue;
        }
        println!(
            "  {:<16} {:>15} {:>15} {:>13} {:>13}   {note}",
            kind.name(),
            cell(&added("p50"), 1),
            cell(&added("p99"), 1),
            cell(&relay("p50"), 2),
            cell(&relay("p99"), 2),
        );
    }
    println!("\nratios (targets in docs/PERFORMANCE.md):");
    let first = &doc["ratios"][bins[bins.len() - 1].label];
    for (k, v) in first.as_object().into_iter().flatten() {
        if v.is_number() {
            let key = k.clone();
            println!(
                "  {k:<40} {}",
                cell(&per(&move |r: &Value| r[&key].as_f64()), 2)
            );
        }
    }
    println!();
    for s in doc["skipped"].as_array().into_iter().flatten() {
        println!(
            "skipped for {} ({}): line modes, {}",
            s["binary"].as_str().unwrap_or(""),
            s["path"].as_str().unwrap_or(""),
            s["why"].as_str().unwrap_or("")
        );
    }
}
