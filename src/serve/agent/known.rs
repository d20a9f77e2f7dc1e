//! What the agent has seen so far: the files the tree links to from what it read (resolved to
//! paths from the output root), and the document ids it was shown. The JSON action protocol
//! offers exactly these as choices, and a path written relative to a file read before is
//! resolved against them.

use crate::serve::tools::Tools;

/// Paths and ids seen in the conversation, in the order they were first seen.
#[derive(Debug, Clone, Default)]
pub struct Known {
    /// Files (navigation and document files), relative to the output root.
    pub files: Vec<String>,
    /// Document ids from rows, links and search hits.
    pub ids: Vec<String>,
}

fn add(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

impl Known {
    /// What the opening shows: each skill's SKILL.md, and the entity index.
    pub fn new(skills: &[(String, String)], tools: &Tools) -> Known {
        let mut k = Known::default();
        for (name, _) in skills {
            add(
                &mut k.files,
                format!("{}/{name}/SKILL.md", crate::format::SKILLS),
            );
        }
        if tools.resolve("entity_index.md").is_ok() {
            add(&mut k.files, "entity_index.md".into());
        }
        k
    }

    /// Learns the files (and the ids of the document files) an outline shows.
    pub fn learn_files<'f>(&mut self, files: impl Iterator<Item = &'f str>, tools: &Tools) {
        for f in files {
            self.add_file(f, tools);
        }
    }

    /// Learns the paths and ids a tool result shows.
    pub fn learn(&mut self, tool: &str, arg: &str, result: &str, tools: &Tools) {
        match tool {
            "cat" | "ls" => {
                let dir = if tool == "ls" {
                    arg.trim_end_matches('/').to_string()
                } else {
                    parent(arg)
                };
                let targets: Vec<String> = if tool == "ls" {
                    result
                        .lines()
                        .map(|l| match l.strip_suffix('/') {
                            Some(folder) => format!("{folder}/INDEX.md"),
                            None => l.to_string(),
                        })
                        .collect()
                } else {
                    links(result)
                };
                for t in targets {
                    self.add_file(&join(&dir, &t), tools);
                }
            }
            "grep" => {
                for l in result.lines() {
                    if let Some((path, _)) = l.split_once(':') {
                        self.add_file(path, tools);
                    }
                }
            }
            "search" => {
                for l in result.lines() {
                    if let Some((id, _)) = l.split_once(" — ")
                        && tools.document_id(id).is_some()
                    {
                        add(&mut self.ids, id.trim().to_string());
                    }
                }
            }
            _ => {}
        }
    }

    fn add_file(&mut self, path: &str, tools: &Tools) {
        let is_file = tools.resolve(path).is_ok_and(|p| p.is_file());
        if !is_file || !path.ends_with(".md") {
            return;
        }
        if let Some(id) = tools.document_of(path) {
            add(&mut self.ids, id);
            add(&mut self.files, path.to_string());
        } else {
            let file = path.split_once('#').map_or(path, |(f, _)| f);
            add(&mut self.files, file.to_string());
        }
    }

    /// What the next action may choose: the files and ids seen and not yet used, newest first.
    pub fn choices(&self, read: &[String], opened: &[String]) -> (Vec<String>, Vec<String>) {
        let fresh = |list: &[String], used: &[String]| -> Vec<String> {
            list.iter()
                .rev()
                .filter(|x| !used.contains(x))
                .cloned()
                .collect()
        };
        (fresh(&self.files, read), fresh(&self.ids, opened))
    }

    /// A path as the tools take it: as written when it exists, else the one file seen whose
    /// path ends with it (a link written relative to the file it was read in).
    pub fn resolve(&self, path: &str, tools: &Tools) -> String {
        let p = path.trim().trim_start_matches("./");
        if tools.resolve(p).is_ok() {
            return p.to_string();
        }
        let bare = p.trim_start_matches('/').trim_end_matches('/');
        let suffix = format!("/{bare}");
        let mut hits = self.files.iter().filter(|f| f.ends_with(&suffix));
        if let (Some(one), None) = (hits.next(), hits.next()) {
            return one.clone();
        }
        // A folder named without its parents (`skill-05-x` for `skills/skill-05-x`).
        let inner = format!("/{bare}/");
        let mut folders: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| f.find(&inner).map(|i| f[..i + inner.len() - 1].to_string()))
            .collect();
        folders.sort();
        folders.dedup();
        match folders.as_slice() {
            [one] => one.clone(),
            _ => p.to_string(),
        }
    }
}

/// The folder of a path (`""` at the root).
fn parent(path: &str) -> String {
    path.trim_end_matches('/')
        .rsplit_once('/')
        .map_or(String::new(), |(d, _)| d.to_string())
}

/// `dir/target`, with `.` and `..` folded.
pub(super) fn join(dir: &str, target: &str) -> String {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in target.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    parts.join("/")
}

/// The targets of Markdown links `](target)`; same-file anchors (`#x`) are left out.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        let Some(end) = after.find(')') else { break };
        // A bundle link keeps its `#<id>`: the anchor names the document.
        let t = after[..end].trim();
        if !t.is_empty() && !t.starts_with('#') && !t.contains("://") {
            out.push(t.to_string());
        }
        rest = &after[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_named_without_its_parents_is_found() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("documents.json"), "{}").unwrap();
        let tools = Tools::open(dir.path()).unwrap();
        let k = Known::new(&[("skill-05-google".into(), String::new())], &tools);
        assert_eq!(
            k.resolve("skill-05-google", &tools),
            "skills/skill-05-google"
        );
        assert_eq!(
            k.resolve("skill-05-google/", &tools),
            "skills/skill-05-google"
        );
        assert_eq!(
            k.resolve("SKILL.md", &tools),
            "skills/skill-05-google/SKILL.md"
        );
        assert_eq!(k.resolve("other", &tools), "other");
    }

    #[test]
    fn links_resolve_against_their_file() {
        assert_eq!(
            join("skills/s0", "group-01-x/INDEX.md"),
            "skills/s0/group-01-x/INDEX.md"
        );
        assert_eq!(
            join("skills/s0/g1", "../../s1/g2/docs/a.md"),
            "skills/s1/g2/docs/a.md"
        );
        assert_eq!(parent("skills/s0/SKILL.md"), "skills/s0");
        assert_eq!(
            links(
                "- [A](group-00/INDEX.md) — x\n- [B](../bundles/001.md#b) — y [c](https://x.io) [d](#g)"
            ),
            vec!["group-00/INDEX.md", "../bundles/001.md#b"]
        );
    }
}
