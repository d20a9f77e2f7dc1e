//! The menus of a guided walk: what a node offers (its groups, its documents), ordered by the
//! offline navigator's evidence for the question, cut to the best dozen, each with a short key
//! that the reply's schema lists as an enum.

use crate::serve::compiled::Compiled;
use crate::serve::navigator::Route;

/// Most options one menu shows.
pub const MENU_MAX: usize = 12;
/// Most options one pick takes: groups (a beam of two), documents (two to open; the walk adds
/// the navigator's best document, so an answer reads three, as `rag`'s prompt costs about five:
/// with three picks and the fourth, Qwen2.5-Coder 0.5B spent 1.14× `rag`'s tokens on 20 wixqa
/// questions).
pub const PICK_GROUPS: usize = 2;
pub const PICK_DOCS: usize = 2;
/// Characters of a row's description: menus were 40–60% of a walk's prompt tokens with 160
/// (wixqa-sample, Qwen2.5-Coder-0.5B); a row's first 110 characters carry its topic.
const ROW_CHARS: usize = 110;

/// One option: a group (tree node) or a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Item {
    Node(usize),
    Doc(usize),
}

/// One menu: its options in order, their keys and rows.
#[derive(Debug, Clone)]
pub struct Menu {
    pub items: Vec<Item>,
    pub keys: Vec<String>,
    pub rows: Vec<String>,
    /// Options one reply may pick.
    pub max_pick: usize,
}

impl Menu {
    /// The menu of `groups` and `docs` (those not yet seen), each ordered by the route, groups
    /// first; `None` when nothing is left to offer.
    pub fn of(
        a: &Compiled,
        route: &Route,
        groups: &[usize],
        docs: &[usize],
        seen: &impl Fn(Item) -> bool,
    ) -> Option<Menu> {
        let groups: Vec<usize> = groups
            .iter()
            .copied()
            .filter(|&n| !seen(Item::Node(n)))
            .collect();
        let docs: Vec<usize> = docs
            .iter()
            .copied()
            .filter(|&d| !seen(Item::Doc(d)))
            .collect();
        let mut items: Vec<Item> = route
            .rank_nodes(&groups)
            .into_iter()
            .map(Item::Node)
            .collect();
        items.truncate(MENU_MAX);
        let groups_shown = items.len();
        items.extend(
            route
                .rank_docs(&docs)
                .into_iter()
                .take(MENU_MAX - groups_shown)
                .map(Item::Doc),
        );
        if items.is_empty() {
            return None;
        }
        // Groups alone: a beam of two; documents among the options: two to open.
        let max_pick = if groups_shown == items.len() {
            PICK_GROUPS
        } else {
            PICK_DOCS
        }
        .min(items.len());
        let mut keys: Vec<String> = Vec::with_capacity(items.len());
        let mut rows = Vec::with_capacity(items.len());
        for item in &items {
            let (key, row) = match *item {
                Item::Node(n) => {
                    let node = &a.tree.nodes[n];
                    let base = node
                        .path
                        .rsplit('/')
                        .next()
                        .filter(|s| !s.is_empty())
                        .unwrap_or(&node.label);
                    let mut key = base.to_string();
                    let mut i = 2;
                    while keys.contains(&key) {
                        key = format!("{base}-{i}");
                        i += 1;
                    }
                    let row = describe(&node.label, &node.summary);
                    (
                        key,
                        format!("- {{key}} (group, {} documents): {row}", node.num_documents),
                    )
                }
                Item::Doc(d) => {
                    let c = &a.cards[d];
                    (
                        crate::serve::agent::compose::key(keys.len() - groups_shown),
                        format!("- {{key}} (document): {}", describe(&c.title, &c.one_line)),
                    )
                }
            };
            rows.push(row.replacen("{key}", &key, 1));
            keys.push(key);
        }
        Some(Menu {
            items,
            keys,
            rows,
            max_pick,
        })
    }

    /// The item a key names; a key the model wrote loosely (case, quotes, a row's whole text)
    /// is matched too.
    pub fn find(&self, key: &str) -> Option<Item> {
        let k = key.trim().trim_matches(['"', '`', '[', ']', '-', ' ']);
        let k = k.split([':', ' ']).next().unwrap_or(k);
        self.keys
            .iter()
            .position(|x| x.eq_ignore_ascii_case(k) || x.eq_ignore_ascii_case(key.trim()))
            .map(|i| self.items[i])
    }

    /// The rows as the prompt shows them.
    pub fn render(&self) -> String {
        self.rows.join("\n")
    }
}

/// `title — description`, the description cut to a row's length.
fn describe(title: &str, text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let clipped = crate::text::clip_chars(&text, ROW_CHARS);
    let more = if clipped.len() < text.len() {
        "…"
    } else {
        ""
    };
    if clipped.is_empty() {
        title.to_string()
    } else {
        format!("{title} — {clipped}{more}")
    }
}
