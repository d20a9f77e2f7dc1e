//! `c2s init`: a starter `c2s.toml` for the docs repo in a folder, its corpus set to the pages
//! of the site generator found there (`structure::site`).

use std::path::{Path, PathBuf};

use crate::cmd::cli::InitArgs;
use crate::cmd::{EXIT_OK, Error};
use crate::progress::Progress;
use crate::structure::site::{Site, detect};

pub fn init_cmd(args: &InitArgs, progress: &Progress) -> Result<u8, Error> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    if !dir.is_dir() {
        return Err(Error::NotAFolder { path: dir });
    }
    let file = dir.join("c2s.toml");
    if file.exists() {
        return Err(Error::ConfigExists { path: file });
    }
    let site = detect(&dir);
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("c2s-out"));
    let text = starter(&site, &out);
    std::fs::write(&file, text).map_err(|source| Error::Io {
        context: "cannot write",
        path: file.clone(),
        source,
    })?;
    let found = match (&site.generator, &site.config) {
        (Some(g), Some(c)) => format!("{g} ({}), pages in {}", c.display(), shown(&site.pages)),
        _ => format!("no site generator, pages in {}", shown(&site.pages)),
    };
    progress.status("Created", &format!("{}: {found}", file.display()));
    progress.status(
        "Next",
        &format!(
            "`c2s build` compiles {} into {}; commit it, and run `c2s check` in CI",
            shown(&site.pages),
            shown(&out)
        ),
    );
    Ok(EXIT_OK)
}

/// A folder as the user reads it: `docs/`, or `this folder` for `.`.
fn shown(p: &Path) -> String {
    if p == Path::new(".") {
        "this folder".to_string()
    } else {
        format!("{}/", p.display())
    }
}

/// The starter config: the corpus and the output, the offline backends spelled out, and the
/// settings a new user changes first, commented out.
fn starter(site: &Site, out: &Path) -> String {
    let about = match (&site.generator, &site.config) {
        (Some(g), Some(c)) => format!(
            "# A {g} site ({}): the tree follows its navigation and folders.",
            c.display()
        ),
        _ => "# No site generator was found: the tree follows the folders.".to_string(),
    };
    let pages = commented(
        &format!(
            "paths = [{}]",
            toml_string(&site.pages.display().to_string())
        ),
        "folders or files, relative to this file",
    );
    let out = commented(
        &format!("dir = {}", toml_string(&out.display().to_string())),
        "commit it; `c2s check` in CI fails when it is stale",
    );
    format!(
        r#"# c2s configuration, written by `c2s init` (c2s {version}). Every key is optional; the guide's
# Configuration page lists them all with their defaults.
{about}

[corpus]
{pages}
exclude = []              # globs to leave out, e.g. "blog/**"

[output]
{out}
# host = "all"            # or "skills-api", "claude-code", "files": the limits it must fit

[llm]
backend = "extractive"    # offline and deterministic; "openai" or "anthropic" for summaries
# model = "gpt-4o-mini"   #   and labels written by a model (the key comes from the
# api_key_env = "OPENAI_API_KEY"  #   environment variable named here)

[embed]
backend = "hashed"        # offline; "onnx" for neural embeddings (scripts/fetch-models.sh)
"#,
        version = env!("CARGO_PKG_VERSION"),
    )
}

/// `key = value` with its comment in the reference's column (26), or a space after a long one.
fn commented(setting: &str, comment: &str) -> String {
    format!("{setting:<25} # {comment}")
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    #[test]
    fn the_starter_is_a_valid_config_naming_the_pages() {
        let site = Site {
            generator: Some("MkDocs"),
            config: Some(PathBuf::from("mkdocs.yml")),
            pages: PathBuf::from("docs \"x\""),
        };
        let text = starter(&site, Path::new("skills"));
        let c = Config::from_toml(&text, Path::new("c2s.toml")).unwrap();
        assert_eq!(c.corpus.paths, vec![PathBuf::from("docs \"x\"")]);
        assert_eq!(c.output.dir, PathBuf::from("skills"));
        assert!(text.contains("A MkDocs site (mkdocs.yml)"), "{text}");
    }
}
