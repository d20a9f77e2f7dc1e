//! Incremental engine state: the SQLite memo (`cache`), what it stores (`value`), the stage
//! executor (`exec`) and what its dry runs record (`dry`), the stat index of sources and
//! outputs (`statindex`), the results the last build of an output used (`used`), the values
//! it derived to compute keys (`recipes`), the file format of such records (`keyed`), and the vetting of results a committed state
//! supplies (`vet`).

pub mod cache;
pub mod dry;
pub mod exec;
pub mod keyed;
pub mod recipes;
pub mod statindex;
pub mod used;
pub mod value;
pub mod vet;
