//! `c2s pack`: each top-level skill of a built output as a zip for upload (claude.ai, Claude
//! Code: the skill's folder at the archive's root), and a static site in the shape of the Agent
//! Skills discovery draft (v0.2.0): `.well-known/agent-skills/index.json`, whose entries name
//! each skill's archive (its files at the archive's root) with a `sha256:` digest.
//!
//! Every file is checked against `c2s.lock` before it is packed, archives are reproducible (the
//! same skill gives the same bytes and digest), and each is written to a temporary name and
//! renamed, so a reader never sees half an archive.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::PublishError;
use super::zip::ZipWriter;
use crate::config::{Host, HostLimits};
use crate::format::Layout;
use crate::progress::Progress;

/// The discovery index's schema (an opaque identifier clients match).
pub const DISCOVERY_SCHEMA: &str = "https://schemas.agentskills.io/discovery/0.2.0/schema.json";
/// Where the discovery site keeps its index and archives, under the pack folder.
pub const WELL_KNOWN: &str = ".well-known/agent-skills";
/// Where the upload zips go, under the pack folder.
pub const UPLOAD: &str = "upload";

/// What `c2s pack` was asked for.
pub struct PackOptions {
    /// The pack folder.
    pub dir: PathBuf,
    /// Prefix of each archive's `url` in the index (default: relative to the index).
    pub base_url: Option<String>,
}

/// One packed skill.
#[derive(Debug, Clone)]
pub struct Packed {
    pub name: String,
    pub description: String,
    pub files: usize,
    /// Bytes of the skill's files, unpacked.
    pub bytes: u64,
    /// Bytes of the discovery archive and its digest (`sha256:<hex>`).
    pub archive_bytes: u64,
    pub digest: String,
}

/// Packs every top-level skill of the output `out` into `opts.dir`; returns them in name order.
pub fn pack(
    out: &Path,
    opts: &PackOptions,
    progress: &Progress,
) -> Result<Vec<Packed>, PublishError> {
    let lock = crate::serve::compiled::read_lock(out)?;
    let layout = Layout::of_lock(out, &lock);
    let names: Vec<String> = super::folders(&lock).into_keys().collect();
    refuse_inside(&opts.dir, &[layout.out.clone(), layout.skills_root()])?;
    let site = opts.dir.join(WELL_KNOWN);
    let upload = opts.dir.join(UPLOAD);
    for dir in [&site, &upload] {
        std::fs::create_dir_all(dir).map_err(|e| io("cannot create", dir, e))?;
    }
    let packed: Vec<Packed> = names
        .par_iter()
        .map(|name| pack_skill(&layout, &lock, name, &site, &upload))
        .collect::<Result<_, _>>()?;
    let api = Host::SkillsApi.limits();
    for p in &packed {
        for w in upload_warnings(p, &api) {
            progress.warning(&w);
        }
    }
    write_index(&site, &packed, opts.base_url.as_deref())?;
    for dir in [&site, &upload] {
        remove_stale(dir, &names)?;
    }
    Ok(packed)
}

/// Reads one skill (checked against the lock), writes its upload zip and its discovery archive.
fn pack_skill(
    layout: &Layout,
    lock: &crate::format::lock::Lock,
    name: &str,
    site: &Path,
    upload: &Path,
) -> Result<Packed, PublishError> {
    let mut files = super::read_folder(layout, lock, name, super::Reader::Pack)?;
    let skill_md = format!("{name}/SKILL.md");
    // SKILL.md first, so a reader of the archive's start (or a range request) meets it first.
    files.sort_by_key(|(path, _)| *path != skill_md);
    let Some((_, head)) = files.first().filter(|(p, _)| *p == skill_md) else {
        return Err(PublishError::Pack(format!(
            "{name} has no SKILL.md in c2s.lock; run `c2s build` again"
        )));
    };
    let description = frontmatter_description(head).ok_or_else(|| {
        PublishError::Pack(format!(
            "{name}/SKILL.md has no description in its frontmatter; run `c2s build` again"
        ))
    })?;
    let mut for_upload = ZipWriter::new();
    let mut for_site = ZipWriter::new();
    for (path, bytes) in &files {
        for_upload.add(path, bytes)?;
        let inner = path.strip_prefix(&format!("{name}/")).unwrap_or(path);
        for_site.add(inner, bytes)?;
    }
    let archive = for_site.finish()?;
    write_atomic(&upload.join(format!("{name}.zip")), &for_upload.finish()?)?;
    write_atomic(&site.join(format!("{name}.zip")), &archive)?;
    Ok(Packed {
        name: name.to_string(),
        description,
        files: files.len(),
        bytes: files.iter().map(|(_, b)| b.len() as u64).sum(),
        archive_bytes: archive.len() as u64,
        digest: sha256_digest(&archive),
    })
}

/// `sha256:` and the 64 lowercase hex digits of the SHA-256 of `bytes` (the draft's digest).
pub fn sha256_digest(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    let hex: String = sum.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

/// The `description` of a SKILL.md's YAML frontmatter.
fn frontmatter_description(skill_md: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(skill_md).ok()?;
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---")?;
    let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(&rest[..end]).ok()?;
    yaml.get("description")?.as_str().map(str::to_string)
}

/// Where claude.ai or the Skills API would refuse this skill's upload.
fn upload_warnings(p: &Packed, api: &HostLimits) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(max) = api.files_per_skill.filter(|&m| p.files > m) {
        out.push(format!(
            "upload/{}.zip holds {} files; claude.ai and the Skills API take at most {max} per skill (build with [output] host = \"all\" or \"skills-api\", which pack documents into bundles)",
            p.name, p.files
        ));
    }
    if let Some(max) = api.bytes_per_skill.filter(|&m| p.bytes > m) {
        out.push(format!(
            "upload/{}.zip unpacks to {} bytes; claude.ai and the Skills API take at most {max} per skill (raise tree.K for more, smaller skills)",
            p.name, p.bytes
        ));
    }
    out
}

/// Writes `index.json`: one `archive` entry per skill.
fn write_index(site: &Path, packed: &[Packed], base_url: Option<&str>) -> Result<(), PublishError> {
    let skills: Vec<serde_json::Value> = packed
        .iter()
        .map(|p| {
            let file = format!("{}.zip", p.name);
            let url = match base_url {
                Some(b) => format!("{}/{file}", b.trim_end_matches('/')),
                None => file,
            };
            json!({
                "name": p.name,
                "type": "archive",
                "description": p.description,
                "url": url,
                "digest": p.digest,
            })
        })
        .collect();
    let index = json!({"$schema": DISCOVERY_SCHEMA, "skills": skills});
    let text = serde_json::to_string_pretty(&index).expect("index serializes") + "\n";
    write_atomic(&site.join("index.json"), text.as_bytes())
}

/// Removes archives of skills the output no longer has (only `<name>.zip` files).
fn remove_stale(dir: &Path, names: &[String]) -> Result<(), PublishError> {
    let entries = std::fs::read_dir(dir).map_err(|e| io("cannot list", dir, e))?;
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(stem) = file.to_str().and_then(|f| f.strip_suffix(".zip")) else {
            continue;
        };
        if !names.iter().any(|n| n == stem) {
            let path = entry.path();
            std::fs::remove_file(&path).map_err(|e| io("cannot remove", &path, e))?;
        }
    }
    Ok(())
}

/// A pack folder inside the output (or its skills folder) would be reported by `c2s check`
/// as unexpected files and removed by the next build: refused, naming both.
fn refuse_inside(dir: &Path, owned: &[PathBuf]) -> Result<(), PublishError> {
    let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let dir = abs(dir);
    for o in owned {
        let o = abs(o);
        if dir.starts_with(&o) {
            return Err(PublishError::Pack(format!(
                "{} is inside {}, which c2s builds own; pass --dir outside it (the default is \
                 OUT-pack next to the output)",
                dir.display(),
                o.display()
            )));
        }
    }
    Ok(())
}

fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), PublishError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("pack");
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| io("cannot write", path, e))
}

fn io(context: &'static str, path: &Path, source: std::io::Error) -> PublishError {
    PublishError::Io {
        context,
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_is_the_drafts_format() {
        // SHA-256 of the empty string.
        assert_eq!(
            sha256_digest(b""),
            "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn description_from_frontmatter() {
        let md = b"---\nname: s\ndescription: 'Covers: a, b'\n---\n\n# S\n";
        assert_eq!(frontmatter_description(md).as_deref(), Some("Covers: a, b"));
        assert_eq!(frontmatter_description(b"# no frontmatter"), None);
    }
}
