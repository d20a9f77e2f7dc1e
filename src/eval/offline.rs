//! The methods of `c2s eval` that need no model: the offline navigator (with and without its
//! fallback) and the flat baselines `bm25`, `dense` and `hybrid`, scored on one query.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use super::metrics::{exact_match, hit_at, mrr_at, ndcg_at, recall_at, token_f1};
use super::{Query, QueryResult};
use crate::retrieval::{rrf, top_k};
use crate::serve::answer::extractive_answer;
use crate::serve::compiled::Compiled;
use crate::serve::navigator::{NavParams, Navigator};

/// Indexes built once per evaluation.
pub struct Context<'a> {
    pub a: &'a Compiled,
    nav: Navigator<'a>,
    pub params: NavParams,
    alias: HashMap<String, String>,
    top_skill: HashMap<String, String>,
}

impl<'a> Context<'a> {
    pub fn new(a: &'a Compiled, params: NavParams) -> Context<'a> {
        let mut alias = HashMap::new();
        for d in &a.docs {
            // A gold id may name a document by its source path (a docs repo's page).
            alias.insert(d.source.clone(), d.id.clone());
            for x in &d.aliases {
                alias.insert(x.clone(), d.id.clone());
            }
        }
        let mut top_skill = HashMap::new();
        for &r in &a.tree.roots {
            for d in a.tree.descendant_docs(r) {
                top_skill.insert(a.docs[d].id.clone(), a.tree.nodes[r].path.clone());
            }
        }
        Context {
            a,
            nav: Navigator::new(a),
            params,
            alias,
            top_skill,
        }
    }

    /// Gold ids mapped onto the documents they were folded into.
    pub fn canonical_gold(&self, gold: &[String]) -> Vec<String> {
        let mut out: Vec<String> = gold
            .iter()
            .map(|g| self.alias.get(g).unwrap_or(g).clone())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    pub fn ids(&self, idx: &[usize]) -> Vec<String> {
        idx.iter().map(|&d| self.a.docs[d].id.clone()).collect()
    }

    /// One offline method on one query.
    pub fn run(&self, method: &str, q: &Query, qv: &[f32], gold: &[String]) -> QueryResult {
        let clock = Instant::now();
        let mut extra = BTreeMap::new();
        let (ids, answer, bytes, routed, path) = match method {
            "navigator" | "navigator+fallback" => {
                let p = NavParams {
                    fallback: method.ends_with("fallback"),
                    ..self.params
                };
                let r = self.nav.navigate(&q.question, qv, &p);
                if p.fallback {
                    extra.insert("fell_back".to_string(), f64::from(u8::from(r.fell_back)));
                }
                let routed = gold.iter().any(|g| {
                    self.top_skill
                        .get(g)
                        .is_some_and(|s| r.root_beam.contains(s))
                });
                let bytes = r.nav_bytes + r.doc_bytes;
                (r.ids, r.answer, bytes, Some(routed), r.path)
            }
            flat => {
                let ranking = self.flat(flat, &q.question, qv);
                let fetched: Vec<usize> = ranking.iter().take(self.params.fetch).copied().collect();
                let answer = extractive_answer(
                    &q.question,
                    fetched.iter().map(|&d| self.a.docs[d].text.as_str()),
                );
                let bytes = fetched.iter().map(|&d| self.a.docs[d].text.len()).sum();
                (self.ids(&ranking), answer, bytes, None, Vec::new())
            }
        };
        let mut r = QueryResult::scored(q, method, ids, Some(answer), gold);
        r.metrics.extend(extra);
        r.bytes_read = bytes;
        r.seconds = clock.elapsed().as_secs_f64();
        r.routed = routed;
        r.path = path;
        r
    }

    /// A flat ranking (`bm25`, `dense` or `hybrid`) of the first `k` documents.
    pub fn flat(&self, method: &str, question: &str, qv: &[f32]) -> Vec<usize> {
        let k = self.params.k;
        let s = self.nav.doc_scores(question, qv);
        let bm25 = || top_k(&s.text, 100);
        let dense = || top_k(&s.dense, 100);
        let mut r = match method {
            "bm25" => bm25(),
            "dense" => dense(),
            _ => rrf(&[bm25(), dense()], 60.0)
                .into_iter()
                .map(|x| x.0)
                .collect(),
        };
        r.truncate(k);
        r
    }
}

/// The retrieval and answer metrics of a ranking and an answer.
pub fn scores(
    ids: &[String],
    answer: Option<&str>,
    q: &Query,
    gold: &[String],
) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    for (name, v) in [
        ("recall@5", recall_at(ids, gold, 5)),
        ("hit@5", hit_at(ids, gold, 5)),
        ("mrr@10", mrr_at(ids, gold, 10)),
        ("ndcg@10", ndcg_at(ids, gold, 10)),
    ] {
        if let Some(v) = v {
            m.insert(name.to_string(), v);
        }
    }
    if let (Some(pred), Some(gold_answer)) = (answer, &q.answer) {
        m.insert("token_f1".into(), token_f1(pred, gold_answer));
        m.insert("exact_match".into(), exact_match(pred, gold_answer));
    }
    m
}
