//! Incremental engine state: the SQLite memo (`cache`) and the stage executor (`exec`).

pub mod cache;
pub mod exec;
