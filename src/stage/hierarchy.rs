//! The level loop: cluster, summarize, label, repartition and re-embed, bottom-up, until at most K nodes remain.

use crate::config::Config;
use crate::db::exec::Executor;
use crate::embed::Embedder;
use crate::error::BuildError;
use crate::ingest::Document;
use crate::kmeans::{KmeansBackend, KmeansParams};
use crate::llm::{Card, Llm};
use crate::matrix::Matrix;
use crate::stage::cluster::{
    LevelClusters, LevelParams, cluster_level, clusters_for, order_by_centrality,
};
use crate::stage::embed::embed_texts;
use crate::stage::node_input::node_subject;
use crate::stage::repartition::{RepartitionPlan, ReviewGroup, plan_merges, review};
use crate::stage::summarize::{Corpus, reembed_text, summarize_nodes};
use crate::tree::{Node, Tree};

/// Verify-and-repartition runs on these levels (DESIGN.md §1).
pub const REPARTITION_LEVELS: usize = 2;

/// What the hierarchy computed.
#[derive(Debug, Default, Clone)]
pub struct HierarchyStats {
    pub clusterings: usize,
    pub merges: usize,
    /// Seconds spent per step, summed over levels.
    pub cluster_secs: f64,
    pub summarize_secs: f64,
    pub reembed_secs: f64,
    /// How tight the documents' clusters are as clustering left them (before the merges of
    /// verify-and-repartition): the sum over documents of 1 − the cosine to their cluster's
    /// mean direction (what K-Means lowers; a GPU build is compared with a CPU one by it).
    pub leaf_inertia: f64,
}

/// Everything the level loop reads.
pub struct HierarchyInput<'a> {
    pub docs: &'a [Document],
    pub cards: &'a [Card],
    pub doc_vectors: &'a Matrix,
    pub config: &'a Config,
    pub llm: &'a dyn Llm,
    pub embedder: &'a dyn Embedder,
    pub kmeans: &'a dyn KmeansBackend,
}

/// Builds the whole tree from document vectors.
pub fn build_tree(
    input: &HierarchyInput,
    exec: &mut Executor,
    mut on_level: impl FnMut(usize, usize),
) -> Result<(Tree, HierarchyStats), BuildError> {
    let t = &input.config.tree;
    let mut tree = Tree::default();
    let mut stats = HierarchyStats::default();
    // Level 1 clusters the document vectors themselves (borrowed: at a million documents a copy
    // is 1.5 GB); higher levels cluster the re-embedded nodes below.
    let mut current = std::borrow::Cow::Borrowed(input.doc_vectors);
    let mut below: Vec<usize> = Vec::new();
    let corpus = Corpus::new(input.docs, input.cards);
    let mut level = 1;
    loop {
        let params = LevelParams {
            k: clusters_for(current.rows, t.p, t.k),
            min_cluster_size: t.min_cluster_size,
            tau: t.tau,
            max_stubs: if level == 1 {
                t.max_stubs.unwrap_or(usize::MAX)
            } else {
                0
            },
            p: t.p,
            leaf: level == 1,
            kmeans: KmeansParams {
                k: 0,
                max_iter: input.config.kmeans.max_iter,
                n_init: input.config.kmeans.n_init,
                tol: input.config.kmeans.tol,
                seed: t.seed.wrapping_add(level as u64),
                tau: t.tau,
            },
        };
        let clock = std::time::Instant::now();
        let (mut lc, spread) = cluster_level(&current, &params, input.kmeans);
        stats.clusterings += 1;
        stats.cluster_secs += clock.elapsed().as_secs_f64();
        if level == 1 {
            stats.leaf_inertia = spread;
        }
        let clock = std::time::Instant::now();
        let mut nodes = add_level(&mut tree, &lc, level, &below);
        summarize_nodes(&mut tree, &nodes, &nodes, &corpus, input.llm, exec)?;
        if level <= REPARTITION_LEVELS {
            let plan = repartition_plan(&tree, &lc, &current, &nodes, level, input, exec)?;
            stats.merges += plan.merges.len();
            let merged = repartition(
                &mut tree, &mut lc, &current, &mut nodes, level, &below, &plan,
            );
            // The extractive label reads what the level's groups share, which merges may have
            // changed: every node of the level again (unchanged results come from the memo).
            // A model's results depend on their own group only: the merged ones again.
            let again = if merged.is_empty() || !input.llm.reads_marks() {
                merged
            } else {
                nodes.clone()
            };
            summarize_nodes(&mut tree, &again, &nodes, &corpus, input.llm, exec)?;
        }
        stats.summarize_secs += clock.elapsed().as_secs_f64();
        let clock = std::time::Instant::now();
        let texts: Vec<(String, String)> = nodes
            .iter()
            .map(|&i| {
                (
                    node_subject(&tree, i, input.docs),
                    reembed_text(&tree, i, input.cards),
                )
            })
            .collect();
        current = std::borrow::Cow::Owned(embed_texts("reembed", &texts, input.embedder, exec)?);
        for (row, &i) in nodes.iter().enumerate() {
            tree.nodes[i].vector = current.row(row).to_vec();
        }
        stats.reembed_secs += clock.elapsed().as_secs_f64();
        on_level(level, nodes.len());
        below = nodes;
        if below.len() <= t.k || level >= 64 {
            break;
        }
        level += 1;
    }
    tree.roots = below;
    tree.levels = level;
    tree.fold_single_children(t.k);
    Ok((tree, stats))
}

/// Appends one node per cluster of a level; returns their indices.
fn add_level(tree: &mut Tree, lc: &LevelClusters, level: usize, below: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(lc.groups.len());
    for (g, members) in lc.groups.iter().enumerate() {
        let idx = tree.nodes.len();
        let mut node = Node {
            level,
            ..Node::default()
        };
        if level == 1 {
            node.docs = members.clone();
            node.see_also = lc.stubs[g].clone();
            node.num_documents = members.len();
        } else {
            node.children = members.iter().map(|&m| below[m]).collect();
            node.num_documents = node
                .children
                .iter()
                .map(|&c| tree.nodes[c].num_documents)
                .sum();
            for &c in &node.children {
                tree.nodes[c].parent = Some(idx);
            }
        }
        tree.nodes.push(node);
        out.push(idx);
    }
    out
}

/// The model's validated changes (memoized as stage `repartition`), or for backends that do not
/// review partitions, the offline rule: merge close clusters whose labels collide.
fn repartition_plan(
    tree: &Tree,
    lc: &LevelClusters,
    inputs: &Matrix,
    nodes: &[usize],
    level: usize,
    input: &HierarchyInput,
    exec: &mut Executor,
) -> Result<RepartitionPlan, BuildError> {
    let max_size = 2 * input.config.tree.p;
    if !input.llm.reviews_partitions() {
        let labels: Vec<String> = nodes.iter().map(|&i| tree.nodes[i].label.clone()).collect();
        let centroids: Vec<Vec<f32>> = lc.groups.iter().map(|g| inputs.centroid(g)).collect();
        let sizes: Vec<usize> = lc.groups.iter().map(Vec::len).collect();
        return Ok(RepartitionPlan {
            moves: Vec::new(),
            merges: plan_merges(&labels, &centroids, &sizes, max_size),
        });
    }
    let groups: Vec<ReviewGroup> = lc
        .groups
        .iter()
        .zip(nodes)
        .map(|(members, &i)| ReviewGroup {
            label: tree.nodes[i].label.clone(),
            summary: crate::text::clip_chars(
                crate::text::first_sentence(&tree.nodes[i].summary),
                300,
            )
            .to_string(),
            members: members
                .iter()
                .enumerate()
                .map(|(pos, &m)| {
                    let t = if level == 1 {
                        input.cards[m].title.clone()
                    } else {
                        tree.nodes[tree.nodes[i].children[pos]].label.clone()
                    };
                    (m, t)
                })
                .collect(),
        })
        .collect();
    review(&groups, max_size, level, input.llm, exec)
}

/// Applies a plan: moves members, merges groups. Returns the nodes whose members changed, which
/// need new summaries; absorbed nodes are removed from the level.
fn repartition(
    tree: &mut Tree,
    lc: &mut LevelClusters,
    inputs: &Matrix,
    nodes: &mut Vec<usize>,
    level: usize,
    below: &[usize],
    plan: &RepartitionPlan,
) -> Vec<usize> {
    let merges = &plan.merges;
    if merges.is_empty() && plan.moves.is_empty() {
        return Vec::new();
    }
    let mut touched = vec![false; nodes.len()];
    for &(m, to) in &plan.moves {
        let Some(from) = lc.groups.iter().position(|g| g.contains(&m)) else {
            continue;
        };
        if from == to || to >= lc.groups.len() || lc.groups[from].len() <= 1 {
            continue;
        }
        lc.groups[from].retain(|&x| x != m);
        lc.groups[to].push(m);
        lc.stubs[to].retain(|&s| s != m);
        order_by_centrality(&mut lc.groups[to], inputs);
        touched[from] = true;
        touched[to] = true;
    }
    let mut absorbed = vec![false; nodes.len()];
    for &(keep, gone) in merges {
        touched[keep] = true;
        let mut members = lc.groups[keep].clone();
        members.extend(lc.groups[gone].iter().copied());
        order_by_centrality(&mut members, inputs);
        lc.groups[keep] = members;
        let mut stubs = lc.stubs[keep].clone();
        stubs.extend(lc.stubs[gone].iter().copied());
        stubs.retain(|s| !lc.groups[keep].contains(s));
        stubs.dedup();
        lc.stubs[keep] = stubs;
        absorbed[gone] = true;
    }
    // Rebuild this level's nodes: unchanged clusters keep their summaries.
    let old: Vec<Node> = nodes.iter().map(|&i| tree.nodes[i].clone()).collect();
    let first = nodes[0];
    tree.nodes.truncate(first);
    let kept = LevelClusters {
        groups: (0..old.len())
            .filter(|&g| !absorbed[g])
            .map(|g| lc.groups[g].clone())
            .collect(),
        stubs: (0..old.len())
            .filter(|&g| !absorbed[g])
            .map(|g| lc.stubs[g].clone())
            .collect(),
    };
    let old_kept: Vec<usize> = (0..old.len()).filter(|&g| !absorbed[g]).collect();
    *lc = kept;
    *nodes = add_level(tree, lc, level, below);
    let mut merged = Vec::new();
    for (pos, &g) in old_kept.iter().enumerate() {
        let i = nodes[pos];
        if touched[g] {
            merged.push(i);
        } else {
            let n = &mut tree.nodes[i];
            n.summary = old[g].summary.clone();
            n.label = old[g].label.clone();
            n.tags = old[g].tags.clone();
        }
    }
    merged
}
