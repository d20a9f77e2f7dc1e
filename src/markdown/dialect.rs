//! Site generators' Markdown dialects read as their sites show them: attribute lists
//! (`{ #id }`, `{: .class }`) leave headings, MkDocs/PyMdown admonitions (`!!!`, `???`,
//! `/// type | Title`), tabs (`=== "Tab"`) and VitePress/Docusaurus containers (`::: tip Title`)
//! become titled quotes, and a block's indented body loses its indent; MDX and Hugo markup is
//! read as `components` says. Code fences are left as they are.

use super::components::{Components, Line};

/// How much deeper than its opening line an admonition's or tab's body is indented.
const BODY_INDENT: usize = 4;

/// The text with the dialect's markup reduced to CommonMark.
pub fn to_commonmark(md: &str) -> String {
    let mut out = String::with_capacity(md.len());
    let mut fence: Option<(char, usize)> = None;
    // The indents the bodies of the admonitions and tabs being read start at, outermost first.
    let mut bodies: Vec<usize> = Vec::new();
    let mut components = Components::default();
    // The indentation a fence inside a component has as layout (see below).
    let mut fence_layout = 0;
    for line in md.split_inclusive('\n') {
        let (text, eol) = match line.strip_suffix('\n') {
            Some(t) => (t.strip_suffix('\r').unwrap_or(t), "\n"),
            None => (line, ""),
        };
        let trimmed = text.trim_start();
        let indent = text.len() - trimmed.len();
        // A body is indented by four more than its opening line: outdented by four per open
        // body, so that it is read as text (in a list item, as the item's text), not as an
        // indented code block. A fence in a body goes with it, its closing line too.
        if let Some((c, n)) = fence {
            out.push_str(&text[(BODY_INDENT * bodies.len() + fence_layout).min(indent)..]);
            out.push_str(eol);
            if trimmed.trim_end().chars().all(|x| x == c) && trimmed.trim_end().len() >= n {
                fence = None;
            }
            continue;
        }
        if !trimmed.is_empty() {
            while bodies.last().is_some_and(|&b| indent < b) {
                bodies.pop();
            }
        }
        if let Some(f) = fence_open(trimmed) {
            fence = Some(f);
        }
        let text = &text[(BODY_INDENT * bodies.len()).min(indent)..];
        let trimmed = text.trim_start();
        if fence.is_some() {
            // Inside a component, a fence's indentation is layout too (MDX has no indented
            // code): its lines lose it, not only its opening line.
            fence_layout = match components.inside() {
                true => text.len() - trimmed.len(),
                false => 0,
            };
            out.push_str(if components.inside() { trimmed } else { text });
            out.push_str(eol);
            continue;
        }
        let line = components.line(trimmed, text.len() == trimmed.len());
        // Inside a component element, indentation is layout, not an indented code block.
        let text = if components.inside() { trimmed } else { text };
        match line {
            Line::Keep => {}
            Line::Verbatim => {
                out.push_str(text);
                out.push_str(eol);
                continue;
            }
            Line::Drop => {
                out.push_str(eol);
                continue;
            }
            Line::Title(title) => {
                push_title(&mut out, &title, eol);
                continue;
            }
            Line::Fence(lang) => {
                out.push_str("```");
                out.push_str(&lang);
                out.push_str(eol);
                continue;
            }
            Line::Text(t) => {
                out.push_str(&text[..text.len() - trimmed.len()]);
                out.push_str(&t);
                out.push_str(eol);
                continue;
            }
        }
        if let Some(title) = admonition(trimmed).or_else(|| tab(trimmed)) {
            bodies.push(indent + BODY_INDENT);
            out.push_str(&text[..text.len() - trimmed.len()]);
            push_title(&mut out, &title, eol);
            continue;
        }
        if let Some(title) = block_open(trimmed) {
            push_title(&mut out, &title, eol);
            continue;
        }
        if is_block_close(trimmed) || is_attribute_line(trimmed) {
            out.push_str(eol);
            continue;
        }
        if is_heading(trimmed) {
            out.push_str(strip_attributes(text));
        } else {
            out.push_str(text);
        }
        out.push_str(eol);
    }
    out
}

fn push_title(out: &mut String, title: &str, eol: &str) {
    if !title.is_empty() {
        out.push_str("> **");
        out.push_str(title);
        out.push_str("**");
    }
    out.push_str(eol);
}

fn fence_open(t: &str) -> Option<(char, usize)> {
    let c = t.chars().next().filter(|&c| c == '`' || c == '~')?;
    let n = t.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

fn is_heading(t: &str) -> bool {
    let hashes = t.chars().take_while(|&c| c == '#').count();
    (1..=6).contains(&hashes) && t[hashes..].starts_with([' ', '\t'])
}

/// A heading without its trailing attribute list: `## Query { #query-parameters }` → `## Query`.
pub fn strip_attributes(line: &str) -> &str {
    let t = line.trim_end();
    if let Some(open) = t.rfind('{')
        && t.ends_with('}')
        && is_attribute_list(&t[open..])
    {
        return t[..open].trim_end();
    }
    line
}

/// `{ #id }`, `{: .class }`, `{#id .class key=value}`: an attribute list.
fn is_attribute_list(s: &str) -> bool {
    let inner = s.trim_start_matches('{').trim_end_matches('}');
    let inner = inner.trim().trim_start_matches(':').trim();
    !inner.is_empty()
        && inner.split_whitespace().all(|w| {
            w.starts_with('#') && w.len() > 1
                || w.starts_with('.') && w.len() > 1
                || w.contains('=') && !w.starts_with('=')
        })
}

/// A line that is only an attribute list (`{: .lead }` under a paragraph).
fn is_attribute_line(t: &str) -> bool {
    let t = t.trim_end();
    t.starts_with("{:") && t.ends_with('}') && is_attribute_list(t)
}

/// `!!! note "Title"`, `??? tip`, `???+ warning "Title"`: the title (or the type, capitalized).
fn admonition(t: &str) -> Option<String> {
    let rest = t
        .strip_prefix("!!!")
        .or_else(|| t.strip_prefix("???+"))
        .or_else(|| t.strip_prefix("???"))?;
    if !rest.starts_with(' ') {
        return None;
    }
    let rest = rest.trim();
    let (kind, title) = match rest.find('"') {
        Some(q) => (rest[..q].trim(), Some(rest[q..].trim().trim_matches('"'))),
        None => (rest, None),
    };
    let kind = kind.split_whitespace().next().unwrap_or("note");
    Some(match title {
        Some(t) => t.to_string(),
        None => crate::text::capitalize(kind),
    })
}

/// `=== "Tab title"`: the tab's title.
fn tab(t: &str) -> Option<String> {
    let rest = t
        .strip_prefix("===! ")
        .or_else(|| t.strip_prefix("===+ "))
        .or_else(|| t.strip_prefix("=== "))?;
    let rest = rest.trim();
    (rest.len() >= 2 && rest.starts_with('"') && rest.ends_with('"'))
        .then(|| rest.trim_matches('"').to_string())
}

/// `/// tip | Title`, `/// details | Title`, `::: tip Title`, `:::note[Title]`: the title (or
/// the type, capitalized). PyMdown's `/// html | div` and `/// attrs` carry no title.
fn block_open(t: &str) -> Option<String> {
    let t = t.trim_end();
    let rest = if let Some(r) = t.strip_prefix("///") {
        r
    } else {
        let colons = t.chars().take_while(|&c| c == ':').count();
        if colons < 3 {
            return None;
        }
        &t[colons..]
    };
    let rest = rest.trim();
    if rest.is_empty() || !rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let kind_end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .unwrap_or(rest.len());
    let kind = &rest[..kind_end];
    let after = rest[kind_end..].trim();
    // mkdocstrings' `::: package.module.Name`: the API reference of a name.
    if after.starts_with('.') && !rest.contains(' ') {
        return Some(rest.to_string());
    }
    let title = after
        .strip_prefix('|')
        .map(str::trim)
        .or_else(|| after.strip_prefix('[').and_then(|a| a.strip_suffix(']')))
        .unwrap_or(after)
        .trim_matches('"')
        .trim();
    if matches!(kind, "html" | "attrs" | "raw" | "v-pre" | "code-group") {
        return Some(String::new());
    }
    Some(if title.is_empty() || title.starts_with('{') {
        crate::text::capitalize(kind)
    } else {
        title.to_string()
    })
}

/// `///` or `:::` alone: a block's end.
fn is_block_close(t: &str) -> bool {
    let t = t.trim_end();
    t == "///" || (t.len() >= 3 && t.chars().all(|c| c == ':'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_lose_attribute_lists() {
        assert_eq!(
            to_commonmark("# FastAPI { #fastapi }\n## Query {: .x #q }\nText {x}\n"),
            "# FastAPI\n## Query\nText {x}\n"
        );
        assert_eq!(to_commonmark("# Sets {1, 2}\n"), "# Sets {1, 2}\n");
    }

    #[test]
    fn admonitions_tabs_and_containers_become_titled_quotes() {
        let md = "!!! note \"Heads up\"\n    Body line.\n\nAfter.\n=== \"pip\"\n\n    pip install x\n::: tip Fast\nInside.\n:::\n/// warning | Careful\nMind it.\n///\n";
        assert_eq!(
            to_commonmark(md),
            "> **Heads up**\nBody line.\n\nAfter.\n> **pip**\n\npip install x\n> **Fast**\nInside.\n\n> **Careful**\nMind it.\n\n"
        );
    }

    #[test]
    fn a_fence_in_a_tab_is_outdented_with_its_closing_line() {
        // uv's docs/index.md: a tab whose body is a code block.
        let md = "=== \"macOS and Linux\"\n\n    ```console\n    $ curl -LsSf https://astral.sh/uv/install.sh | sh\n    ```\n\nThen, [first steps](./first-steps.md).\n";
        assert_eq!(
            to_commonmark(md),
            "> **macOS and Linux**\n\n```console\n$ curl -LsSf https://astral.sh/uv/install.sh | sh\n```\n\nThen, [first steps](./first-steps.md).\n"
        );
    }

    #[test]
    fn an_admonition_in_a_list_item_stays_in_the_item() {
        // uv's installation page: a tip inside a numbered step.
        let md = "1.  Clean up stored data (optional):\n\n    !!! tip\n\n        Before removing the binaries, see the\n        [storage reference](../reference/storage.md).\n\n2.  Remove the binaries.\n";
        assert_eq!(
            to_commonmark(md),
            "1.  Clean up stored data (optional):\n\n    > **Tip**\n\n    Before removing the binaries, see the\n    [storage reference](../reference/storage.md).\n\n2.  Remove the binaries.\n"
        );
    }

    #[test]
    fn nested_admonitions_keep_the_outer_body() {
        // pydantic's concepts/unions.md: a note inside a collapsed block.
        let md = "??? info \"Smart Mode\"\n\n    Two metrics.\n\n    !!! note\n        Since v2.8.\n\n    Only for models, see [strict](strict_mode.md).\n\nAfter.\n";
        assert_eq!(
            to_commonmark(md),
            "> **Smart Mode**\n\nTwo metrics.\n\n> **Note**\nSince v2.8.\n\nOnly for models, see [strict](strict_mode.md).\n\nAfter.\n"
        );
    }

    #[test]
    fn code_fences_are_left_alone() {
        let md = "```\n# not { #a }\n!!! note\n:::\n```\n";
        assert_eq!(to_commonmark(md), md);
    }

    /// The text an agent reads: what is left after the dialect, the tags and the parser.
    fn read(md: &str) -> String {
        crate::markdown::plain_text(&crate::markdown::without_html_tags(&to_commonmark(md)))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn mdx_imports_and_components_go_and_their_text_stays() {
        // A Docusaurus page (pglet's callout control docs): imports, a multi-line <Tabs>, tabs.
        let md = "## Examples\n\nimport Tabs from '@theme/Tabs';\nimport TabItem from '@theme/TabItem';\n\n<Tabs groupId=\"languages\" defaultValue=\"python\" values={[\n  { label: 'Python', value: 'python', },\n  { label: 'Bash', value: 'bash', },\n]}>\n\n<TabItem value=\"python\">\n\n```python\n# TODO\n```\n\n</TabItem>\n\n<TabItem value=\"bash\">\n\n[Callout control live demo in Bash](https://repl.it/@pglet/bash-callout-example)\n\n</TabItem>\n\n</Tabs>\n";
        let out = to_commonmark(md);
        assert!(
            !out.contains("import") && !out.contains("<Tab") && !out.contains("label:"),
            "{out}"
        );
        assert!(
            out.contains("> **python**") && out.contains("> **bash**"),
            "{out}"
        );
        assert_eq!(
            read(md),
            "Examples python bash Callout control live demo in Bash"
        );
        // Multi-line imports, inline components with attributes, self-closing ones, comments.
        let md = "import {\n  type Activiteit,\n  filter,\n} from '../../data/projecten';\n\n<TabItem value=\"aider\" label=\"Aider\">\n\nThe id is <CopyableCode code=\"aws.transfer.agreements\" /> and <Highlight color=\"#25c2a0\">green</Highlight> {/* a note */}.\n";
        let out = to_commonmark(md);
        assert!(out.contains("> **Aider**"), "{out}");
        assert_eq!(read(md), "Aider The id is and green .");
        // Prose is not MDX: `Vec<String>` stays, and so does a sentence that imports.
        assert_eq!(
            read("A Vec<String> holds text.\nimport data from the old system."),
            "A Vec<String> holds text. import data from the old system."
        );
    }

    #[test]
    fn mintlify_components_keep_their_names_links_labels_and_snippets() {
        // Mintlify's docs: a field whose tag spans lines, an inline badge, a linked card, a
        // changelog entry and an imported snippet.
        let md = "import Setup from \"/snippets/setup.mdx\";\n\n<ParamField\n  query=\"limit\"\n  type=\"integer\"\n  required\n>\n  How many.\n</ParamField>\n\nA <Badge>New</Badge> badge.\n\n<Card title=\"Quickstart\" icon=\"rocket\" href=\"/quickstart\" />\n\n<Update label=\"2024-10-12\">\n  Fixed.\n</Update>\n\n<Setup />\n";
        let out = to_commonmark(md);
        assert!(out.contains("> **`limit` (integer, required)**"), "{out}");
        assert!(out.contains("> **[Quickstart](/quickstart)**"), "{out}");
        assert!(out.contains("> **2024-10-12**"), "{out}");
        assert!(out.contains("A New badge."), "{out}");
        let marker = crate::markdown::mdx::marker("include /snippets/setup.mdx");
        assert!(out.contains(&format!("\n{marker}\n")), "{out}");
        assert!(!out.contains('<') && !out.contains("import"), "{out}");
        // Starlight's docs: a fence indented inside a component is a fence.
        let md = "<Aside type=\"tip\">\n\n    Also code:\n\n    ```js\n    // A snippet.\n      indented();\n    ```\n\n</Aside>\n";
        let out = to_commonmark(md);
        assert!(
            out.contains("\n```js\n// A snippet.\n  indented();\n```\n"),
            "{out}"
        );
    }

    #[test]
    fn hugo_shortcodes_go_and_their_text_stays() {
        // The EKS workshop: a notice block; a blog: refs in links; a figure with a caption.
        let md = "{{% notice tip %}}\nIn this workshop we will give you the commands.\n{{% /notice %}}\n\nSee the [config class]({{< ref \"../python-config.md\" >}}) pattern.\n{{< figure src=\"/images/a.jpg\" caption=\"The build graph\" >}}\n{{< youtube w7Ft2ymGmfc >}}\n";
        let out = to_commonmark(md);
        assert!(out.contains("> **Tip**"), "{out}");
        assert!(out.contains("[config class](../python-config.md)"), "{out}");
        assert_eq!(
            read(md),
            "Tip In this workshop we will give you the commands. See the config class pattern. The build graph"
        );
        // A highlight shortcode is a code block; an escaped shortcode is shown as Hugo shows it.
        let md = "{{< highlight go >}}\nfunc main() {}\n{{< /highlight >}}\nWrite {{</* youtube id */>}} to embed.\n";
        let b = crate::markdown::blocks(&to_commonmark(md));
        assert_eq!(
            b[0],
            crate::markdown::Block::Code {
                lang: "go".into(),
                code: "func main() {}".into()
            }
        );
        assert_eq!(read(md), "Write {{< youtube id >}} to embed.");
    }
}
