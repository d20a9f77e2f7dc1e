//! The tree from the authors' structure (`tree.structure`): a section that fits becomes a group
//! labelled with its own title, a section too large is clustered inside itself, small siblings
//! merge with their nearest, and the top level keeps at most `K` skills; then summaries, as for
//! a clustered tree.

use std::collections::HashMap;

use crate::config::Config;
use crate::db::cache::KeyParts;
use crate::db::exec::Executor;
use crate::db::exec::{Plan, Vet};
use crate::db::value::Json;
use crate::error::BuildError;
use crate::kmeans::{KmeansBackend, KmeansParams};
use crate::llm::Card;
use crate::matrix::Matrix;
use crate::matrix::simd::dot;
use crate::stage::cluster::{LevelParams, cluster_level};
use crate::stage::hierarchy::HierarchyInput;
use crate::stage::summarize::{Corpus, clean_label, summarize_nodes};
use crate::structure::{Outline, Section};
use crate::tree::{Node, Tree, slugify};

/// A node of the tree before it is one: a group of documents, or of other shapes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    Leaf {
        title: Option<String>,
        docs: Vec<usize>,
        stubs: Vec<usize>,
    },
    Inner {
        title: Option<String>,
        children: Vec<Shape>,
    },
}

impl Shape {
    fn size(&self) -> usize {
        match self {
            Shape::Leaf { docs, .. } => docs.len(),
            Shape::Inner { children, .. } => children.iter().map(Shape::size).sum(),
        }
    }

    fn docs(&self, out: &mut Vec<usize>) {
        match self {
            Shape::Leaf { docs, .. } => out.extend(docs),
            Shape::Inner { children, .. } => children.iter().for_each(|c| c.docs(out)),
        }
    }

    fn title(&self) -> Option<&String> {
        match self {
            Shape::Leaf { title, .. } | Shape::Inner { title, .. } => title.as_ref(),
        }
    }
}

/// What the shaping reads.
pub(crate) struct Shaping<'a> {
    pub cards: &'a [Card],
    pub vectors: &'a Matrix,
    pub config: &'a Config,
    pub kmeans: &'a dyn KmeansBackend,
    /// The groups of the sections clustered beforehand (through the memo), by their first page.
    pub clusters: HashMap<usize, Vec<Shape>>,
}

impl Shaping<'_> {
    /// Most documents a section keeps as one group (above it, it is split by its subsections
    /// or clustered inside itself).
    fn leaf_max(&self) -> usize {
        2 * self.config.tree.p.max(2)
    }

    /// Most children a group below the top keeps (more are merged by similarity).
    fn branch_max(&self) -> usize {
        (2 * self.config.tree.p).max(self.config.tree.k).max(2)
    }

    fn centroid(&self, s: &Shape) -> Vec<f32> {
        let mut docs = Vec::new();
        s.docs(&mut docs);
        self.vectors.centroid(&docs)
    }

    /// A section's title: the authors', else its index page's title, else its name.
    fn title_of(&self, s: &Section) -> Option<String> {
        let t = s
            .title
            .clone()
            .or_else(|| s.index.map(|i| self.cards[i].title.clone()))
            .or_else(|| (!s.name.is_empty()).then(|| humanize(&s.name)))?;
        let t = clean_label(&t);
        let planted = !crate::planted::flags(&t).is_empty();
        (!t.is_empty() && !planted).then_some(t)
    }
}

/// A folder or file name as a title: `getting-started` → `Getting started`.
fn humanize(name: &str) -> String {
    let stem = name.rsplit_once('.').map_or(name, |(s, _)| s);
    crate::text::capitalize(stem.replace(['-', '_'], " ").trim())
}

/// The top-level shapes of an outline: at most `K`.
pub(crate) fn shape_outline(o: &Outline, cx: &Shaping) -> Vec<Shape> {
    let k = cx.config.tree.k.max(1);
    let mut top = match shape(&o.root, cx, true) {
        Shape::Inner { children, .. } => children,
        leaf => vec![leaf],
    };
    cap(&mut top, k, cx);
    expand(&mut top, k);
    top
}

/// Fewer skills than `k`: the largest skill that has sections hands them up while they fit
/// (a book of two parts, one holding most chapters, becomes a skill per chapter group).
fn expand(top: &mut Vec<Shape>, k: usize) {
    loop {
        let Some(big) = (0..top.len())
            .filter(|&i| match &top[i] {
                Shape::Inner { children, .. } => top.len() - 1 + children.len() <= k,
                Shape::Leaf { .. } => false,
            })
            .max_by_key(|&i| (top[i].size(), std::cmp::Reverse(i)))
        else {
            return;
        };
        // Only a skill that holds more than half the documents is worth a level less.
        let total: usize = top.iter().map(Shape::size).sum();
        if top[big].size() * 2 <= total {
            return;
        }
        let Shape::Inner { children, .. } = top.remove(big) else {
            unreachable!("chosen as inner");
        };
        for (n, c) in children.into_iter().enumerate() {
            top.insert(big + n, c);
        }
    }
}

/// The shape of one section.
fn shape(s: &Section, cx: &Shaping, top: bool) -> Shape {
    let title = if top { None } else { cx.title_of(s) };
    if s.total() <= cx.leaf_max() && !top {
        return Shape::Leaf {
            title,
            docs: s.all_pages(),
            stubs: Vec::new(),
        };
    }
    let mut kids: Vec<Shape> = Vec::new();
    if s.pages.len() > cx.leaf_max() {
        match cx.clusters.get(&s.pages[0]) {
            Some(groups) => kids.extend(groups.iter().cloned()),
            None => kids.extend(cluster_pages(&s.pages, cx)),
        }
    } else if !s.pages.is_empty() {
        // The section's own pages: titled by their index page when it says more than the
        // section's title.
        let own = s
            .index
            .map(|i| clean_label(&cx.cards[i].title))
            .filter(|t| Some(t) != title.as_ref() && !t.is_empty());
        kids.push(Shape::Leaf {
            title: own,
            docs: s.pages.clone(),
            stubs: Vec::new(),
        });
    }
    kids.extend(s.children.iter().map(|c| shape(c, cx, false)));
    merge_small(&mut kids, cx);
    if !top {
        cap(&mut kids, cx.branch_max(), cx);
    }
    if kids.len() == 1 && !top {
        let only = kids.pop().expect("one");
        return match only {
            Shape::Leaf { docs, stubs, .. } => Shape::Leaf { title, docs, stubs },
            Shape::Inner { children, .. } => Shape::Inner { title, children },
        };
    }
    Shape::Inner {
        title,
        children: kids,
    }
}

/// The own pages of every section [`shape`] clusters (those too many for one group, in a
/// section not made one group whole).
fn to_cluster<'o>(s: &'o Section, cx: &Shaping, top: bool, out: &mut Vec<&'o [usize]>) {
    if s.total() <= cx.leaf_max() && !top {
        return;
    }
    if s.pages.len() > cx.leaf_max() {
        out.push(&s.pages);
    }
    for c in &s.children {
        to_cluster(c, cx, false, out);
    }
}

/// Groups of one clustered section, as positions in its page list (what the memo keeps: the
/// same for the same pages wherever they are numbered).
type Groups = Vec<(Vec<u32>, Vec<u32>)>;

/// Clusters the sections too large for one group through the memo: a section whose pages'
/// texts, embedder and settings are those of an earlier build takes that build's groups, so an
/// edit clusters again only its own section.
fn cluster_sections(
    outline: &Outline,
    input: &HierarchyInput,
    cx: &Shaping,
    exec: &mut Executor,
) -> Result<HashMap<usize, Vec<Shape>>, BuildError> {
    let mut sections = Vec::new();
    to_cluster(&outline.root, cx, true, &mut sections);
    if sections.is_empty() {
        return Ok(HashMap::new());
    }
    let t = &cx.config.tree;
    let km = &cx.config.kmeans;
    let settings = format!(
        "{} p={} min={} tau={} stubs={:?} seed={} iter={} init={} tol={}",
        input.embedder.model_id(),
        t.p,
        t.min_cluster_size,
        t.tau,
        t.max_stubs,
        t.seed,
        km.max_iter,
        km.n_init,
        km.tol
    );
    let groups: Vec<Json<Groups>> = exec.run(
        "section",
        &sections,
        |pages| Plan {
            subject: input.docs[pages[0]].id.clone(),
            parts: KeyParts {
                stage: "section".into(),
                stage_version: 1,
                prompt: String::new(),
                model: settings.clone(),
                inputs: pages
                    .iter()
                    .map(|&p| input.docs[p].content_hash.clone())
                    .collect(),
            },
            input_chars: 0,
        },
        |pages| Ok::<_, BuildError>(Json(as_positions(pages, &cluster_pages(pages, cx)))),
        |pages, Json(groups)| partitions(pages.len(), groups),
    )?;
    Ok(sections
        .iter()
        .zip(groups)
        .map(|(pages, Json(g))| {
            let at = |i: &u32| pages[*i as usize];
            let shapes = g
                .iter()
                .map(|(docs, stubs)| Shape::Leaf {
                    title: None,
                    docs: docs.iter().map(at).collect(),
                    stubs: stubs.iter().map(at).collect(),
                })
                .collect();
            (pages[0], shapes)
        })
        .collect())
}

/// Whether stored groups (from a committed state) hold each of a section's `n` pages once as a
/// document, in groups that are not empty, with stubs (`@see` rows of documents placed in
/// another group) among those pages.
fn partitions(n: usize, groups: &Groups) -> Vet {
    let mut placed = vec![false; n];
    for (docs, stubs) in groups {
        if docs.is_empty() {
            return Vet::Reject("it holds an empty group".into());
        }
        for &i in docs {
            match placed.get_mut(i as usize) {
                Some(s) if !*s => *s = true,
                Some(_) => return Vet::Reject(format!("it places page {i} twice")),
                None => return Vet::Reject(format!("it names page {i} of {n}")),
            }
        }
        if let Some(i) = stubs.iter().find(|&&i| i as usize >= n) {
            return Vet::Reject(format!("it names page {i} of {n}"));
        }
    }
    if placed.iter().all(|&s| s) {
        Vet::Keep
    } else {
        Vet::Reject("it leaves pages out".into())
    }
}

/// Leaf shapes of `pages` as positions in it.
fn as_positions(pages: &[usize], shapes: &[Shape]) -> Groups {
    let pos: HashMap<usize, u32> = pages
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, i as u32))
        .collect();
    shapes
        .iter()
        .filter_map(|s| match s {
            Shape::Leaf { docs, stubs, .. } => Some((
                docs.iter().map(|d| pos[d]).collect(),
                stubs.iter().map(|d| pos[d]).collect(),
            )),
            Shape::Inner { .. } => None,
        })
        .collect()
}

/// Pages of one section too many for one group: clustered, as a flat corpus is.
fn cluster_pages(pages: &[usize], cx: &Shaping) -> Vec<Shape> {
    let t = &cx.config.tree;
    let rows: Vec<u32> = pages.iter().map(|&p| p as u32).collect();
    let data = cx.vectors.subset(&rows);
    let params = LevelParams {
        k: pages.len().div_ceil(t.p.max(1)),
        min_cluster_size: t.min_cluster_size,
        tau: t.tau,
        max_stubs: t.max_stubs.unwrap_or(usize::MAX),
        p: t.p,
        leaf: true,
        kmeans: KmeansParams {
            k: 0,
            max_iter: cx.config.kmeans.max_iter,
            n_init: cx.config.kmeans.n_init,
            tol: cx.config.kmeans.tol,
            seed: t.seed.wrapping_add(1),
            tau: t.tau,
        },
    };
    let (lc, _) = cluster_level(&data, &params, cx.kmeans);
    lc.groups
        .iter()
        .zip(&lc.stubs)
        .map(|(g, st)| Shape::Leaf {
            title: None,
            docs: g.iter().map(|&m| pages[m]).collect(),
            stubs: st.iter().map(|&m| pages[m]).collect(),
        })
        .collect()
}

/// Sibling shapes with their documents' centroids, kept as they merge (one centroid made again
/// per merge, not every sibling's per step).
struct Siblings<'k> {
    kids: &'k mut Vec<Shape>,
    centroids: Vec<Vec<f32>>,
}

impl<'k> Siblings<'k> {
    fn new(kids: &'k mut Vec<Shape>, cx: &Shaping) -> Self {
        let centroids = kids.iter().map(|k| cx.centroid(k)).collect();
        Siblings { kids, centroids }
    }

    /// The sibling other than `of` that `ok` accepts whose documents are nearest those of `of`
    /// (ties: the first).
    fn nearest(&self, of: usize, ok: impl Fn(&Shape) -> bool) -> Option<usize> {
        let c = &self.centroids[of];
        (0..self.kids.len())
            .filter(|&j| j != of && ok(&self.kids[j]))
            .map(|j| (j, dot(c, &self.centroids[j])))
            .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))
            .map(|(j, _)| j)
    }

    /// Removes `from` and lets `join` put it into `into`.
    fn merge(
        &mut self,
        from: usize,
        into: usize,
        cx: &Shaping,
        join: impl FnOnce(&mut Shape, Shape),
    ) {
        let gone = self.kids.remove(from);
        self.centroids.remove(from);
        let into = if into > from { into - 1 } else { into };
        join(&mut self.kids[into], gone);
        self.centroids[into] = cx.centroid(&self.kids[into]);
    }
}

fn is_leaf(s: &Shape) -> bool {
    matches!(s, Shape::Leaf { .. })
}

/// Groups smaller than `min_cluster_size` join their most similar sibling group (or, without
/// one, their most similar sibling).
fn merge_small(kids: &mut Vec<Shape>, cx: &Shaping) {
    let min = cx.config.tree.min_cluster_size.max(1);
    let mut sib = Siblings::new(kids, cx);
    while sib.kids.len() >= 2 {
        let Some(small) = (0..sib.kids.len())
            .filter(|&i| is_leaf(&sib.kids[i]) && sib.kids[i].size() < min)
            .min_by_key(|&i| (sib.kids[i].size(), i))
        else {
            return;
        };
        let target = sib
            .nearest(small, is_leaf)
            .or_else(|| sib.nearest(small, |_| true))
            .expect("a sibling");
        sib.merge(small, target, cx, |into, gone| match (into, gone) {
            (
                Shape::Leaf { docs, stubs, .. },
                Shape::Leaf {
                    docs: d, stubs: s, ..
                },
            ) => {
                docs.extend(d);
                stubs.extend(s);
                stubs.retain(|x| !docs.contains(x));
            }
            (Shape::Inner { children, .. }, gone) => children.push(gone),
            (Shape::Leaf { .. }, Shape::Inner { .. }) => {
                unreachable!("only groups of documents are small")
            }
        });
    }
}

/// At most `max` siblings: the smallest joins its most similar sibling under a new untitled
/// group (or in one made so before), until they fit.
fn cap(kids: &mut Vec<Shape>, max: usize, cx: &Shaping) {
    let mut sib = Siblings::new(kids, cx);
    while sib.kids.len() > max.max(1) {
        let small = (0..sib.kids.len())
            .min_by_key(|&i| (sib.kids[i].size(), i))
            .expect("siblings");
        let target = sib.nearest(small, |_| true).expect("a sibling");
        sib.merge(small, target, cx, |into, gone| match into {
            Shape::Inner {
                title: None,
                children,
            } => children.push(gone),
            other => {
                let first = std::mem::replace(
                    other,
                    Shape::Inner {
                        title: None,
                        children: Vec::new(),
                    },
                );
                *other = Shape::Inner {
                    title: None,
                    children: vec![first, gone],
                };
            }
        });
    }
}

/// What a structured tree was made of.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct SectionStats {
    /// Groups labelled with the authors' titles.
    pub titled: usize,
    /// Groups made by clustering or merging (labelled as a clustered tree's are).
    pub made: usize,
}

/// The tree of an outline, summarized level by level through the memo.
pub fn build_structured(
    input: &HierarchyInput,
    outline: &Outline,
    exec: &mut Executor,
) -> Result<(Tree, SectionStats), BuildError> {
    let mut cx = Shaping {
        cards: input.cards,
        vectors: input.doc_vectors,
        config: input.config,
        kmeans: input.kmeans,
        clusters: HashMap::new(),
    };
    cx.clusters = cluster_sections(outline, input, &cx, exec)?;
    let top = shape_outline(outline, &cx);
    let mut tree = Tree::default();
    let mut titles: Vec<Option<String>> = Vec::new();
    let roots: Vec<usize> = top
        .iter()
        .map(|s| add(&mut tree, &mut titles, s, None))
        .collect();
    tree.roots = roots;
    tree.count_documents();
    let corpus = Corpus::new(input.docs, input.cards);
    for level in 1..=tree.levels {
        let nodes: Vec<usize> = (0..tree.nodes.len())
            .filter(|&i| tree.nodes[i].level == level)
            .collect();
        summarize_nodes(&mut tree, &nodes, &nodes, &corpus, input.llm, exec)?;
        for &i in &nodes {
            if let Some(t) = &titles[i] {
                tree.nodes[i].label = t.clone();
            }
        }
    }
    name_in_order(&mut tree);
    let titled = titles.iter().filter(|t| t.is_some()).count();
    Ok((
        tree,
        SectionStats {
            titled,
            made: titles.len() - titled,
        },
    ))
}

/// Appends a shape's nodes; returns its index.
fn add(
    tree: &mut Tree,
    titles: &mut Vec<Option<String>>,
    s: &Shape,
    parent: Option<usize>,
) -> usize {
    let idx = tree.nodes.len();
    tree.nodes.push(Node {
        parent,
        ..Node::default()
    });
    titles.push(s.title().cloned());
    match s {
        Shape::Leaf { docs, stubs, .. } => {
            tree.nodes[idx].level = 1;
            tree.nodes[idx].docs = docs.clone();
            tree.nodes[idx].see_also = stubs.clone();
            tree.nodes[idx].ordered = true;
        }
        Shape::Inner { children, .. } => {
            let kids: Vec<usize> = children
                .iter()
                .map(|c| add(tree, titles, c, Some(idx)))
                .collect();
            tree.nodes[idx].level =
                1 + kids.iter().map(|&k| tree.nodes[k].level).max().unwrap_or(0);
            tree.nodes[idx].children = kids;
        }
    }
    idx
}

/// Folder names in the authors' order (`skill-00-…` first in the navigation), each slug unique
/// among its siblings.
fn name_in_order(tree: &mut Tree) {
    let mut sets: Vec<(Vec<usize>, &str)> = vec![(tree.roots.clone(), "skill")];
    sets.extend(
        tree.nodes
            .iter()
            .filter(|n| !n.children.is_empty())
            .map(|n| (n.children.clone(), "group")),
    );
    for (set, prefix) in sets {
        let width = set.len().saturating_sub(1).to_string().len().max(2);
        let mut taken = std::collections::HashSet::new();
        for (n, &i) in set.iter().enumerate() {
            let base = slugify(&tree.nodes[i].label);
            let slug = (1..)
                .map(|k| {
                    if k == 1 {
                        base.clone()
                    } else {
                        format!("{base}-{k}")
                    }
                })
                .find(|s| taken.insert(s.clone()))
                .expect("unbounded");
            tree.nodes[i].folder = format!("{prefix}-{n:0width$}-{slug}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_groups_must_place_each_page_once() {
        // A stub is a page placed in another group: it may come twice.
        let ok: Groups = vec![(vec![0, 1], vec![2]), (vec![2], vec![])];
        assert_eq!(partitions(3, &ok), Vet::Keep);
        let twice: Groups = vec![(vec![0, 1], vec![]), (vec![1, 2], vec![])];
        assert!(matches!(partitions(3, &twice), Vet::Reject(w) if w.contains("twice")));
        let out_of_range: Groups = vec![(vec![0, 1, 2], vec![7])];
        assert!(matches!(partitions(3, &out_of_range), Vet::Reject(w) if w.contains("page 7")));
        let missing: Groups = vec![(vec![0, 1], vec![])];
        assert!(matches!(partitions(3, &missing), Vet::Reject(w) if w.contains("out")));
    }
    use proptest::prelude::*;

    /// A random outline: nested folders of pages (document indices in order).
    fn outline_of(sizes: &[(usize, usize)]) -> (Outline, usize) {
        let mut next = 0;
        let mut take = |n: usize| {
            let v: Vec<usize> = (next..next + n).collect();
            next += n;
            v
        };
        let mut root = Section::default();
        for (i, &(pages, sub)) in sizes.iter().enumerate() {
            let mut s = Section {
                name: format!("folder-{i}"),
                key: format!("folder-{i}"),
                pages: take(pages),
                ..Section::default()
            };
            if sub > 0 {
                s.children.push(Section {
                    name: "sub".into(),
                    key: format!("folder-{i}/sub"),
                    pages: take(sub),
                    ..Section::default()
                });
            }
            root.children.push(s);
        }
        root.prune();
        (
            Outline {
                root,
                navs: Vec::new(),
                inputs: Vec::new(),
            },
            next,
        )
    }

    fn check(s: &Shape, seen: &mut Vec<usize>) {
        match s {
            Shape::Leaf { docs, .. } => {
                assert!(!docs.is_empty(), "an empty group");
                seen.extend(docs);
            }
            Shape::Inner { children, .. } => {
                assert!(children.len() >= 2, "a group of one child");
                children.iter().for_each(|c| check(c, seen));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn every_document_once_and_at_most_k_skills(
            sizes in prop::collection::vec((0usize..40, 0usize..12), 1..14),
            k in 2usize..9,
            p in 2usize..12,
        ) {
            let (o, n) = outline_of(&sizes);
            prop_assume!(n > 0);
            let mut vectors = Matrix::new(8);
            let mut rng = crate::rng::Rng::new(n as u64);
            for _ in 0..n {
                let mut v: Vec<f32> = (0..8).map(|_| rng.next_f64() as f32 - 0.5).collect();
                crate::matrix::normalize(&mut v);
                vectors.push(&v);
            }
            let cards: Vec<Card> = (0..n)
                .map(|i| Card { title: format!("Page {i}"), one_line: String::new(), phrases: Vec::new() })
                .collect();
            let mut config = Config::default();
            config.tree.k = k;
            config.tree.p = p;
            let cx = Shaping { cards: &cards, vectors: &vectors, config: &config, kmeans: &crate::kmeans::CpuKmeans, clusters: HashMap::new() };
            let top = shape_outline(&o, &cx);
            prop_assert!(!top.is_empty() && top.len() <= k, "{} skills for K = {k}", top.len());
            let mut seen = Vec::new();
            top.iter().for_each(|s| check(s, &mut seen));
            seen.sort_unstable();
            prop_assert_eq!(seen, (0..n).collect::<Vec<_>>());
            // The same outline gives the same tree.
            prop_assert_eq!(shape_outline(&o, &cx), top);
        }
    }

    #[test]
    fn a_section_that_fits_is_one_group_with_its_title() {
        let (mut o, n) = outline_of(&[(4, 0), (5, 2), (3, 0)]);
        o.root.children[1].title = Some("Security".into());
        let cards: Vec<Card> = (0..n)
            .map(|i| Card {
                title: format!("Page {i}"),
                one_line: String::new(),
                phrases: Vec::new(),
            })
            .collect();
        let mut vectors = Matrix::new(2);
        for i in 0..n {
            vectors.push(&[1.0, i as f32 / n as f32]);
        }
        let config = Config::default();
        let cx = Shaping {
            cards: &cards,
            vectors: &vectors,
            config: &config,
            kmeans: &crate::kmeans::CpuKmeans,
            clusters: HashMap::new(),
        };
        let top = shape_outline(&o, &cx);
        assert_eq!(top.len(), 3);
        assert_eq!(top[1].title().map(String::as_str), Some("security"));
        assert_eq!(top[0].title().map(String::as_str), Some("folder 0"));
        assert_eq!(top[1].size(), 7);
    }
}
