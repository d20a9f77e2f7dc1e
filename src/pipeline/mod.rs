//! Build orchestration: what a build is asked (`options`) and reports (`report`), the build
//! itself (`build`, one call per step: `steps`, `tree`, `emit`; `batched` for batch inference),
//! the configured backends, what it hands the journal after writing (`remember`), the committed
//! state (`state`), freshness (`c2s check`, stat first through `statscan`) and the up-to-date
//! `shortcut`, links, output writing and memo garbage collection.

pub mod backends;
pub mod batched;
pub mod build;
pub mod emit;
pub mod freshness;
pub mod gc;
pub mod links;
pub mod options;
pub mod output;
pub mod remember;
pub mod report;
pub mod shortcut;
pub mod state;
pub mod statscan;
pub mod steps;
pub mod tree;

/// Frees `v` on a thread of its own. A build's documents, tree, vectors and key slots take
/// about 0.3 s to free at 100,000 documents, which the caller need not wait for (a command
/// line run exits first; `watch` and `eval` go on while it frees). Freed here when no thread
/// can be started.
pub(crate) fn drop_later<T: Send + 'static>(v: T) {
    let _ = std::thread::Builder::new()
        .name("c2s-free".into())
        .spawn(move || drop(v));
}
