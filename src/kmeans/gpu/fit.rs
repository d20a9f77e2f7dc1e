//! Fitting a batch of K-Means runs to the device: a batch that a buffer limit or the device's
//! memory refuses is split in halves until each part fits, and a run that does not fit alone
//! is left to the CPU. Splitting never changes a run's result (each run draws from its own
//! random state), only how many batches the level takes.

use super::GpuError;
use crate::kmeans::KmeansResult;

/// One result per job of [`fit`]: the job's result, or why the device refused it alone.
pub type Fitted = Result<KmeansResult, GpuError>;

/// Runs `jobs` in batches (`run` runs one) as large as the device takes: a batch that a
/// buffer limit or the device's memory refuses ([`GpuError::splits`]) is split in two halves,
/// each run in turn, and a job that the device refuses alone gets the error (the CPU runs it).
/// Any other error ends it. Results in job order.
pub fn fit<'j, J>(
    jobs: &[&'j J],
    run: &mut impl FnMut(&[&'j J]) -> Result<Vec<KmeansResult>, GpuError>,
) -> Result<Vec<Fitted>, GpuError> {
    match run(jobs) {
        Ok(results) => Ok(results.into_iter().map(Ok).collect()),
        Err(e) if e.splits() && jobs.len() > 1 => {
            let (a, b) = jobs.split_at(jobs.len() / 2);
            let mut out = fit(a, run)?;
            out.extend(fit(b, run)?);
            Ok(out)
        }
        Err(e) if e.splits() => Ok(vec![Err(e)]),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::{GpuError, KmeansResult, fit};
    use crate::matrix::Matrix;

    /// A result that says which job it is (its inertia).
    fn result(job: usize) -> KmeansResult {
        KmeansResult {
            centroids: Matrix::new(1),
            assign: Vec::new(),
            top1: Vec::new(),
            second: Vec::new(),
            inertia: job as f64,
            iterations: 1,
        }
    }

    /// Runs batches of jobs (their sizes) that fit when their sizes sum to at most `room`,
    /// noting each batch it was asked for.
    fn device(
        room: usize,
        asked: &mut Vec<Vec<usize>>,
    ) -> impl FnMut(&[&usize]) -> Result<Vec<KmeansResult>, GpuError> + '_ {
        move |jobs: &[&usize]| {
            asked.push(jobs.iter().map(|&&j| j).collect());
            let size: usize = jobs.iter().map(|&&j| j).sum();
            if size > room {
                return Err(GpuError::BatchTooLarge {
                    buffer: "seed distances",
                    bytes: size as u64,
                    limit: room as u64,
                });
            }
            Ok(jobs.iter().map(|&&j| result(j)).collect())
        }
    }

    #[test]
    fn a_batch_that_fits_runs_once() {
        let jobs = [1usize, 2, 3];
        let refs: Vec<&usize> = jobs.iter().collect();
        let mut asked = Vec::new();
        let got = fit(&refs, &mut device(6, &mut asked)).unwrap();
        assert_eq!(asked, [vec![1, 2, 3]]);
        let got: Vec<f64> = got.into_iter().map(|r| r.unwrap().inertia).collect();
        assert_eq!(got, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn a_batch_too_large_splits_in_halves_and_keeps_the_job_order() {
        let jobs = [3usize, 3, 3, 3, 3];
        let refs: Vec<&usize> = jobs.iter().collect();
        let mut asked = Vec::new();
        let got = fit(&refs, &mut device(6, &mut asked)).unwrap();
        assert_eq!(
            asked,
            [
                vec![3, 3, 3, 3, 3],
                vec![3, 3],
                vec![3, 3, 3],
                vec![3],
                vec![3, 3]
            ]
        );
        assert!(got.iter().all(|r| r.as_ref().unwrap().inertia == 3.0));
        assert_eq!(got.len(), 5);
    }

    #[test]
    fn a_job_too_large_alone_gets_the_reason_and_the_others_run() {
        let jobs = [1usize, 9, 2];
        let refs: Vec<&usize> = jobs.iter().collect();
        let mut asked = Vec::new();
        let got = fit(&refs, &mut device(6, &mut asked)).unwrap();
        assert_eq!(got[0].as_ref().unwrap().inertia, 1.0);
        let err = got[1].as_ref().unwrap_err();
        assert!(err.to_string().contains("(9 bytes)"), "{err}");
        assert_eq!(got[2].as_ref().unwrap().inertia, 2.0);
    }

    #[test]
    fn an_error_no_split_helps_ends_the_fitting() {
        let jobs = [1usize, 2];
        let refs: Vec<&usize> = jobs.iter().collect();
        let mut calls = 0;
        let err = fit(&refs, &mut |_: &[&usize]| {
            calls += 1;
            Err(GpuError::Wgpu("device lost".into()))
        })
        .unwrap_err();
        assert_eq!(calls, 1);
        assert!(err.to_string().contains("device lost"));
    }
}
