//! `scripts/readability.py` (issue 26's readability report): each metric counted exactly on a
//! hand-made output where half of everything is bad, and the report runs on a real build of the
//! example with the hand-made entity gold list.

use std::process::Command;

use serde_json::Value;

use crate::common::{build_example, repo};

pub fn report(out: &std::path::Path, gold: &std::path::Path) -> Value {
    let o = Command::new("python3")
        .arg(repo().join("scripts/readability.py"))
        .arg(out)
        .arg("--gold")
        .arg(gold)
        .arg("--json")
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn each_metric_counts_what_it_says() {
    let fixture = repo().join("tests/fixtures/readability");
    let r = report(&fixture, &fixture.join("gold.txt"));
    // "billing" is in both member titles; "refunds" in one only.
    assert_eq!(r["labels_shared"], 0.5, "{r}");
    // "Refunds take five days and" stops mid-sentence; group rows and @see rows are not rows.
    assert_eq!(
        (r["rows"].as_u64(), &r["rows_cut"]),
        (Some(2), &Value::from(0.5))
    );
    assert_eq!(r["cards_cut"], 0.5);
    // "Covers billing, refunds and invoices." is a term list; the sentence is not.
    assert_eq!(r["term_lists"], 0.5);
    // "Stripe" is a name; sentence-initial "Install" is not.
    assert_eq!(r["entity_precision"], 0.5);
    assert_eq!(r["entities_not_in_gold"], serde_json::json!(["Install"]));
    // A quoted title is one item of a sentence, whatever its own "and"s: no term list.
    let o = Command::new("python3")
        .current_dir(repo().join("scripts"))
        .args([
            "-c",
            "import readability as r; print(r.is_term_list('Documents such as “Custom domains and TLS” and “Logs and metrics”.'), r.is_term_list('Covers a, b and c.'))",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "False True");
    // A label word counts members, not lines: a title repeated as the page's H1 is one member.
    let o = Command::new("python3")
        .current_dir(repo().join("scripts"))
        .args([
            "-c",
            "import readability as r; print(r.label_ok('refund policy', ['Refund policy\\nRefund policy', 'Two-factor authentication']), r.label_ok('billing', ['Billing\\nRefunds', 'Invoices\\nBilling']))",
        ])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "False True");
}

/// README's command, on a build of the example in a temporary folder.
#[test]
fn the_report_runs_on_a_build_of_the_example() {
    let tmp = tempfile::tempdir().unwrap();
    let (out, _) = build_example(tmp.path());
    let block = crate::common::doc_block("evaluation.md", "**Readability.**", "sh");
    let line = block
        .lines()
        .find(|l| l.starts_with("scripts/readability.py"))
        .expect("README runs the script");
    let args: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(args[1], "examples/out");
    assert_eq!(args[2], "--gold");
    let r = report(&out, &repo().join(args[3]));
    for k in [
        "labels_shared",
        "rows_cut",
        "cards_cut",
        "term_lists",
        "entity_precision",
    ] {
        let v = r[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {r}"));
        assert!((0.0..=1.0).contains(&v), "{k} = {v}");
    }
    assert_eq!(r["rows"], 29, "one row per example document");
}
