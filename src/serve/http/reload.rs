//! Hot reload: the output folder is watched through its `c2s.lock` (a build writes it last and
//! swaps the whole folder), and a new build is copied, checked and switched to atomically. One
//! that fails the check (caught mid-swap, edited by hand) is not served: the old one stays,
//! `/healthz` says why, and it is tried again.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant, SystemTime};

use tokio_util::sync::CancellationToken;

use super::Health;
use super::snapshot::Snapshot;
use crate::format::LOCK_FILE;
use crate::serve::mcp::Live;

/// How often the lock is looked at.
const POLL: Duration = Duration::from_millis(250);

/// How long after a failed try the same lock is tried again.
const RETRY: Duration = Duration::from_secs(2);

/// The lock's size, time and (on unix) inode: a rebuild changes at least one.
type Stamp = (u64, Option<SystemTime>, u64);

fn stamp(path: &std::path::Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let ino = 0;
    Some((m.len(), m.modified().ok(), ino))
}

/// Follows the output at `out` until `stop`.
pub(super) async fn follow(
    out: PathBuf,
    live: Live,
    health: Arc<RwLock<Health>>,
    stop: CancellationToken,
) {
    let lock = out.join(LOCK_FILE);
    let mut seen = stamp(&lock);
    let mut failed: Option<Instant> = None;
    let mut generation = 0u64;
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tokio::time::sleep(POLL) => {}
        }
        let now = stamp(&lock);
        let retry = failed.is_some_and(|t| t.elapsed() >= RETRY);
        if now.is_none() || (now == seen && !retry) {
            continue;
        }
        seen = now;
        let served_hash = health
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .lock_hash
            .clone();
        let Ok(bytes) = std::fs::read(&lock) else {
            continue;
        };
        if crate::hash::content_hash(&bytes) == served_hash {
            failed = None;
            continue;
        }
        generation += 1;
        let started = Instant::now();
        let (o, g, h) = (out.clone(), generation, health.clone());
        let loaded = tokio::task::spawn_blocking(move || {
            Snapshot::take(&o, g)
                .map_err(|e| e.to_string())
                .and_then(|s| super::served(s, &h).map_err(|e| e.to_string()))
        })
        .await
        .unwrap_or_else(|e| Err(format!("the reload failed: {e}")));
        match loaded {
            Ok(served) => {
                live.set(served);
                failed = None;
                let mut h = health.write().unwrap_or_else(|p| p.into_inner());
                h.reloads += 1;
                super::log_line(&serde_json::json!({"event": "reload", "lock": h.lock_hash, "documents": h.documents, "ms": started.elapsed().as_millis() as u64}).to_string());
            }
            Err(why) => {
                failed = Some(Instant::now());
                health.write().unwrap_or_else(|p| p.into_inner()).not_served = Some(why.clone());
                super::log_line(&serde_json::json!({"event": "reload_refused", "why": why, "serving": served_hash}).to_string());
            }
        }
    }
}
