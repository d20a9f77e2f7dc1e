use super::*;
use crate::kmeans::CpuKmeans;
use crate::kmeans::scaled::tests::blobs as clustered;

/// The best and runner-up among `candidates`, by a scan of them all.
fn exact(centroids: &Matrix, candidates: &[usize], x: &[f32]) -> Vec<(usize, f32)> {
    let scored: Vec<(f32, usize)> = candidates
        .iter()
        .map(|&c| (dot(x, centroids.row(c)), c))
        .collect();
    best_first(scored, 2)
        .into_iter()
        .map(|(s, c)| (c, s))
        .collect()
}

#[test]
fn a_whole_scan_finds_the_exact_best_two_among_the_candidates_only() {
    let centroids = clustered(600, 12, 16, 1);
    let odd: Vec<usize> = (1..600).step_by(2).collect();
    let index = NearestIndex::new(&CpuKmeans, &centroids, &odd, 7);
    assert_eq!(index.heads.rows, 0, "a small set is scanned whole");
    let queries = clustered(50, 12, 16, 2);
    for q in 0..queries.rows {
        let x = queries.row(q);
        let (best, c1, second) = index.best_two(x);
        let want = exact(&centroids, &odd, x);
        assert_eq!((best, c1), want[0]);
        assert_eq!(second, Some(want[1]));
        assert!(best % 2 == 1, "an index returns its candidates only");
    }
}

#[test]
fn a_few_queries_scan_whole_and_many_are_bucketed_first() {
    // Up to 1,024 candidates: always whole.
    assert!(NearestIndex::scans_whole(1024, usize::MAX));
    // 5,000 candidates: bucketing them costs about 11 K-Means steps of 5,000 × 71; a few dozen
    // queries cost less than that scanned whole, thousands do not.
    assert!(NearestIndex::scans_whole(5000, 40));
    assert!(!NearestIndex::scans_whole(5000, 4000));
    assert!(!NearestIndex::scans_whole(100_000, 100_000));
    // A whole scan when that is cheaper: no bucketing K-Means runs.
    let centroids = clustered(3000, 30, 8, 3);
    let all: Vec<usize> = (0..3000).collect();
    let few = NearestIndex::for_queries(&CpuKmeans, &centroids, &all, 10, 1);
    assert_eq!(few.heads.rows, 0);
    assert_eq!(few.members, vec![all.clone()]);
    let many = NearestIndex::for_queries(&CpuKmeans, &centroids, &all, 3000, 1);
    assert!(many.heads.rows > 1, "many queries get a bucketed index");
}

#[test]
fn a_bucketed_index_covers_every_candidate_once_and_finds_most_nearest() {
    let centroids = clustered(3000, 40, 16, 4);
    let candidates: Vec<usize> = (0..3000).filter(|c| c % 3 != 0).collect();
    let index = NearestIndex::new(&CpuKmeans, &centroids, &candidates, 5);
    assert!(index.heads.rows > 1);
    assert_eq!(index.heads.rows, index.members.len());
    assert!(
        index.members.iter().all(|m| !m.is_empty()),
        "no empty bucket"
    );
    let mut covered = index.members.concat();
    covered.sort_unstable();
    assert_eq!(covered, candidates, "every candidate in exactly one bucket");
    let queries = clustered(300, 40, 16, 6);
    let agree = (0..queries.rows)
        .filter(|&q| {
            let x = queries.row(q);
            index.best_two(x).0 == exact(&centroids, &candidates, x)[0].0
        })
        .count();
    assert!(agree >= 270, "{agree} of 300 queries find the nearest");
}

#[test]
fn empty_buckets_are_dropped_with_their_heads() {
    let centroids = clustered(6, 2, 4, 8);
    let mut heads = Matrix::new(4);
    for r in [0, 1, 2] {
        heads.push(centroids.row(r));
    }
    let mut index = NearestIndex {
        centroids: &centroids,
        members: vec![vec![0, 2, 4], Vec::new(), vec![1, 3, 5]],
        heads,
    };
    index.drop_empty();
    assert_eq!(index.members, vec![vec![0, 2, 4], vec![1, 3, 5]]);
    assert_eq!(index.heads.rows, 2);
    assert_eq!(
        index.heads.row(1),
        centroids.row(2),
        "the third head moved up"
    );
    // Every query now scans real buckets.
    assert_eq!(index.best_two(centroids.row(5)).0, 5);
}
