//! The batch layout without a device: blocks, chunks, tables, and the limits it enforces.

use super::{Layout, Limits, Place};
use crate::kmeans::gpu::GpuError;
use crate::matrix::Matrix;

fn data(n: usize, d: usize) -> Matrix {
    let mut m = Matrix::new(d);
    for i in 0..n {
        let v: Vec<f32> = (0..d).map(|j| ((i * 7 + j) % 5) as f32 + 1.0).collect();
        m.push(&v);
    }
    m
}

fn limits(binding: u64) -> Limits {
    Limits {
        binding,
        buffer: u64::MAX,
        f64: true,
        chunk_points: None,
    }
}

#[test]
fn runs_lie_in_blocks_of_64_across_chunks_in_order() {
    let m = data(300, 4);
    let a: Vec<u32> = (0..130).collect();
    let b: Vec<u32> = (200..210).collect();
    let jobs = [(Some(&a[..]), 3), (Some(&b[..]), 1), (None, 5)];
    let l = Layout::plan(
        &m,
        &jobs,
        Limits {
            chunk_points: Some(128),
            ..limits(1 << 20)
        },
    )
    .unwrap();
    // 130 points: 3 blocks; 10: 1; 300: 5. Two blocks (128 slots) per chunk.
    assert_eq!(l.n_blocks, 9);
    assert_eq!(
        l.tables.iter().map(Vec::len).collect::<Vec<_>>(),
        [2, 2, 2, 2, 1]
    );
    assert_eq!(
        l.runs
            .iter()
            .map(|r| (r.n, r.k, r.c_off))
            .collect::<Vec<_>>(),
        [(130, 3, 0), (10, 1, 3), (300, 5, 4)]
    );
    assert_eq!(l.c_total, 9);
    assert_eq!(
        l.runs[0].places,
        [
            Place {
                chunk: 0,
                global: 0,
                start: 0,
                count: 64
            },
            Place {
                chunk: 0,
                global: 1,
                start: 64,
                count: 64
            },
            Place {
                chunk: 1,
                global: 2,
                start: 0,
                count: 2
            },
        ]
    );
    // Every place's work entry says its run, points and centroid range.
    for (r, run) in l.runs.iter().enumerate() {
        for p in &run.places {
            let w = l.tables[p.chunk][p.start / 64];
            assert_eq!(
                (w.run, w.count, w.c_off, w.c_n),
                (r as u32, p.count as u32, run.c_off as u32, run.k as u32)
            );
        }
    }
    // The run table: first blocks, and each run's draws after the one before's.
    let t = l.run_table();
    assert_eq!(
        t.iter().map(|i| i.first_block).collect::<Vec<_>>(),
        [0, 3, 4]
    );
    assert_eq!(t[1].draw_off as usize, l.runs[0].draws());
    assert_eq!(
        t[2].draw_off as usize,
        l.runs[0].draws() + l.runs[1].draws()
    );
    assert_eq!(t[1].trials, 0, "one cluster: no seeding step");
}

#[test]
fn a_batch_over_a_shared_buffers_limit_is_refused_so_that_it_splits() {
    let m = data(2000, 2);
    // 2,000 points: 32 blocks, 8,192 bytes of seed distances. With a binding of 4,096
    // bytes a chunk holds 256 slots (16 bytes each: an assignment), but the distances of the
    // whole batch do not fit.
    let jobs = [(None, 20)];
    let err = Layout::plan(&m, &jobs, limits(4096))
        .err()
        .expect("refused");
    assert!(
        matches!(
            err,
            GpuError::BatchTooLarge {
                buffer: "seed distances",
                bytes: 8192,
                limit: 4096
            }
        ),
        "{err}"
    );
    assert!(err.splits());
    assert!(
        err.to_string().contains("seed distances (8192 bytes)"),
        "{err}"
    );
    // Half the points fit.
    let half: Vec<u32> = (0..1000).collect();
    assert!(Layout::plan(&m, &[(Some(&half[..]), 20)], limits(4096)).is_ok());
}

#[test]
fn every_shared_buffer_is_checked_and_the_draws_follow_the_float_width() {
    let m = data(100, 3);
    let jobs = [(None, 50)];
    let l = Layout::plan(&m, &jobs, limits(1 << 20)).unwrap();
    let wide = l.shared_buffers(true);
    let narrow = l.shared_buffers(false);
    let draws = |b: &[(&str, u64)]| b.iter().find(|x| x.0 == "seed draws").unwrap().1;
    assert_eq!(draws(&wide), l.runs[0].draws() as u64 * 8);
    assert_eq!(draws(&narrow), l.runs[0].draws() as u64 * 4);
    // The largest shared buffer is the limit at which the batch is just refused.
    let largest = wide.iter().map(|b| b.1).max().unwrap();
    assert!(Layout::plan(&m, &jobs, limits(largest)).is_ok());
    let err = Layout::plan(&m, &jobs, limits(largest - 1)).err().unwrap();
    assert!(err.splits(), "{err}");
}

#[test]
fn the_assignments_read_back_must_fit_the_largest_buffer() {
    let m = data(640, 2);
    let jobs = [(None, 2)];
    let l = Limits {
        buffer: 640 * 16 - 1,
        ..limits(1 << 20)
    };
    let err = Layout::plan(&m, &jobs, l).err().unwrap();
    assert!(
        matches!(
            err,
            GpuError::BatchTooLarge {
                buffer: "assignments read back",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn what_no_split_can_help_is_not_split() {
    // A block of 64 points of 20 dimensions is 5,120 bytes.
    let m = data(10, 20);
    let err = Layout::plan(&m, &[(None, 2)], limits(4096)).err().unwrap();
    assert!(matches!(err, GpuError::TooWide(20)), "{err}");
    assert!(!err.splits());
    assert!(!GpuError::Wgpu("lost".into()).splits());
    assert!(GpuError::OutOfMemory("x".into()).splits());
    // Centroids over the limit: a batch with fewer runs may fit.
    let m = data(1000, 8);
    let err = Layout::plan(&m, &[(None, 100)], limits(4096))
        .err()
        .unwrap();
    assert!(matches!(err, GpuError::TooLarge(100, 8)), "{err}");
    assert!(err.splits());
}
