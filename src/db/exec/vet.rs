//! Results read from a committed build state are untrusted input: a pull request can change
//! `state/` and `c2s.lock` together, so a lock that agrees with the state proves nothing. This
//! module owns the seed (those results, with the file each came from) and the verdict a stage
//! gives each seeded result before the executor uses it.

use std::collections::HashMap;

use bytes::Bytes;
use rayon::prelude::*;

use super::{Batching, Executor, MemoValue, StageError};
use crate::db::cache::Key;

/// What a stage says of a result the seed supplies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Vet {
    /// It passes the checks a fresh answer passes: use it.
    Keep,
    /// It fails them (why): compute it again.
    Reject(String),
    /// Computing it again is cheap and exact: compute it and use the seed's only if the bytes
    /// are the same.
    Recompute,
    /// It fails a model answer's checks (why), but it is exactly the stand-in a build makes when
    /// the model's answers are rejected: use it, as that stand-in (remembered with why).
    StandIn(String),
}

impl Vet {
    /// This verdict, except that a rejected result equal to `stand_in()` (what the build makes
    /// when the model's answers are unusable) is kept as a stand-in: the build that committed
    /// it had its answers rejected, and a fresh clone must not ask again for it.
    pub fn or_stand_in<T: PartialEq>(
        self,
        stored: &T,
        stand_in: impl FnOnce() -> Option<T>,
    ) -> Vet {
        match self {
            Vet::Reject(why) if stand_in().is_some_and(|s| s == *stored) => Vet::StandIn(why),
            v => v,
        }
    }
}

impl From<Option<Result<(), String>>> for Vet {
    /// A backend's answer on a stored result: `None` (recompute it), or the checks' verdict.
    fn from(checked: Option<Result<(), String>>) -> Vet {
        match checked {
            None => Vet::Recompute,
            Some(Ok(())) => Vet::Keep,
            Some(Err(why)) => Vet::Reject(why),
        }
    }
}

/// The results of a committed output's state, by memo key, each with the index (in `files`) of
/// the file it was read from.
#[derive(Debug, Default)]
pub struct Seed {
    pub results: HashMap<Key, (u32, Vec<u8>)>,
    /// The state files, as shown to the user.
    pub files: Vec<String>,
}

impl Seed {
    /// The file a result came from, as shown to the user.
    pub fn file(&self, ix: u32) -> &str {
        self.files.get(ix as usize).map_or("state", String::as_str)
    }
}

/// A seeded result that failed its check: the build computed it again.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Rejected {
    /// The state file it came from, as shown to the user.
    pub file: String,
    pub stage: String,
    /// What it is about (a document id, a group's folder).
    pub subject: String,
    pub why: String,
}

impl Rejected {
    /// What `c2s check --verify-state` says of it.
    pub fn warning_line(&self) -> String {
        if self.stage == "state" {
            return format!("{}: {}", self.file, self.why);
        }
        format!(
            "{}: the {} of `{}` fails its check ({})",
            self.file, self.stage, self.subject, self.why
        )
    }

    /// The warning a build gives.
    pub fn warning(&self) -> crate::diag::Warning {
        crate::diag::Warning {
            file: self.file.clone(),
            line: None,
            message: format!(
                "the {} of `{}` in the committed state fails its check ({}); it is computed again, not taken from the state",
                self.stage, self.subject, self.why
            ),
        }
    }
}

/// Whether a recomputed result's bytes are the seeded ones.
pub fn same_bytes(fresh: &[u8], seeded: &[u8]) -> Vet {
    if fresh == seeded {
        Vet::Keep
    } else {
        Vet::Reject("it differs from what this build computes from the same input".into())
    }
}

/// The items of a stage call: the inputs, their keys and their subjects.
pub(super) type Items<'x, I> = (&'x [I], &'x [Key], &'x [&'x str]);

impl Executor<'_> {
    /// Vets the results `taken` from the seed (item index, file): a result its stage rejects,
    /// or one that does not decode, is dropped from `out` and `found` (so it is computed again)
    /// and recorded with a warning; one to recompute is computed (in `batching`'s groups) and
    /// kept only if its bytes are the same. The kept ones go into the memo, except those
    /// computed again (cheap to make, and in the record of used results). Returns how many
    /// items were seeded.
    pub(super) fn vet_seeded<I: Sync, O: MemoValue + Send + Sync, E: StageError>(
        &mut self,
        stage: &str,
        (items, keys, subjects): Items<'_, I>,
        taken: Vec<(usize, u32)>,
        (out, found): (&mut [Option<O>], &mut [Option<Bytes>]),
        (batching, compute, vet): Checks<'_, I, O, E, impl Fn(&I) -> usize>,
    ) -> Result<usize, E> {
        if taken.is_empty() {
            return Ok(0);
        }
        let verdicts: Vec<Vet> = taken
            .par_iter()
            .map(|&(i, _)| match &out[i] {
                None => Vet::Reject("it cannot be read as this stage's result".into()),
                Some(o) => vet(&items[i], o),
            })
            .collect();
        let mut again: Vec<usize> = taken
            .iter()
            .zip(&verdicts)
            .filter(|(_, v)| **v == Vet::Recompute)
            .map(|(t, _)| t.0)
            .collect();
        again.sort_by_key(|&i| (batching.order)(&items[i]));
        let recomputed = recompute(stage, items, &again, batching.size, compute, found)?;
        let mut accepted: Vec<(Key, Bytes, Option<String>)> = Vec::new();
        let mut kept = std::collections::HashSet::new();
        let mut seeded = 0;
        for ((i, file), verdict) in taken.into_iter().zip(verdicts) {
            let (verdict, made_now) = match verdict {
                Vet::Recompute => (recomputed.get(&i).cloned().unwrap_or(Vet::Keep), true),
                v => (v, false),
            };
            match verdict {
                // One computed again just now (exactly and cheaply) is not written to the memo:
                // those are most of a fresh clone's writes. It reaches the next build in the
                // record of used results, like every result this build uses; without that
                // record it is computed again, to the same bytes.
                Vet::Keep | Vet::Recompute => {
                    seeded += 1;
                    if !made_now && kept.insert(keys[i]) {
                        accepted.push((keys[i], found[i].clone().expect("seeded"), None));
                    }
                }
                Vet::StandIn(why) => {
                    seeded += 1;
                    if kept.insert(keys[i]) {
                        let value = found[i].clone().expect("seeded");
                        self.earlier.by_key.insert(keys[i], why.clone());
                        self.earlier.note(stage, subjects[i].to_string(), &why);
                        accepted.push((keys[i], value, Some(why)));
                    }
                }
                Vet::Reject(why) => {
                    out[i] = None;
                    found[i] = None;
                    let file = self.seed.as_ref().map_or("state", |s| s.file(file));
                    let r = Rejected {
                        file: file.to_string(),
                        stage: stage.to_string(),
                        subject: self.shown(subjects[i]),
                        why,
                    };
                    if !self.rejected.contains(&r) {
                        if let Ok(mut w) = self.warnings.lock() {
                            w.push(r.warning());
                        }
                        self.rejected.push(r);
                    }
                }
            }
        }
        if !self.is_dry() {
            self.memo.put_results(stage, &accepted)?;
        }
        Ok(seeded)
    }
}

impl Executor<'_> {
    /// A subject as a user knows it: a document id (or a passage's, `ID#K`) as its source.
    fn shown(&self, subject: &str) -> String {
        let (id, passage) = match subject.split_once('#') {
            Some((id, k)) => (id, Some(k)),
            None => (subject, None),
        };
        match (self.sources.get(id), passage) {
            (Some(source), None) => source.clone(),
            (Some(source), Some(k)) => format!("{source}, passage {k}"),
            (None, _) => subject.to_string(),
        }
    }
}

/// How a stage computes a group of items.
pub(super) type Compute<'x, I, O, E> = &'x (dyn Fn(&[&I]) -> Result<Vec<O>, E> + Sync);

/// How a stage computes and vets: its batching, its compute, its vet.
pub(super) type Checks<'x, I, O, E, F> = (
    &'x Batching<F>,
    Compute<'x, I, O, E>,
    &'x (dyn Fn(&I, &O) -> Vet + Sync),
);

/// Computes the items `again` (in groups of `size`) and compares each with its seeded bytes in
/// `found`: the verdict by item index. An item that waits for a batch is rejected (a model's
/// result is never recomputed this way; this is for exact backends).
fn recompute<I: Sync, O: MemoValue + Send + Sync, E: StageError>(
    stage: &str,
    items: &[I],
    again: &[usize],
    size: usize,
    compute: Compute<'_, I, O, E>,
    found: &[Option<Bytes>],
) -> Result<HashMap<usize, Vet>, E> {
    let groups: Vec<&[usize]> = again.chunks(size.max(1)).collect();
    let verdicts = groups
        .par_iter()
        .map(|g| {
            let inputs: Vec<&I> = g.iter().map(|&i| &items[i]).collect();
            match compute(&inputs) {
                Ok(vals) if vals.len() == g.len() => Ok(g
                    .iter()
                    .zip(vals)
                    .map(|(&i, v)| {
                        (
                            i,
                            same_bytes(&v.encode(), found[i].as_deref().unwrap_or(&[])),
                        )
                    })
                    .collect::<Vec<_>>()),
                Ok(vals) => Err(E::internal(format!(
                    "stage {stage} returned {} results for {} inputs",
                    vals.len(),
                    g.len()
                ))),
                Err(e) if e.is_pending() => Ok(g
                    .iter()
                    .map(|&i| {
                        (
                            i,
                            Vet::Reject("it could not be computed again to compare".into()),
                        )
                    })
                    .collect()),
                Err(e) => Err(e),
            }
        })
        .collect::<Result<Vec<_>, E>>()?;
    Ok(verdicts.into_iter().flatten().collect())
}
