//! The outline of the skill tree that the agent starts from: the top-level skills with their
//! descriptions, then as many whole levels below them (groups with their summaries, then
//! documents with their titles) as fit a budget, read from the navigation files themselves.
//! A small model that sees the groups picks one by its summary instead of guessing a skill
//! from its description and reading SKILL.md files to learn what it holds.

use std::collections::HashSet;

use super::known::join;
use crate::serve::tools::Tools;

/// Characters of a row's text kept in the outline (its title, count and summary).
const ROW_CHARS: usize = 220;
/// Characters of a skill's description kept in the outline.
const SKILL_CHARS: usize = 400;
/// Words of a skill's description kept when its groups are shown below it.
const SKILL_BRIEF_WORDS: usize = 20;
/// Levels below the skills the outline goes down at most.
const MAX_DEPTH: usize = 8;

/// One line of the outline: a file and what its row (or frontmatter) says of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// 0 for a top-level skill, 1 for its rows, and so on.
    pub depth: usize,
    /// The file, relative to the output root (an anchor kept: `…/INDEX.md#group-02-x`).
    pub path: String,
    pub text: String,
    /// What it shows when a deeper level is shown below it.
    pub brief: String,
}

/// The outline: every entry shown, in tree order.
#[derive(Debug, Clone, Default)]
pub struct Outline {
    pub entries: Vec<Entry>,
    /// Levels below the skills it shows (0: the skills alone).
    pub depth: usize,
}

impl Outline {
    /// The skills, then the deepest whole level whose rendering fits `budget` characters, the
    /// levels above it shown briefly (a skill by the start of its description, a group by its
    /// document count); the skills alone, in full, when no level below them fits.
    pub fn build(skills: &[(String, String)], tools: &Tools, budget: usize) -> Outline {
        let mut levels: Vec<Vec<(usize, Entry)>> = vec![
            skills
                .iter()
                .map(|(name, desc)| {
                    let path = format!("{}/{name}/SKILL.md", crate::format::SKILLS);
                    let text = crate::text::clip_chars(desc, SKILL_CHARS).to_string();
                    let brief = crate::text::clip_line(desc, SKILL_BRIEF_WORDS);
                    (
                        usize::MAX,
                        Entry {
                            depth: 0,
                            path,
                            text,
                            brief,
                        },
                    )
                })
                .collect(),
        ];
        let mut seen: HashSet<String> = HashSet::new();
        let (mut shown, mut above) = (0, 0);
        for depth in 1..=MAX_DEPTH {
            above += levels[depth - 1]
                .iter()
                .map(|(_, e)| line_len(e, &e.brief))
                .sum::<usize>();
            if above > budget {
                break;
            }
            let mut next = Vec::new();
            for (i, (_, parent)) in levels[depth - 1].iter().enumerate() {
                if depth > 1 && !is_page(&parent.path) {
                    continue;
                }
                for (path, text) in rows(tools, &parent.path) {
                    if seen.insert(path.clone()) {
                        let brief = text.split(" — ").next().unwrap_or("").to_string();
                        next.push((
                            i,
                            Entry {
                                depth,
                                path,
                                text,
                                brief,
                            },
                        ));
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            let full: usize = next.iter().map(|(_, e)| line_len(e, &e.text)).sum();
            levels.push(next);
            if above + full <= budget {
                shown = depth;
            }
        }
        levels.truncate(shown + 1);
        Outline {
            entries: in_tree_order(&levels),
            depth: shown,
        }
    }

    /// The files the outline shows.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.path.as_str())
    }

    /// The outline as the model reads it: one indented line per entry.
    pub fn render(&self) -> String {
        self.entries
            .iter()
            .map(|e| {
                line(
                    e,
                    if e.depth < self.depth {
                        &e.brief
                    } else {
                        &e.text
                    },
                )
            })
            .collect()
    }
}

/// An entry's line showing `text`: a page by its path, a document by its title.
fn line(e: &Entry, text: &str) -> String {
    let indent = "  ".repeat(e.depth);
    if !is_page(&e.path) {
        return format!("{indent}- document: {text}\n");
    }
    match (text.is_empty(), e.depth) {
        (true, _) => format!("{indent}- {}\n", e.path),
        (false, 0) => format!("{indent}- {}: {text}\n", e.path),
        (false, _) => format!("{indent}- {} — {text}\n", e.path),
    }
}

/// Characters of an entry's line showing `text`.
fn line_len(e: &Entry, text: &str) -> usize {
    line(e, text).len()
}

/// A navigation page (whose rows are the next level), not a document.
fn is_page(path: &str) -> bool {
    let file = path.split_once('#').map_or(path, |(f, _)| f);
    file.ends_with("/SKILL.md") || file.ends_with("/INDEX.md")
}

/// The levels flattened so that each entry comes right after its parent's earlier children.
fn in_tree_order(levels: &[Vec<(usize, Entry)>]) -> Vec<Entry> {
    fn walk(levels: &[Vec<(usize, Entry)>], depth: usize, parent: usize, out: &mut Vec<Entry>) {
        let Some(level) = levels.get(depth) else {
            return;
        };
        for (i, (p, e)) in level.iter().enumerate() {
            if depth == 0 || *p == parent {
                out.push(e.clone());
                walk(levels, depth + 1, i, out);
            }
        }
    }
    let mut out = Vec::new();
    walk(levels, 0, 0, &mut out);
    out
}

/// The rows of a navigation page's contents: `(file, text)` for each linked group or document
/// (`@see` rows, which repeat a document listed elsewhere, left out). A folded group's rows
/// are a section of its parent's page, read from its anchor to the next section.
fn rows(tools: &Tools, page: &str) -> Vec<(String, String)> {
    let (file, anchor) = match page.split_once('#') {
        Some((f, a)) => (f, Some(a)),
        None => (page, None),
    };
    let Ok(real) = tools.resolve(file) else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(real) else {
        return Vec::new();
    };
    let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = Vec::new();
    for line in section(&text, anchor).lines() {
        let Some(row) = line.strip_prefix("- [") else {
            continue;
        };
        let Some((title, rest)) = row.split_once("](") else {
            continue;
        };
        let Some((link, after)) = rest.split_once(')') else {
            continue;
        };
        if link.contains("://") {
            continue;
        }
        let path = if link.starts_with('#') {
            format!("{file}{link}")
        } else {
            join(dir, link)
        };
        let after = after.trim_start_matches([' ', '—']).trim();
        // A group by what its row says of it; a document by its title, which is how the agent
        // opens it (`get_document` takes a title).
        let text = if is_page(&path) { after } else { title };
        out.push((
            path,
            crate::text::clip_chars(text, ROW_CHARS).trim().to_string(),
        ));
    }
    out
}

/// The contents of a page: its `## Contents` section (for a folded group, the section under its
/// anchor).
fn section<'t>(text: &'t str, anchor: Option<&str>) -> &'t str {
    if let Some(a) = anchor {
        let Some(start) = text.find(&format!("<a id=\"{a}\"></a>")) else {
            return "";
        };
        return until(&text[start..], &["\n<a id=\"group-", "\n## "]);
    }
    let Some(start) = text.find("\n## Contents") else {
        return "";
    };
    until(&text[start + 1..], &["\n<a id=\"", "\n## "])
}

/// `text` up to the first of `ends` found after its first line.
fn until<'t>(text: &'t str, ends: &[&str]) -> &'t str {
    let from = text.find('\n').unwrap_or(text.len());
    let end = ends
        .iter()
        .filter_map(|e| text[from..].find(e).map(|i| from + i + 1))
        .min()
        .unwrap_or(text.len());
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An output of one skill with a group page, a group folded into the skill's page, and
    /// three documents.
    fn output(dir: &std::path::Path) -> Tools {
        let skill = dir.join("skills/skill-00-pay");
        std::fs::create_dir_all(skill.join("group-00-payouts/docs")).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: skill-00-pay\n---\n# Pay\n\n## Example documents\n- [Payouts](group-00-payouts/docs/payouts.md)\n\n\
             ## Contents\n- [group-00-payouts](group-00-payouts/INDEX.md) — 2 documents — Payouts and their delays.\n\
             - [group-01-refunds](#group-01-refunds) — 1 document — Refunds to customers.\n\n\
             <a id=\"group-01-refunds\"></a>\n### group-01-refunds\nRefunds.\n\n- [Refunding a customer for all or part of an order they paid](docs/refunds.md) — How to refund.\n\n\
             ## How to navigate\n- Read [this](nowhere.md) first.\n",
        )
        .unwrap();
        std::fs::write(
            skill.join("group-00-payouts/INDEX.md"),
            "---\nname: group-00-payouts\n---\n## Contents\n- [Receiving payouts to your bank account after each sale](docs/payouts.md) — Payouts arrive in 3 days. — bank\n\
             - [Failed payouts and what to do when your bank returns one](docs/failed.md) — When a payout fails.\n- @see [Refunding a customer for all or part of an order they paid](../docs/refunds.md)\n",
        )
        .unwrap();
        let docs = serde_json::json!({
            "p1": {"title": "Receiving payouts", "text": "x", "file": "skills/skill-00-pay/group-00-payouts/docs/payouts.md"},
            "p2": {"title": "Failed payouts", "text": "y", "file": "skills/skill-00-pay/group-00-payouts/docs/failed.md"},
            "r1": {"title": "Refunding a customer", "text": "z", "file": "skills/skill-00-pay/docs/refunds.md"},
        });
        std::fs::write(dir.join("documents.json"), docs.to_string()).unwrap();
        Tools::open(dir).unwrap()
    }

    #[test]
    fn the_outline_shows_the_deepest_level_that_fits() {
        let dir = tempfile::tempdir().unwrap();
        let tools = output(dir.path());
        let skills = vec![(
            "skill-00-pay".to_string(),
            "Payments: payouts to your bank, their delays and failures, and refunds to customers."
                .to_string(),
        )];
        let alone = Outline::build(&skills, &tools, 10);
        assert_eq!(alone.depth, 0, "{}", alone.render());
        assert_eq!(
            alone.render(),
            format!("- skills/skill-00-pay/SKILL.md: {}\n", skills[0].1)
        );
        let groups = Outline::build(&skills, &tools, 400);
        assert_eq!(groups.depth, 1, "{}", groups.render());
        assert!(
            groups.render().contains(
                "  - skills/skill-00-pay/group-00-payouts/INDEX.md — 2 documents — Payouts and their delays.\n"
            ),
            "{}",
            groups.render()
        );
        assert!(
            groups
                .render()
                .contains("  - skills/skill-00-pay/SKILL.md#group-01-refunds — 1 document"),
            "a folded group is a section of its parent's page: {}",
            groups.render()
        );
        let all = Outline::build(&skills, &tools, 10_000);
        assert_eq!(all.depth, 2);
        let text = all.render();
        // Above the documents, groups by their counts; documents by title, each once (the @see
        // row repeats one), the folded group's from its section.
        assert!(
            text.contains("  - skills/skill-00-pay/group-00-payouts/INDEX.md — 2 documents\n"),
            "{text}"
        );
        assert!(
            text.contains("    - document: Receiving payouts to your bank account after each sale\n    - document: Failed payouts"),
            "{text}"
        );
        assert_eq!(text.matches("Refunding a customer").count(), 1, "{text}");
        assert!(!text.contains("nowhere.md"), "{text}");
        let files: Vec<&str> = all.files().collect();
        assert!(
            files.contains(&"skills/skill-00-pay/docs/refunds.md"),
            "{files:?}"
        );
        // The budget holds what is rendered.
        let fits = Outline::build(&skills, &tools, text.len());
        assert_eq!(fits.depth, 2);
        assert_eq!(Outline::build(&skills, &tools, text.len() - 1).depth, 1);
    }

    #[test]
    fn the_contents_section_ends_at_the_next_heading() {
        let page = "# T\n\n## Example documents\n- [A](docs/a.md)\n\n## Contents\n- [g](g/INDEX.md) — 3 documents — x\n\n## How to navigate\n- [not](a row)\n";
        assert_eq!(
            section(page, None),
            "## Contents\n- [g](g/INDEX.md) — 3 documents — x\n\n"
        );
        let folded = "## Contents\n<a id=\"group-01-a\"></a>\n### group-01-a\n- [D](docs/d.md)\n<a id=\"group-02-b\"></a>\n- [E](docs/e.md)\n";
        assert!(section(folded, Some("group-01-a")).contains("docs/d.md"));
        assert!(!section(folded, Some("group-01-a")).contains("docs/e.md"));
    }
}
