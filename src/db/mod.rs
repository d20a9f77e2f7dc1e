//! Incremental engine state: the SQLite memo (`cache`), what it stores (`value`) and the stage
//! executor (`exec`).

pub mod cache;
pub mod exec;
pub mod value;
