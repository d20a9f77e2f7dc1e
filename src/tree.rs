//! The skill tree: cluster nodes over documents, from leaf groups (level 1) up to top-level skills.

use serde::{Deserialize, Serialize};

/// Entity and document-type tags of a cluster (the tagging stage's answer).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tags {
    pub entities: Vec<String>,
    pub doc_types: Vec<String>,
}

/// One cluster node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    /// 1 for clusters of documents, 2 for clusters of level-1 nodes, and so on.
    pub level: usize,
    /// Child nodes (level > 1), as indices into `Tree::nodes`.
    pub children: Vec<usize>,
    /// Member documents (leaves), as indices into the document list.
    pub docs: Vec<usize>,
    /// Documents that live elsewhere but nearly belong here (`@see` stubs), leaves only.
    pub see_also: Vec<usize>,
    /// Whether `docs` are in the authors' order (a section's pages), which its rows keep;
    /// otherwise rows are sorted by id.
    pub ordered: bool,
    pub summary: String,
    pub label: String,
    pub tags: Tags,
    /// Exemplar documents (non-leaf nodes).
    pub exemplars: Vec<usize>,
    /// Related nodes by entity overlap.
    pub related: Vec<usize>,
    /// The node's embedding (summary + member excerpts), input of the next level.
    pub vector: Vec<f32>,
    pub num_documents: usize,
    /// Folder name, e.g. `skill-03-smart-remote` or `group-01-pairing`.
    pub folder: String,
    /// Path of the node's folder relative to the output root, e.g. `skills/skill-03-x/group-01-y`.
    pub path: String,
    pub parent: Option<usize>,
}

/// The whole forest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tree {
    pub nodes: Vec<Node>,
    /// Top-level skills, in folder order.
    pub roots: Vec<usize>,
    /// Number of cluster levels.
    pub levels: usize,
}

impl Tree {
    /// Every document index below a node, in tree order.
    pub fn descendant_docs(&self, node: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            let nd = &self.nodes[n];
            out.extend(&nd.docs);
            stack.extend(nd.children.iter().rev());
        }
        out
    }

    /// The lowest document index below a node: a tie-break that is the same in every build
    /// of the same corpus (node indices are not).
    pub fn first_doc(&self, node: usize) -> usize {
        self.descendant_docs(node)
            .into_iter()
            .min()
            .unwrap_or(usize::MAX)
    }

    /// The navigation file of a node: SKILL.md for top-level skills, INDEX.md below.
    pub fn nav_file(&self, node: usize) -> String {
        let name = if self.nodes[node].parent.is_none() {
            "SKILL.md"
        } else {
            "INDEX.md"
        };
        format!("{}/{}", self.nodes[node].path, name)
    }

    /// The leaf node each document lives in (`None` for a document in no leaf).
    pub fn home_leaf(&self, num_docs: usize) -> Vec<Option<usize>> {
        let mut home = vec![None; num_docs];
        for (i, n) in self.nodes.iter().enumerate() {
            for &d in &n.docs {
                home[d] = Some(i);
            }
        }
        home
    }

    /// Sets `num_documents` of every node (and `levels`) from the leaves up.
    pub fn count_documents(&mut self) {
        let mut order: Vec<usize> = (0..self.nodes.len()).collect();
        order.sort_by_key(|&i| self.nodes[i].level);
        for i in order {
            self.nodes[i].num_documents = if self.nodes[i].children.is_empty() {
                self.nodes[i].docs.len()
            } else {
                self.nodes[i]
                    .children
                    .iter()
                    .map(|&c| self.nodes[c].num_documents)
                    .sum()
            };
        }
        self.levels = self.nodes.iter().map(|n| n.level).max().unwrap_or(0);
    }

    /// The top-level skill a node belongs to.
    pub fn root_of(&self, mut node: usize) -> usize {
        while let Some(p) = self.nodes[node].parent {
            node = p;
        }
        node
    }

    /// Keeps the nodes marked `alive` and renumbers them; children, parents and roots that
    /// point at removed nodes are dropped.
    pub fn retain(&mut self, alive: &[bool]) {
        let mut new_index = vec![usize::MAX; self.nodes.len()];
        let mut nodes = Vec::with_capacity(self.nodes.len());
        for (i, node) in std::mem::take(&mut self.nodes).into_iter().enumerate() {
            if alive[i] {
                new_index[i] = nodes.len();
                nodes.push(node);
            }
        }
        let map = |v: &[usize]| -> Vec<usize> {
            v.iter()
                .filter(|&&c| new_index[c] != usize::MAX)
                .map(|&c| new_index[c])
                .collect()
        };
        for node in &mut nodes {
            node.children = map(&node.children);
            node.related = map(&node.related);
            node.parent = node
                .parent
                .map(|p| new_index[p])
                .filter(|&p| p != usize::MAX);
        }
        self.roots = map(&self.roots);
        self.nodes = nodes;
        self.levels = self.nodes.iter().map(|n| n.level).max().unwrap_or(0);
    }

    /// Removes trivial levels: a node with a single child is replaced by that child (which takes
    /// over its folder name, so a warm start keeps the path of the folder it replaces), and a lone
    /// top-level skill hands its children up when they fit in `max_roots`. Returns how many
    /// nodes were folded away.
    pub fn fold_single_children(&mut self, max_roots: usize) -> usize {
        let mut alive = vec![true; self.nodes.len()];
        let mut folded = 0;
        loop {
            let single =
                (0..self.nodes.len()).find(|&i| alive[i] && self.nodes[i].children.len() == 1);
            if let Some(p) = single {
                let c = self.nodes[p].children[0];
                let parent = self.nodes[p].parent;
                let folder = std::mem::take(&mut self.nodes[p].folder);
                if !folder.is_empty() {
                    self.nodes[c].folder = folder;
                }
                self.nodes[c].parent = parent;
                let siblings = match parent {
                    Some(g) => &mut self.nodes[g].children,
                    None => &mut self.roots,
                };
                for s in siblings.iter_mut().filter(|s| **s == p) {
                    *s = c;
                }
                alive[p] = false;
                folded += 1;
                continue;
            }
            if let [root] = self.roots[..] {
                let kids = self.nodes[root].children.clone();
                if !kids.is_empty() && kids.len() <= max_roots {
                    for &k in &kids {
                        self.nodes[k].parent = None;
                    }
                    self.roots = kids;
                    alive[root] = false;
                    folded += 1;
                    continue;
                }
            }
            break;
        }
        if folded > 0 {
            self.retain(&alive);
        }
        folded
    }
}

/// Words a skill name must not contain (reserved by the Claude API).
const RESERVED: [&str; 2] = ["anthropic", "claude"];

/// Turns a label into a folder-safe slug: `[a-z0-9-]`, no leading, trailing or double hyphen, at most 40 chars.
pub fn slugify(label: &str) -> String {
    let mut s = String::new();
    for c in label.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.ends_with('-') && !s.is_empty() {
            s.push('-');
        }
    }
    // The Claude API refuses skill names that contain these words.
    let mut s = s
        .split('-')
        .filter(|w| !w.is_empty() && !RESERVED.iter().any(|r| w.contains(r)))
        .collect::<Vec<_>>()
        .join("-");
    if s.len() > 40 {
        s.truncate(40);
        if let Some(i) = s.rfind('-').filter(|&i| i > 10) {
            s.truncate(i);
        }
        s = s.trim_matches('-').to_string();
    }
    if s.is_empty() { "group".to_string() } else { s }
}

/// Whether a name is a valid Agent Skill name: 1–64 of `[a-z0-9-]`, no leading/trailing/double hyphen.
pub fn is_valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_safe() {
        for l in [
            "../../etc",
            "Smart Remote!",
            "---",
            "",
            "ÜBER große Straße",
            &"x".repeat(100),
            "a--b",
        ] {
            let s = slugify(l);
            assert!(is_valid_name(&s), "{l:?} -> {s:?}");
            assert!(!s.contains('/') && !s.contains('.'));
        }
        assert_eq!(slugify("Smart Remote!"), "smart-remote");
        assert_eq!(slugify("Claude Code setup"), "code-setup");
        assert_eq!(slugify("Anthropic"), "group");
    }
}
