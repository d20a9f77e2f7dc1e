//! Summarize stage: runs each cluster's summary, label and tag calls on its input (made or
//! recalled in `node_input`).

use std::collections::{HashMap, HashSet};

use crate::db::cache::KeyParts;
use crate::db::exec::{Executor, Json, Maybe, Plan, Vet, WarningSink};
use crate::error::BuildError;
use crate::ingest::Document;
use crate::llm::phrases;
use crate::llm::{Card, ClusterInput, Extractive, Llm, LlmError, Stored};
use crate::stage::fallback::{Item, or_fallback};
use crate::stage::node_input::{NodeInput, Sources, cluster_input, node_inputs};
use crate::text::clip_chars;
use crate::tree::Tags;
use crate::tree::Tree;

/// Version of the summary/label/tags key layout.
pub const SUMMARY_VERSION: u32 = 1;

/// `input` (of `node`, without names: its backend does not read marks) with a leaf's members'
/// names, for the extractive tags a model's failed answer falls back to.
fn with_names(input: &ClusterInput, from: Sources, node: usize) -> ClusterInput {
    if !input.leaf {
        return input.clone();
    }
    let mut out = cluster_input(from.tree, node, from.docs, from.cards, true);
    out.avoid = input.avoid.clone();
    out
}

fn key(stage: &str, llm: &dyn Llm, inputs: Vec<String>) -> KeyParts {
    KeyParts {
        stage: stage.into(),
        stage_version: SUMMARY_VERSION,
        prompt: llm.prompt_version(stage),
        model: llm.stage_model(stage),
        inputs,
    }
}

/// Cards [`Corpus::brand`] reads for brand words, at most (evenly spaced in corpus order).
const BRAND_SAMPLE: usize = 1000;

/// The documents and their cards that a build summarizes groups of, and the brand words their
/// cards hold (found once per build, for every level).
pub struct Corpus<'a> {
    pub docs: &'a [Document],
    pub cards: &'a [Card],
    brand: std::sync::OnceLock<Vec<String>>,
}

impl<'a> Corpus<'a> {
    pub fn new(docs: &'a [Document], cards: &'a [Card]) -> Corpus<'a> {
        Corpus {
            docs,
            cards,
            brand: Default::default(),
        }
    }

    /// The brand words that most documents' cards (title, one-line and phrases) hold.
    fn brand(&self) -> &[String] {
        self.brand.get_or_init(|| {
            let step = self.cards.len().div_ceil(BRAND_SAMPLE).max(1);
            let heads = self.cards.iter().step_by(step).map(|c| c.render());
            phrases::brand_words(heads)
        })
    }
}

/// The words most groups of a level share (see [`ClusterInput::avoid`]), and the corpus's
/// brand words.
fn level_avoid(held: &[&[String]], corpus: &Corpus) -> Vec<String> {
    let mut avoid = corpus.brand().to_vec();
    avoid.extend(phrases::common_of(held));
    avoid.sort();
    avoid.dedup();
    avoid
}

/// Summary, label and tags of `nodes`, through the memo (stages `summary`, `label`, `tags`).
/// `level` holds every node of their level: the extractive label avoids the words most of them
/// share.
pub fn summarize_nodes(
    tree: &mut Tree,
    nodes: &[usize],
    level: &[usize],
    corpus: &Corpus,
    llm: &dyn Llm,
    exec: &mut Executor,
) -> Result<(), BuildError> {
    let (docs, cards) = (corpus.docs, corpus.cards);
    let reads_marks = llm.reads_marks();
    // Read-only until the results are stored.
    let shared: &Tree = tree;
    let from = Sources {
        tree: shared,
        docs,
        cards,
    };
    // Every node's input hash is needed for its keys (most are then found in the memo): a
    // leaf's is recalled by recipe when the last build recorded it, else its input is made.
    let mut inputs = node_inputs(from, nodes, reads_marks, &mut exec.recipes);
    // What the extractive labeller avoids: one list for the whole level.
    let mut avoid: Vec<String> = Vec::new();
    if reads_marks {
        let chosen: HashSet<usize> = nodes.iter().copied().collect();
        let others: Vec<usize> = level
            .iter()
            .copied()
            .filter(|i| !chosen.contains(i))
            .collect();
        let others = node_inputs(from, &others, reads_marks, &mut exec.recipes);
        let held: Vec<&[String]> = inputs.iter().chain(&others).map(|x| &x.held[..]).collect();
        avoid = level_avoid(&held, corpus);
        for x in &mut inputs {
            x.set_avoid(&avoid);
        }
    }
    let sink = exec.warnings.clone();
    // Summaries and tags do not depend on each other: both run before either fails, so in a
    // batched build their requests share one batch.
    let summaries: Result<Vec<Maybe<Json<String>>>, BuildError> = exec.run(
        "summary",
        &inputs,
        |x| Plan {
            subject: x.subject.clone(),
            parts: key("summary", llm, vec![x.hash.clone()]),
            input_chars: x.chars,
        },
        |x| {
            let input = x.input(from, &avoid);
            or_extractive("summary", &x.subject, &sink, llm.summarize(input), || {
                Extractive.summarize(input)
            })
        },
        |x, s| {
            let input = x.input(from, &avoid);
            Vet::from(llm.check_stored(Stored::Summary(input, &s.value.0)))
                .or_stand_in(&s.value.0, || Extractive.summarize(input).ok())
        },
    );
    let leaves: Vec<&NodeInput> = inputs.iter().filter(|x| x.leaf).collect();
    let leaf_tags: Result<Vec<Maybe<Json<Tags>>>, BuildError> = exec.run(
        "tags",
        &leaves,
        |x| Plan {
            subject: x.subject.clone(),
            parts: key("tags", llm, vec![x.hash.clone()]),
            input_chars: x.chars,
        },
        |x| {
            let input = x.input(from, &avoid);
            // Names only where they are read: the extractive tags (a leaf's input then carries
            // them), or a model's fallback to them.
            let tags = llm.tags(input);
            or_extractive("tags", &x.subject, &sink, tags, || {
                if reads_marks {
                    Extractive.tags(input)
                } else {
                    Extractive.tags(&with_names(input, from, x.node))
                }
            })
        },
        |x, t| {
            if reads_marks {
                return Vet::Recompute;
            }
            let input = x.input(from, &avoid);
            Vet::from(llm.check_stored(Stored::Tags(input, &t.value.0)))
                .or_stand_in(&t.value.0, || {
                    Extractive.tags(&with_names(input, from, x.node)).ok()
                })
        },
    );
    let (summaries, leaf_tags) = match (summaries, leaf_tags) {
        (Ok(s), Ok(t)) => (s, t),
        (Err(e), _) | (_, Err(e)) if !matches!(e, BuildError::Pending) => return Err(e),
        _ => return Err(BuildError::Pending),
    };
    let with_summary: Vec<(&NodeInput, &str)> = inputs
        .iter()
        .zip(summaries.iter().map(|s| s.value.0.as_str()))
        .collect();
    // Every node of the level avoids the same words: hashed once.
    let avoid_hash = crate::hash::content_hash(avoid.join(" ").as_bytes());
    let labels: Vec<Maybe<Json<String>>> = exec.run::<_, _, BuildError>(
        "label",
        &with_summary,
        |(x, summary)| {
            let sh = crate::hash::content_hash(summary.as_bytes());
            let mut parts = vec![x.hash.clone(), sh];
            if reads_marks {
                parts.push(avoid_hash.clone());
            }
            Plan {
                subject: x.subject.clone(),
                parts: key("label", llm, parts),
                input_chars: x.chars + summary.len(),
            }
        },
        |(x, summary)| {
            let input = x.input(from, &avoid);
            let label = or_extractive(
                "label",
                &x.subject,
                &sink,
                llm.label(input, summary),
                || Extractive.label(input, summary),
            )?;
            Ok(Maybe {
                value: Json(clean_label(&label.value.0)),
                rejected: label.rejected,
            })
        },
        |(x, summary), label| {
            let input = x.input(from, &avoid);
            Vet::from(llm.check_stored(Stored::Label(input, &label.value.0))).or_stand_in(
                &label.value.0,
                || {
                    Extractive
                        .label(input, summary)
                        .ok()
                        .map(|l| clean_label(&l))
                },
            )
        },
    )?;
    let mut leaf_tags = leaf_tags.into_iter();
    for (pos, &i) in nodes.iter().enumerate() {
        let tags = if inputs[pos].leaf {
            let tags = leaf_tags.next().expect("one tag set per leaf").value.0;
            without_planted_entities(tags, &tree.nodes[i].docs, docs)
        } else {
            aggregate_tags(tree, i)
        };
        let n = &mut tree.nodes[i];
        n.summary = summaries[pos].value.0.clone();
        n.label = labels[pos].value.0.clone();
        n.tags = tags;
    }
    if reads_marks {
        let avoid: HashSet<String> = avoid.into_iter().collect();
        crate::stage::label::distinct_labels(tree, nodes, cards, &avoid);
    }
    Ok(())
}

/// A leaf's tags without the entities that come from its documents' planted sentences rather
/// than their text (see [`crate::planted::Plants`]).
fn without_planted_entities(mut tags: Tags, members: &[usize], docs: &[Document]) -> Tags {
    let plants: Vec<crate::planted::Plants> = members
        .iter()
        .filter_map(|&d| crate::planted::Plants::of(&docs[d].flags, docs[d].nav_text()))
        .collect();
    if plants.is_empty() {
        return tags;
    }
    // An entity that an unflagged member's text holds is that member's, whatever a plant says.
    let others: Vec<String> = members
        .iter()
        .filter(|&&m| docs[m].flags.is_empty())
        .map(|&m| docs[m].nav_text().to_lowercase())
        .collect();
    tags.entities.retain(|e| {
        !plants.iter().any(|p| p.hold_only(e)) || {
            let e = e.to_lowercase();
            others.iter().any(|t| t.contains(&e))
        }
    });
    tags
}

/// The model's result, or (when its answers were unusable) the extractive one.
fn or_extractive<T>(
    stage: &str,
    subject: &str,
    sink: &WarningSink,
    result: Result<T, LlmError>,
    fallback: impl FnOnce() -> Result<T, LlmError>,
) -> Result<Maybe<Json<T>>, BuildError> {
    let context = format!("{stage} of the {subject}");
    let item = Item {
        file: subject,
        what: stage,
        instead: "using the extractive result",
        context: &context,
    };
    or_fallback(result, item, sink, fallback)
}

/// A label of at most 5 words, letters, digits and spaces only.
pub fn clean_label(raw: &str) -> String {
    let words: Vec<String> = raw
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(5)
        .map(str::to_lowercase)
        .collect();
    if words.is_empty() {
        "misc".into()
    } else {
        words.join(" ")
    }
}

/// Tags of a higher node: entities common among its children, doc types of at least a third of them.
fn aggregate_tags(tree: &Tree, node: usize) -> Tags {
    let kids = &tree.nodes[node].children;
    // Per entity: how many children hold it, and its best rank in one (a child lists its
    // entities most mentioned first).
    let mut ent: HashMap<&str, (usize, usize)> = HashMap::new();
    let mut types: HashMap<&str, usize> = HashMap::new();
    for &c in kids {
        for (rank, e) in tree.nodes[c].tags.entities.iter().enumerate() {
            let x = ent.entry(e.as_str()).or_insert((0, rank));
            x.0 += 1;
            x.1 = x.1.min(rank);
        }
        for t in &tree.nodes[c].tags.doc_types {
            *types.entry(t.as_str()).or_insert(0) += 1;
        }
    }
    let mut ents: Vec<(&str, (usize, usize))> = ent.into_iter().collect();
    // Count first, then best rank, then name: independent of the children's order, so a warm
    // start agrees (by name alone, a group's top entities were the alphabet's first).
    ents.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.1.1.cmp(&b.1.1)).then(a.0.cmp(b.0)));
    let mut doc_types: Vec<String> = types
        .into_iter()
        .filter(|(_, c)| c * 3 >= kids.len())
        .map(|(t, _)| t.to_string())
        .collect();
    doc_types.sort();
    Tags {
        entities: ents.into_iter().take(10).map(|e| e.0.to_string()).collect(),
        doc_types,
    }
}

/// The re-embedding text of a node: its summary plus sampled member excerpts.
pub fn reembed_text(tree: &Tree, node: usize, cards: &[Card]) -> String {
    let n = &tree.nodes[node];
    let mut t = format!("{}\n{}\n", n.label, n.summary);
    if n.level == 1 {
        for &d in n.docs.iter().take(5) {
            t.push_str(&format!("{} — {}\n", cards[d].title, cards[d].one_line));
        }
    } else {
        for &c in n.children.iter().take(8) {
            let k = &tree.nodes[c];
            t.push_str(&format!("{}: {}\n", k.label, clip_chars(&k.summary, 160)));
        }
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::Node;

    #[test]
    fn a_parent_lists_its_childrens_most_mentioned_entities_first() {
        let leaf = |entities: &[&str]| Node {
            level: 1,
            tags: Tags {
                entities: entities.iter().map(|e| e.to_string()).collect(),
                doc_types: Vec::new(),
            },
            ..Node::default()
        };
        let mut tree = Tree {
            nodes: vec![
                leaf(&["PagerDuty", "OTLP", "Acme"]),
                leaf(&["Stripe", "Acme", "ALIAS"]),
                Node {
                    level: 2,
                    children: vec![0, 1],
                    ..Node::default()
                },
            ],
            roots: vec![2],
            levels: 2,
        };
        let tags = aggregate_tags(&tree, 2);
        // Held by both first; then by best rank (each child's first), then by name.
        assert_eq!(
            tags.entities,
            ["Acme", "PagerDuty", "Stripe", "OTLP", "ALIAS"]
        );
        tree.nodes[2].children = vec![1, 0];
        assert_eq!(aggregate_tags(&tree, 2), tags);
    }
}
