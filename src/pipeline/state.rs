//! The output as build state: what a build leaves in `state.jsonl` for the next one, and what the
//! next build reads back from a committed output (checked against its `c2s.lock`): results to
//! seed an empty memo with, and the tree (`tree.json`) to warm-start from, on any machine.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::db::cache::{Key, Memo};
use crate::db::exec::{Entry, Executor};
use crate::db::statindex::OnDisk;
use crate::diag::Diagnostics;
use crate::error::BuildError;
use crate::format::lock::{Lock, file_hash};
use crate::format::state;
use crate::format::{LOCK_FILE, STATE_FILE};
use crate::ingest::Document;
use crate::pipeline::build::BuildOptions;
use crate::pipeline::records::record_name;
use crate::progress::Progress;
use crate::stage::incremental::{SnapNode, Snapshot};
use crate::stage::render::{SERVE_TREE, ServeTree};

/// The state file's bytes: the tree hash, every document's content hash, and `kept`.
pub fn render(tree_hash: &str, docs: &[Document], kept: &[Entry]) -> Vec<u8> {
    let hashes: BTreeMap<&str, &str> = docs
        .iter()
        .map(|d| (d.id.as_str(), d.content_hash.as_str()))
        .collect();
    let mut out = Vec::new();
    state::write(&mut out, tree_hash, &hashes, kept).expect("writing to memory cannot fail");
    out
}

/// What a committed output gives the next build.
#[derive(Default)]
pub struct Prior {
    /// The previous tree, by document id and folder name (a warm start).
    pub snapshot: Option<Snapshot>,
    /// Results by memo key (only read when asked for: an empty memo).
    pub seed: Option<HashMap<Key, Vec<u8>>>,
}

/// The output's lock (the writer needs it too), and what the committed output gives this
/// build: its tree to warm-start from (or why there is none), and, when the memo has never
/// built this output (a fresh clone), its results as the executor's seed. An output whose state
/// cannot be used is warned about; the build starts over.
pub(crate) fn read_state(
    opts: &BuildOptions,
    memo: &Memo,
    (exec, known): (&mut Executor, &OnDisk),
    diags: &mut Diagnostics,
    progress: &Progress,
) -> Result<(Option<Lock>, Result<Snapshot, String>), BuildError> {
    // Warm-start only from an output that still exists: after `c2s clean` (or deleting the
    // folder) a build starts over, as a user would expect.
    let Some(lock) = crate::pipeline::freshness::read_lock(&opts.out_dir)? else {
        return Ok((None, Err("no previous build of this output".into())));
    };
    let fresh_memo = !memo.has_record(&record_name("slots", &opts.out_dir))?;
    let prior = match read_prior(&opts.out_dir, &lock, fresh_memo, known) {
        Ok(prior) => {
            exec.seed = prior.seed;
            prior
                .snapshot
                .ok_or_else(|| "the output has no tree".into())
        }
        Err(problem) => {
            let file = crate::paths::display(&opts.out_dir.join(STATE_FILE), &opts.display_base);
            diags.warn(
                file,
                None,
                format!("{problem}; the build cannot continue from this output and starts over"),
            );
            progress.warning(&diags.warnings.last().expect("just pushed").to_string());
            Err(format!("the output's state cannot be used: {problem}"))
        }
    };
    Ok((Some(lock), prior))
}

/// Reads the state of the output `out` (whose lock is `lock`): the tree always, the results
/// when `seed` is set. `Err` says why the output cannot be continued (the build warns and
/// starts over). A file whose bytes `known` knows by its stat, as the lock records them, is
/// not hashed again; then only the head of the state file (up to its results) is read when
/// `seed` is not set.
pub fn read_prior(out: &Path, lock: &Lock, seed: bool, known: &OnDisk) -> Result<Prior, String> {
    let checked = |name: &str, whole: bool| -> Result<Vec<u8>, String> {
        let Some(want) = lock.outputs.get(name) else {
            return Err(format!(
                "{LOCK_FILE} lists no {name} (the output was built by an older c2s)"
            ));
        };
        let path = out.join(name);
        let cannot = |e: std::io::Error| format!("cannot read {name} ({e})");
        if known.hash(name, &path) == Some(want.as_str()) {
            return if whole {
                std::fs::read(&path).map_err(cannot)
            } else {
                state::read_head(&path).map_err(cannot)
            };
        }
        let bytes = std::fs::read(&path).map_err(cannot)?;
        if file_hash(&bytes) != *want {
            return Err(format!(
                "{name} does not match its hash in {LOCK_FILE} (edited by hand?)"
            ));
        }
        Ok(bytes)
    };
    let st =
        state::read(&checked(STATE_FILE, seed)?, seed).map_err(|e| format!("{STATE_FILE} {e}"))?;
    let tree: ServeTree = serde_json::from_slice(&checked(SERVE_TREE, true)?)
        .map_err(|e| format!("{SERVE_TREE} cannot be read ({e})"))?;
    let snapshot = snapshot_of(&tree, st.tree_hash, st.doc_hashes)?;
    Ok(Prior {
        snapshot: Some(snapshot),
        seed: seed.then(|| st.results.into_iter().map(|(k, (_, v))| (k, v)).collect()),
    })
}

/// The warm-start snapshot of a `tree.json` (nodes in path order).
fn snapshot_of(
    tree: &ServeTree,
    tree_hash: String,
    doc_hashes: BTreeMap<String, String>,
) -> Result<Snapshot, String> {
    let n = tree.nodes.len();
    let mut parent = vec![None; n];
    for (i, node) in tree.nodes.iter().enumerate() {
        for &c in &node.children {
            if c >= n || parent[c].is_some() || c == i {
                return Err(format!("{SERVE_TREE}: node {i} has a bad child {c}"));
            }
            parent[c] = Some(i);
        }
    }
    if let Some(&r) = tree.roots.iter().find(|&&r| r >= n || parent[r].is_some()) {
        return Err(format!("{SERVE_TREE}: bad root {r}"));
    }
    let nodes = tree
        .nodes
        .iter()
        .zip(parent)
        .map(|(node, parent)| SnapNode {
            level: node.level,
            folder: node
                .path
                .rsplit('/')
                .next()
                .unwrap_or(&node.path)
                .to_string(),
            parent,
            children: node.children.clone(),
            docs: node.docs.clone(),
            see_also: node.see_also.clone(),
        })
        .collect::<Vec<_>>();
    Ok(Snapshot {
        tree_hash,
        levels: nodes.iter().map(|n| n.level).max().unwrap_or(0),
        roots: tree.roots.clone(),
        nodes,
        doc_hashes,
    })
}
