//! The includes MDX sites make, asked for by the markers that `markdown::mdx` and the
//! frontmatter reader leave: an imported snippet (`<Setup />` after `import Setup from
//! '/snippets/setup.mdx'`), read from the page's folder, the site's root (`/…`: the folder of
//! Mintlify's `docs.json` or Docusaurus' config) or Docusaurus' `@site/…`; and an OpenAPI
//! endpoint page (Mintlify's `openapi: "/openapi.json GET /users"`), the operation rendered
//! from its spec.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::openapi::{self, Operation};
use super::{At, Includer};
use crate::diag::Diagnostics;

/// The site configurations whose folder `/…` paths start from.
const SITE_FILES: [&str; 6] = [
    "docs.json",
    "mint.json",
    "docusaurus.config.ts",
    "docusaurus.config.js",
    "docusaurus.config.mjs",
    "docusaurus.config.cjs",
];

/// The spec files Mintlify reads when a page does not name one.
const DEFAULT_SPECS: [&str; 3] = ["openapi.json", "openapi.yaml", "openapi.yml"];

impl Includer {
    /// The text a marker line's `request` stands for; None (after a warning) when it cannot
    /// be had.
    pub(super) fn marked(
        &mut self,
        request: &str,
        dir: &Path,
        at: &At,
        depth: usize,
        diags: &mut Diagnostics,
    ) -> Option<String> {
        if let Some(path) = request.strip_prefix("include ") {
            return self.imported(path, dir, at, depth, diags);
        }
        let spec = request.strip_prefix("openapi ")?;
        self.endpoint(spec, dir, at, diags)
    }

    /// An imported snippet's text, without its frontmatter, read as the page is.
    fn imported(
        &mut self,
        path: &str,
        dir: &Path,
        at: &At,
        depth: usize,
        diags: &mut Diagnostics,
    ) -> Option<String> {
        let (base, rel) = match path
            .strip_prefix("@site/")
            .or_else(|| path.strip_prefix('/'))
        {
            Some(rel) => (self.site_root(dir), rel),
            None => (dir.to_path_buf(), path),
        };
        let (file, text) = self.read_first(rel, &[base], at, diags)?;
        let body = crate::ingest::formats::without_frontmatter(&text);
        let fdir = file.parent().unwrap_or(Path::new("/")).to_path_buf();
        Some(self.nested(body, &file, &fdir, at, depth, diags))
    }

    /// The folder a site's `/…` paths start from: the nearest folder at or above `dir` that
    /// holds a Mintlify or Docusaurus configuration, else the project root.
    fn site_root(&self, dir: &Path) -> PathBuf {
        dir.ancestors()
            .take_while(|d| d.starts_with(&self.project.root))
            .find(|d| SITE_FILES.iter().any(|f| d.join(f).is_file()))
            .unwrap_or(&self.project.root)
            .to_path_buf()
    }

    /// An endpoint page's operation, rendered from the spec it names or, without one, from the
    /// first spec of the site (those its `docs.json` names, then `openapi.json`) that has it.
    fn endpoint(
        &mut self,
        value: &str,
        dir: &Path,
        at: &At,
        diags: &mut Diagnostics,
    ) -> Option<String> {
        let Some((file, op)) = openapi::parse(value) else {
            diags.warn(
                at.page,
                None,
                format!("openapi: {value:?} names no operation (write `FILE METHOD /path`, e.g. `/openapi.json GET /users`); the page is kept without it"),
            );
            return None;
        };
        let root = self.site_root(dir);
        let named = file.is_some();
        let files: Vec<String> = match file {
            Some(f) => vec![f.trim_start_matches('/').to_string()],
            None => self.site_specs(&root),
        };
        for f in &files {
            let spec = match (named, root.join(f).is_file()) {
                (false, false) => continue,
                _ => self.spec(f, &root, at, diags)?,
            };
            if let Some(page) = openapi::render(&spec, &op) {
                return Some(page);
            }
        }
        let shown = match &op {
            Operation::Endpoint { method, path } => format!("{} {path}", method.to_uppercase()),
            Operation::Webhook(name) => format!("webhook {name}"),
        };
        diags.warn(
            at.page,
            None,
            match named {
                true => format!("openapi: {} has no {shown}; the page is kept without it", files[0]),
                false => format!("openapi: no spec of the site has {shown} (name the file: `openapi: \"/openapi.json {shown}\"`); the page is kept without it"),
            },
        );
        None
    }

    /// The specs a Mintlify site names (`"openapi"` values in its `docs.json`, local files only),
    /// then the default names; read once per site, not once per endpoint page.
    fn site_specs(&mut self, root: &Path) -> Vec<String> {
        if let Some(known) = self.site_specs.get(root) {
            return known.clone();
        }
        let mut out = Vec::new();
        if let Some(Ok(config)) = ["docs.json", "mint.json"]
            .iter()
            .find_map(|f| std::fs::read_to_string(root.join(f)).ok())
            .map(|t| serde_json::from_str::<Value>(&t))
        {
            named_specs(&config, &mut out);
        }
        out.extend(DEFAULT_SPECS.iter().map(|s| s.to_string()));
        out.dedup();
        self.site_specs.insert(root.to_path_buf(), out.clone());
        out
    }

    /// The spec at `rel` under `root`, parsed once (JSON or YAML); a warning when it cannot be.
    fn spec(
        &mut self,
        rel: &str,
        root: &Path,
        at: &At,
        diags: &mut Diagnostics,
    ) -> Option<std::sync::Arc<Value>> {
        let (file, text) = self.read_first(rel, &[root.to_path_buf()], at, diags)?;
        if let Some(parsed) = self.specs.get(&file) {
            return parsed.clone().ok();
        }
        let parsed = serde_json::from_str::<Value>(&text)
            .map_err(|e| e.to_string())
            .or_else(|e| {
                serde_yaml_ng::from_str::<Value>(&text).map_err(|_| e)
            })
            .map(std::sync::Arc::new)
            .map_err(|e| {
                diags.warn(
                    at.page,
                    None,
                    format!("openapi: {rel} is not a JSON or YAML spec ({e}); the page is kept without it"),
                );
                e
            });
        self.specs.insert(file, parsed.clone());
        parsed.ok()
    }
}

/// The local spec files named by `"openapi"` values anywhere in a Mintlify configuration.
fn named_specs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, v) in o {
                if k == "openapi" {
                    let names: Vec<&Value> = match v {
                        Value::Array(a) => a.iter().collect(),
                        Value::Object(o) => o.get("source").into_iter().collect(),
                        v => vec![v],
                    };
                    for n in names.into_iter().filter_map(Value::as_str) {
                        if !n.contains("://") && !out.iter().any(|o| o == n.trim_start_matches('/'))
                        {
                            out.push(n.trim_start_matches('/').to_string());
                        }
                    }
                } else {
                    named_specs(v, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| named_specs(v, out)),
        _ => {}
    }
}
