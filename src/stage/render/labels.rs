//! Sphinx's labels, which `:ref:` and MyST links (`[text](label)`) name instead of a page:
//! `.. _label:` in reST and `(label)=` in MyST, each on the page it is written in, at the
//! section title that follows it. Read from the pages' files once, when a link first needs one.

use std::collections::HashMap;

use crate::ingest::Document;

/// Where a label points: a document, and the anchor of its section (none for the page's title).
pub type Place = (usize, Option<String>);

/// Every label of the corpus's reST and Markdown pages, by name (Sphinx compares them
/// lowercased). The first page to define one keeps it.
pub fn read(docs: &[Document], roots: &[std::path::PathBuf]) -> HashMap<String, Place> {
    let mut out = HashMap::new();
    for (d, doc) in docs.iter().enumerate() {
        let Some(o) = doc.origin.as_ref().filter(|o| !o.multi) else {
            continue;
        };
        let rst = o.rel.ends_with(".rst") || o.rel.ends_with(".rest");
        if !rst && !o.rel.ends_with(".md") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(roots[o.root].join(&o.rel)) else {
            continue;
        };
        for (label, anchor) in in_page(&text, rst) {
            out.entry(label).or_insert((d, anchor));
        }
    }
    out
}

/// Whether a link's destination may be a label: one name, no folder.
pub fn may_be_label(dest: &str) -> bool {
    !dest.trim().is_empty() && !dest.contains(['/', '\\']) && !dest.starts_with('.')
}

/// A label as Sphinx compares them: lowercased, whitespace collapsed.
pub fn normalized(label: &str) -> String {
    label
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A page's labels, each with the anchor of the section title after it (none when that is the
/// page's first title).
fn in_page(text: &str, rst: bool) -> Vec<(String, Option<String>)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut titles = 0;
    let mut pending: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut fence = false;
    let mut module: Option<&str> = None;
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim();
        if rst && let Some((kind, name)) = object_of(t) {
            // An API object (`.. autofunction:: attrs.define`) is a target too, with and
            // without its module, at its page.
            if kind == "module" || kind == "currentmodule" {
                module = Some(name);
                continue;
            }
            out.push((normalized(name), None));
            if let Some(m) = module.filter(|m| !name.starts_with(&format!("{m}."))) {
                out.push((normalized(&format!("{m}.{name}")), None));
            }
            continue;
        }
        if !rst && (t.starts_with("```") || t.starts_with("~~~")) {
            fence = !fence;
        }
        if fence {
            continue;
        }
        if let Some(label) = label_of(t, rst) {
            pending.push(label);
            continue;
        }
        let title = if rst {
            lines
                .get(i + 1)
                .filter(|u| underlines(u, l))
                .map(|_| t.to_string())
        } else {
            let hashes = t.chars().take_while(|&c| c == '#').count();
            ((1..=6).contains(&hashes) && t[hashes..].starts_with(' '))
                .then(|| t[hashes..].trim().to_string())
        };
        if let Some(title) = title {
            titles += 1;
            let anchor = (titles > 1).then(|| slug(&title));
            out.extend(pending.drain(..).map(|p| (p, anchor.clone())));
        }
    }
    // A label after the last title points to the page.
    out.extend(pending.into_iter().map(|p| (p, None)));
    out
}

/// `.. [py:|auto]kind:: name(args)` → the kind and the object's name.
fn object_of(t: &str) -> Option<(&str, &str)> {
    let rest = t.strip_prefix(".. ")?;
    let (kind, arg) = rest.split_once("::")?;
    let kind = kind.strip_prefix("py:").unwrap_or(kind);
    let kind = kind.strip_prefix("auto").unwrap_or(kind);
    let name = arg.trim().split(['(', ' ']).next()?;
    let known =
        crate::rst::PYTHON_OBJECTS.contains(&kind) || matches!(kind, "module" | "currentmodule");
    (known && !name.is_empty()).then_some((kind, name))
}

/// Pages every Sphinx site has that no source file is (its index, its search page).
pub fn is_generated_page(dest: &str) -> bool {
    matches!(dest, "genindex" | "modindex" | "py-modindex" | "search")
}

/// The label a line defines: `.. _name:` (reST) or `(name)=` (MyST).
fn label_of(t: &str, rst: bool) -> Option<String> {
    let name = if rst {
        let rest = t.strip_prefix(".. _")?.strip_suffix(':')?;
        rest.trim_matches('`')
    } else {
        t.strip_prefix('(')?.strip_suffix(")=")?
    };
    let ok = !name.is_empty() && !name.contains(": ") && !name.contains("://");
    ok.then(|| normalized(name))
}

fn underlines(u: &str, title: &str) -> bool {
    let c = u.chars().next();
    c.is_some_and(|c| "=-~^\"'`#*+_:.<>".contains(c))
        && u.len() >= 2
        && u.chars().all(|x| Some(x) == c)
        && !title.trim().is_empty()
        && !title.starts_with(' ')
}

/// A section title's anchor as Markdown renderers make it: lowercased, punctuation dropped,
/// spaces as hyphens.
fn slug(title: &str) -> String {
    title
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_point_at_the_section_after_them() {
        let rst = ".. _quickstart:\n\nQuickstart\n==========\n\n.. _make-request:\n\nMake a Request\n--------------\n\n.. _`Odd  Name`:\n";
        assert_eq!(
            in_page(rst, true),
            vec![
                ("quickstart".to_string(), None),
                (
                    "make-request".to_string(),
                    Some("make-a-request".to_string())
                ),
                ("odd name".to_string(), None),
            ]
        );
        let md = "# Types\n\n(how-frozen)=\n\n## How Frozen Works\n\n```\n(not-a-label)=\n```\n";
        assert_eq!(
            in_page(md, false),
            vec![(
                "how-frozen".to_string(),
                Some("how-frozen-works".to_string())
            )]
        );
        let api = ".. module:: attrs\n\nAPI\n===\n\n.. function:: mutable(same_as_define)\n\n.. autofunction:: attrs.define\n\n.. currentmodule:: attrs.filters\n\n.. autofunction:: include\n";
        let names: Vec<String> = in_page(api, true).into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "mutable",
                "attrs.mutable",
                "attrs.define",
                "include",
                "attrs.filters.include"
            ]
        );
        assert!(may_be_label("install") && may_be_label("attrs.mutable"));
        assert!(may_be_label("pytest.mark.xfail ref"));
        assert!(!may_be_label("../x") && !may_be_label("a/b"));
    }
}
