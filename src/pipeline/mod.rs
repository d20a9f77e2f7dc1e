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
pub mod output;
pub mod records;
pub mod shortcut;
pub mod state;
pub mod statscan;
pub mod tree;
