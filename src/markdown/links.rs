//! The links of a Markdown text as CommonMark reads them (pulldown-cmark, with source offsets):
//! inline links and images, reference links with their definitions, never what sits in code.

use std::ops::Range;

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag};

/// One link or image of a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The whole link in the text: `[text](dest)`, `![alt](dest)`, `[text][ref]`, `[text]`.
    pub whole: Range<usize>,
    /// Its destination as written in the text, for an inline link (None for a reference link,
    /// whose destination sits in its definition).
    pub dest_at: Option<Range<usize>>,
    /// The destination, unescaped.
    pub dest: String,
    /// The link's text (an image's alt text), as written.
    pub label: Range<usize>,
    pub image: bool,
}

/// A reference definition (`[ref]: dest "title"`), its whole line range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub span: Range<usize>,
    pub dest: String,
}

/// Whether `md` may hold a link at all (a quick test before parsing).
pub fn may_link(md: &str) -> bool {
    md.contains("](") || md.contains("]:") || md.contains("][") || md.contains("] [")
}

/// The links of `md` in text order, and its reference definitions.
pub fn links(md: &str) -> (Vec<Link>, Vec<Definition>) {
    let opts = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let parser = Parser::new_ext(md, opts);
    let defs = parser
        .reference_definitions()
        .iter()
        .map(|(_, d)| Definition {
            span: d.span.clone(),
            dest: d.dest.to_string(),
        })
        .collect();
    let mut out = Vec::new();
    for (event, r) in parser.into_offset_iter() {
        let (link_type, dest, image) = match event {
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) => (link_type, dest_url, false),
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                ..
            }) => (link_type, dest_url, true),
            _ => continue,
        };
        if let Some(link) = locate(md, r, link_type, &dest, image) {
            out.push(link);
        }
    }
    (out, defs)
}

/// Where the parts of one link are in the text.
fn locate(md: &str, r: Range<usize>, kind: LinkType, dest: &str, image: bool) -> Option<Link> {
    let src = md.get(r.clone())?;
    let open = if image { 2 } else { 1 };
    let (label_end, dest_at) = match kind {
        LinkType::Inline => {
            let close = src.rfind("](")?;
            // The destination as written, when it is written as it reads (no escapes).
            let at = src[close..]
                .find(dest)
                .filter(|_| !dest.is_empty())
                .map(|i| r.start + close + i..r.start + close + i + dest.len());
            (close, at)
        }
        LinkType::Reference => (src.rfind("][")?, None),
        LinkType::Collapsed => (src.len().checked_sub(3)?, None),
        LinkType::Shortcut => (src.len().checked_sub(1)?, None),
        // Autolinks and e-mail links are addresses, never paths.
        _ => return None,
    };
    if label_end < open {
        return None;
    }
    Some(Link {
        whole: r.clone(),
        dest_at,
        dest: dest.to_string(),
        label: r.start + open..r.start + label_end,
        image,
    })
}

/// The 1-based line of byte `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(md: &str) -> Vec<(String, String, Option<String>)> {
        links(md)
            .0
            .iter()
            .map(|l| {
                (
                    md[l.label.clone()].to_string(),
                    l.dest.clone(),
                    l.dest_at.clone().map(|r| md[r].to_string()),
                )
            })
            .collect()
    }

    #[test]
    fn inline_reference_and_image_links_but_not_code() {
        let md = "See [the guide](../guide.md#install \"Guide\") and ![a chart](img/c.png).\n\n\
                  `[not](code.md)`\n\n```\n[nor](fence.md)\n```\n\n[Ref][r] and [r].\n\n[r]: other.md\n";
        let f = found(md);
        assert_eq!(
            f,
            vec![
                (
                    "the guide".into(),
                    "../guide.md#install".into(),
                    Some("../guide.md#install".into())
                ),
                (
                    "a chart".into(),
                    "img/c.png".into(),
                    Some("img/c.png".into())
                ),
                ("Ref".into(), "other.md".into(), None),
                ("r".into(), "other.md".into(), None),
            ]
        );
        let (_, defs) = links(md);
        assert_eq!(defs.len(), 1);
        assert_eq!(&md[defs[0].span.clone()].trim_end(), &"[r]: other.md");
    }

    #[test]
    fn a_link_around_an_image_is_found_with_its_image() {
        let md = "[![logo](logo.png)](index.md)";
        let (l, _) = links(md);
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].dest, "index.md");
        assert_eq!(&md[l[0].label.clone()], "![logo](logo.png)");
        assert!(l[1].image && l[1].whole.start > l[0].whole.start);
    }

    #[test]
    fn lines_count_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 4), 3);
    }
}
