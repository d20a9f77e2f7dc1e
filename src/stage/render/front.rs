//! What every document file and part starts with: its frontmatter (id, title, source,
//! aliases, which part it is), and the folder it lies in (links are made relative to it).

use std::fmt::Write as _;

use super::{Ctx, yaml_str};

/// The folder of an output file (relative to the output root).
pub(super) fn folder_of(file: &str) -> &str {
    file.rsplit_once('/').map_or("", |(dir, _)| dir)
}

/// A document file's frontmatter: id, title, source, aliases, and which part it is.
pub(super) fn frontmatter(ctx: &Ctx, d: usize, part: Option<(usize, usize)>, s: &mut String) {
    let doc = &ctx.docs[d];
    s.push_str("---\n");
    let _ = writeln!(s, "id: {}", yaml_str(&doc.id));
    let _ = writeln!(s, "title: {}", yaml_str(&ctx.cards[d].title));
    let _ = writeln!(s, "source: {}", yaml_str(&doc.source));
    if !doc.aliases.is_empty() {
        let _ = writeln!(
            s,
            "aliases: [{}]",
            doc.aliases
                .iter()
                .map(|a| yaml_str(a))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if let Some((k, n)) = part {
        let _ = writeln!(s, "part: \"{} of {n}\"", k + 1);
    }
    s.push_str("---\n");
}
