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

#[test]
fn second_run_reuses_everything() {
    let dir = tempfile::tempdir().unwrap();
    let memo = Memo::open(&dir.path().join("m.sqlite")).unwrap();
    let items = vec![1u32, 2, 3];
    let mut ex = Executor::new(&memo);
    let a = ex
        .run("t", &items, plan_of, |i| Ok::<_, BuildError>(Json(i * 10)))
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
        .run::<_, _, BuildError>("t", &items, plan_of, |_| panic!("must not recompute"))
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
        .run("t", &[7u32], plan_of, |i| Ok::<_, BuildError>(Json(i * 10)))
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
    let r = ex.run("t", &items, plan_of, |i| {
        if *i == 49 {
            Err(BuildError::Internal("boom".into()))
        } else {
            Ok(Json(*i))
        }
    });
    assert!(r.is_err());
    let stats = memo.stats().unwrap();
    assert!(stats["t"].entries >= 1, "finished results were kept");
    assert!(stats["t"].entries <= 49);
}
