//! Render stage: folder names and paths, where each document and page goes for the host's limits
//! (`place`), then every output file: SKILL.md / INDEX.md navigation files (`nav`), a Markdown
//! file per document and the serving data (`files`; `documents.json` spliced from the previous
//! one's unchanged entries by `splice`), bundles and document parts (`bundle`, cut by `split`), the
//! frontmatter every document file and part starts with (`front`),
//! and the entity indexes (`entities`). The manifest is added by the build.

mod bundle;
mod entities;
mod files;
mod front;
mod labels;
pub mod links;
mod naming;
mod nav;
pub mod place;
pub mod splice;
mod split;

use std::collections::BTreeMap;

use crate::format::{Content, Files};
use crate::ingest::Document;
use crate::llm::Card;
use crate::stage::embed::DocVectors;
use crate::stage::enrich::EntityEntry;
use crate::stage::label::{sibling_slugs, strip_common_words};
use crate::tree::Tree;

pub use bundle::{find_section, section_ids};
pub use files::{SERVE_TREE, SERVE_VECTORS, ServeTree, decode_vectors, doc_entries_json};

/// Everything the renderer reads.
pub struct Ctx<'a> {
    pub tree: &'a Tree,
    pub docs: &'a [Document],
    pub cards: &'a [Card],
    /// The leaf each document lives in.
    pub home: Vec<usize>,
    /// Where each document and page is, for the host's limits.
    pub place: place::Placement,
    /// The links of the documents, resolved (none until the build resolves them).
    pub links: links::Links,
}

impl<'a> Ctx<'a> {
    pub fn new(
        tree: &'a Tree,
        docs: &'a [Document],
        cards: &'a [Card],
        limits: crate::config::HostLimits,
        documents: crate::config::DocumentsIn,
    ) -> Ctx<'a> {
        let home: Vec<usize> = tree
            .home_leaf(docs.len())
            .into_iter()
            .map(|h| h.expect("every document lives in a leaf"))
            .collect();
        let place = place::place(&place::Inputs {
            tree,
            docs,
            cards,
            home: &home,
            limits,
            by_id: documents == crate::config::DocumentsIn::ById,
        });
        Ctx {
            tree,
            docs,
            cards,
            home,
            place,
            links: links::Links::default(),
        }
    }

    /// The part `range` of document `d`'s text as a file in `folder` shows it: a link to a
    /// document of the same skill is its file relative to `folder` (the anchor kept), a link
    /// to one of another skill is its id for `get_document` (a skill stands alone).
    pub fn linked_text(
        &self,
        d: usize,
        range: std::ops::Range<usize>,
        folder: &str,
    ) -> std::borrow::Cow<'_, str> {
        let skill = |x: usize| self.tree.root_of(self.home[x]);
        self.links
            .apply(d, &self.docs[d].text, range, |t, anchor, label, image| {
                use links::Written;
                let titled = label.is_empty();
                let title = nav::link_text(&self.cards[t].title);
                let label = if titled { title.as_str() } else { label };
                if image {
                    return Written::Whole(label.to_string());
                }
                if skill(t) != skill(d) || self.place.by_id {
                    return Written::Whole(format!("{label} (document `{}`)", self.docs[t].id));
                }
                let place = &self.place.docs[t];
                let mut to = relative(folder, &place.link());
                if let (Some(a), None) = (anchor, &place.anchor) {
                    to = format!("{to}#{a}");
                }
                if titled {
                    return Written::Whole(format!("[{label}]({to})"));
                }
                Written::Dest(to)
            })
    }

    /// How a page at folder `from` names a document: a Markdown link to its file (`docs/<name>.md`,
    /// the first part when split, or `bundles/NNN.md#<id>` when bundled), or, with
    /// `[output] documents = "by-id"`, its title and the id that `get_document` opens.
    pub fn doc_ref(&self, d: usize, from: &str) -> String {
        let title = nav::link_text(&self.cards[d].title);
        if self.place.by_id {
            format!("{title} (id: `{}`)", self.docs[d].id)
        } else {
            format!("[{title}]({})", relative(from, &self.place.docs[d].link()))
        }
    }
}

/// `<folder>/docs/<name>.md`.
pub fn doc_file(folder: &str, name: &str) -> String {
    format!("{folder}/docs/{name}.md")
}

/// Every output file except the manifest: relative path → contents. Returns the files and the
/// number of navigation files among them.
pub fn all_files<'a>(
    ctx: &'a Ctx,
    vectors: &'a DocVectors,
    index: &BTreeMap<String, EntityEntry>,
    (splice, spill): (&'a splice::Splice, Option<&std::path::Path>),
) -> (Files<'a>, usize) {
    use rayon::prelude::*;
    let tree = ctx.tree;
    let entity_files: Vec<Vec<(String, String)>> = tree
        .roots
        .par_iter()
        .map(|&r| entities::skill_files(tree, &ctx.place, r, index))
        .collect();
    let mut globs = vec![String::new(); tree.nodes.len()];
    for (&r, files) in tree.roots.iter().zip(&entity_files) {
        globs[r] = entities::entity_glob(files.len());
    }
    let mut out: Files = (0..tree.nodes.len())
        .into_par_iter()
        .filter(|&i| !ctx.place.folded[i])
        .map(|i| {
            let glob = &globs[tree.root_of(i)];
            (tree.nav_file(i), nav::nav_file(ctx, i, glob).into_bytes())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|(k, v)| (k, v.into()))
        .collect();
    let navigation = out.len();
    // Document files, documents.json and the vectors repeat what is in memory already: they
    // are made when hashed and when written, never held.
    for d in 0..ctx.docs.len() {
        let place = &ctx.place.docs[d];
        if place.anchor.is_some() || ctx.place.by_id {
            continue;
        }
        out.insert(
            place.file.clone(),
            Content::lazy(move |w| w.write_all(&files::doc_file(ctx, d))),
        );
        for (k, part) in place.parts.iter().enumerate().skip(1) {
            out.insert(
                part.file.clone(),
                Content::lazy(move |w| w.write_all(&bundle::part_file(ctx, d, k))),
            );
        }
        for (path, bytes) in files::alias_files(ctx, d) {
            out.insert(path, bytes.into());
        }
    }
    for (b, bundle) in ctx.place.bundles.iter().enumerate() {
        out.insert(
            bundle.file.clone(),
            Content::lazy(move |w| w.write_all(&bundle::bundle_file(ctx, b))),
        );
    }
    // The two large files every edit changes are made once: spilled while hashed, then moved.
    let spilled = |name: &str| spill.map(|d| d.join(name));
    out.insert(
        "documents.json".into(),
        Content::spilled(|w| splice.write(ctx, w), spilled("documents.json")),
    );
    out.insert(
        SERVE_TREE.into(),
        files::serve_tree(ctx).into_bytes().into(),
    );
    out.insert(
        SERVE_VECTORS.into(),
        Content::spilled(
            |w| files::encode_vectors(ctx.docs, vectors, w),
            spilled(SERVE_VECTORS),
        ),
    );
    out.insert(
        "entity_index.md".into(),
        entities::global_markdown(tree, &ctx.place, index)
            .into_bytes()
            .into(),
    );
    out.insert(
        "entity_index.json".into(),
        entities::global_json(tree, &ctx.place, index)
            .into_bytes()
            .into(),
    );
    for (path, text) in entity_files.into_iter().flatten() {
        out.insert(path, text.into_bytes().into());
    }
    (out, navigation)
}

/// Names every node's folder (`skill-NN-slug` at the top, `group-NN-slug` below) and sets its
/// path. With `strip`, the words most sibling labels share are dropped first (a model's "acme
/// billing", "acme deploys"; the extractive labels avoid them when they are made).
pub fn assign_paths(tree: &mut Tree, strip: bool) {
    let roots = tree.roots.clone();
    tree.roots = name_siblings(tree, &roots, "skill", strip);
    let mut stack: Vec<(usize, String)> = tree
        .roots
        .iter()
        .map(|&r| (r, format!("skills/{}", tree.nodes[r].folder)))
        .collect();
    while let Some((node, path)) = stack.pop() {
        tree.nodes[node].path = path.clone();
        let kids = tree.nodes[node].children.clone();
        if kids.is_empty() {
            continue;
        }
        tree.nodes[node].children = name_siblings(tree, &kids, "group", strip);
        for &c in &tree.nodes[node].children {
            stack.push((c, format!("{path}/{}", tree.nodes[c].folder)));
        }
    }
}

/// Names one sibling set and returns it in folder order. Nodes that already have a folder (from
/// the previous build) keep it, so untouched clusters never move; new nodes get the next free
/// numbers. A fresh set is numbered in label order. A folder whose prefix does not fit its place
/// (a group folded up to the top, say) is renamed.
fn name_siblings(tree: &mut Tree, siblings: &[usize], prefix: &str, strip: bool) -> Vec<usize> {
    for &s in siblings {
        if !tree.nodes[s].folder.starts_with(&format!("{prefix}-")) {
            tree.nodes[s].folder.clear();
        }
    }
    if strip {
        strip_common_words(tree, siblings);
    }
    let named = sibling_slugs(tree, siblings);
    let number = |folder: &str| {
        folder
            .split('-')
            .nth(1)
            .and_then(|n| n.parse::<usize>().ok())
    };
    let mut next = siblings
        .iter()
        .filter_map(|&s| number(&tree.nodes[s].folder))
        .max()
        .map_or(0, |m| m + 1);
    let width = digits(named.len().max(next + named.len()));
    let fresh = next == 0;
    for (pos, (node, slug)) in named.iter().enumerate() {
        if !tree.nodes[*node].folder.is_empty() {
            continue;
        }
        let n = if fresh { pos } else { next };
        next += usize::from(!fresh);
        tree.nodes[*node].folder = format!("{prefix}-{n:0width$}-{slug}");
    }
    let mut order: Vec<usize> = siblings.to_vec();
    order.sort_by(|&a, &b| tree.nodes[a].folder.cmp(&tree.nodes[b].folder));
    order
}

fn digits(n: usize) -> usize {
    n.saturating_sub(1).to_string().len().max(2)
}

/// The relative link from the folder `from_dir` to `to` (both relative to the output root).
pub fn relative(from_dir: &str, to: &str) -> String {
    let a: Vec<&str> = from_dir.split('/').filter(|s| !s.is_empty()).collect();
    let b: Vec<&str> = to.split('/').filter(|s| !s.is_empty()).collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<&str> = vec![".."; a.len() - common];
    parts.extend(&b[common..]);
    parts.join("/")
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML). Runs of `---` are broken up:
/// simple frontmatter readers (the reference validator among them) split the file on them.
fn yaml_str(s: &str) -> String {
    let mut s = s.to_string();
    while s.contains("---") {
        s = s.replace("---", "—");
    }
    serde_json::to_string(&s).expect("strings serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_links() {
        assert_eq!(relative("skills/a/b", "skills/a/b/docs/x.md"), "docs/x.md");
        assert_eq!(
            relative("skills/a/b", "skills/a/c/docs/x.md"),
            "../c/docs/x.md"
        );
        assert_eq!(
            relative("skills/a/b", "skills/z/docs/x.md"),
            "../../z/docs/x.md"
        );
        assert_eq!(
            relative("skills/a", "entity_index.md"),
            "../../entity_index.md"
        );
    }

    #[test]
    fn yaml_strings_have_no_triple_dash() {
        let y = yaml_str("a --- b ---- c");
        assert!(!y.contains("---"), "{y}");
        let back: String = serde_yaml_ng::from_str(&y).unwrap();
        assert!(back.starts_with("a — b"));
    }
}
