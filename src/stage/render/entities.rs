//! The entity indexes: `entity_index.md` (one greppable line per lowercased entity, the folders
//! that mention it, most mentions first), `entity_index.json`, and each top-level skill's own
//! `entities.md` (its folders, then the other skills that mention the entity), which keeps a
//! skill folder self-contained.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::place::Placement;
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
pub fn global_markdown(
    tree: &Tree,
    pl: &Placement,
    index: &BTreeMap<String, EntityEntry>,
) -> String {
    let mut s = String::from(
        "# Entity index\n\nOne line per entity (lowercase): the folders (relative to this file) \
         whose groups mention it, most mentions first. Find one with \
         `grep -i \"name\" entity_index.md`, then read the SKILL.md or INDEX.md in the folder.\n\n",
    );
    for (entity, e) in index {
        let paths: Vec<&str> = e
            .nodes
            .iter()
            .map(|&(n, _)| pl.node_location(tree, n))
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
pub fn global_json(tree: &Tree, pl: &Placement, index: &BTreeMap<String, EntityEntry>) -> String {
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
                        .map(|&(n, _)| pl.node_location(tree, n))
                        .collect(),
                    mentions: e.nodes.iter().map(|&(_, m)| m).collect(),
                },
            )
        })
        .collect();
    serde_json::to_string_pretty(&map).expect("index serializes") + "\n"
}

/// A top-level skill's `entities.md`, and when it is over the token cap its later parts
/// (`entities-2.md`, …), split between lines: output path → text. The first part names the others.
pub fn skill_files(
    tree: &Tree,
    pl: &Placement,
    root: usize,
    index: &BTreeMap<String, EntityEntry>,
) -> Vec<(String, String)> {
    let here = &tree.nodes[root].path;
    let lines = skill_lines(tree, pl, root, index);
    let head = |glob: &str| {
        format!(
            "# Entities in {}\n\nOne line per entity (lowercase): the folders of this skill whose \
             groups mention it, most mentions first; `also:` other skills that mention it. Find one \
             with `grep -i \"name\" {glob}`.\n\n",
            tree.nodes[root].folder
        )
    };
    let total: usize = lines.iter().map(String::len).sum();
    let cap = pl.file_bytes.map(|b| b.saturating_sub(1024).max(1024));
    let Some(cap) = cap.filter(|&c| total + head(SKILL_ENTITIES).len() > c) else {
        let mut s = head(SKILL_ENTITIES);
        lines.iter().for_each(|l| s.push_str(l));
        return vec![(format!("{here}/{SKILL_ENTITIES}"), s)];
    };
    let mut chunks: Vec<String> = vec![String::new()];
    for l in &lines {
        let cur = chunks.last_mut().expect("one chunk");
        if !cur.is_empty() && cur.len() + l.len() > cap {
            chunks.push(String::new());
        }
        chunks.last_mut().expect("one chunk").push_str(l);
    }
    let n = chunks.len();
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, body)| {
            let name = part_name(i);
            let first = body.split(" — ").next().unwrap_or_default().to_string();
            let mut s = head(&entity_glob(n));
            let _ = writeln!(
                s,
                "Part {} of {n} (from \"{}\"), split so that no file is over the host's token limit.\n",
                i + 1,
                first
            );
            s.push_str(&body);
            (format!("{here}/{name}"), s)
        })
        .collect()
}

/// The file name of part `i` (from 0) of a skill's entity index.
fn part_name(i: usize) -> String {
    if i == 0 {
        SKILL_ENTITIES.to_string()
    } else {
        format!("entities-{}.md", i + 1)
    }
}

/// What to grep for a skill's entities: `entities.md`, or `entities*.md` when split.
pub fn entity_glob(parts: usize) -> String {
    if parts > 1 {
        "entities*.md".to_string()
    } else {
        SKILL_ENTITIES.to_string()
    }
}

/// One line per entity tagged in the skill: this skill's folders (relative to the skill folder;
/// `.` is the skill itself), then the other top-level skills that mention it.
fn skill_lines(
    tree: &Tree,
    pl: &Placement,
    root: usize,
    index: &BTreeMap<String, EntityEntry>,
) -> Vec<String> {
    let here = &tree.nodes[root].path;
    let mut out = Vec::new();
    for (entity, e) in index {
        let mut inside = Vec::new();
        let mut elsewhere: Vec<String> = Vec::new();
        for &(n, _) in &e.nodes {
            let r = tree.root_of(n);
            if r == root {
                let rel = relative(here, pl.node_location(tree, n));
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
        let mut s = format!("{} — {}", key(entity), inside.join(", "));
        if !elsewhere.is_empty() {
            let _ = write!(s, "; also: {}", elsewhere.join(", "));
        }
        s.push('\n');
        out.push(s);
    }
    out
}
