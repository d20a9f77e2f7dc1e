//! The entity indexes: `entity_index.md` (one greppable line per lowercased entity, the folders
//! that mention it, most mentions first), `entity_index.json`, and each top-level skill's own
//! `entities.md` (its folders, then the other skills that mention the entity), which keeps a
//! skill folder self-contained.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::relative;
use crate::stage::enrich::EntityEntry;
use crate::tree::Tree;

/// The per-skill entity index, at the top of each skill folder.
pub const SKILL_ENTITIES: &str = "entities.md";

/// An entity's line key: one line, no separator look-alikes.
fn key(entity: &str) -> String {
    crate::text::one_line(entity).replace(" — ", " - ")
}

/// `entity_index.md`.
pub fn global_markdown(tree: &Tree, index: &BTreeMap<String, EntityEntry>) -> String {
    let mut s = String::from(
        "# Entity index\n\nOne line per entity (lowercase): the folders (relative to this file) \
         whose groups mention it, most mentions first. Find one with \
         `grep -i \"name\" entity_index.md`, then read the SKILL.md or INDEX.md in the folder.\n\n",
    );
    for (entity, e) in index {
        let paths: Vec<&str> = e
            .nodes
            .iter()
            .map(|&(n, _)| tree.nodes[n].path.as_str())
            .collect();
        let _ = writeln!(s, "{} — {}", key(entity), paths.join(", "));
    }
    s
}

#[derive(Serialize)]
struct JsonEntry<'a> {
    /// Documents that mention the entity.
    count: usize,
    /// Folders of the tagged groups, most mentions first.
    skill_paths: Vec<&'a str>,
    /// Mentions per folder, in the same order.
    mentions: Vec<usize>,
}

/// `entity_index.json`: `{entity: {count, skill_paths, mentions}}`.
pub fn global_json(tree: &Tree, index: &BTreeMap<String, EntityEntry>) -> String {
    let map: BTreeMap<&str, JsonEntry> = index
        .iter()
        .map(|(k, e)| {
            (
                k.as_str(),
                JsonEntry {
                    count: e.documents,
                    skill_paths: e
                        .nodes
                        .iter()
                        .map(|&(n, _)| tree.nodes[n].path.as_str())
                        .collect(),
                    mentions: e.nodes.iter().map(|&(_, m)| m).collect(),
                },
            )
        })
        .collect();
    serde_json::to_string_pretty(&map).expect("index serializes") + "\n"
}

/// A top-level skill's `entities.md`: the entities tagged anywhere in it, with this skill's
/// folders (relative to the skill folder; `.` is the skill itself) and then the other
/// top-level skills that mention them.
pub fn skill_markdown(tree: &Tree, root: usize, index: &BTreeMap<String, EntityEntry>) -> String {
    let here = &tree.nodes[root].path;
    let mut s = format!(
        "# Entities in {}\n\nOne line per entity (lowercase): the folders of this skill whose \
         groups mention it, most mentions first; `also:` other skills that mention it. Find one \
         with `grep -i \"name\" {}`.\n\n",
        tree.nodes[root].folder, SKILL_ENTITIES
    );
    for (entity, e) in index {
        let mut inside = Vec::new();
        let mut elsewhere: Vec<String> = Vec::new();
        for &(n, _) in &e.nodes {
            let r = tree.root_of(n);
            if r == root {
                let rel = relative(here, &tree.nodes[n].path);
                inside.push(if rel.is_empty() { ".".to_string() } else { rel });
            } else {
                let other = relative(here, &tree.nodes[r].path);
                if !elsewhere.contains(&other) {
                    elsewhere.push(other);
                }
            }
        }
        if inside.is_empty() {
            continue;
        }
        let _ = write!(s, "{} — {}", key(entity), inside.join(", "));
        if !elsewhere.is_empty() {
            let _ = write!(s, "; also: {}", elsewhere.join(", "));
        }
        s.push('\n');
    }
    s
}
