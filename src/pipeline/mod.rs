//! Build orchestration and its state: the build itself (`build`, and `batched` for batch
//! inference), the configured backends, the memo records a build keeps, freshness (`c2s check`, stat first through
//! `statscan`) and the up-to-date `shortcut`, the tree step (`tree`: warm start or from
//! scratch), output writing and memo garbage collection.

pub mod backends;
pub mod batched;
pub mod build;
pub mod emit;
pub mod freshness;
pub mod gc;
pub mod links;
pub mod output;
pub mod records;
pub mod shortcut;
pub mod state;
pub mod statscan;
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
