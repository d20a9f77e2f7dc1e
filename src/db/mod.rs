//! Incremental engine state: the SQLite memo (`cache`), what it stores (`value`), the stage
//! executor (`exec`, with what its dry runs record and its vetting of seeded results), what a build remembers of an output
//! between builds (`journal`, which names, commits and removes the records below), the stat
//! index of sources and outputs (`statindex`), the results the last build of an output used
//! (`used`), the values it derived to compute keys (`recipes`), the file format of such records
//! (`keyed`).

pub mod cache;
pub mod exec;
pub mod journal;
pub mod keyed;
pub mod recipes;
pub mod statindex;
pub mod used;
pub mod value;
