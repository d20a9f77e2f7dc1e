//! Sending a round's queued requests: provider batches (split by the per-batch limits, each on
//! record before it is created) or request files for an external runner.

use super::*;

impl Batcher {
    /// Sorted lines of the queue, emptied.
    fn take_lines(&self) -> Vec<(Queued, Vec<u8>)> {
        let queue = std::mem::take(&mut *lock(&self.queue));
        let mut qs: Vec<Queued> = queue.into_values().collect();
        qs.sort_by(|a, b| (&a.stage, &a.custom_id).cmp(&(&b.stage, &b.custom_id)));
        qs.into_iter()
            .map(|q| {
                let line = serde_json::to_vec(&lines::request_line(self.kind, &q))
                    .expect("lines serialize");
                (q, line)
            })
            .collect()
    }

    fn limits(&self) -> (usize, u64) {
        let b = provider::limits(self.kind).1;
        let c = &self.cfg.batch;
        (
            max_requests(&self.cfg),
            if c.max_bytes == 0 {
                b
            } else {
                c.max_bytes.min(b)
            },
        )
    }

    /// Submits the queued requests as provider batches, split by the per-batch limits; each
    /// batch is on record in the memo before it is created.
    /// Returns how many batches are outstanding afterwards.
    pub fn submit(&self, progress: &Progress) -> Result<usize, BatchError> {
        let Some(api) = &self.api else {
            return self.reload();
        };
        let (max_requests, max_bytes) = self.limits();
        let chunks = lines::split(self.take_lines(), max_requests, max_bytes);
        let now = unix_now();
        for (i, chunk) in chunks.into_iter().enumerate() {
            let mut rec = BatchRecord {
                provider: self.kind.name().to_string(),
                local: format!("{}-{i:04}", now_millis()),
                submitted: now,
                requests: chunk
                    .iter()
                    .map(|(q, _)| (q.custom_id.clone(), q.stage.clone()))
                    .collect(),
                status: "submitting".into(),
                ..BatchRecord::default()
            };
            store::save(&self.memo, &rec)?;
            let input: Vec<Vec<u8>> = chunk.into_iter().map(|(_, l)| l).collect();
            let save = |r: &BatchRecord| store::save(&self.memo, r);
            api.submit(&mut rec, &input, &save)
                .map_err(|source| BatchError::Provider {
                    what: format!("submitting a batch of {} requests", input.len()),
                    source,
                })?;
            rec.status = "submitted".into();
            store::save(&self.memo, &rec)?;
            progress.status(
                "Submitted",
                &format!(
                    "batch {} ({} requests: {})",
                    rec.id.as_deref().unwrap_or("?"),
                    input.len(),
                    stage_counts(&rec)
                ),
            );
            let mut s = lock(&self.summary);
            s.batches_submitted += 1;
            s.requests_submitted += input.len();
            s.batch_sizes.push(input.len());
        }
        self.reload()
    }

    /// Writes the queued requests as OpenAI batch input files in `dir` (replacing the files
    /// an earlier export wrote there); returns their paths.
    pub fn export(&self, dir: &Path) -> Result<Vec<PathBuf>, BatchError> {
        if self.kind != LlmBackendKind::Openai {
            return Err(BatchError::ExportFormat {
                backend: self.kind.name().into(),
            });
        }
        let io = |context, path: &Path| {
            let path = path.to_path_buf();
            move |source| BatchError::Io {
                context,
                path,
                source,
            }
        };
        std::fs::create_dir_all(dir).map_err(io("cannot create", dir))?;
        clear_exports(dir)?;
        let (max_requests, max_bytes) = self.limits();
        let mut written = Vec::new();
        let now = unix_now();
        for (i, chunk) in lines::split(self.take_lines(), max_requests, max_bytes)
            .into_iter()
            .enumerate()
        {
            let path = dir.join(format!("c2s-batch-{:03}.jsonl", i + 1));
            let mut bytes = Vec::new();
            for (_, l) in &chunk {
                bytes.extend_from_slice(l);
                bytes.push(b'\n');
            }
            std::fs::write(&path, &bytes).map_err(io("cannot write", &path))?;
            let rec = BatchRecord {
                provider: "export".into(),
                local: format!("{}-{i:04}", now_millis()),
                id: Some(path.display().to_string()),
                submitted: now,
                requests: chunk
                    .iter()
                    .map(|(q, _)| (q.custom_id.clone(), q.stage.clone()))
                    .collect(),
                status: "exported".into(),
                collected: true,
                ..BatchRecord::default()
            };
            store::save(&self.memo, &rec)?;
            let mut s = lock(&self.summary);
            s.batch_sizes.push(chunk.len());
            s.requests_submitted += chunk.len();
            s.exported_files.push(path.display().to_string());
            written.push(path);
        }
        Ok(written)
    }
}

/// Removes the request files an earlier `--batch-export` wrote in `dir` (only c2s's own).
pub fn clear_exports(dir: &Path) -> Result<(), BatchError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("c2s-batch-") && name.ends_with(".jsonl") {
            std::fs::remove_file(e.path()).map_err(|source| BatchError::Io {
                context: "cannot remove the old request file",
                path: e.path(),
                source,
            })?;
        }
    }
    Ok(())
}

fn stage_counts(rec: &BatchRecord) -> String {
    let mut m: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, s) in &rec.requests {
        *m.entry(s.as_str()).or_default() += 1;
    }
    m.iter()
        .map(|(s, n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}
