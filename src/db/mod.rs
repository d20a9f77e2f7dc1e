//! Incremental engine state: the SQLite memo (`cache`), the stage executor (`exec`), and the salsa
//! query graph over sources (`graph`).

pub mod cache;
pub mod exec;
pub mod gc;
pub mod graph;
