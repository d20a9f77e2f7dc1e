//! VitePress' sidebar (`themeConfig.sidebar` in `.vitepress/config.{ts,mts,js,mjs}`) read as
//! plain data, without running JavaScript: the value after `sidebar:` must be literals only
//! (objects, arrays, strings, numbers, booleans); anything else (a variable, a call, a template
//! with `${}`) makes it unreadable, and the folders are followed instead, with a note.

use std::path::{Path, PathBuf};

use super::nav::{Nav, NavItem};

/// The config files VitePress reads, in its order.
pub const CONFIGS: [&str; 4] = ["config.ts", "config.mts", "config.js", "config.mjs"];

/// The VitePress config in `dir/.vitepress/`, if there is one.
pub fn config_in(dir: &Path) -> Option<PathBuf> {
    CONFIGS
        .iter()
        .map(|c| dir.join(".vitepress").join(c))
        .find(|p| p.is_file())
}

/// The sidebar of the VitePress config `file` (whose site's pages are under `docs_dir`), or
/// None when it has none.
pub fn read(file: &Path, docs_dir: &Path) -> Result<Option<Nav>, (PathBuf, String)> {
    let text = std::fs::read_to_string(file).map_err(|e| (file.to_path_buf(), e.to_string()))?;
    let Some(at) = find_key(&text, "sidebar") else {
        return Ok(None);
    };
    let mut p = Parser {
        s: text.as_bytes(),
        i: at,
    };
    let value = p.value().map_err(|(i, why)| {
        let line = text[..i.min(text.len())].matches('\n').count() + 1;
        (
            file.to_path_buf(),
            format!(
                "its sidebar is not plain data at line {line} ({why}: reading it needs JavaScript to run); the folders are followed"
            ),
        )
    })?;
    let items = match value {
        // One sidebar for the whole site.
        Js::Arr(list) => items(&list, ""),
        // A sidebar per path prefix: a section each, in the file's order.
        Js::Obj(fields) => fields
            .iter()
            .filter_map(|(prefix, v)| {
                let (list, base) = match v {
                    Js::Arr(l) => (l.as_slice(), ""),
                    Js::Obj(o) => (
                        get(o, "items").and_then(Js::arr)?,
                        get(o, "base").and_then(Js::str).unwrap_or(""),
                    ),
                    _ => return None,
                };
                let inner = items(list, base);
                let title = prefix.trim_matches('/').rsplit('/').next().unwrap_or("");
                (!inner.is_empty()).then(|| NavItem::Section {
                    title: crate::text::capitalize(&title.replace(['-', '_'], " ")),
                    items: inner,
                })
            })
            .collect(),
        _ => {
            let line = text[..at].matches('\n').count() + 1;
            return Err((
                file.to_path_buf(),
                format!(
                    "its sidebar (line {line}) is not plain data: reading it needs JavaScript to run; the folders are followed"
                ),
            ));
        }
    };
    Ok((!items.is_empty()).then(|| Nav {
        file: file.to_path_buf(),
        docs_dir: docs_dir.to_path_buf(),
        items,
    }))
}

/// Sidebar items: `{text, link}` a page, `{text, items}` a section (its own `link` its first
/// page); links to other sites are left out.
fn items(list: &[Js], base: &str) -> Vec<NavItem> {
    let mut out = Vec::new();
    for item in list {
        let Js::Obj(o) = item else { continue };
        let text = get(o, "text").and_then(Js::str).map(str::to_string);
        let base = get(o, "base").and_then(Js::str).unwrap_or(base);
        let page = get(o, "link")
            .and_then(Js::str)
            .and_then(|l| page_path(base, l))
            .map(|path| NavItem::Page {
                title: text.clone(),
                path,
            });
        match get(o, "items").and_then(Js::arr) {
            Some(kids) => {
                let mut inner: Vec<NavItem> = page.into_iter().collect();
                inner.extend(items(kids, base));
                if !inner.is_empty() {
                    out.push(NavItem::Section {
                        title: text.unwrap_or_default(),
                        items: inner,
                    });
                }
            }
            None => out.extend(page),
        }
    }
    out
}

/// A sidebar link as a page path below the docs folder: `/guide/features` is
/// `guide/features.md`, `/guide/` is `guide/index.md`; None for another site's address.
fn page_path(base: &str, link: &str) -> Option<String> {
    if link.contains("://") || link.starts_with("mailto:") {
        return None;
    }
    let link = link.split(['#', '?']).next().unwrap_or("");
    let full = if link.starts_with('/') {
        link.to_string()
    } else {
        format!("{base}{link}")
    };
    let p = full.trim_start_matches('/');
    let p = p.strip_suffix(".html").unwrap_or(p);
    Some(if p.is_empty() || p.ends_with('/') {
        format!("{p}index.md")
    } else if p.ends_with(".md") {
        p.to_string()
    } else {
        format!("{p}.md")
    })
}

/// Where the value of the first `key:` outside strings and comments starts.
fn find_key(text: &str, key: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(key) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let rest = text[at + key.len()..].trim_start();
        let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
        if before.is_none_or(|c| !ident(c)) && rest.starts_with(':') {
            let colon = text.len() - rest.len();
            return Some(colon + 1);
        }
        from = at + key.len();
    }
    None
}

/// A JavaScript literal.
#[derive(Debug, Clone, PartialEq)]
enum Js {
    Obj(Vec<(String, Js)>),
    Arr(Vec<Js>),
    Str(String),
    /// A number, boolean or null.
    Other,
    /// An expression, not read.
    Unknown,
}

impl Js {
    fn str(&self) -> Option<&str> {
        match self {
            Js::Str(s) => Some(s),
            _ => None,
        }
    }

    fn arr(&self) -> Option<&[Js]> {
        match self {
            Js::Arr(a) => Some(a),
            _ => None,
        }
    }
}

fn get<'a>(o: &'a [(String, Js)], key: &str) -> Option<&'a Js> {
    o.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// A reader of JavaScript literals; an error names the byte where it stopped and why.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

type Failed = (usize, &'static str);

impl Parser<'_> {
    fn skip(&mut self) {
        loop {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
            if self.s[self.i..].starts_with(b"//") {
                while self.i < self.s.len() && self.s[self.i] != b'\n' {
                    self.i += 1;
                }
            } else if self.s[self.i..].starts_with(b"/*") {
                let end = self.s[self.i + 2..].windows(2).position(|w| w == b"*/");
                self.i = end.map_or(self.s.len(), |e| self.i + 2 + e + 2);
            } else {
                return;
            }
        }
    }

    fn value(&mut self) -> Result<Js, Failed> {
        self.skip();
        match self.s.get(self.i) {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'\'' | b'"' | b'`') => Ok(self.string()?.map_or(Js::Unknown, Js::Str)),
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_alphanumeric() || b"-+.".contains(&self.s[self.i]))
                {
                    self.i += 1;
                }
                Ok(Js::Other)
            }
            _ => {
                for word in [&b"true"[..], b"false", b"null", b"undefined"] {
                    if self.s[self.i..].starts_with(word) {
                        self.i += word.len();
                        return Ok(Js::Other);
                    }
                }
                // An expression (a name, a call): not read; its entry goes without it.
                self.skip_expression();
                Ok(Js::Unknown)
            }
        }
    }

    /// Past an expression: up to the `,`, `}` or `]` that ends it (brackets and strings in
    /// it are skipped whole).
    fn skip_expression(&mut self) {
        let mut depth = 0usize;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => return,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => return,
                b'\'' | b'"' | b'`' => {
                    let q = c;
                    self.i += 1;
                    while let Some(&d) = self.s.get(self.i) {
                        if d == b'\\' {
                            self.i += 1;
                        } else if d == q {
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    fn object(&mut self) -> Result<Js, Failed> {
        self.i += 1;
        let mut fields = Vec::new();
        loop {
            self.skip();
            match self.s.get(self.i) {
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Js::Obj(fields));
                }
                Some(b'\'' | b'"') => {
                    let k = self.string()?.unwrap_or_default();
                    fields.push((k, self.after_key()?));
                }
                Some(c) if c.is_ascii_alphabetic() || *c == b'_' || *c == b'$' => {
                    let start = self.i;
                    while self.i < self.s.len()
                        && (self.s[self.i].is_ascii_alphanumeric()
                            || b"_$".contains(&self.s[self.i]))
                    {
                        self.i += 1;
                    }
                    let k = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                    fields.push((k, self.after_key()?));
                }
                _ => return Err((self.i, "an object entry that is not `key: literal`")),
            }
            self.skip();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err((self.i, "a missing `,` or `}`")),
            }
        }
    }

    fn after_key(&mut self) -> Result<Js, Failed> {
        self.skip();
        if self.s.get(self.i) != Some(&b':') {
            return Err((self.i, "a shorthand or computed entry"));
        }
        self.i += 1;
        self.value()
    }

    fn array(&mut self) -> Result<Js, Failed> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.skip();
            if self.s.get(self.i) == Some(&b']') {
                self.i += 1;
                return Ok(Js::Arr(items));
            }
            if self.s[self.i..].starts_with(b"...") {
                return Err((self.i, "a spread"));
            }
            items.push(self.value()?);
            self.skip();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {}
                _ => return Err((self.i, "a missing `,` or `]`")),
            }
        }
    }

    /// A string literal; None for a template that computes (`${}`), skipped.
    fn string(&mut self) -> Result<Option<String>, Failed> {
        let quote = self.s[self.i];
        let start = self.i;
        self.i += 1;
        let mut out = Vec::new();
        while let Some(&c) = self.s.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => {
                    if let Some(&n) = self.s.get(self.i) {
                        out.push(n);
                        self.i += 1;
                    }
                }
                b'$' if quote == b'`' && self.s.get(self.i) == Some(&b'{') => {
                    // A template that computes: not read.
                    self.i = start;
                    self.skip_expression();
                    return Ok(None);
                }
                c if c == quote => return Ok(Some(String::from_utf8_lossy(&out).into_owned())),
                c => out.push(c),
            }
        }
        Err((start, "a string that does not end"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sidebar_per_prefix_gives_sections_of_pages() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = tmp.path().join("config.ts");
        std::fs::write(
            &cfg,
            "import x from 'y'\nexport default defineConfig({\n  themeConfig: {\n    nav: [{ text: 'Guide', link: '/guide/' }],\n    // the sidebar\n    sidebar: {\n      '/guide/': [\n        {\n          text: 'Introduction',\n          items: [\n            { text: 'Getting Started', link: '/guide/' },\n            { text: \"Why\", link: '/guide/why' },\n            { text: 'Discord', link: 'https://chat.example' },\n          ],\n        },\n      ],\n      '/config/': { base: '/config/', items: [{ text: 'Shared', link: 'shared-options' }] },\n    },\n  },\n})\n",
        )
        .unwrap();
        let nav = read(&cfg, tmp.path()).unwrap().unwrap();
        let page = |t: &str, p: &str| NavItem::Page {
            title: Some(t.into()),
            path: p.into(),
        };
        assert_eq!(
            nav.items,
            vec![
                NavItem::Section {
                    title: "Guide".into(),
                    items: vec![NavItem::Section {
                        title: "Introduction".into(),
                        items: vec![
                            page("Getting Started", "guide/index.md"),
                            page("Why", "guide/why.md")
                        ],
                    }],
                },
                NavItem::Section {
                    title: "Config".into(),
                    items: vec![page("Shared", "config/shared-options.md")],
                },
            ]
        );
    }

    #[test]
    fn what_needs_javascript_is_left_out_and_a_computed_sidebar_named() {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = tmp.path().join("config.mts");
        std::fs::write(
            &cfg,
            "export default {\n  themeConfig: {\n    sidebar: makeSidebar(pages),\n  },\n}\n",
        )
        .unwrap();
        let (file, why) = read(&cfg, tmp.path()).unwrap_err();
        assert_eq!(file, cfg);
        assert!(
            why.contains("line 3") && why.contains("folders are followed"),
            "{why}"
        );
        // A computed entry is left out of a sidebar that is otherwise data: a computed title
        // leaves the page its own title, a computed list its section.
        std::fs::write(
            &cfg,
            "export default { themeConfig: { sidebar: [{ text: `From v${v - 1}`, link: '/migration' }, { text: 'More', items: more() }, { text: 'B', link: '/b' }] } }",
        )
        .unwrap();
        let nav = read(&cfg, tmp.path()).unwrap().unwrap();
        assert_eq!(
            nav.items,
            vec![
                NavItem::Page {
                    title: None,
                    path: "migration.md".into()
                },
                NavItem::Page {
                    title: Some("B".into()),
                    path: "b.md".into()
                },
            ]
        );
    }
}
