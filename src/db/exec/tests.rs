//! Unit tests of the stage executor.

use super::*;
use crate::error::BuildError;

fn plan_of(i: &u32) -> Plan {
    Plan {
        subject: i.to_string(),
        parts: KeyParts {
            stage: "t".into(),
            stage_version: 1,
            prompt: String::new(),
            model: "m".into(),
            inputs: vec![i.to_string()],
        },
        input_chars: 1,
    }
}

fn keep(_: &u32, _: &Json<u32>) -> Vet {
    Vet::Keep
}

#[test]
fn second_run_reuses_everything() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(&dir.path().join("m.sqlite")).unwrap();
    let items = vec![1u32, 2, 3];
    let mut ex = Executor::new(&memo);
    let a = ex
        .run(
            "t",
            &items,
            plan_of,
            |i| Ok::<_, BuildError>(Json(i * 10)),
            keep,
        )
        .unwrap();
    assert_eq!(
        ex.counts["t"],
        StageCount {
            computed: 3,
            reused: 0,
            seeded: 0
        }
    );
    let mut ex = Executor::new(&memo);
    let b: Vec<Json<u32>> = ex
        .run::<_, _, BuildError>("t", &items, plan_of, |_| panic!("must not recompute"), keep)
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(
        ex.counts["t"],
        StageCount {
            computed: 0,
            reused: 3,
            seeded: 0
        }
    );
}

#[test]
fn stored_bytes_that_do_not_decode_are_computed_again_and_kept_as_computed() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(&dir.path().join("m.sqlite")).unwrap();
    let key = plan_of(&7).parts.key();
    memo.put_many("t", &[(key, b"not json".to_vec())]).unwrap();
    let mut ex = Executor::new(&memo);
    let out = ex
        .run(
            "t",
            &[7u32],
            plan_of,
            |i| Ok::<_, BuildError>(Json(i * 10)),
            keep,
        )
        .unwrap();
    assert_eq!(out, vec![Json(70)]);
    assert_eq!(ex.counts["t"].computed, 1);
    assert_eq!(
        &ex.kept[0].value[..],
        b"70",
        "the state keeps what was used"
    );
}

#[test]
fn finished_results_survive_a_failing_item() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(&dir.path().join("m.sqlite")).unwrap();
    let items: Vec<u32> = (0..50).collect();
    let mut ex = Executor::new(&memo);
    let r = ex.run(
        "t",
        &items,
        plan_of,
        |i| {
            if *i == 49 {
                Err(BuildError::Internal("boom".into()))
            } else {
                Ok(Json(*i))
            }
        },
        keep,
    );
    assert!(r.is_err());
    let stats = memo.stats().unwrap();
    assert!(stats["t"].entries >= 1, "finished results were kept");
    assert!(stats["t"].entries <= 49);
}

/// An executor over `memo` whose seed (read from `state/t.jsonl`) holds `value` for each item.
fn seeded<'m>(memo: &'m Memo, items: &[u32], value: impl Fn(u32) -> u32) -> Executor<'m> {
    let mut ex = Executor::new(memo);
    let results = items
        .iter()
        .map(|&i| {
            let key = plan_of(&i).parts.key();
            (key, (0, Json(value(i)).encode()))
        })
        .collect();
    ex.seed = Some(Seed {
        results,
        files: vec!["out/state/t.jsonl".into()],
    });
    ex
}

#[test]
fn a_seeded_result_its_stage_rejects_is_computed_again_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(&dir.path().join("m.sqlite")).unwrap();
    let items = vec![1u32, 2, 3];
    // The state says 666 for item 2: a forged result.
    let mut ex = seeded(&memo, &items, |i| if i == 2 { 666 } else { i * 10 });
    let out = ex
        .run(
            "t",
            &items,
            plan_of,
            |i| Ok::<_, BuildError>(Json(i * 10)),
            |_, v: &Json<u32>| {
                if v.0 == 666 {
                    Vet::Reject("it is forged".into())
                } else {
                    Vet::Keep
                }
            },
        )
        .unwrap();
    assert_eq!(out, vec![Json(10), Json(20), Json(30)]);
    assert_eq!(
        ex.counts["t"],
        StageCount {
            computed: 1,
            reused: 2,
            seeded: 2
        }
    );
    assert_eq!(ex.rejected.len(), 1);
    let r = &ex.rejected[0];
    assert_eq!(
        (r.file.as_str(), r.stage.as_str(), r.subject.as_str()),
        ("out/state/t.jsonl", "t", "2")
    );
    let warned = ex.warnings.lock().unwrap().clone();
    assert_eq!(warned.len(), 1);
    assert!(
        warned[0].to_string().contains("out/state/t.jsonl"),
        "{}",
        warned[0]
    );
    // The memo holds the recomputed value, never the forged one.
    let key = plan_of(&2).parts.key();
    assert_eq!(memo.get_many(&[key]).unwrap()[&key], Json(20u32).encode());
}

#[test]
fn a_result_to_recompute_is_kept_only_when_the_bytes_agree() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(&dir.path().join("m.sqlite")).unwrap();
    let items = vec![1u32, 2, 3];
    let mut ex = seeded(&memo, &items, |i| if i == 3 { 7 } else { i * 10 });
    let computed = std::sync::atomic::AtomicUsize::new(0);
    let out = ex
        .run(
            "t",
            &items,
            plan_of,
            |i| {
                computed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok::<_, BuildError>(Json(i * 10))
            },
            |_, _| Vet::Recompute,
        )
        .unwrap();
    assert_eq!(out, vec![Json(10), Json(20), Json(30)]);
    assert_eq!(ex.rejected.len(), 1);
    assert_eq!(ex.rejected[0].subject, "3");
    assert!(ex.rejected[0].why.contains("differs"));
    // Three comparisons, one computation for the result that differed.
    assert_eq!(computed.into_inner(), 4);
    assert_eq!(ex.counts["t"].seeded, 2);
}

#[test]
fn seeded_bytes_that_do_not_decode_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(&dir.path().join("m.sqlite")).unwrap();
    let mut ex = seeded(&memo, &[5], |i| i);
    let key = plan_of(&5).parts.key();
    ex.seed
        .as_mut()
        .unwrap()
        .results
        .insert(key, (0, b"{".to_vec()));
    let out = ex
        .run(
            "t",
            &[5u32],
            plan_of,
            |i| Ok::<_, BuildError>(Json(*i)),
            keep,
        )
        .unwrap();
    assert_eq!(out, vec![Json(5)]);
    assert_eq!(ex.rejected.len(), 1);
    assert!(ex.rejected[0].why.contains("cannot be read"));
}
