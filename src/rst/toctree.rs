//! Sphinx toctrees, the navigation of a Sphinx site: `.. toctree::` in reST pages and
//! `` ```{toctree} `` fences in MyST Markdown pages, with their captions, entries (`target`,
//! `Title <target>`, `self`, URLs) and globs, and the title of the section each sits in.

/// One toctree of a page.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Toctree {
    /// Its `:caption:`.
    pub caption: Option<String>,
    /// The title of the page section it sits in (not the page's own title).
    pub section: Option<String>,
    /// Whether its entries are glob patterns (`:glob:`).
    pub glob: bool,
    pub entries: Vec<Entry>,
}

/// One entry: a page (relative to the page's folder, or to the source folder when it starts
/// with `/`), with the title it is listed under when the entry gives one.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub title: Option<String>,
    pub target: String,
}

/// The toctrees of a reST page.
pub fn in_rst(text: &str) -> Vec<Toctree> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut headings = 0;
    let mut section: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        let t = l.trim_start();
        if let Some(next) = lines.get(i + 1)
            && is_underline(next, l)
        {
            headings += 1;
            // The first heading is the page's title, not a section of it.
            section = (headings > 1).then(|| l.trim().to_string());
            i += 2;
            continue;
        }
        if t.starts_with(".. toctree::") {
            let ind = l.len() - t.len();
            let mut body = Vec::new();
            let mut j = i + 1;
            while j < lines.len()
                && (lines[j].trim().is_empty()
                    || lines[j].len() - lines[j].trim_start().len() > ind)
            {
                body.push(lines[j].trim());
                j += 1;
            }
            let mut tree = parse_body(&body);
            tree.section = section.clone();
            out.push(tree);
            i = j;
            continue;
        }
        i += 1;
    }
    out
}

/// The toctrees of a MyST Markdown page (`` ```{toctree} `` or `:::{toctree}` fences).
pub fn in_myst(text: &str) -> Vec<Toctree> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut headings = 0;
    let mut section = None;
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim();
        if t.starts_with('#') {
            let title = t.trim_start_matches('#').trim();
            headings += 1;
            section = (headings > 1 && !title.is_empty()).then(|| title.to_string());
        }
        let fence_char = t.chars().next().filter(|c| *c == '`' || *c == ':');
        let Some(fc) = fence_char else {
            i += 1;
            continue;
        };
        let n = t.chars().take_while(|&c| c == fc).count();
        if n < 3 || !t[n..].trim_start().starts_with("{toctree}") {
            i += 1;
            continue;
        }
        let mut body = Vec::new();
        let mut j = i + 1;
        while j < lines.len() {
            let b = lines[j].trim();
            if b.chars().take_while(|&c| c == fc).count() >= n
                && b.trim_start_matches(fc).is_empty()
            {
                break;
            }
            body.push(b);
            j += 1;
        }
        // Options as a YAML block (`---` … `---`) are read like `:key: value` lines.
        if body.first() == Some(&"---")
            && let Some(close) = body[1..].iter().position(|l| *l == "---")
        {
            let opts: Vec<String> = body[1..=close].iter().map(|l| format!(":{l}")).collect();
            let rest: Vec<&str> = body[close + 2..].to_vec();
            let mut all: Vec<&str> = opts.iter().map(String::as_str).collect();
            all.extend(rest);
            let mut tree = parse_body(&all);
            tree.section = section.clone();
            out.push(tree);
        } else {
            let mut tree = parse_body(&body);
            tree.section = section.clone();
            out.push(tree);
        }
        i = j + 1;
    }
    out
}

/// Whether `next` underlines `line` as a reST section title.
fn is_underline(next: &str, line: &str) -> bool {
    let c = next.chars().next();
    c.is_some_and(|c| "=-~^\"'`#*+_:.<>".contains(c))
        && next.len() >= 2
        && next.chars().all(|x| Some(x) == c)
        && !line.trim().is_empty()
        && !line.starts_with(' ')
        && next.len() >= line.trim().chars().count().min(3)
}

/// A toctree's lines (trimmed): options first, then one entry per line.
fn parse_body(body: &[&str]) -> Toctree {
    let mut tree = Toctree::default();
    for l in body.iter().filter(|l| !l.is_empty()) {
        if let Some(rest) = l.strip_prefix(':')
            && let Some((key, value)) = rest.split_once(':')
            && !key.contains(' ')
            && !key.is_empty()
        {
            match key {
                "caption" => {
                    tree.caption = Some(value.trim().to_string()).filter(|c| !c.is_empty())
                }
                "glob" => tree.glob = true,
                _ => {}
            }
            continue;
        }
        if l.starts_with("..") {
            continue; // a comment inside the directive
        }
        let (title, target) = super::inline::split_title(l);
        let entry = match target {
            Some(t) => Entry {
                title: Some(title),
                target: t.trim().to_string(),
            },
            None => Entry {
                title: None,
                target: l.trim().to_string(),
            },
        };
        tree.entries.push(entry);
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rst_toctrees_with_captions_sections_and_titles() {
        let page = "Home\n====\n\nIntro.\n\nUser Guide\n----------\n\n.. toctree::\n   :maxdepth: 2\n   :caption: Guides\n\n   user/install\n   Quick start <user/quickstart>\n   https://example.com\n\n.. toctree::\n   :glob:\n\n   api/*\n";
        let trees = in_rst(page);
        assert_eq!(trees.len(), 2);
        assert_eq!(trees[0].caption.as_deref(), Some("Guides"));
        assert_eq!(trees[0].section.as_deref(), Some("User Guide"));
        assert_eq!(
            trees[0].entries,
            vec![
                Entry {
                    title: None,
                    target: "user/install".into()
                },
                Entry {
                    title: Some("Quick start".into()),
                    target: "user/quickstart".into()
                },
                Entry {
                    title: None,
                    target: "https://example.com".into()
                },
            ]
        );
        assert!(trees[1].glob);
        assert_eq!(trees[1].entries[0].target, "api/*");
    }

    #[test]
    fn myst_toctrees_with_both_option_forms() {
        let page = "# Home\n\n## Guides\n\n```{toctree}\n:caption: Guides\n:maxdepth: 1\n\ninstall\nusage\n```\n\n:::{toctree}\n---\ncaption: Reference\n---\napi\n:::\n";
        let trees = in_myst(page);
        assert_eq!(trees.len(), 2);
        assert_eq!(trees[0].caption.as_deref(), Some("Guides"));
        assert_eq!(trees[0].section.as_deref(), Some("Guides"));
        assert_eq!(trees[0].entries.len(), 2);
        assert_eq!(trees[1].caption.as_deref(), Some("Reference"));
        assert_eq!(
            trees[1].entries,
            vec![Entry {
                title: None,
                target: "api".into()
            }]
        );
    }
}
