//! Which site generator a docs repo uses, and where its pages are: what `c2s init` writes into a
//! starter `c2s.toml`.

use std::path::{Path, PathBuf};

/// A docs repo's site generator and its pages' folder, relative to the repo's folder.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    /// The generator's name, as its users know it (`MkDocs`, `mdBook`, …); `None` for a folder
    /// of documents without one.
    pub generator: Option<&'static str>,
    /// The file that says so (`mkdocs.yml`, `book.toml`, …), relative.
    pub config: Option<PathBuf>,
    /// The folder of the pages, relative (`.` for the folder itself).
    pub pages: PathBuf,
}

/// The site in `dir`: MkDocs (`mkdocs.yml`, its `docs_dir`), mdBook (`book.toml`, its `src`,
/// also one folder down as in `guide/book.toml`), VitePress (`.vitepress/` in the folder or in
/// `docs/`), Docusaurus (`docusaurus.config.*` with `docs/`), Hugo (`hugo.*`/`config.toml` with
/// `content/`), Sphinx (`conf.py` in the folder, `docs/`, `doc/`, or their `source/`) or Mintlify
/// (`docs.json` or `mint.json` in the folder or `docs/`) or Starlight (an Astro config that sets
/// it up, with `src/content/docs/`, in the folder or `docs/`); else a `docs/` folder, else the
/// folder itself.
pub fn detect(dir: &Path) -> Site {
    mkdocs(dir)
        .or_else(|| mdbook(dir))
        .or_else(|| vitepress(dir))
        .or_else(|| docusaurus(dir))
        .or_else(|| hugo(dir))
        .or_else(|| sphinx(dir))
        .or_else(|| mintlify(dir))
        .or_else(|| starlight(dir))
        .unwrap_or_else(|| Site {
            generator: None,
            config: None,
            pages: if dir.join("docs").is_dir() {
                PathBuf::from("docs")
            } else {
                PathBuf::from(".")
            },
        })
}

fn mkdocs(dir: &Path) -> Option<Site> {
    let name = ["mkdocs.yml", "mkdocs.yaml"]
        .into_iter()
        .find(|n| dir.join(n).is_file())?;
    let text = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
    // MkDocs' own tags (`!!python/name:…`) make no difference to one key: read it by its line.
    let docs_dir = text
        .lines()
        .find_map(|l| l.strip_prefix("docs_dir:"))
        .map(|v| v.trim().trim_matches(|c| c == '"' || c == '\'').to_string())
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "docs".to_string());
    Some(Site {
        generator: Some("MkDocs"),
        config: Some(PathBuf::from(name)),
        pages: PathBuf::from(docs_dir),
    })
}

fn mdbook(dir: &Path) -> Option<Site> {
    let book = std::iter::once(PathBuf::from("book.toml"))
        .chain(subfolders(dir).map(|d| d.join("book.toml")))
        .find(|b| dir.join(b).is_file())?;
    let src = super::nav::book_src(&dir.join(&book)).ok()?;
    Some(Site {
        generator: Some("mdBook"),
        config: Some(book),
        pages: src.strip_prefix(dir).map(Path::to_path_buf).unwrap_or(src),
    })
}

fn vitepress(dir: &Path) -> Option<Site> {
    let pages = [".", "docs"]
        .into_iter()
        .find(|p| super::sidebar::config_in(&dir.join(p)).is_some())?;
    let config = super::sidebar::config_in(&dir.join(pages))?;
    Some(Site {
        generator: Some("VitePress"),
        config: config.strip_prefix(dir).ok().map(clean),
        pages: PathBuf::from(pages),
    })
}

fn docusaurus(dir: &Path) -> Option<Site> {
    let config = super::docusaurus::config_in(dir)?;
    dir.join("docs").is_dir().then(|| Site {
        generator: Some("Docusaurus"),
        config: config.strip_prefix(dir).ok().map(clean),
        pages: PathBuf::from("docs"),
    })
}

fn hugo(dir: &Path) -> Option<Site> {
    let config = ["hugo.toml", "hugo.yaml", "hugo.json", "config.toml"]
        .into_iter()
        .find(|n| dir.join(n).is_file())?;
    dir.join("content").is_dir().then(|| Site {
        generator: Some("Hugo"),
        config: Some(PathBuf::from(config)),
        pages: PathBuf::from("content"),
    })
}

fn sphinx(dir: &Path) -> Option<Site> {
    let pages = sphinx_sources()
        .into_iter()
        .find(|p| super::sphinx::conf_in(&dir.join(p)).is_some())?;
    Some(Site {
        generator: Some("Sphinx"),
        config: Some(clean(&PathBuf::from(pages).join("conf.py"))),
        pages: PathBuf::from(pages),
    })
}

fn mintlify(dir: &Path) -> Option<Site> {
    let pages = [".", "docs"]
        .into_iter()
        .find(|p| super::mintlify::config_in(&dir.join(p)).is_some())?;
    let config = super::mintlify::config_in(&dir.join(pages))?;
    Some(Site {
        generator: Some("Mintlify"),
        config: config.strip_prefix(dir).ok().map(clean),
        pages: PathBuf::from(pages),
    })
}

fn starlight(dir: &Path) -> Option<Site> {
    let (at, config) = [".", "docs"]
        .into_iter()
        .find_map(|p| super::starlight::config_in(&dir.join(p)).map(|c| (p, c)))?;
    Some(Site {
        generator: Some("Starlight"),
        config: config.strip_prefix(dir).ok().map(clean),
        pages: clean(&PathBuf::from(at).join(super::starlight::CONTENT)),
    })
}

/// Where Sphinx projects keep their source folder (the folder of `conf.py`).
fn sphinx_sources() -> [&'static str; 5] {
    ["docs", "docs/source", "doc", "doc/source", "."]
}

/// The folders directly in `dir` that are not hidden, sorted.
fn subfolders(dir: &Path) -> impl Iterator<Item = PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.path().is_dir() && !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| PathBuf::from(e.file_name()))
        .collect();
    found.sort();
    found.into_iter()
}

/// `./docs/x` as `docs/x`.
fn clean(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, rel: &str, text: &str) {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn each_generator_is_found_with_its_pages_folder() {
        type Files<'a> = &'a [(&'a str, &'a str)];
        let cases: [(Files, Option<&str>, &str); 13] = [
            (
                &[("mkdocs.yml", "site_name: x\ndocs_dir: documentation\n")],
                Some("MkDocs"),
                "documentation",
            ),
            (
                &[("mkdocs.yml", "site_name: x\n"), ("docs/a.md", "")],
                Some("MkDocs"),
                "docs",
            ),
            (
                &[("guide/book.toml", "[book]\nsrc = \"pages\"\n")],
                Some("mdBook"),
                "guide/pages",
            ),
            (
                &[("docs/.vitepress/config.mts", "export default {}\n")],
                Some("VitePress"),
                "docs",
            ),
            (
                &[("docusaurus.config.ts", ""), ("docs/a.md", "")],
                Some("Docusaurus"),
                "docs",
            ),
            (
                &[("hugo.toml", ""), ("content/a.md", "")],
                Some("Hugo"),
                "content",
            ),
            (
                &[("docs/conf.py", ""), ("docs/index.rst", "")],
                Some("Sphinx"),
                "docs",
            ),
            (
                &[("doc/source/conf.py", ""), ("doc/Makefile", "")],
                Some("Sphinx"),
                "doc/source",
            ),
            (&[("conf.py", ""), ("index.rst", "")], Some("Sphinx"), "."),
            (
                &[("docs/docs.json", r#"{"name": "x", "navigation": []}"#)],
                Some("Mintlify"),
                "docs",
            ),
            (
                &[("docs.json", r#"{"entries": []}"#), ("docs/a.md", "")],
                None,
                "docs",
            ),
            (
                &[
                    (
                        "docs/astro.config.mjs",
                        "import starlight from '@astrojs/starlight';\n",
                    ),
                    ("docs/src/content/docs/index.mdx", ""),
                ],
                Some("Starlight"),
                "docs/src/content/docs",
            ),
            (&[("docs/a.md", "")], None, "docs"),
        ];
        for (files, generator, pages) in cases {
            let tmp = tempfile::tempdir().unwrap();
            for (rel, text) in files {
                touch(tmp.path(), rel, text);
            }
            let site = detect(tmp.path());
            assert_eq!(site.generator, generator, "{files:?}");
            assert_eq!(site.pages, PathBuf::from(pages), "{files:?}");
        }
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(detect(tmp.path()).pages, PathBuf::from("."));
    }
}
