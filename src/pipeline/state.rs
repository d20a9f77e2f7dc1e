//! The output as build state: what a build leaves in `state.jsonl` for the next one, and what the
//! next build reads back from a committed output (checked against its `c2s.lock`): results to
//! seed an empty memo with, and the tree (`tree.json`) to warm-start from, on any machine.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use crate::db::cache::{Key, Memo};
use crate::db::exec::{Entry, Executor, Seed};
use crate::db::recipes::{Kept, Recipes};
use crate::db::statindex::OnDisk;
use crate::diag::Diagnostics;
use crate::error::BuildError;
use crate::format::Content;
use crate::format::lock::{Lock, file_hash};
use crate::format::state;
use crate::format::{LOCK_FILE, STATE_FILE};
use crate::ingest::Document;
use crate::pipeline::options::BuildOptions;
use crate::progress::Progress;
use crate::stage::incremental::{SnapNode, Snapshot};
use crate::stage::render::{SERVE_TREE, ServeTree};

/// The kind of value a result shard's recipe names (its hash and length).
pub const SHARD: &str = "state";

/// The state files: `state.jsonl` (the tree hash and every document's content hash), then the
/// result shards of `kept`. A shard is named by a recipe (the c2s version and the stage, key
/// and bytes of each of its results) whose recorded hash and length spare making it: it is
/// made when written, and only the shards whose results changed are made now.
pub fn render<'e>(
    tree_hash: &str,
    docs: &[Document],
    kept: &'e [Entry],
    recipes: &mut Recipes,
) -> Vec<(String, Content<'e>)> {
    use rayon::prelude::*;
    let hashes: BTreeMap<&str, &str> = docs
        .iter()
        .map(|d| (d.id.as_str(), d.content_hash.as_str()))
        .collect();
    let mut head = Vec::new();
    state::write_head(&mut head, tree_hash, &hashes).expect("writing to memory cannot fail");
    let shared: &Recipes = recipes;
    let made: Vec<_> = state::shards(kept)
        .into_par_iter()
        .map(|shard| {
            let recipe = shard_recipe(&shard.entries);
            let recalled = shared.get(&recipe).and_then(|v| {
                let hash: [u8; 32] = v.get(..32)?.try_into().ok()?;
                let len = u64::from_le_bytes(v.get(32..40)?.try_into().ok()?);
                Some((blake3::Hash::from_bytes(hash), len))
            });
            let entries = shard.entries;
            match recalled {
                Some((hash, len)) => {
                    let content =
                        Content::recalled(hash, len, move |w| state::write_shard(w, &entries));
                    ((shard.path, content), Some((recipe, Kept::Recorded)))
                }
                None => {
                    let mut bytes = Vec::new();
                    state::write_shard(&mut bytes, &entries)
                        .expect("writing to memory cannot fail");
                    let mut named = blake3::hash(&bytes).as_bytes().to_vec();
                    named.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                    let kept = Kept::Made(SHARD, named);
                    ((shard.path, bytes.into()), Some((recipe, kept)))
                }
            }
        })
        .collect();
    let mut files = vec![(STATE_FILE.to_string(), Content::from(head))];
    files.extend(recipes.keep_all(made));
    files
}

/// What a shard's bytes are made from: the line format (the c2s version) and each result.
/// Gathered into one buffer first, so that blake3 hashes it many chunks at a time (SIMD), not
/// a small piece per call.
fn shard_recipe(entries: &[&Entry]) -> Key {
    let size: usize = entries
        .iter()
        .map(|e| e.stage.len() + e.value.len() + 64)
        .sum();
    let mut buf = Vec::with_capacity(size + 64);
    buf.extend_from_slice(b"c2s state shard\0");
    buf.extend_from_slice(env!("CARGO_PKG_VERSION").as_bytes());
    for e in entries {
        buf.extend_from_slice(&(e.stage.len() as u64).to_le_bytes());
        buf.extend_from_slice(e.stage.as_bytes());
        buf.extend_from_slice(&e.key);
        buf.push(matches!(e.form, crate::db::exec::Form::Json) as u8);
        buf.extend_from_slice(&(e.value.len() as u64).to_le_bytes());
        buf.extend_from_slice(&e.value);
    }
    *blake3::hash(&buf).as_bytes()
}

/// What a committed output gives the next build.
#[derive(Default)]
pub struct Prior {
    /// The previous tree, by document id and folder name (a warm start).
    pub snapshot: Option<Snapshot>,
    /// Results by memo key, with their files relative to the output (only read when asked
    /// for: an empty memo).
    pub seed: Option<Seed>,
}

/// The output's lock (the writer needs it too), and what the committed output gives this
/// build: its tree to warm-start from (or why there is none), and, when the memo has never
/// built this output (a fresh clone), its results as the executor's seed. An output whose state
/// cannot be used is warned about; the build starts over.
pub(crate) fn read_state(
    opts: &BuildOptions,
    memo: &Memo,
    (exec, known, journal): (&mut Executor, &OnDisk, &crate::db::journal::Journal),
    docs: &[Document],
    diags: &mut Diagnostics,
    progress: &Progress,
) -> Result<(Option<Lock>, Result<Snapshot, String>), BuildError> {
    // Warm-start only from an output that still exists: after `c2s clean` (or deleting the
    // folder) a build starts over, as a user would expect.
    let Some(lock) = crate::pipeline::freshness::read_lock(&opts.out_dir)? else {
        return Ok((None, Err("no previous build of this output".into())));
    };
    let fresh_memo = !journal.known_to(memo)?;
    let prior = match read_prior(&opts.out_dir, &lock, fresh_memo, known) {
        Ok(mut prior) => {
            if let Some(seed) = &mut prior.seed {
                for f in &mut seed.files {
                    *f = crate::paths::display(&opts.out_dir.join(&*f), &opts.display_base);
                }
            }
            if prior.seed.is_some() {
                exec.sources = docs
                    .iter()
                    .map(|d| (d.id.clone(), d.source.clone()))
                    .collect();
            }
            exec.seed = prior.seed;
            prior
                .snapshot
                .ok_or_else(|| "the output has no tree".into())
        }
        Err((name, problem)) => {
            let file = crate::paths::display(&opts.out_dir.join(&name), &opts.display_base);
            diags.warn(
                file.clone(),
                None,
                format!("{problem}; the build cannot continue from this output and starts over"),
            );
            progress.warning(&diags.warnings.last().expect("just pushed").to_string());
            exec.rejected.push(crate::db::exec::Rejected {
                file,
                stage: "state".into(),
                subject: name,
                why: problem.clone(),
            });
            Err(format!("the output's state cannot be used: {problem}"))
        }
    };
    Ok((Some(lock), prior))
}

/// Why a committed output cannot be continued: the file (relative to the output) and what is
/// wrong with it.
pub type Unusable = (String, String);

/// Reads the state of the output `out` (whose lock is `lock`): the tree always, the results
/// (every shard in [`state::STATE_DIR`] the lock lists) when `seed` is set. `Err` says which
/// file keeps the output from being continued and why (the build warns and starts over). A
/// file whose bytes `known` knows by its stat, as the lock records them, is not hashed again;
/// then only the head of a format-1 state file (up to its results) is read when `seed` is not
/// set.
pub fn read_prior(out: &Path, lock: &Lock, seed: bool, known: &OnDisk) -> Result<Prior, Unusable> {
    let checked = |name: &str, whole: bool| -> Result<Vec<u8>, Unusable> {
        let problem = |p: String| (name.to_string(), p);
        let Some(want) = lock.outputs.get(name) else {
            return Err(problem(format!(
                "{LOCK_FILE} lists no {name} (the output was built by an older c2s)"
            )));
        };
        let path = out.join(name);
        let cannot = |e: std::io::Error| problem(format!("cannot read {name} ({e})"));
        if known.hash(name, &path) == Some(want.as_str()) {
            return if whole {
                std::fs::read(&path).map_err(cannot)
            } else {
                state::read_head(&path).map_err(cannot)
            };
        }
        let bytes = std::fs::read(&path).map_err(cannot)?;
        if file_hash(&bytes) != *want {
            return Err(problem(format!(
                "{name} does not match its hash in {LOCK_FILE} (edited by hand?)"
            )));
        }
        Ok(bytes)
    };
    fn in_file(name: &str) -> impl Fn(String) -> Unusable + '_ {
        move |e| (name.to_string(), format!("{name} {e}"))
    }
    let mut st = state::read(&checked(STATE_FILE, seed)?, seed).map_err(in_file(STATE_FILE))?;
    let mut results = Seed::default();
    if seed {
        let in_head = std::mem::take(&mut st.results);
        results.files.push(STATE_FILE.to_string());
        results.results = in_head.into_iter().map(|(k, (_, v))| (k, (0, v))).collect();
        // The shards are read, hashed and parsed in parallel (a fresh clone's first wait).
        use rayon::prelude::*;
        let shards: Vec<&String> = lock
            .outputs
            .keys()
            .filter(|k| state::is_state(k) && *k != STATE_FILE)
            .collect();
        let read = shards
            .par_iter()
            .map(|name| {
                let mut one = HashMap::new();
                state::read_results(&checked(name, true)?, &mut one).map_err(in_file(name))?;
                Ok(one)
            })
            .collect::<Result<Vec<_>, Unusable>>()?;
        for (name, one) in shards.into_iter().zip(read) {
            let ix = results.files.len() as u32;
            results.files.push(name.clone());
            results
                .results
                .extend(one.into_iter().map(|(k, (_, v))| (k, (ix, v))));
        }
    }
    let tree: ServeTree = serde_json::from_slice(&checked(SERVE_TREE, true)?).map_err(|e| {
        (
            SERVE_TREE.to_string(),
            format!("{SERVE_TREE} cannot be read ({e})"),
        )
    })?;
    let snapshot =
        snapshot_of(&tree, st.tree_hash, st.doc_hashes).map_err(|e| (SERVE_TREE.to_string(), e))?;
    Ok(Prior {
        snapshot: Some(snapshot),
        seed: seed.then_some(results),
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
    // Folder names are kept by the next build: untrusted text, vetted like a label.
    for node in &tree.nodes {
        let folder = node.path.rsplit('/').next().unwrap_or(&node.path);
        if !crate::tree::is_valid_name(folder) {
            return Err(format!(
                "{SERVE_TREE}: the folder `{folder}` is not a name c2s gives"
            ));
        }
        if let Some(rule) = crate::planted::check_sentence(&folder.replace('-', " ")) {
            return Err(format!(
                "{SERVE_TREE}: the folder name `{folder}` {rule}, as text planted for AI models does"
            ));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::exec::Form;

    fn entry(stage: &str, n: u8, value: &str) -> Entry {
        Entry {
            stage: stage.into(),
            key: [n; 32],
            form: Form::Json,
            value: value.as_bytes().to_vec().into(),
        }
    }

    /// Each file's path, whether it was recalled, and its hash, length and bytes.
    fn rendered(
        kept: &[Entry],
        recipes: &mut Recipes,
    ) -> Vec<(String, bool, blake3::Hash, u64, Vec<u8>)> {
        render("t", &[], kept, recipes)
            .into_iter()
            .map(|(path, c)| {
                let (hash, len) = c.hash_and_len();
                let recalled = matches!(c, Content::Recalled(..));
                (path, recalled, hash, len, c.get().into_owned())
            })
            .collect()
    }

    #[test]
    fn shards_whose_results_are_unchanged_are_recalled_not_made() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recipes.bin");
        let mut kept = vec![entry("card", 1, "{\"a\":1}"), entry("label", 2, "\"x\"")];
        let mut recipes = Recipes::open(&path);
        let first = rendered(&kept, &mut recipes);
        assert_eq!(recipes.missed_of(SHARD), 2);
        recipes.save(&path).unwrap();
        let names: Vec<&str> = first.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(
            names,
            ["state.jsonl", "state/card.jsonl", "state/label.jsonl"]
        );
        assert!(first.iter().all(|f| !f.1));
        // The label's bytes change: only its shard is made; the card's is recalled, with the
        // hash and length of the bytes it makes.
        kept[1] = entry("label", 2, "\"y\"");
        let mut recipes = Recipes::open(&path);
        let second = rendered(&kept, &mut recipes);
        assert_eq!(recipes.missed_of(SHARD), 1);
        assert!(second[1].1 && !second[2].1);
        for (path, _, hash, len, bytes) in &second {
            assert_eq!(
                (*hash, *len),
                (blake3::hash(bytes), bytes.len() as u64),
                "{path}"
            );
        }
        assert_eq!(second[1].4, first[1].4);
        assert_ne!(second[2].4, first[2].4);
    }
}
