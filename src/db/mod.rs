//! Incremental engine state: the SQLite memo (`cache`), what it stores (`value`) and the stage
//! executor (`exec`), and the stat index of sources and outputs (`statindex`).

pub mod cache;
pub mod exec;
pub mod statindex;
pub mod value;
