//! The summary of an evaluation: per-method means with bootstrap intervals, the navigator
//! against the best flat baseline, and the agent against the other answering methods.

use std::collections::BTreeMap;

use super::answer::ANSWERING;
use super::bootstrap::{Comparison, mean_ci, paired_bootstrap};
use super::{FLAT, METRICS, QueryResult, Summary};

/// Resamples and seed of every bootstrap.
const RESAMPLES: usize = 10_000;
const SEED: u64 = 42;

/// Metrics whose mean gets an interval.
const WITH_INTERVAL: &[&str] = &[
    "recall@5",
    "token_f1",
    "citation_precision",
    "citation_recall",
    "opened_recall",
    "factuality",
    "context_recall",
    "hallucination",
];

pub fn summarize(results: &[QueryResult], methods: &[String]) -> BTreeMap<String, Summary> {
    let mut out = BTreeMap::new();
    for m in methods {
        let rs: Vec<&QueryResult> = results.iter().filter(|r| &r.method == m).collect();
        let mut s = Summary {
            queries: rs.len(),
            ..Summary::default()
        };
        let mut names: Vec<&String> = rs.iter().flat_map(|r| r.metrics.keys()).collect();
        names.sort();
        names.dedup();
        for name in names {
            let vals: Vec<f64> = rs
                .iter()
                .filter_map(|r| r.metrics.get(name).copied())
                .collect();
            s.means.insert(
                name.clone(),
                vals.iter().sum::<f64>() / vals.len().max(1) as f64,
            );
            if WITH_INTERVAL.contains(&name.as_str()) {
                s.intervals
                    .insert(name.clone(), mean_ci(&vals, RESAMPLES, SEED));
            }
        }
        let n = rs.len().max(1) as f64;
        s.bytes_per_query = rs.iter().map(|r| r.bytes_read as f64).sum::<f64>() / n;
        s.ms_per_query = rs.iter().map(|r| r.seconds * 1000.0).sum::<f64>() / n;
        let routed: Vec<bool> = rs.iter().filter_map(|r| r.routed).collect();
        if !routed.is_empty() {
            s.routing_accuracy =
                Some(routed.iter().filter(|&&x| x).count() as f64 / routed.len() as f64);
        }
        out.insert(m.clone(), s);
    }
    out
}

fn per_query(results: &[QueryResult], method: &str, metric: &str) -> Vec<f64> {
    results
        .iter()
        .filter(|r| r.method == method)
        .map(|r| r.metrics.get(metric).copied().unwrap_or(0.0))
        .collect()
}

/// `method` against the best flat baseline, per metric.
pub fn compare(
    results: &[QueryResult],
    summaries: &BTreeMap<String, Summary>,
    methods: &[String],
    method: &str,
) -> BTreeMap<String, (String, Comparison)> {
    let mut out = BTreeMap::new();
    if !methods.iter().any(|m| m == method) {
        return out;
    }
    for metric in METRICS.iter().chain(&["token_f1"]) {
        let best = methods
            .iter()
            .filter(|m| FLAT.contains(&m.as_str()))
            .filter_map(|m| summaries[m].means.get(*metric).map(|v| (m, *v)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((flat, _)) = best {
            let c = paired_bootstrap(
                &per_query(results, method, metric),
                &per_query(results, flat, metric),
                RESAMPLES,
                SEED,
            );
            out.insert(metric.to_string(), (flat.clone(), c));
        }
    }
    out
}

/// `agent` and `guided` against the other answering methods, on the answer and citation
/// metrics, over the questions both answered; keys are `<other>: <metric>` for `agent` and
/// `guided vs <other>: <metric>` for `guided`.
pub fn compare_answers(
    results: &[QueryResult],
    methods: &[String],
) -> BTreeMap<String, (String, Comparison)> {
    let mut out = BTreeMap::new();
    for lead in ["agent", "guided"] {
        if !methods.iter().any(|m| m == lead) {
            continue;
        }
        for other in ANSWERING.iter().filter(|m| **m != lead) {
            if !methods.iter().any(|m| m == other) || (lead == "guided" && *other == "agent") {
                continue;
            }
            for metric in ["token_f1", "citation_recall", "factuality"] {
                let a = per_query(results, lead, metric);
                let b = per_query(results, other, metric);
                let has = results
                    .iter()
                    .any(|r| r.method == lead && r.metrics.contains_key(metric));
                if has && a.len() == b.len() {
                    let c = paired_bootstrap(&a, &b, RESAMPLES, SEED);
                    let key = match lead {
                        "agent" => format!("{other}: {metric}"),
                        _ => format!("{lead} vs {other}: {metric}"),
                    };
                    out.insert(key, (other.to_string(), c));
                }
            }
        }
    }
    out
}
