//! Reading answers back: polling outstanding batches, reading finished results into the memo as
//! they are read, waiting, cancelling, and importing an external runner's output files.

use super::*;

impl Batcher {
    /// Polls every outstanding batch once; reads the results of those that finished.
    /// Returns how many batches are still outstanding.
    pub fn collect(&self, progress: &Progress) -> Result<usize, BatchError> {
        let records = self.outstanding()?;
        let Some(api) = self.api.as_ref().filter(|_| !records.is_empty()) else {
            return Ok(records.len());
        };
        for mut rec in records {
            let Some(id) = rec.id.clone() else {
                self.resume_submission(api, rec, progress)?;
                continue;
            };
            let what = format!("batch {id}");
            let status = api.poll(&id).map_err(|source| BatchError::Provider {
                what: what.clone(),
                source,
            })?;
            if (status.status.as_str(), status.done, status.failed)
                != (rec.status.as_str(), rec.done, rec.failed)
            {
                progress.status(
                    "Batch",
                    &format!(
                        "{id}: {}, {} of {} done, {} failed, submitted {} ago",
                        status.status,
                        status.done,
                        status.total.max(rec.requests.len() as u64),
                        status.failed,
                        ago(rec.submitted)
                    ),
                );
            }
            rec.status = status.status.clone();
            rec.done = status.done;
            rec.failed = status.failed;
            if status.terminal {
                let files = api
                    .results(&id, &status)
                    .map_err(|source| BatchError::Provider { what, source })?;
                self.read_results(&mut rec, &status, &files, progress)?;
                rec.collected = true;
            }
            store::save(&self.memo, &rec)?;
        }
        self.reload()
    }

    /// A batch on record without a provider id: the build stopped while submitting it. An
    /// uploaded OpenAI file is turned into its batch (or the one already made from it is found);
    /// otherwise nothing was created, and its requests are queued again by the next round.
    fn resume_submission(
        &self,
        api: &Api,
        mut rec: BatchRecord,
        progress: &Progress,
    ) -> Result<(), BatchError> {
        if rec.input_file_id.is_some() {
            let save = |r: &BatchRecord| store::save(&self.memo, r);
            api.submit(&mut rec, &[], &save)
                .map_err(|source| BatchError::Provider {
                    what: format!(
                        "creating the batch of uploaded file {}",
                        rec.input_file_id.as_deref().unwrap_or("?")
                    ),
                    source,
                })?;
            rec.status = "submitted".into();
            progress.status(
                "Resumed",
                &format!(
                    "batch {} (its file was uploaded before the build stopped)",
                    rec.id.as_deref().unwrap_or("?")
                ),
            );
        } else {
            rec.status = "never created".into();
            rec.collected = true;
        }
        store::save(&self.memo, &rec)?;
        Ok(())
    }

    /// Reads result files line by line, committing answers as they are read; requests with no
    /// answer count a failed attempt (and are queued again by the next round).
    fn read_results(
        &self,
        rec: &mut BatchRecord,
        status: &Status,
        files: &[Vec<u8>],
        progress: &Progress,
    ) -> Result<(), BatchError> {
        let started = Instant::now();
        let stages: HashMap<&str, &str> = rec
            .requests
            .iter()
            .map(|(id, s)| (id.as_str(), s.as_str()))
            .collect();
        let mut failed: BTreeMap<String, String> = BTreeMap::new();
        let mut answered: HashSet<String> = HashSet::new();
        let mut buf: Vec<(Key, ChatAnswer)> = Vec::new();
        let id = rec.id.clone().unwrap_or_default();
        for (f, bytes) in files.iter().enumerate() {
            let which = if f == 0 { "results" } else { "error file" };
            for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                match parse_result(line) {
                    Ok((cid, result)) => {
                        let (Some(stage), Some(key)) =
                            (stages.get(cid.as_str()), store::key_of(&cid))
                        else {
                            progress.warning(&format!("batch {id} {which}, line {}: custom_id `{cid}` is not one of its requests; ignored", n + 1));
                            continue;
                        };
                        match result {
                            LineResult::Answer(a) => {
                                self.account(stage, &a);
                                answered.insert(cid);
                                buf.push((key, a));
                                if buf.len() >= 512 {
                                    store::put_answers(&self.memo, &std::mem::take(&mut buf))?;
                                }
                            }
                            LineResult::Failed(why) => {
                                failed.insert(cid, why);
                            }
                        }
                    }
                    Err(why) => progress.warning(&format!(
                        "batch {id} {which}, line {}: {why}; its request will be asked again",
                        n + 1
                    )),
                }
            }
        }
        store::put_answers(&self.memo, &buf)?;
        let whole = status.errors.join("; ");
        let mut failures = store::failures(&self.memo)?;
        let mut n_failed = 0;
        for (cid, _) in &rec.requests {
            if answered.contains(cid) {
                continue;
            }
            n_failed += 1;
            let why = failed.get(cid).cloned().unwrap_or_else(|| {
                if whole.is_empty() {
                    format!("no result in batch {id} ({})", status.status)
                } else {
                    format!("batch {id} failed: {whole}")
                }
            });
            let f = failures.entry(cid.clone()).or_default();
            f.attempts += 1;
            f.last = why;
        }
        store::save_failures(&self.memo, &failures)?;
        if n_failed > 0 {
            progress.warning(&format!(
                "batch {id} ({}): {n_failed} of {} requests have no answer; they are submitted again",
                status.status,
                rec.requests.len()
            ));
        }
        let mut s = lock(&self.summary);
        s.answers_collected += answered.len();
        s.requests_failed += n_failed;
        s.seconds_collecting += started.elapsed().as_secs_f64();
        Ok(())
    }

    fn account(&self, stage: &str, a: &ChatAnswer) {
        let s = self.cfg.stage(stage);
        let mut usage = lock(&self.usage);
        let u = usage.entry(stage.to_string()).or_default();
        u.calls += 1;
        u.batch_calls += 1;
        u.input_tokens += a.input_tokens;
        u.output_tokens += a.output_tokens;
        if let Some(c) = s.cost(a.input_tokens, a.output_tokens) {
            u.cost = Some(u.cost.unwrap_or(0.0) + c * (1.0 - self.cfg.batch.discount));
        }
    }

    /// Polls until no batch is outstanding, collecting each as it finishes.
    pub fn wait(&self, progress: &Progress) -> Result<(), BatchError> {
        let poll = Duration::from_secs_f64(self.cfg.batch.poll_s);
        loop {
            if self.collect(progress)? == 0 {
                return Ok(());
            }
            let t = Instant::now();
            std::thread::sleep(poll);
            lock(&self.summary).seconds_waiting += t.elapsed().as_secs_f64();
        }
    }

    /// Cancels every outstanding batch and collects what it finished (`--finish-interactive`).
    pub fn cancel_outstanding(&self, progress: &Progress) -> Result<(), BatchError> {
        let Some(api) = &self.api else {
            return Ok(());
        };
        for rec in self.outstanding()? {
            if let Some(id) = &rec.id {
                api.cancel(id).map_err(|source| BatchError::Provider {
                    what: format!("cancelling batch {id}"),
                    source,
                })?;
                progress.status(
                    "Cancelling",
                    &format!("batch {id}; what it finished is kept"),
                );
            }
        }
        self.wait(progress)
    }

    /// Reads result files of an external runner (OpenAI batch output format, e.g. vLLM's
    /// `run-batch`), committing answers as they are read; returns how many were read.
    pub fn import(&self, path: &Path, progress: &Progress) -> Result<usize, BatchError> {
        let started = Instant::now();
        let file = std::fs::File::open(path).map_err(|source| BatchError::Io {
            context: "cannot read the batch output",
            path: path.to_path_buf(),
            source,
        })?;
        let stages: HashMap<String, String> = store::all(&self.memo)?
            .into_iter()
            .flat_map(|r| r.requests)
            .collect();
        let mut buf = Vec::new();
        let mut n = 0;
        for (i, line) in std::io::BufReader::new(file).split(b'\n').enumerate() {
            let line = line.map_err(|source| BatchError::Io {
                context: "cannot read the batch output",
                path: path.to_path_buf(),
                source,
            })?;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let at = format!("{}, line {}", path.display(), i + 1);
            match parse_result(&line) {
                Ok((cid, LineResult::Answer(a))) => {
                    let Some(key) = store::key_of(&cid) else {
                        progress.warning(&format!(
                            "{at}: custom_id `{cid}` is not a c2s request id; ignored"
                        ));
                        continue;
                    };
                    self.account(stages.get(&cid).map_or("imported", String::as_str), &a);
                    buf.push((key, a));
                    n += 1;
                    if buf.len() >= 512 {
                        store::put_answers(&self.memo, &std::mem::take(&mut buf))?;
                    }
                }
                Ok((_, LineResult::Failed(why))) => progress.warning(&format!(
                    "{at}: the request failed ({why}); it is exported again"
                )),
                Err(why) => progress.warning(&format!("{at}: {why}; ignored")),
            }
        }
        store::put_answers(&self.memo, &buf)?;
        let mut s = lock(&self.summary);
        s.answers_collected += n;
        s.seconds_collecting += started.elapsed().as_secs_f64();
        Ok(n)
    }

    /// After a complete build: forget collected batches and failure counts.
    pub fn finish(&self) -> Result<(), BatchError> {
        store::forget_collected(&self.memo)?;
        Ok(())
    }
}

fn ago(since: u64) -> String {
    let s = unix_now().saturating_sub(since);
    if s < 120 {
        format!("{s}s")
    } else if s < 7200 {
        format!("{}m", s / 60)
    } else {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    }
}
