//! The publish manifest `c2s-publish.json`, beside `c2s.lock` in the output: for each published
//! skill folder, the remote skill id, its latest version and the content hash that version holds.
//! Written after every remote change, so a killed publish resumes where it stopped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::publish::PublishError;

/// The manifest's file name in the output folder.
pub use crate::format::PUBLISH_FILE;

/// One published skill folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Published {
    pub id: String,
    pub version: String,
    /// `folder_hash` of the content this version holds.
    pub content_hash: String,
    pub display_title: String,
}

/// What has been published where.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The API root the ids belong to.
    pub base_url: String,
    /// Folder name → its remote skill.
    pub skills: BTreeMap<String, Published>,
}

impl Manifest {
    pub fn path(out: &Path) -> PathBuf {
        out.join(PUBLISH_FILE)
    }

    /// The manifest of `out` for `base_url`; empty when there is none (or it is for another API).
    pub fn load(out: &Path, base_url: &str) -> Result<Manifest, PublishError> {
        let path = Manifest::path(out);
        let m: Manifest = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| PublishError::Manifest {
                path: path.clone(),
                message: e.to_string(),
            })?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Manifest::default(),
            Err(e) => {
                return Err(PublishError::Manifest {
                    path,
                    message: e.to_string(),
                });
            }
        };
        Ok(if m.base_url == base_url {
            m
        } else {
            Manifest {
                base_url: base_url.to_string(),
                skills: BTreeMap::new(),
            }
        })
    }

    /// Writes the manifest atomically (a temporary file renamed over it).
    pub fn save(&self, out: &Path) -> Result<(), PublishError> {
        let path = Manifest::path(out);
        let tmp = out.join(format!(".{PUBLISH_FILE}.tmp"));
        let json = serde_json::to_string_pretty(self).expect("manifest serializes") + "\n";
        std::fs::write(&tmp, json)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| PublishError::Manifest {
                path,
                message: e.to_string(),
            })
    }
}

/// The content hash of a skill folder: its files' paths and hashes (from `c2s.lock`), in order.
pub fn folder_hash<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut h = blake3::Hasher::new();
    for (path, hash) in files {
        h.update(path.as_bytes());
        h.update(b"\0");
        h.update(hash.as_bytes());
        h.update(b"\n");
    }
    crate::hash::short_hash(&h.finalize())
}
