//! The agent's read-only tools over a compiled output (`ls`, `cat`, `grep`, `get_document`),
//! confined to the output root: no `..`, absolute paths, symlinks out, NUL bytes or long paths.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

mod lookup;

/// Bytes `cat` returns before cutting with a notice.
pub const CAT_MAX_BYTES: usize = 16 * 1024;
/// Characters of a document `get_document` returns before cutting with a notice.
pub const DOC_MAX_CHARS: usize = 24 * 1024;
/// Documents `search` returns.
pub const SEARCH_HITS: usize = 10;
/// Lines `grep` returns, and files it reads.
pub const GREP_MAX_LINES: usize = 100;
pub const GREP_MAX_FILES: usize = 5000;
/// Compiled-regex size cap: a pattern that blows up is refused.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
const MAX_PATH_BYTES: usize = 1024;

/// A refused or failed tool call; the text goes back to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

/// The tools, bound to one output folder.
pub struct Tools {
    /// Where each part of the output tree lives: the output folder at `""`, and, for an output
    /// whose skills were written into a shared skills folder, each skill folder it owns at
    /// `skills/<name>`. Real paths are canonical.
    mounts: Vec<(String, PathBuf)>,
    /// id → (title, text).
    docs: BTreeMap<String, (String, String)>,
    /// id → the source file it came from.
    sources: BTreeMap<String, String>,
    /// Ids of folded duplicates → the id of the document they were folded into.
    aliases: BTreeMap<String, String>,
    /// A document's own file (relative to the output root, no anchor) → its id.
    files: BTreeMap<String, String>,
    /// BM25 over every document's title and text, built on the first search.
    index: std::sync::OnceLock<crate::retrieval::Bm25>,
    /// A title (lowercased) → the one document with it (`None`: several have it).
    titles: std::sync::OnceLock<std::collections::HashMap<String, Option<String>>>,
}

/// A path the tools accepted: a real file or folder (and how it is shown), or `skills/` when
/// the skill folders live elsewhere (a folder that exists only as the list of its mounts).
enum Place {
    Real(PathBuf),
    SkillsFolder,
}

/// The tools' JSON schemas: `(name, description, parameters)`.
pub fn specs() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "ls",
            "List a folder of the skill tree (default: the root).",
            json!({"type": "object", "properties": {"path": {"type": "string", "description": "folder relative to the root, e.g. skills/skill-00-billing"}}}),
        ),
        (
            "cat",
            "Read a navigation file (SKILL.md, INDEX.md, entities.md, entity_index.md) or a document file (docs/<name>.md); capped, long files are cut with a notice.",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        (
            "grep",
            "Search the output's files (navigation and document files) with a regular expression; returns path:line: text.",
            json!({"type": "object", "properties": {"pattern": {"type": "string"}, "path": {"type": "string", "description": "file or folder (default: all)"}, "ignore_case": {"type": "boolean"}}, "required": ["pattern"]}),
        ),
        (
            "search",
            "Full-text search (BM25) over every document: the 10 best matches as `id — title`. The quickest way to candidate documents; the skill tree shows where they live and what lies beside them.",
            json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}),
        ),
        (
            "get_document",
            "Fetch a full document by its id (or a unique prefix of it, its file path, or its exact title). Only fetched documents may support claims in the answer.",
            json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
        ),
    ]
}

impl Tools {
    /// Opens an output folder (it must hold `documents.json`).
    pub fn open(root: &Path) -> Result<Tools, ToolError> {
        let root = root
            .canonicalize()
            .map_err(|e| ToolError(format!("output {}: {e}", root.display())))?;
        let raw = std::fs::read(root.join("documents.json")).map_err(|e| {
            ToolError(format!(
                "{}: {e}; build the corpus first (`c2s build`)",
                root.join("documents.json").display()
            ))
        })?;
        let v: Value =
            serde_json::from_slice(&raw).map_err(|e| ToolError(format!("documents.json: {e}")))?;
        let mut mounts = vec![(String::new(), root.clone())];
        if let Ok(lock) = super::compiled::read_lock(&root) {
            let layout = crate::format::Layout::of_lock(&root, &lock);
            if let Some(dir) = &layout.skills_dir {
                for name in crate::format::skill_names(lock.outputs.keys()) {
                    if let Ok(real) = dir.join(&name).canonicalize() {
                        mounts.push((format!("{}/{name}", crate::format::SKILLS), real));
                    }
                }
            }
        }
        let mut docs = BTreeMap::new();
        let mut sources = BTreeMap::new();
        let mut aliases = BTreeMap::new();
        let mut files = BTreeMap::new();
        for (id, d) in v.as_object().into_iter().flatten() {
            let title = d["title"].as_str().unwrap_or_default().to_string();
            let text = d["text"].as_str().unwrap_or_default().to_string();
            for a in d["aliases"].as_array().into_iter().flatten() {
                if let Some(a) = a.as_str() {
                    aliases.insert(a.to_string(), id.clone());
                }
            }
            if let Some(src) = d["source"].as_str() {
                sources.insert(id.clone(), src.to_string());
            }
            if let Some(file) = d["file"].as_str().filter(|f| !f.contains('#')) {
                files.insert(file.to_string(), id.clone());
            }
            docs.insert(id.clone(), (title, text));
        }
        Ok(Tools {
            mounts,
            docs,
            sources,
            aliases,
            files,
            index: std::sync::OnceLock::new(),
            titles: std::sync::OnceLock::new(),
        })
    }

    /// The top-level skill folders: `(output path, real folder)`, in name order.
    pub fn skill_folders(&self) -> Vec<(String, PathBuf)> {
        let mut out: Vec<(String, PathBuf)> = if self.mounts.len() > 1 {
            self.mounts[1..].to_vec()
        } else {
            let skills = self.mounts[0].1.join(crate::format::SKILLS);
            let mut v: Vec<(String, PathBuf)> = std::fs::read_dir(&skills)
                .map(|rd| {
                    rd.flatten()
                        .filter(|e| e.path().is_dir())
                        .map(|e| {
                            let name = e.file_name().to_string_lossy().into_owned();
                            (format!("{}/{name}", crate::format::SKILLS), e.path())
                        })
                        .collect()
                })
                .unwrap_or_default();
            v.retain(|(_, p)| p.join("SKILL.md").is_file());
            v
        };
        out.sort();
        out
    }

    /// Whether the skill folders live outside the output folder.
    fn shared_skills(&self) -> bool {
        self.mounts.len() > 1
    }

    /// Runs one tool by name with JSON arguments.
    pub fn call(&self, name: &str, args: &Value) -> Result<String, ToolError> {
        let s = |k: &str| args.get(k).and_then(Value::as_str);
        match name {
            "ls" => self.ls(s("path").unwrap_or("")),
            "cat" => self.cat(s("path").ok_or_else(|| ToolError("cat needs `path`".into()))?),
            "grep" => self.grep(
                s("pattern").ok_or_else(|| ToolError("grep needs `pattern`".into()))?,
                s("path").unwrap_or(""),
                args.get("ignore_case")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            ),
            "get_document" => self
                .get_document(s("id").ok_or_else(|| ToolError("get_document needs `id`".into()))?),
            "search" => {
                self.search(s("query").ok_or_else(|| ToolError("search needs `query`".into()))?)
            }
            other => Err(ToolError(format!(
                "unknown tool `{other}`; use ls, cat, grep, search or get_document"
            ))),
        }
    }

    /// Resolves a user path inside the output, refusing every way out.
    pub fn resolve(&self, rel: &str) -> Result<PathBuf, ToolError> {
        match self.place(rel)? {
            Place::Real(p) => Ok(p),
            Place::SkillsFolder => Err(ToolError(format!("{rel:?} is a folder; use ls"))),
        }
    }

    fn place(&self, rel: &str) -> Result<Place, ToolError> {
        // A link's `#anchor` names a place inside the file.
        let rel = rel.split_once('#').map_or(rel, |(file, _)| file);
        let refuse = |why: &str| Err(ToolError(format!("refused path {rel:?}: {why}")));
        if rel.len() > MAX_PATH_BYTES {
            return refuse("too long");
        }
        if rel.contains('\0') {
            return refuse("contains a NUL byte");
        }
        let p = Path::new(rel);
        if p.is_absolute() || rel.starts_with('~') || rel.starts_with('\\') {
            return refuse("paths are relative to the output root");
        }
        let mut parts: Vec<&str> = Vec::new();
        for c in p.components() {
            match c {
                Component::Normal(part) if part.len() <= 255 => {
                    parts.push(part.to_str().unwrap_or_default());
                }
                Component::CurDir => {}
                Component::ParentDir => return refuse("`..` is not allowed"),
                _ => return refuse("not a plain relative path"),
            }
        }
        if self.shared_skills() && parts == [crate::format::SKILLS] {
            return Ok(Place::SkillsFolder);
        }
        let (prefix, base) = self
            .mounts
            .iter()
            .filter(|(m, _)| {
                let mp: Vec<&str> = m.split('/').filter(|x| !x.is_empty()).collect();
                parts.starts_with(&mp)
            })
            .max_by_key(|(m, _)| m.len())
            .expect("the output root is mounted at the empty path");
        let skip = prefix.split('/').filter(|x| !x.is_empty()).count();
        let joined = parts[skip..]
            .iter()
            .fold(base.clone(), |acc, x| acc.join(x));
        let real = joined
            .canonicalize()
            .map_err(|_| ToolError(format!("no such file or folder: {rel:?}")))?;
        if !real.starts_with(base) {
            return refuse("it leads outside the output (symlink)");
        }
        Ok(Place::Real(real))
    }

    /// How a real path is shown: relative to the output, skill folders under `skills/`.
    fn display(&self, p: &Path) -> String {
        self.mounts
            .iter()
            .filter(|(_, real)| p.starts_with(real))
            .max_by_key(|(_, real)| real.as_os_str().len())
            .map(|(prefix, real)| {
                let rest = p
                    .strip_prefix(real)
                    .map(|r| r.to_string_lossy().into_owned())
                    .unwrap_or_default();
                match (prefix.is_empty(), rest.is_empty()) {
                    (true, _) => rest,
                    (false, true) => prefix.clone(),
                    (false, false) => format!("{prefix}/{rest}"),
                }
            })
            .unwrap_or_default()
    }

    pub fn ls(&self, rel: &str) -> Result<String, ToolError> {
        let dir = match self.place(rel)? {
            Place::Real(d) => d,
            Place::SkillsFolder => {
                let names: Vec<String> = self.mounts[1..]
                    .iter()
                    .map(|(m, _)| format!("{}/", m.rsplit('/').next().unwrap_or_default()))
                    .collect();
                return Ok(names.join("\n"));
            }
        };
        if !dir.is_dir() {
            return Err(ToolError(format!("{rel:?} is a file; use cat")));
        }
        let mut entries: Vec<String> = std::fs::read_dir(&dir)
            .map_err(|e| ToolError(format!("{rel:?}: {e}")))?
            .filter_map(Result::ok)
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                if e.path().is_dir() {
                    format!("{name}/")
                } else {
                    name
                }
            })
            .collect();
        if self.shared_skills() && dir == self.mounts[0].1 {
            entries.push(format!("{}/", crate::format::SKILLS));
            entries.dedup();
        }
        entries.sort();
        Ok(entries.join("\n"))
    }

    /// Whether the real path `f` is the build's state (`state.jsonl`, `state/`).
    fn is_state(&self, f: &Path) -> bool {
        f.strip_prefix(&self.mounts[0].1)
            .is_ok_and(|r| crate::format::state::is_state(&r.to_string_lossy()))
    }

    pub fn cat(&self, rel: &str) -> Result<String, ToolError> {
        let f = self.resolve(rel)?;
        if f.is_dir() {
            return Err(ToolError(format!("{rel:?} is a folder; use ls")));
        }
        if f.file_name().is_some_and(|n| n == "documents.json") {
            return Err(ToolError(
                "documents.json is large; fetch documents with get_document".into(),
            ));
        }
        if f.file_name().is_some_and(|n| n == "vectors.bin") {
            return Err(ToolError(
                "vectors.bin holds binary vectors for the offline navigator".into(),
            ));
        }
        if self.is_state(&f) {
            return Err(ToolError(format!(
                "{rel} is the build's state (memo keys and vectors), not documentation"
            )));
        }
        let bytes = std::fs::read(&f).map_err(|e| ToolError(format!("{rel:?}: {e}")))?;
        let text = String::from_utf8_lossy(&bytes);
        // `bundles/NNN.md#<id>`: that document's section alone.
        let section = rel
            .split_once('#')
            .and_then(|(_, id)| crate::stage::render::find_section(&text, id));
        let text = match section {
            Some(sec) => std::borrow::Cow::Owned(sec.to_string()),
            None => text,
        };
        Ok(cut_to(&text, CAT_MAX_BYTES).unwrap_or_else(|| text.into_owned()))
    }

    pub fn grep(&self, pattern: &str, rel: &str, ignore_case: bool) -> Result<String, ToolError> {
        let re = regex::RegexBuilder::new(pattern)
            .case_insensitive(ignore_case)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
            .map_err(|e| ToolError(format!("bad pattern: {}", first_line(&e.to_string()))))?;
        let starts: Vec<PathBuf> = match self.place(rel)? {
            Place::SkillsFolder => self.mounts[1..].iter().map(|m| m.1.clone()).collect(),
            Place::Real(p) if self.shared_skills() && p == self.mounts[0].1 => {
                self.mounts.iter().map(|m| m.1.clone()).collect()
            }
            Place::Real(p) => vec![p],
        };
        let mut files = Vec::new();
        for start in &starts {
            collect_files(start, &mut files, GREP_MAX_FILES);
        }
        files.sort();
        let mut out = Vec::new();
        let mut more = false;
        for f in files {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let data = ["documents.json", "c2s.lock", "tree.json", "vectors.bin"];
            if data.contains(&name.as_str()) || self.is_state(&f) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&f) else {
                continue;
            };
            for (n, line) in text.lines().enumerate() {
                if re.is_match(line) {
                    if out.len() == GREP_MAX_LINES {
                        more = true;
                        break;
                    }
                    out.push(format!(
                        "{}:{}: {}",
                        self.display(&f),
                        n + 1,
                        clip(line, 300)
                    ));
                }
            }
        }
        if out.is_empty() {
            return Ok("no matches".into());
        }
        if more {
            out.push(format!(
                "[more matches cut after {GREP_MAX_LINES} lines; narrow the pattern or path]"
            ));
        }
        Ok(out.join("\n"))
    }

    /// Exact id, else a unique prefix (or an alias-free case-insensitive match), else the
    /// closest ids.
    pub fn get_document(&self, id: &str) -> Result<String, ToolError> {
        let id = id.trim().trim_matches('`');
        let by_file = id.ends_with(".md").then(|| self.document_of(id)).flatten();
        let id = by_file.as_deref().unwrap_or(id);
        let id = self.aliases.get(id).map_or(id, String::as_str);
        let found = self.docs.get_key_value(id).or_else(|| {
            let hits: Vec<_> = self
                .docs
                .range(id.to_string()..)
                .take_while(|(k, _)| k.starts_with(id))
                .collect();
            (hits.len() == 1 && !id.is_empty()).then(|| hits[0])
        });
        let found = found.or_else(|| {
            let by_title = self.by_title(id)?;
            self.docs.get_key_value(by_title.as_str())
        });
        let Some((key, (title, text))) = found else {
            return Err(ToolError(format!(
                "no document with id {id:?}; close ids: {}",
                self.close_ids(id).join(", ")
            )));
        };
        let body = if text.chars().count() > DOC_MAX_CHARS {
            let cut = floor_char(text, DOC_MAX_CHARS);
            format!(
                "{}\n[truncated: showing {cut} of {} bytes]",
                &text[..cut],
                text.len()
            )
        } else {
            text.clone()
        };
        Ok(format!("id: {key}\ntitle: {title}\n\n{body}"))
    }

    /// The best documents for a query by full-text BM25: `id — title`, at most 10.
    pub fn search(&self, query: &str) -> Result<String, ToolError> {
        if query.trim().is_empty() {
            return Err(ToolError("search needs a non-empty query".into()));
        }
        let index = self.index.get_or_init(|| {
            let texts: Vec<String> = self
                .docs
                .values()
                .map(|(title, text)| format!("{title}\n{text}"))
                .collect();
            crate::retrieval::Bm25::new(&texts)
        });
        let scores = index.scores(query);
        let ids: Vec<(&String, &(String, String))> = self.docs.iter().collect();
        let hits: Vec<String> = crate::retrieval::top_k(&scores, SEARCH_HITS)
            .into_iter()
            .filter(|&i| scores[i] > 0.0)
            .map(|i| format!("{} — {}", ids[i].0, ids[i].1.0))
            .collect();
        if hits.is_empty() {
            return Ok("no document matches".into());
        }
        Ok(hits.join("\n"))
    }

    /// A document's full text, by id.
    pub fn text(&self, id: &str) -> Option<&str> {
        self.docs.get(id).map(|(_, t)| t.as_str())
    }

    /// A document's title and source file, by id.
    pub fn describe(&self, id: &str) -> Option<(String, String)> {
        let (title, _) = self.docs.get(id)?;
        Some((
            title.clone(),
            self.sources.get(id).cloned().unwrap_or_default(),
        ))
    }
}

fn collect_files(p: &Path, out: &mut Vec<PathBuf>, max: usize) {
    if out.len() >= max {
        return;
    }
    // Symlinks are not followed: the tree c2s writes has none.
    let Ok(meta) = std::fs::symlink_metadata(p) else {
        return;
    };
    if meta.is_file() {
        out.push(p.to_path_buf());
    } else if meta.is_dir() {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        for e in rd.flatten() {
            collect_files(&e.path(), out, max);
        }
    }
}

/// `text` cut to `max` bytes at a character boundary, with a notice of how much is shown;
/// `None` when it fits.
pub fn cut_to(text: &str, max: usize) -> Option<String> {
    (text.len() > max).then(|| {
        let cut = floor_char(text, max);
        format!(
            "{}\n[truncated: showing {cut} of {} bytes]",
            &text[..cut],
            text.len()
        )
    })
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn clip(s: &str, n: usize) -> &str {
    &s[..floor_char(s, n.min(s.len()))]
}

fn first_line(s: &str) -> &str {
    s.lines().find(|l| !l.trim().is_empty()).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_build_state_is_neither_read_nor_searched() {
        let dir = tempfile::tempdir().unwrap();
        let docs = r#"{"a":{"title":"T","source":"a.md","text":"Rotate keys."}}"#;
        std::fs::write(dir.path().join("documents.json"), docs).unwrap();
        let state = "{\"stage\":\"card\",\"key\":\"00\",\"json\":{\"title\":\"Rotate keys\"}}\n";
        std::fs::write(dir.path().join("state.jsonl"), state).unwrap();
        std::fs::create_dir(dir.path().join("state")).unwrap();
        std::fs::write(dir.path().join("state/card.jsonl"), state).unwrap();
        std::fs::write(dir.path().join("notes.md"), "Rotate keys often.\n").unwrap();
        let t = Tools::open(dir.path()).unwrap();
        assert!(
            t.cat("state.jsonl")
                .unwrap_err()
                .0
                .contains("build's state")
        );
        assert!(
            t.cat("state/card.jsonl")
                .unwrap_err()
                .0
                .contains("build's state")
        );
        let hits = t.grep("Rotate", ".", false).unwrap();
        assert!(hits.contains("notes.md"), "{hits}");
        assert!(!hits.contains("state"), "{hits}");
    }
}
