//! Verify-and-repartition of one level: the model's review (the level's groups, in parts that fit
//! a small model's context, members named by short keys), or the offline form: clusters whose
//! labels collide are merged when they are close and small enough together.

use std::collections::BTreeMap;

use crate::db::cache::KeyParts;
use crate::db::exec::{Executor, Json, Maybe, Plan, Vet};
use crate::error::BuildError;
use crate::llm::{Change, Llm, RepartitionGroup, RepartitionInput};
use crate::matrix::simd::dot;
use crate::stage::fallback::{Item, or_fallback};

/// Version of the repartition stage's memo keys (2: members named `m1`, `m2`, … in parts).
const REPARTITION_VERSION: u32 = 2;

/// Characters of groups one review request shows at most (about 3,000–4,000 tokens, so the
/// request fits a small model's 8,192-token context with the prompt and the answer).
pub const REVIEW_CHARS: usize = 12_000;

/// What verify-and-repartition changes on one level.
#[derive(Debug, Default)]
pub struct RepartitionPlan {
    /// `(member row, to group)`.
    pub moves: Vec<(usize, usize)>,
    /// `(keep, absorb)` group pairs.
    pub merges: Vec<(usize, usize)>,
}

/// One group as the review sees it: label, summary, and `(member row, title)`.
pub struct ReviewGroup {
    pub label: String,
    pub summary: String,
    pub members: Vec<(usize, String)>,
}

/// Consecutive groups in parts of at most `REVIEW_CHARS` rendered characters (a group larger
/// than that is a part of its own).
fn parts(groups: &[ReviewGroup]) -> Vec<std::ops::Range<usize>> {
    let size = |g: &ReviewGroup| {
        g.label.len()
            + g.summary.len()
            + 40
            + g.members.iter().map(|m| m.1.len() + 8).sum::<usize>()
    };
    let mut out = Vec::new();
    let (mut start, mut used) = (0, 0);
    for (i, g) in groups.iter().enumerate() {
        let s = size(g);
        if i > start && used + s > REVIEW_CHARS {
            out.push(start..i);
            start = i;
            used = 0;
        }
        used += s;
    }
    if start < groups.len() {
        out.push(start..groups.len());
    }
    out
}

/// The model's validated changes to a level (memoized per part as stage `repartition`), with
/// moves and merges in the level's own group numbers.
pub fn review(
    groups: &[ReviewGroup],
    max_size: usize,
    level: usize,
    llm: &dyn Llm,
    exec: &mut Executor,
) -> Result<RepartitionPlan, BuildError> {
    let ranges = parts(groups);
    let requests: Vec<(String, RepartitionInput, Vec<usize>)> = ranges
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut rows = Vec::new();
            let part: Vec<RepartitionGroup> = groups[r.clone()]
                .iter()
                .map(|g| RepartitionGroup {
                    label: g.label.clone(),
                    summary: g.summary.clone(),
                    members: g
                        .members
                        .iter()
                        .map(|(row, title)| {
                            rows.push(*row);
                            (format!("m{}", rows.len()), title.clone())
                        })
                        .collect(),
                })
                .collect();
            let subject = if ranges.len() == 1 {
                format!("level {level} grouping")
            } else {
                format!("level {level} grouping, part {} of {}", k + 1, ranges.len())
            };
            (
                subject,
                RepartitionInput {
                    groups: part,
                    max_size,
                },
                rows,
            )
        })
        .collect();
    let sink = exec.warnings.clone();
    let answers: Vec<Maybe<Json<Vec<Change>>>> = exec.run(
        "repartition",
        &requests,
        |(subject, req, _)| {
            let text = req.render();
            Plan {
                subject: subject.clone(),
                parts: KeyParts {
                    stage: "repartition".into(),
                    stage_version: REPARTITION_VERSION,
                    prompt: llm.prompt_version("repartition"),
                    model: llm.stage_model("repartition"),
                    inputs: vec![crate::hash::content_hash(
                        format!("{max_size}\n{text}").as_bytes(),
                    )],
                },
                input_chars: text.len(),
            }
        },
        |(subject, req, _)| {
            let changes = llm.repartition(req).map(Option::unwrap_or_default);
            let context = format!("repartition of the {subject}");
            let item = Item {
                file: subject,
                what: "repartition",
                instead: "keeping the clusters as they are",
                context: &context,
            };
            or_fallback(changes, item, &sink, || Ok(Vec::new()))
        },
        // Moves and merges of existing groups: a stored answer must name only those.
        |(_, req, _), changes| match req.validate(&changes.value.0) {
            Ok(()) => Vet::Keep,
            Err(why) => Vet::Reject(why),
        },
    )?;
    let mut plan = RepartitionPlan::default();
    for ((range, (_, _, rows)), answer) in ranges.iter().zip(&requests).zip(answers) {
        for c in answer.value.0 {
            match c {
                Change::Move { item, to } => {
                    let row = item
                        .strip_prefix('m')
                        .and_then(|n| n.parse::<usize>().ok())
                        .and_then(|n| rows.get(n.checked_sub(1)?));
                    if let Some(&row) = row {
                        plan.moves.push((row, range.start + to));
                    }
                }
                Change::Merge { a, b } => plan.merges.push((range.start + a, range.start + b)),
            }
        }
    }
    Ok(plan)
}

/// Clusters with the same label merge when their centroids are at least this similar.
pub const MERGE_COSINE: f32 = 0.6;

/// Pairs `(keep, absorb)` to merge. Each cluster takes part in at most one merge, and a merged
/// cluster stays within `max_size` members. Deterministic: lowest indices first.
pub fn plan_merges(
    labels: &[String],
    centroids: &[Vec<f32>],
    sizes: &[usize],
    max_size: usize,
) -> Vec<(usize, usize)> {
    let mut by_label: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, l) in labels.iter().enumerate() {
        by_label.entry(l.as_str()).or_default().push(i);
    }
    let mut used = vec![false; labels.len()];
    let mut merges = Vec::new();
    for group in by_label.values().filter(|g| g.len() > 1) {
        for (x, &a) in group.iter().enumerate() {
            for &b in &group[x + 1..] {
                if used[a] || used[b] || sizes[a] + sizes[b] > max_size {
                    continue;
                }
                if cosine(&centroids[a], &centroids[b]) >= MERGE_COSINE {
                    used[a] = true;
                    used[b] = true;
                    merges.push((a, b));
                }
            }
        }
    }
    merges
}

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let d = dot(a, b);
    let n = (dot(a, a) * dot(b, b)).sqrt();
    if n > 0.0 { d / n } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_levels_are_reviewed_in_parts() {
        let group = |n: usize| ReviewGroup {
            label: "billing".into(),
            summary: "Plans and invoices.".into(),
            members: (0..n)
                .map(|i| (i, format!("A title of about forty characters {i:03}")))
                .collect(),
        };
        let small: Vec<ReviewGroup> = (0..5).map(|_| group(5)).collect();
        assert_eq!(parts(&small), vec![0..5]);
        let big: Vec<ReviewGroup> = (0..40).map(|_| group(20)).collect();
        let p = parts(&big);
        assert!(p.len() > 1 && p[0].start == 0 && p.last().unwrap().end == 40);
        assert!(p.windows(2).all(|w| w[0].end == w[1].start), "{p:?}");
        assert_eq!(
            parts(&[group(2000)]),
            vec![0..1],
            "a huge group is a part of its own"
        );
    }

    #[test]
    fn merges_close_duplicates_only() {
        let labels: Vec<String> = ["a", "b", "a", "a"].iter().map(|s| s.to_string()).collect();
        let c = vec![
            vec![1.0, 0.0],
            vec![1.0, 0.0],
            vec![0.9, 0.1],
            vec![0.0, 1.0],
        ];
        assert_eq!(plan_merges(&labels, &c, &[3, 3, 3, 3], 20), vec![(0, 2)]);
        assert!(plan_merges(&labels, &c, &[15, 3, 15, 3], 20).is_empty());
    }
}
