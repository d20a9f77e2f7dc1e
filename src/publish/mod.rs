//! Distribution of a built output's top-level skills. `c2s publish` uploads each skill folder to
//! the Claude Skills API — a new skill the first time, a new version only when the folder's
//! content changed — and records ids, versions and content hashes in `c2s-publish.json` after
//! every change, so a publish is incremental, survives a fresh clone, and resumes after a kill.
//! `c2s pack` (in `pack`) writes upload zips and a static discovery site instead.

mod error;
pub use error::{PublishError, Reader};
pub mod api;
pub mod pack;
pub mod state;
mod zip;

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::config::PublishConfig;
use crate::format::limits::MAX_SKILLS_PER_REQUEST;
use crate::format::lock::{Lock, file_hash};
use crate::format::{Layout, split_skill};
use crate::progress::Progress;
use api::{SkillsApi, UploadFile};
use state::{Manifest, Published, folder_hash};

/// What publishing does to one skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Not published yet: a new skill (or, when a remote skill has its title, a new version
    /// of that one).
    Create,
    /// Published, and the folder changed since: a new version.
    Version { id: String },
    /// Published with this content already: nothing is sent.
    Unchanged { id: String },
    /// Published, no longer in the output, and `--prune`: deleted.
    Delete { id: String },
    /// Published, no longer in the output, without `--prune`: left alone.
    Keep { id: String },
}

/// One skill folder and what happens to it.
#[derive(Debug, Clone)]
pub struct Step {
    pub folder: String,
    pub action: Action,
    pub files: usize,
    pub bytes: u64,
    pub hash: String,
}

/// One skill folder of the output: `(path inside the folder, hash)` of its files, in order.
type Folder = Vec<(String, String)>;

/// The skill folders of a built output, from its lock.
fn folders(lock: &Lock) -> BTreeMap<String, Folder> {
    let mut out: BTreeMap<String, Folder> = BTreeMap::new();
    for (path, hash) in &lock.outputs {
        if let Some((name, rest)) = split_skill(path) {
            out.entry(name.to_string())
                .or_default()
                .push((rest.to_string(), hash.clone()));
        }
    }
    out
}

/// Works out what to send: folders against the manifest.
pub fn plan(layout: &Layout, lock: &Lock, manifest: &Manifest, prune: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    for (name, files) in folders(lock) {
        let hash = folder_hash(files.iter().map(|(p, h)| (p.as_str(), h.as_str())));
        let bytes = files
            .iter()
            .map(|(p, _)| {
                std::fs::metadata(layout.path(&format!("{}/{name}/{p}", crate::format::SKILLS)))
                    .map_or(0, |m| m.len())
            })
            .sum();
        let action = match manifest.skills.get(&name) {
            None => Action::Create,
            Some(p) if p.content_hash == hash => Action::Unchanged { id: p.id.clone() },
            Some(p) => Action::Version { id: p.id.clone() },
        };
        steps.push(Step {
            folder: name,
            action,
            files: files.len(),
            bytes,
            hash,
        });
    }
    let present: Vec<String> = steps.iter().map(|s| s.folder.clone()).collect();
    for (name, p) in &manifest.skills {
        if !present.contains(name) {
            let id = p.id.clone();
            steps.push(Step {
                folder: name.clone(),
                action: if prune {
                    Action::Delete { id }
                } else {
                    Action::Keep { id }
                },
                files: 0,
                bytes: 0,
                hash: String::new(),
            });
        }
    }
    steps
}

/// Reads a folder's files for upload, each checked against the lock.
fn read_folder(
    layout: &Layout,
    lock: &Lock,
    name: &str,
    command: Reader,
) -> Result<Vec<UploadFile>, PublishError> {
    let prefix = format!("{}/{name}/", crate::format::SKILLS);
    let mut files = Vec::new();
    for (path, hash) in lock.outputs.range(prefix.clone()..) {
        let Some(rest) = path.strip_prefix(&prefix) else {
            break;
        };
        let disk = layout.path(path);
        let bytes = std::fs::read(&disk).map_err(|e| PublishError::Stale {
            out: layout.out.clone(),
            what: format!("cannot read {}: {e}", disk.display()),
            command,
        })?;
        if file_hash(&bytes) != *hash {
            return Err(PublishError::Stale {
                out: layout.out.clone(),
                what: format!("{path} was edited"),
                command,
            });
        }
        files.push((format!("{name}/{rest}"), bytes));
    }
    Ok(files)
}

fn describe(step: &Step, prefix: &str) -> String {
    let size = format!(
        "{}, {}",
        crate::text::plural(step.files, "file"),
        crate::text::plural(step.bytes as usize, "byte")
    );
    match &step.action {
        Action::Create => format!(
            "create    {} ({size}) as \"{prefix}{}\"",
            step.folder, step.folder
        ),
        Action::Version { id } => format!("version   {} ({size}) of {id}", step.folder),
        Action::Unchanged { id } => format!("unchanged {} ({id})", step.folder),
        Action::Delete { id } => format!("delete    {} ({id}): gone from the output", step.folder),
        Action::Keep { id } => format!(
            "keep      {} ({id}): gone from the output; --prune deletes it",
            step.folder
        ),
    }
}

/// The `container` parameter of a Messages API request that loads the published skills.
fn container_snippet(manifest: &Manifest) -> String {
    let skills: Vec<serde_json::Value> = manifest
        .skills
        .values()
        .take(MAX_SKILLS_PER_REQUEST)
        .map(|p| json!({"type": "custom", "skill_id": p.id, "version": "latest"}))
        .collect();
    serde_json::to_string_pretty(&json!({"container": {"skills": skills}}))
        .expect("snippet serializes")
}

/// Publishes the output `out` with the `[publish]` settings `cfg` (or, with `dry_run`, lists
/// what it would do); prints the `container.skills` snippet.
pub fn publish(
    out: &Path,
    cfg: &PublishConfig,
    prune: bool,
    dry_run: bool,
    progress: &Progress,
) -> Result<(), PublishError> {
    let lock = crate::serve::compiled::read_lock(out)?;
    let layout = Layout::of_lock(out, &lock);
    let base = api::base_url(cfg);
    let mut manifest = Manifest::load(out, &base)?;
    let steps = plan(&layout, &lock, &manifest, prune);
    for s in &steps {
        if s.files > cfg.max_skill_files {
            return Err(PublishError::TooManyFiles {
                skill: s.folder.clone(),
                files: s.files,
                limit: cfg.max_skill_files,
            });
        }
        if s.bytes > cfg.max_skill_bytes {
            return Err(PublishError::TooLarge {
                skill: s.folder.clone(),
                bytes: s.bytes,
                files: s.files,
                limit: cfg.max_skill_bytes,
            });
        }
    }
    let live = steps
        .iter()
        .filter(|s| !matches!(s.action, Action::Delete { .. } | Action::Keep { .. }))
        .count();
    if live > MAX_SKILLS_PER_REQUEST {
        progress.warning(&format!(
            "{live} top-level skills: one Claude API request loads at most {MAX_SKILLS_PER_REQUEST} (lower tree.K to fit them in one)"
        ));
    }
    if dry_run {
        println!("dry run for {base}: nothing was sent");
        for s in &steps {
            println!("  {}", describe(s, &cfg.display_prefix));
        }
        return Ok(());
    }
    let sends = steps
        .iter()
        .any(|s| !matches!(s.action, Action::Unchanged { .. } | Action::Keep { .. }));
    if sends {
        let api = SkillsApi::new(cfg)?;
        execute(&api, cfg, &layout, &lock, &steps, &mut manifest, progress)?;
    } else {
        progress.status(
            "Fresh",
            &format!("every skill is published as built ({base})"),
        );
    }
    for s in steps
        .iter()
        .filter(|s| matches!(s.action, Action::Keep { .. }))
    {
        progress.status("Kept", &describe(s, &cfg.display_prefix));
    }
    println!("{}", container_snippet(&manifest));
    Ok(())
}

/// Sends the steps, saving the manifest after each remote change.
fn execute(
    api: &SkillsApi,
    cfg: &PublishConfig,
    layout: &Layout,
    lock: &Lock,
    steps: &[Step],
    manifest: &mut Manifest,
    progress: &Progress,
) -> Result<(), PublishError> {
    let out = &layout.out;
    // A skill created by a publish that was killed before it saved the manifest is found by
    // its title and given a new version instead of a twin.
    let remote: Vec<api::RemoteSkill> = if steps.iter().any(|s| s.action == Action::Create) {
        api.list()?
    } else {
        Vec::new()
    };
    for s in steps {
        let title = format!("{}{}", cfg.display_prefix, s.folder);
        let adopt = remote.iter().find(|r| r.display_title == title);
        let (id, version) = match (&s.action, adopt) {
            (Action::Create, None) => {
                let files = read_folder(layout, lock, &s.folder, Reader::Publish)?;
                let (id, version) = api.create(&title, &files)?;
                progress.status("Created", &format!("{} ({id})", s.folder));
                (id, version)
            }
            (Action::Create, Some(r)) => {
                let files = read_folder(layout, lock, &s.folder, Reader::Publish)?;
                let version = api.new_version(&r.id, &files)?;
                progress.status("Adopted", &format!("{} ({}), new version", s.folder, r.id));
                (r.id.clone(), version)
            }
            (Action::Version { id }, _) => {
                let files = read_folder(layout, lock, &s.folder, Reader::Publish)?;
                let version = api.new_version(id, &files)?;
                progress.status("Versioned", &format!("{} ({id})", s.folder));
                (id.clone(), version)
            }
            (Action::Delete { id }, _) => {
                api.delete(id)?;
                progress.status("Deleted", &format!("{} ({id})", s.folder));
                manifest.skills.remove(&s.folder);
                manifest.save(out)?;
                continue;
            }
            (Action::Unchanged { .. } | Action::Keep { .. }, _) => continue,
        };
        manifest.skills.insert(
            s.folder.clone(),
            Published {
                id,
                version,
                content_hash: s.hash.clone(),
                display_title: title,
            },
        );
        manifest.save(out)?;
    }
    Ok(())
}
