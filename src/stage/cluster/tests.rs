use super::*;
use crate::kmeans::CpuKmeans;
use crate::matrix::normalize;
use crate::rng::Rng;

#[test]
fn cluster_counts() {
    assert_eq!(clusters_for(50_000, 10, 10), 5000);
    assert_eq!(clusters_for(50, 10, 10), 10);
    assert_eq!(clusters_for(12, 10, 10), 10);
    assert_eq!(clusters_for(5, 10, 10), 1);
    assert_eq!(clusters_for(30, 10, 10), 10);
}

/// `n` random unit vectors.
fn unit(n: usize, dims: usize, seed: u64) -> Matrix {
    let mut rng = Rng::new(seed);
    let mut m = Matrix::new(dims);
    for _ in 0..n {
        let mut v: Vec<f32> = (0..dims).map(|_| rng.next_f64() as f32 - 0.5).collect();
        normalize(&mut v);
        m.push(&v);
    }
    m
}

/// One point near each of `centroids`, assigned to it (no runner-up).
fn one_point_each(centroids: &Matrix, seed: u64) -> (Matrix, KmeansResult) {
    let noise = unit(centroids.rows, centroids.dims, seed);
    let mut data = Matrix::new(centroids.dims);
    for j in 0..centroids.rows {
        let mut v: Vec<f32> = centroids
            .row(j)
            .iter()
            .zip(noise.row(j))
            .map(|(c, e)| c + 0.05 * e)
            .collect();
        normalize(&mut v);
        data.push(&v);
    }
    let top1 = (0..data.rows)
        .map(|i| dot(data.row(i), centroids.row(i)))
        .collect();
    let r = KmeansResult {
        centroids: centroids.clone(),
        assign: (0..data.rows as u32).collect(),
        top1,
        second: vec![None; data.rows],
        inertia: 0.0,
        iterations: 1,
    };
    (data, r)
}

/// The nearest of `among` to `x`, by a scan of them all.
fn nearest(centroids: &Matrix, among: impl Iterator<Item = usize>, x: &[f32]) -> usize {
    among
        .max_by(|&a, &b| {
            dot(x, centroids.row(a))
                .total_cmp(&dot(x, centroids.row(b)))
                .then(b.cmp(&a))
        })
        .expect("some candidate")
}

/// [`place_on_survivors`] on the CPU, with the survivors `alive` lists and `graph` as the
/// clusters' neighbours.
fn place(data: &Matrix, r: &KmeansResult, alive: &[bool], graph: &[Vec<u32>]) -> Placed {
    let survivors: Vec<usize> = (0..alive.len()).filter(|&j| alive[j]).collect();
    place_on_survivors(data, r, alive, &survivors, Some(graph), &CpuKmeans, 0)
}

/// A neighbour graph unrelated to the geometry: each centroid's next 16 rows.
fn next_rows(k: u32) -> Vec<Vec<u32>> {
    (0..k)
        .map(|j| (1..=16).map(|d| (j + d) % k).collect())
        .collect()
}

#[test]
fn a_few_moved_points_get_the_exact_nearest_survivor_whatever_the_graph_says() {
    let centroids = unit(1500, 8, 1);
    let (data, r) = one_point_each(&centroids, 2);
    // Ten clusters dissolve: too few moves to repay an index, so all survivors are scanned.
    let alive: Vec<bool> = (0..1500).map(|j| j % 150 != 0).collect();
    let graph = next_rows(1500);
    let (assign, top1, second) = place(&data, &r, &alive, &graph);
    for i in 0..data.rows {
        if alive[i] {
            assert_eq!(
                (assign[i], second[i]),
                (i, None),
                "point {i} keeps its cluster"
            );
            continue;
        }
        let want = nearest(&centroids, (0..1500).filter(|&j| alive[j]), data.row(i));
        assert_eq!(assign[i], want);
        assert_eq!(top1[i], dot(data.row(i), centroids.row(want)));
        let (runner, _) = second[i].expect("a runner-up");
        assert!(alive[runner] && runner != want);
    }
}

#[test]
fn many_moved_points_look_among_their_clusters_neighbours_first() {
    let centroids = unit(2000, 8, 3);
    let (data, r) = one_point_each(&centroids, 4);
    // A quarter dissolve: 500 moves, past what a whole scan of 1,500 survivors repays.
    let alive: Vec<bool> = (0..2000).map(|j| j % 4 != 0).collect();
    assert!(!NearestIndex::scans_whole(1500, 500));
    // Each centroid's neighbours: the next 16 rows. Cluster 8's neighbours all dissolved
    // except one, so its point falls back to an index.
    let mut graph = next_rows(2000);
    graph[8] = vec![12, 16, 20, 9];
    let (assign, _, second) = place(&data, &r, &alive, &graph);
    for i in (0..data.rows).filter(|&i| !alive[i]) {
        assert!(alive[assign[i]], "point {i} lands on a survivor");
        let runner = second[i].expect("a runner-up").0;
        assert!(alive[runner] && runner != assign[i]);
        if i == 8 {
            continue;
        }
        let among = graph[i].iter().map(|&j| j as usize).filter(|&j| alive[j]);
        assert_eq!(assign[i], nearest(&centroids, among, data.row(i)));
    }
    // The one fallback asks an index once: a whole scan, so the exact nearest survivor.
    let want = nearest(&centroids, (0..2000).filter(|&j| alive[j]), data.row(8));
    assert_eq!(assign[8], want);
}
