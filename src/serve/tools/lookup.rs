//! Which document a path or a citation names: a document file (named after its source), a
//! part, a bundle's section, an id, an alias or a unique id prefix.

use super::Tools;

impl Tools {
    /// The document a path holds, when it names one: its file `…/docs/<name>.md` (named after
    /// its source; a folded duplicate's file is named by its id), a part `…/parts/<name>-N.md`,
    /// or a bundle's section `…/bundles/NNN.md#<id>`. A path relative to a group
    /// (`docs/faq.md`) names the one document whose file ends so.
    pub fn document_of(&self, path: &str) -> Option<String> {
        let known = |id: &str| {
            let id = self.aliases.get(id).map_or(id, String::as_str);
            self.docs.contains_key(id).then(|| id.to_string())
        };
        if let Some((_, anchor)) = path.split_once('#') {
            return known(anchor);
        }
        let path = path.trim_end_matches('/').trim_start_matches("./");
        let (dir, file) = path.rsplit_once('/')?;
        let stem = file.strip_suffix(".md")?;
        if dir == "docs" || dir.ends_with("/docs") {
            return self.file_id(path).or_else(|| known(stem));
        }
        if dir == "parts" || dir.ends_with("/parts") {
            let (name, n) = stem.rsplit_once('-')?;
            n.parse::<usize>().ok()?;
            let folder = dir.strip_suffix("parts").unwrap_or_default();
            return self
                .file_id(&format!("{folder}docs/{name}.md"))
                .or_else(|| known(name));
        }
        None
    }

    /// The id of the document whose own file is `path`, or, for a path that is not from the
    /// root, of the one document whose file ends with `/path`.
    fn file_id(&self, path: &str) -> Option<String> {
        if let Some(id) = self.files.get(path) {
            return Some(id.clone());
        }
        let tail = format!("/{path}");
        let mut hits = self.files.iter().filter(|(f, _)| f.ends_with(&tail));
        let first = hits.next()?;
        hits.next().is_none().then(|| first.1.clone())
    }

    /// The documents a `cat` of `path` showed (`shown`): the one its path names, or every
    /// section of a whole bundle.
    pub fn documents_of(&self, path: &str, shown: &str) -> Vec<String> {
        if let Some(id) = self.document_of(path) {
            return vec![id];
        }
        let in_bundles = path
            .rsplit_once('/')
            .is_some_and(|(d, _)| d == "bundles" || d.ends_with("/bundles"));
        if !in_bundles {
            return Vec::new();
        }
        crate::stage::render::section_ids(shown)
            .into_iter()
            .filter(|id| self.docs.contains_key(id))
            .collect()
    }

    /// The document a citation names: its id (or an alias, or a unique prefix of at least 4
    /// characters), or the path of its `docs/<name>.md` file.
    pub fn document_id(&self, cited: &str) -> Option<String> {
        let c = cited.trim().trim_matches(['`', '"', '\'', '[', ']']);
        if let Some(id) = self.document_of(c) {
            return Some(id);
        }
        let c = c.strip_suffix(".md").unwrap_or(c);
        let c = self.aliases.get(c).map_or(c, String::as_str);
        if self.docs.contains_key(c) {
            return Some(c.to_string());
        }
        let hits: Vec<&String> = self
            .docs
            .range(c.to_string()..)
            .map(|(k, _)| k)
            .take_while(|k| k.starts_with(c))
            .take(2)
            .collect();
        if c.len() >= 4 && hits.len() == 1 {
            return Some(hits[0].clone());
        }
        self.by_title(c)
    }

    /// The one document with this title (letter case aside); `None` when none or several
    /// have it.
    pub fn by_title(&self, title: &str) -> Option<String> {
        let titles = self.titles.get_or_init(|| {
            let mut m: std::collections::HashMap<String, Option<String>> = Default::default();
            for (id, (t, _)) in &self.docs {
                let key = t.trim().to_lowercase();
                if key.is_empty() {
                    continue;
                }
                m.entry(key)
                    .and_modify(|v| *v = None)
                    .or_insert_with(|| Some(id.clone()));
            }
            m
        });
        titles.get(&title.trim().to_lowercase()).cloned().flatten()
    }

    /// How a model names a document: its title when no other document has it, else its id.
    pub fn handle(&self, id: &str) -> String {
        match self.docs.get(id) {
            Some((title, _)) if self.by_title(title).as_deref() == Some(id) => {
                title.trim().to_string()
            }
            _ => id.to_string(),
        }
    }

    /// Up to 5 ids sharing the longest prefix with `id`.
    pub(super) fn close_ids(&self, id: &str) -> Vec<String> {
        let common = |k: &str| {
            k.chars()
                .zip(id.chars())
                .take_while(|(a, b)| a == b)
                .count()
        };
        let mut all: Vec<(usize, &String)> = self.docs.keys().map(|k| (common(k), k)).collect();
        all.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        all.into_iter().take(5).map(|(_, k)| k.clone()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_named_after_its_source_names_its_document() {
        let dir = tempfile::tempdir().unwrap();
        let docs = r#"{
            "0a1b2c3d4e5f6a7b": {"title": "FAQ", "source": "faq.md", "text": "Q.",
                "file": "skills/s/g/docs/faq.md"},
            "1b2c3d4e5f6a7b8c": {"title": "FAQ", "source": "b/faq.md", "text": "R.",
                "file": "skills/s/h/docs/faq.md", "aliases": ["old-faq"]},
            "own-id": {"title": "Own", "source": "x.jsonl:1", "text": "S.",
                "file": "skills/s/g/docs/own-id.md"}
        }"#;
        std::fs::write(dir.path().join("documents.json"), docs).unwrap();
        let t = Tools::open(dir.path()).unwrap();
        let of = |p: &str| t.document_of(p);
        assert_eq!(
            of("skills/s/g/docs/faq.md").as_deref(),
            Some("0a1b2c3d4e5f6a7b")
        );
        assert_eq!(
            of("./skills/s/h/docs/faq.md").as_deref(),
            Some("1b2c3d4e5f6a7b8c")
        );
        assert_eq!(
            of("skills/s/h/parts/faq-2.md").as_deref(),
            Some("1b2c3d4e5f6a7b8c")
        );
        // From a group: the one file that ends so; two candidates name none.
        assert_eq!(of("g/docs/faq.md").as_deref(), Some("0a1b2c3d4e5f6a7b"));
        assert_eq!(of("docs/faq.md"), None);
        // A folded duplicate's file is named by its id; an id named file still resolves.
        assert_eq!(
            of("skills/s/h/docs/old-faq.md").as_deref(),
            Some("1b2c3d4e5f6a7b8c")
        );
        assert_eq!(of("docs/own-id.md").as_deref(), Some("own-id"));
        // get_document takes the file path too.
        assert!(
            t.get_document("skills/s/h/docs/faq.md")
                .unwrap()
                .starts_with("id: 1b2c3d4e5f6a7b8c\n")
        );
    }
}
