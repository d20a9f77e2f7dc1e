//! Build orchestration and its state: the build itself (`build`, and `batched` for batch
//! inference), the configured backends, the memo records a build keeps, freshness (`c2s check`),
//! the platform limits report, output writing, the lock (`manifest`) and memo garbage collection.

pub mod backends;
pub mod batched;
pub mod build;
pub mod freshness;
pub mod gc;
pub mod limits;
pub mod manifest;
pub mod output;
pub mod records;
