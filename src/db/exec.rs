//! The stage executor: plan (which memo entries a stage needs), execute (compute the missing ones in
//! parallel, committing each batch to the memo as it arrives), assemble (results in input order).

use std::collections::BTreeMap;
use std::sync::mpsc;

use bytes::Bytes;
use rayon::prelude::*;
use serde::Serialize;

mod dry;
mod earlier;
mod vet;

use super::cache::{CacheError, Key, KeyParts, Memo};
pub use super::value::{Entry, Form, Json, Maybe, MemoValue};
pub use dry::{DryRun, Miss, explain};
pub use earlier::Earlier;
pub use vet::{Rejected, Seed, Vet};

/// The error type of the stages the executor runs (the build's `BuildError`): it can carry a
/// memo failure, says when an item waits for a batch, and reports a broken promise.
pub trait StageError: From<CacheError> + Send {
    /// The item waits for a batch: not a failure, the stage finishes the other items.
    fn is_pending(&self) -> bool;
    /// What the stage returns when some of its items wait for a batch.
    fn pending() -> Self;
    /// A broken internal promise (a bug).
    fn internal(message: String) -> Self;
}

/// Warnings raised while computing (fallbacks), shared with stage closures.
pub type WarningSink = std::sync::Arc<std::sync::Mutex<Vec<crate::diag::Warning>>>;

/// Counts of one stage: computed now vs reused from the memo.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StageCount {
    pub computed: usize,
    pub reused: usize,
    /// Of the reused: taken from the output's state file (the memo did not have them).
    #[serde(skip_serializing_if = "is_zero")]
    pub seeded: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What a stage item needs: what it is about (for `--explain`), its key, and the size of its
/// input in characters (for token estimates).
pub struct Plan {
    pub subject: String,
    pub parts: KeyParts,
    pub input_chars: usize,
}

struct Planned {
    plan: Plan,
    key: Key,
}

/// Every key a build used, by stage and subject: what `--explain` compares against next time.
#[derive(Debug, Default, Clone, Serialize, serde::Deserialize)]
pub struct Slots(pub BTreeMap<String, BTreeMap<String, KeyParts>>);

/// How [`Executor::run_batched`] groups misses.
pub struct Batching<F> {
    /// Items per call.
    pub size: usize,
    /// Sort key (e.g. text length, so a batch pads little).
    pub order: F,
}

/// Runs stages against the memo and keeps the counts and slots.
pub struct Executor<'a> {
    pub memo: &'a Memo,
    pub counts: BTreeMap<&'static str, StageCount>,
    /// Every item's subject and key parts, by stage call, in order (made into [`Slots`] only
    /// when they are saved: most builds do not save them).
    pub plans: Vec<(&'static str, Vec<(String, KeyParts)>)>,
    /// Milliseconds to sleep per computed item (C2S_THROTTLE_MS; used to test interruption).
    throttle_ms: u64,
    /// Dry run: compute misses in memory but never write the memo; record why each was missed.
    dry: Option<DryRun>,
    /// Calls in flight at once for remote backends (their concurrency); 0 = one per core.
    pub io_threads: usize,
    /// Fallback warnings from stages.
    pub warnings: WarningSink,
    /// Where each stage's progress goes (none: silent).
    pub progress: Option<crate::progress::Progress>,
    /// Results read from the output's state files, consulted when the memo misses a key; a
    /// result taken from here is vetted by its stage, then written into the memo.
    pub seed: Option<Seed>,
    /// Seeded results that failed their stage's check (computed again instead).
    pub rejected: Vec<Rejected>,
    /// How a rejected result's subject is shown, where it is a document id: its source.
    pub sources: std::collections::HashMap<String, String>,
    /// Every memoized result this build used, in stage order (for the state file).
    pub kept: Vec<Entry>,
    /// The results the previous build of the output used: asked before the memo, which then
    /// answers only for the keys that moved.
    pub used: super::used::Used,
    /// Keys looked up that `used` did not hold (all of them without `used`).
    pub used_missed: usize,
    /// Those keys, when `used` was read (what its overlay is to keep).
    pub used_fresh: std::collections::HashSet<Key>,
    /// Keys looked up.
    pub looked_up: usize,
    /// Values derived to compute keys, by recipe (see [`super::recipes`]).
    pub recipes: super::recipes::Recipes,
    /// Stand-ins for answers an earlier build rejected (see [`Earlier`]).
    pub earlier: Earlier,
}

/// How progress names a stage at work.
fn verb(stage: &str) -> &'static str {
    match stage {
        "card" => "Carding",
        "embed" | "chunk" => "Embedding",
        "summary" => "Summarizing",
        "label" => "Labeling",
        "tags" => "Tagging",
        "repartition" => "Reviewing",
        "reembed" => "Re-embedding",
        _ => "Computing",
    }
}

/// Results are committed to the memo in batches of at most this many.
const BATCH: usize = 64;

impl<'a> Executor<'a> {
    pub fn new(memo: &'a Memo) -> Executor<'a> {
        let throttle_ms = std::env::var("C2S_THROTTLE_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Executor {
            memo,
            counts: BTreeMap::new(),
            plans: Vec::new(),
            throttle_ms,
            dry: None,
            io_threads: 0,
            warnings: WarningSink::default(),
            progress: None,
            seed: None,
            rejected: Vec::new(),
            sources: Default::default(),
            kept: Vec::new(),
            used: Default::default(),
            used_missed: 0,
            used_fresh: Default::default(),
            looked_up: 0,
            recipes: Default::default(),
            earlier: Earlier::default(),
        }
    }

    /// A dry-run executor: nothing is written; misses are recorded with their reason.
    pub fn dry_run(memo: &'a Memo, previous: Slots) -> Executor<'a> {
        let mut e = Executor::new(memo);
        e.throttle_ms = 0;
        e.dry = Some(DryRun {
            previous,
            misses: Vec::new(),
            last_answers: Default::default(),
        });
        e
    }

    /// Every key this build used, by stage and subject (a subject planned twice keeps its last
    /// key).
    pub fn slots(&self) -> Slots {
        let mut slots = Slots::default();
        for (stage, plans) in &self.plans {
            let slot = slots.0.entry(stage.to_string()).or_default();
            for (subject, parts) in plans {
                slot.insert(subject.clone(), parts.clone());
            }
        }
        slots
    }

    /// Whether this is a dry run (nothing is written; backends are stand-ins).
    pub fn is_dry(&self) -> bool {
        self.dry.is_some()
    }

    /// The misses a dry run found.
    pub fn misses(&self) -> &[Miss] {
        self.dry.as_ref().map_or(&[], |d| d.misses.as_slice())
    }

    /// Plan, execute, assemble one stage over `items`, computing each miss on its own; `vet`
    /// says what to do with a result the committed state supplies (untrusted input) before it
    /// is used.
    pub fn run<I: Sync, O: MemoValue + Send + Sync, E: StageError>(
        &mut self,
        stage: &'static str,
        items: &[I],
        plan: impl Fn(&I) -> Plan + Sync,
        compute: impl Fn(&I) -> Result<O, E> + Sync,
        vet: impl Fn(&I, &O) -> Vet + Sync,
    ) -> Result<Vec<O>, E> {
        let batching = Batching {
            size: 1,
            order: |_: &I| 0,
        };
        let compute = |xs: &[&I]| Ok(vec![compute(xs[0])?]);
        self.run_batched(stage, items, plan, batching, compute, vet)
    }

    /// Like [`Executor::run`], but misses are sorted by `batching.order` and computed in
    /// groups of `batching.size` (one inference or HTTP call each); `compute` returns one
    /// result per item of its group, in order.
    pub fn run_batched<I: Sync, O: MemoValue + Send + Sync, E: StageError>(
        &mut self,
        stage: &'static str,
        items: &[I],
        plan: impl Fn(&I) -> Plan + Sync,
        batching: Batching<impl Fn(&I) -> usize>,
        compute: impl Fn(&[&I]) -> Result<Vec<O>, E> + Sync,
        vet: impl Fn(&I, &O) -> Vet + Sync,
    ) -> Result<Vec<O>, E> {
        let planned: Vec<Planned> = items
            .par_iter()
            .map(|i| {
                let plan = plan(i);
                let key = plan.parts.key();
                Planned { plan, key }
            })
            .collect();
        let keys: Vec<Key> = planned.iter().map(|p| p.key).collect();
        let mut found = self.look_up(stage, &keys).map_err(E::from)?;
        self.earlier.screen(stage, &keys, &mut found, |i| {
            planned[i].plan.subject.clone()
        });
        let taken = self.take_seeded(&keys, &mut found);
        let mut out: Vec<Option<O>> = found
            .par_iter()
            .map(|b| b.as_deref().and_then(O::decode))
            .collect();
        // Subjects name rejected results: only a call that took something from the seed needs them.
        let subjects: Vec<&str> = match taken.is_empty() {
            true => Vec::new(),
            false => planned.iter().map(|p| p.plan.subject.as_str()).collect(),
        };
        let seeded = self.vet_seeded(
            stage,
            (items, &keys, &subjects),
            taken,
            (&mut out, &mut found),
            (&batching, &compute, &vet),
        )?;
        let misses: Vec<usize> = (0..items.len()).filter(|&i| out[i].is_none()).collect();
        if let Some(dry) = &mut self.dry
            && !misses.is_empty()
        {
            let prev = dry.previous.0.get(stage);
            // One step per stage call with misses: the next number after the last miss's.
            let step = dry.misses.last().map_or(0, |m| m.step + 1);
            for &i in &misses {
                let p = &planned[i].plan;
                dry.misses.push(Miss {
                    stage,
                    step,
                    subject: p.subject.clone(),
                    reason: explain(prev.and_then(|s| s.get(&p.subject)), &p.parts),
                    input_chars: p.input_chars,
                });
            }
        }
        // A dry run takes the last answers of the stages it guesses (see `DryRun::last_answers`).
        let mut sorted = match &self.dry {
            Some(dry) => {
                let prev =
                    dry::previous_keys(dry, stage, &misses, |i| planned[i].plan.subject.clone());
                self.take_last_answers(&prev, &mut out, &misses)
                    .map_err(E::from)?
            }
            None => misses.clone(),
        };
        sorted.sort_by_key(|&i| (batching.order)(&items[i]));
        let groups: Vec<&[usize]> = sorted.chunks(batching.size.max(1)).collect();
        let meter = match &self.progress {
            Some(p) if !misses.is_empty() && self.dry.is_none() => {
                p.meter(verb(stage), misses.len())
            }
            _ => crate::progress::Progress::new(true).meter("", 0),
        };
        let done = self.execute(stage, items, &planned, &groups, &compute, &meter);
        meter.finish();
        let (computed, pending) = done?;
        if pending > 0 {
            // Those items wait for a batch; what finished is in the memo for the next round.
            return Err(E::pending());
        }
        for (i, v) in computed {
            out[i] = Some(v);
            // Stored bytes that did not decode are not what this build used.
            found[i] = None;
        }
        if self.dry.is_none() {
            for ((p, o), f) in planned.iter().zip(&out).zip(&mut found) {
                let o = o.as_ref().expect("every item computed or reused");
                let value = f.take().unwrap_or_else(|| o.encode().into());
                self.kept.push(Entry {
                    stage: stage.to_string(),
                    key: p.key,
                    form: O::FORM,
                    value,
                });
            }
        }
        let count = self.counts.entry(stage).or_default();
        count.computed += misses.len();
        count.reused += items.len() - misses.len();
        count.seeded += seeded;
        let plans = planned
            .into_iter()
            .map(|p| (p.plan.subject, p.plan.parts))
            .collect();
        self.plans.push((stage, plans));
        Ok(out
            .into_iter()
            .map(|o| o.expect("every item computed or reused"))
            .collect())
    }

    /// The stored result of each of `keys`, in order: from the previous build's used results
    /// first (in parallel), from the memo for the rest.
    fn look_up(&mut self, stage: &str, keys: &[Key]) -> Result<Vec<Option<Bytes>>, CacheError> {
        self.looked_up += keys.len();
        let used = &self.used;
        let mut found: Vec<Option<Bytes>> = if used.is_empty() {
            vec![None; keys.len()]
        } else {
            keys.par_iter().map(|k| used.get_shared(k)).collect()
        };
        let rest: Vec<Key> = keys
            .iter()
            .zip(&found)
            .filter(|(_, f)| f.is_none())
            .map(|(k, _)| *k)
            .collect();
        self.used_missed += rest.len();
        if !used.is_empty() {
            self.used_fresh.extend(rest.iter().copied());
        }
        if rest.is_empty() {
            return Ok(found);
        }
        let memo: std::collections::HashMap<Key, Bytes> = self
            .memo
            .get_of(stage, &rest)?
            .into_iter()
            .map(|(k, v)| (k, v.into()))
            .collect();
        for (k, f) in keys.iter().zip(&mut found) {
            if f.is_none() {
                // Shared, not taken: a key may come twice.
                *f = memo.get(k).cloned();
            }
        }
        Ok(found)
    }

    /// Moves the seed's results for the keys neither the record nor the memo had into `found`;
    /// returns where each went and the file it came from (not yet in the memo: vetted first).
    fn take_seeded(&mut self, keys: &[Key], found: &mut [Option<Bytes>]) -> Vec<(usize, u32)> {
        let dry = self.dry.is_some();
        let Some(seed) = self.seed.as_mut() else {
            return Vec::new();
        };
        let mut taken = Vec::new();
        // The value of each key taken: a key that comes twice is found here.
        let mut at: std::collections::HashMap<Key, (u32, Bytes)> = Default::default();
        for (i, (k, f)) in keys.iter().zip(found.iter_mut()).enumerate() {
            if f.is_some() {
                continue;
            }
            if let Some((file, v)) = at.get(k) {
                *f = Some(v.clone());
                taken.push((i, *file));
                continue;
            }
            // A dry run writes no memo, so the seed keeps its copy for later stage calls.
            let v = if dry {
                seed.results.get(k).cloned()
            } else {
                seed.results.remove(k)
            };
            if let Some((file, v)) = v {
                let v = Bytes::from(v);
                *f = Some(v.clone());
                at.insert(*k, (file, v));
                taken.push((i, file));
            }
        }
        taken
    }

    /// Computes the misses in parallel; a writer thread commits results as they arrive, so an
    /// interrupted or failed stage keeps everything that finished. Groups that wait for a batch
    /// ([`StageError::is_pending`]) are counted, not failed, so every other group still runs (and
    /// queues its requests into the same batch).
    fn execute<I: Sync, O: MemoValue + Send + Sync, E: StageError>(
        &self,
        stage: &'static str,
        items: &[I],
        planned: &[Planned],
        groups: &[&[usize]],
        compute: &(impl Fn(&[&I]) -> Result<Vec<O>, E> + Sync),
        meter: &crate::progress::Meter,
    ) -> Result<(Vec<(usize, O)>, usize), E> {
        if groups.is_empty() {
            return Ok((Vec::new(), 0));
        }
        let pending = std::sync::atomic::AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<(Key, Vec<u8>, Option<String>)>();
        let memo = self.memo;
        let dry = self.dry.is_some();
        std::thread::scope(|scope| {
            let writer = scope.spawn(move || -> Result<(), CacheError> {
                while let Ok(first) = rx.recv() {
                    if dry {
                        continue;
                    }
                    let mut batch = vec![first];
                    while batch.len() < BATCH {
                        match rx.try_recv() {
                            Ok(x) => batch.push(x),
                            Err(_) => break,
                        }
                    }
                    memo.put_results(stage, &batch)?;
                }
                Ok(())
            });
            let pool = (self.io_threads > 0)
                .then(|| {
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(self.io_threads)
                        .thread_name(|i| format!("c2s-io-{i}"))
                        .build()
                        .ok()
                })
                .flatten();
            // Remote calls block: split down to single groups so idle threads steal each one
            // (otherwise a thread can be left running a tail of several calls in a row).
            let max_len = if self.io_threads > 0 { 1 } else { usize::MAX };
            let run_all = || {
                groups
                    .par_iter()
                    .with_max_len(max_len)
                    .map_with(tx, |tx, group| {
                        if self.throttle_ms > 0 {
                            std::thread::sleep(std::time::Duration::from_millis(self.throttle_ms));
                        }
                        let inputs: Vec<&I> = group.iter().map(|&i| &items[i]).collect();
                        let values = match compute(&inputs) {
                            Err(e) if e.is_pending() => {
                                pending
                                    .fetch_add(group.len(), std::sync::atomic::Ordering::Relaxed);
                                return Ok(Vec::new());
                            }
                            r => r?,
                        };
                        meter.inc(group.len());
                        if values.len() != group.len() {
                            return Err(E::internal(format!(
                                "stage {stage} returned {} results for {} inputs",
                                values.len(),
                                group.len()
                            )));
                        }
                        Ok(group
                            .iter()
                            .zip(values)
                            .map(|(&i, v)| {
                                let why = v.rejection().map(str::to_string);
                                let _ = tx.send((planned[i].key, v.encode(), why));
                                (i, v)
                            })
                            .collect())
                    })
                    .collect::<Result<Vec<Vec<(usize, O)>>, E>>()
            };
            let results = match &pool {
                Some(pool) => pool.install(run_all),
                None => run_all(),
            };
            let written = writer
                .join()
                .map_err(|_| E::internal("the memo writer panicked".into()))?;
            written?;
            let results = results?.into_iter().flatten().collect();
            Ok((results, pending.into_inner()))
        })
    }
}

#[cfg(test)]
mod tests;
