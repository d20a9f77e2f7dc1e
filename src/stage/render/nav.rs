//! SKILL.md / INDEX.md: Agent Skills frontmatter, overview, related skills, example documents,
//! contents (sub-groups, or document rows linking each document's file, then `@see` stubs), and
//! the fixed directions that tell an agent how to go on.

use std::fmt::Write as _;

use super::{Ctx, relative, yaml_str};
use crate::llm::Card;
use crate::text::{clip_line, plural};
use crate::tree::Node;

/// Document rows show at most this many words of the one-line and this many phrases, so a
/// group of `p` documents stays near 2 KB (the full card is in the document's own entry).
pub const ROW_WORDS: usize = 12;
pub const ROW_PHRASES: usize = 2;

/// The Agent Skills limit on `description`, in UTF-16 code units (what the reference validator
/// counts).
pub const MAX_DESCRIPTION: usize = 1024;
/// Group descriptions (INDEX.md) are kept short: their Overview follows right below.
const GROUP_DESCRIPTION: usize = 200;
/// Entities a navigation file's frontmatter names (its entity files hold all of them).
const FRONT_ENTITIES: usize = 8;
/// Entities named in a description's "Use for" clause.
const WHEN_ENTITIES: usize = 4;

/// Renders the navigation file of one node.
pub fn nav_file(ctx: &Ctx, node: usize, entity_glob: &str) -> String {
    let tree = ctx.tree;
    let n = &tree.nodes[node];
    let mut s = String::with_capacity(2048);
    let description = description(n);
    frontmatter(&mut s, n, &description);
    let _ = writeln!(s, "# {}\n", title_case(&n.label));
    // A top-level skill's description already carries its whole summary (an agent saw it in
    // the skill list); its body repeats it only when the description had to be cut. A group's
    // description is its summary's first sentence: the Overview goes on from there.
    let overview = if n.parent.is_none() {
        (!description.starts_with(n.summary.trim())).then_some(n.summary.trim())
    } else {
        let rest = n.summary.trim()[crate::text::first_sentence(n.summary.trim()).len()..].trim();
        let cut = !description.starts_with(crate::text::first_sentence(n.summary.trim()));
        Some(if cut { n.summary.trim() } else { rest }).filter(|o| !o.is_empty())
    };
    if let Some(o) = overview {
        let _ = writeln!(s, "## Overview\n{o}\n");
    }
    // Sections with nothing to list are left out: navigation files stay small.
    if !n.related.is_empty() {
        s.push_str("## Related skills\n");
        for &r in &n.related {
            let rn = &tree.nodes[r];
            // A skill is uploaded alone: another one is named (hosts list skills by name),
            // never linked by a path outside this folder. A group links its sibling.
            if n.parent.is_none() {
                let _ = writeln!(s, "- `{}` — {}", rn.folder, rn.label);
            } else {
                let _ = writeln!(
                    s,
                    "- [{}]({}) — {}",
                    rn.folder,
                    relative(&n.path, &tree.nav_file(r)),
                    rn.label
                );
            }
        }
        s.push('\n');
    }
    if !n.exemplars.is_empty() {
        s.push_str("## Example documents\n");
        for &d in &n.exemplars {
            let _ = writeln!(s, "- {}", ctx.doc_ref(d, &n.path));
        }
        s.push('\n');
    }
    s.push_str("## Contents\n");
    if n.children.is_empty() {
        document_rows(&mut s, ctx, node, &n.path);
    } else {
        for &c in &n.children {
            let k = &tree.nodes[c];
            let link = if ctx.place.folded[c] {
                format!("#{}", k.folder)
            } else {
                relative(&n.path, &tree.nav_file(c))
            };
            let _ = writeln!(
                s,
                "- [{}]({link}) — {} — {}",
                k.folder,
                plural(k.num_documents, "document"),
                clip_line(crate::text::first_sentence(&k.summary), 20)
            );
        }
        for &c in n.children.iter().filter(|&&c| ctx.place.folded[c]) {
            folded_section(&mut s, ctx, c, &n.path);
        }
    }
    directions(&mut s, ctx, node, entity_glob);
    s
}

/// A leaf folded into its parent's page: a heading and anchor named by its folder, its
/// summary, and its document rows.
fn folded_section(s: &mut String, ctx: &Ctx, leaf: usize, from: &str) {
    let k = &ctx.tree.nodes[leaf];
    let _ = writeln!(
        s,
        "\n<a id=\"{}\"></a>\n### {}\n{}\n",
        k.folder,
        k.folder,
        k.summary.trim()
    );
    document_rows(s, ctx, leaf, from);
}

/// Frontmatter with only the Agent Skills fields; c2s's own go under `metadata`, as strings.
fn frontmatter(s: &mut String, n: &Node, description: &str) {
    s.push_str("---\n");
    let _ = writeln!(s, "name: {}", n.folder);
    let _ = writeln!(s, "description: {}", yaml_str(description));
    s.push_str("metadata:\n");
    let _ = writeln!(s, "  level: \"{}\"", n.level);
    let _ = writeln!(s, "  documents: \"{}\"", n.num_documents);
    let _ = writeln!(s, "  label: {}", yaml_str(&n.label));
    // The main names only: the entity files list every one.
    let main: Vec<&str> = n
        .tags
        .entities
        .iter()
        .take(FRONT_ENTITIES)
        .map(String::as_str)
        .collect();
    let _ = writeln!(s, "  entities: {}", yaml_str(&main.join(", ")));
    let _ = writeln!(s, "  doc_types: {}", yaml_str(&n.tags.doc_types.join(", ")));
    s.push_str("---\n");
}

/// Document rows (in the authors' order in a section, else sorted by id), each linking the document's file (or its section of a bundle),
/// then `@see` stubs linking the home of a document that lives in another group; links are
/// relative to the folder `from` of the page they are on.
fn document_rows(s: &mut String, ctx: &Ctx, node: usize, from: &str) {
    let n = &ctx.tree.nodes[node];
    let mut rows: Vec<usize> = n.docs.clone();
    if !n.ordered {
        rows.sort_by(|a, b| ctx.docs[*a].id.cmp(&ctx.docs[*b].id));
    }
    for d in rows {
        let c = &ctx.cards[d];
        let _ = write!(
            s,
            "- {} — {}",
            ctx.doc_ref(d, from),
            clip_line(&c.one_line, ROW_WORDS)
        );
        let phrases = row_phrases(c);
        if !phrases.is_empty() {
            let _ = write!(s, " — {}", phrases.join("; "));
        }
        s.push('\n');
    }
    let mut stubs = n.see_also.clone();
    stubs.sort_by(|a, b| ctx.docs[*a].id.cmp(&ctx.docs[*b].id));
    let skill = ctx.tree.root_of(node);
    for d in stubs {
        // A document of another skill is opened by id: no path leaves this skill.
        if ctx.tree.root_of(ctx.home[d]) == skill {
            let _ = writeln!(s, "- @see {}", ctx.doc_ref(d, from));
        } else {
            let title = super::nav::link_text(&ctx.cards[d].title);
            let _ = writeln!(
                s,
                "- @see {title} (id: `{}`, in another skill)",
                ctx.docs[d].id
            );
        }
    }
}

/// The fixed instructions at the end of every navigation file.
fn directions(s: &mut String, ctx: &Ctx, node: usize, entity_glob: &str) {
    let tree = ctx.tree;
    let n = &tree.nodes[node];
    let root = &tree.nodes[tree.root_of(node)];
    let entities = relative(&n.path, &format!("{}/{entity_glob}", root.path));
    let folded = n.children.iter().any(|&c| ctx.place.folded[c]);
    s.push_str("\n## How to navigate\n");
    if n.children.is_empty() {
        if ctx.place.by_id {
            s.push_str(
                "- Open each fitting row's document with `get_document` and the id it gives \
                 (documents are served by id, not kept in this skill). `@see` rows live in \
                 another group.\n",
            );
        } else if n.docs.iter().any(|&d| ctx.place.docs[d].anchor.is_some()) {
            s.push_str(
                "- Open each fitting row's link (a `bundles/NNN.md#<id>` link is one section of \
                 that file), or `get_document` with its id. `@see` rows live in another group.\n",
            );
        } else {
            s.push_str(
                "- Open each fitting row's file, or `get_document` with its id (the `id:` at the \
                 top of its file). `@see` rows live in another group.\n",
            );
        }
        let up = if n.parent.is_some() {
            "Go up and read the next best sub-group"
        } else {
            "Try the next best skill"
        };
        let _ = writeln!(
            s,
            "- Nothing fits? {up}, or `grep -i \"name\" {entities}` for a named product, \
             setting or error."
        );
    } else if folded {
        let open = if ctx.place.by_id {
            "open each fitting row's document with `get_document` and the id it gives"
        } else {
            "open each fitting row's link (a `bundles/NNN.md#<id>` link is one section of that \
             file), or `get_document` with its id"
        };
        let _ = writeln!(
            s,
            "- The sub-groups' documents are listed in the sections above: {open}.\n\
             - Nothing fits? Go up, or `grep -i \"name\" {entities}` for a named product, \
             setting or error."
        );
    } else {
        let open = if ctx.place.by_id {
            "Open a document with `get_document` and the id its row gives (documents are \
             served by id, not kept in the skill)."
        } else {
            "Open a document by its file (`docs/<name>.md` in a group, named after its \
             source) or `get_document` with its id (the `id:` at the top of its file)."
        };
        let _ = writeln!(
            s,
            "- Read the INDEX.md of the sub-group that fits; if two could, read both.\n\
             - {open}\n\
             - Named product, setting or error? `grep -i \"name\" {entities}` lists the groups \
             that mention it, most first."
        );
    }
    s.push_str("- Answer only from documents you opened; cite their ids.\n");
}

/// What the node covers, then when to use it, within the Agent Skills limit. Top-level skills
/// carry the whole summary (what an agent routes on); groups its first sentence.
fn description(n: &Node) -> String {
    let what = if n.summary.trim().is_empty() {
        n.label.clone()
    } else if n.parent.is_none() {
        n.summary.trim().to_string()
    } else {
        crate::text::first_sentence(n.summary.trim()).to_string()
    };
    if n.parent.is_some() {
        // Groups are not skills of their own: a short "what" is all a reader needs here.
        return clip_utf16(&what, GROUP_DESCRIPTION).trim_end().to_string();
    }
    let mut when = format!("Use for questions about {}", n.label);
    let ents: Vec<&str> = n
        .tags
        .entities
        .iter()
        .take(WHEN_ENTITIES)
        .map(String::as_str)
        .collect();
    if !ents.is_empty() {
        let _ = write!(when, " ({})", ents.join(", "));
    }
    when.push('.');
    let when = clip_utf16(&when, MAX_DESCRIPTION / 2);
    let room = MAX_DESCRIPTION - utf16_len(when) - 1;
    let what = clip_utf16(&what, room);
    format!("{} {when}", what.trim_end())
}

fn utf16_len(s: &str) -> usize {
    s.chars().map(char::len_utf16).sum()
}

/// The longest prefix of `s` of at most `max` UTF-16 code units, cut at a char boundary.
fn clip_utf16(s: &str, max: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += c.len_utf16();
        if used > max {
            return &s[..i];
        }
    }
    s
}

/// Phrases that add to the title: ones the title already contains are left out of the row.
fn row_phrases(c: &Card) -> Vec<&str> {
    let title = c.title.to_lowercase();
    c.phrases
        .iter()
        .filter(|p| !title.contains(&p.to_lowercase()))
        .take(ROW_PHRASES)
        .map(String::as_str)
        .collect()
}

/// A title as Markdown link text: one line, brackets escaped.
pub(super) fn link_text(title: &str) -> String {
    let mut out = String::with_capacity(title.len() + 4);
    for (i, w) in title.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let mut rest = w;
        while let Some(at) = rest.find(['[', ']']) {
            out.push_str(&rest[..at]);
            out.push('\\');
            out.push_str(&rest[at..at + 1]);
            rest = &rest[at + 1..];
        }
        out.push_str(rest);
    }
    out
}

fn title_case(label: &str) -> String {
    let mut c = label.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_text_is_one_line_with_brackets_escaped() {
        for title in [
            "",
            "Plain title",
            "  Spaced\t out\n title  ",
            "[Beta] feature ]x[ and [[nested]]",
            "Non\u{a0}breaking\u{2003}spaces — and émoji 🎉 [ok]",
        ] {
            let want = crate::text::one_line(title)
                .replace('[', "\\[")
                .replace(']', "\\]");
            assert_eq!(link_text(title), want, "{title:?}");
        }
        assert_eq!(link_text(" a [b]\n c"), "a \\[b\\] c");
    }

    #[test]
    fn descriptions_fit_the_limit_in_utf16() {
        let node = Node {
            summary: "𝔘".repeat(2000),
            label: "math letters".into(),
            ..Node::default()
        };
        let d = description(&node);
        assert!(utf16_len(&d) <= MAX_DESCRIPTION, "{}", utf16_len(&d));
        assert!(d.ends_with("Use for questions about math letters."));
    }
}
