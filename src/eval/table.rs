//! The markdown tables `c2s eval` prints: retrieval for every method, then, for the answering
//! methods, answer quality with 95% intervals, citations, cost and time per question.

use super::answer::ANSWERING;
use super::{Report, Summary};

fn mean(s: &Summary, k: &str) -> String {
    s.means
        .get(k)
        .map_or("–".to_string(), |v| format!("{:.3}", v + 0.0))
}

/// `0.412 [0.351, 0.470]`.
fn with_interval(s: &Summary, k: &str) -> String {
    match (s.means.get(k), s.intervals.get(k)) {
        (Some(m), Some((lo, hi))) => format!("{:.3} [{:.3}, {:.3}]", m + 0.0, lo + 0.0, hi + 0.0),
        _ => mean(s, k),
    }
}

/// The markdown printed by `c2s eval`.
pub fn render_table(r: &Report) -> String {
    let mut s = format!(
        "## {} ({} documents, {} queries)\n\n",
        r.dataset,
        r.documents,
        r.summaries.values().map(|s| s.queries).max().unwrap_or(0)
    );
    s.push_str("| method | Recall@5 | Hit@5 | MRR@10 | nDCG@10 | Token F1 | EM | routing acc. | bytes/query | ms/query |\n");
    s.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for (m, sum) in &r.summaries {
        let g = |k: &str| mean(sum, k);
        s.push_str(&format!(
            "| {m} | {} | {} | {} | {} | {} | {} | {} | {:.0} | {:.2} |\n",
            g("recall@5"),
            g("hit@5"),
            g("mrr@10"),
            g("ndcg@10"),
            g("token_f1"),
            g("exact_match"),
            sum.routing_accuracy
                .map_or("–".to_string(), |v| format!("{v:.3}")),
            sum.bytes_per_query,
            sum.ms_per_query
        ));
    }
    s.push_str(&answer_table(r));
    for (method, comparisons) in [
        ("navigator", &r.comparisons),
        ("navigator+fallback", &r.fallback_comparisons),
    ] {
        if comparisons.is_empty() {
            continue;
        }
        s.push_str(&format!("\n{method} vs best flat baseline (paired bootstrap, 10,000 resamples):\n\n| metric | baseline | mean diff | p | verdict |\n|---|---|---|---|---|\n"));
        for (metric, (flat, c)) in comparisons {
            s.push_str(&format!(
                "| {metric} | {flat} | {:+.3} | {:.4} | {} |\n",
                c.mean_diff, c.p_value, c.verdict
            ));
        }
    }
    if !r.answer_comparisons.is_empty() {
        s.push_str("\nagent and guided vs the other answering methods (paired bootstrap, 10,000 resamples):\n\n| method | metric | against | mean diff | p | verdict |\n|---|---|---|---|---|---|\n");
        for (key, (other, c)) in &r.answer_comparisons {
            let metric = key.split_once(": ").map_or(key.as_str(), |x| x.1);
            let lead = if key.starts_with("guided vs ") {
                "guided"
            } else {
                "agent"
            };
            s.push_str(&format!(
                "| {lead} | {metric} | {other} | {:+.3} | {:.4} | {} |\n",
                c.mean_diff, c.p_value, c.verdict
            ));
        }
    }
    s
}

/// The answering methods' table (empty when none ran).
fn answer_table(r: &Report) -> String {
    let rows: Vec<(&str, &Summary)> = ANSWERING
        .iter()
        .filter_map(|m| r.summaries.get(*m).map(|s| (*m, s)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let judged = rows.iter().any(|(_, s)| s.means.contains_key("factuality"));
    let mut s = format!(
        "\nAnswers by {}{}{} (95% bootstrap intervals):\n\n",
        r.model.as_deref().unwrap_or("the model"),
        r.rag_retriever
            .as_deref()
            .map_or(String::new(), |f| format!("; rag reads the top 5 of {f}")),
        r.judge
            .as_deref()
            .map_or(String::new(), |j| format!("; judged by {j}"))
    );
    s.push_str("| method | questions | Token F1 | EM | citation P | citation R | opened R | answered | docs opened | turns | tokens in | tokens out | s/question |");
    if judged {
        s.push_str(" factuality | context recall | hallucination |");
    }
    s.push_str("\n|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    if judged {
        s.push_str("---|---|---|");
    }
    s.push('\n');
    for (m, sum) in rows {
        let g = |k: &str| mean(sum, k);
        let n = |k: &str| {
            sum.means
                .get(k)
                .map_or("–".to_string(), |v| format!("{v:.1}"))
        };
        s.push_str(&format!(
            "| {m} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            sum.queries,
            with_interval(sum, "token_f1"),
            g("exact_match"),
            g("citation_precision"),
            with_interval(sum, "citation_recall"),
            g("opened_recall"),
            g("answered"),
            n("docs_opened"),
            n("turns"),
            sum.means
                .get("input_tokens")
                .map_or("–".to_string(), |v| format!("{v:.0}")),
            sum.means
                .get("output_tokens")
                .map_or("–".to_string(), |v| format!("{v:.0}")),
            n("seconds"),
        ));
        if judged {
            s.push_str(&format!(
                " {} | {} | {} |",
                with_interval(sum, "factuality"),
                g("context_recall"),
                g("hallucination")
            ));
        }
        s.push('\n');
    }
    s
}
