//! Fitting a batch of K-Means runs to the device: a batch that a buffer limit or the device's
//! memory refuses is split in halves until each part fits, and a run that does not fit alone
//! is left to the CPU. Splitting never changes a run's result (each run draws from its own
//! random state), only how many batches the level takes.

use super::GpuError;
use crate::kmeans::KmeansResult;

/// One result per job of [`fit`]: the job's result, or the error that kept it off the
/// device: one that [`GpuError::splits`] (it did not fit even alone), or another that its
/// batch failed with.
pub type Fitted = Result<KmeansResult, GpuError>;

/// Runs `jobs` in batches (`run` runs one) as large as the device takes: a batch that a
/// buffer limit or the device's memory refuses ([`GpuError::splits`]) is split in two halves,
/// each run in turn, and a job that the device refuses alone gets the error. A batch that fails
/// otherwise is not retried: each of its jobs gets the error, and the other parts still run.
/// Results in job order; the CPU runs the jobs that got an error.
pub fn fit<'j, J>(
    jobs: &[&'j J],
    run: &mut impl FnMut(&[&'j J]) -> Result<Vec<KmeansResult>, GpuError>,
) -> Vec<Fitted> {
    match run(jobs) {
        Ok(results) => results.into_iter().map(Ok).collect(),
        Err(e) if e.splits() && jobs.len() > 1 => {
            let (a, b) = jobs.split_at(jobs.len() / 2);
            let mut out = fit(a, run);
            out.extend(fit(b, run));
            out
        }
        Err(e) => vec![e; jobs.len()].into_iter().map(Err).collect(),
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
        let got = fit(&refs, &mut device(6, &mut asked));
        assert_eq!(asked, [vec![1, 2, 3]]);
        let got: Vec<f64> = got.into_iter().map(|r| r.unwrap().inertia).collect();
        assert_eq!(got, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn a_batch_too_large_splits_in_halves_and_keeps_the_job_order() {
        let jobs = [3usize, 3, 3, 3, 3];
        let refs: Vec<&usize> = jobs.iter().collect();
        let mut asked = Vec::new();
        let got = fit(&refs, &mut device(6, &mut asked));
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
        let got = fit(&refs, &mut device(6, &mut asked));
        assert_eq!(got[0].as_ref().unwrap().inertia, 1.0);
        let err = got[1].as_ref().unwrap_err();
        assert!(err.to_string().contains("(9 bytes)"), "{err}");
        assert_eq!(got[2].as_ref().unwrap().inertia, 2.0);
    }

    #[test]
    fn a_batch_failing_otherwise_fails_its_jobs_and_the_other_parts_still_run() {
        // Too large together; then the half holding job 7 fails (a lost device, say), and is
        // not split further.
        let jobs = [4usize, 4, 7, 1];
        let refs: Vec<&usize> = jobs.iter().collect();
        let mut asked: Vec<Vec<usize>> = Vec::new();
        let mut inner = Vec::new();
        let mut fits = device(8, &mut inner);
        let got = fit(&refs, &mut |part: &[&usize]| {
            asked.push(part.iter().map(|&&j| j).collect());
            if part.contains(&&7) && part.len() < 4 {
                return Err(GpuError::Wgpu("device lost".into()));
            }
            fits(part)
        });
        assert_eq!(asked, [vec![4, 4, 7, 1], vec![4, 4], vec![7, 1]]);
        assert_eq!(got[0].as_ref().unwrap().inertia, 4.0);
        assert_eq!(got[1].as_ref().unwrap().inertia, 4.0);
        for r in &got[2..] {
            let err = r.as_ref().unwrap_err();
            assert!(
                !err.splits() && err.to_string().contains("device lost"),
                "{err}"
            );
        }
    }
}
