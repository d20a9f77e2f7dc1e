//! c2s compiles a folder of documents into a navigable tree of agent skills (the Corpus2Skill method).
//!
//! Layers, each importing only those below it:
//! - `cmd`: the commands (`build`, `check`, `watch`, `ask`, `mcp`, `eval`, …) and exit codes;
//!   `publish` uploads a built output.
//! - `pipeline`: build orchestration (`build`, `batched`), backends, memo records, freshness,
//!   output writing and the lock (`manifest`).
//! - the stages, in data-flow order: `ingest` → `stage::card` → `stage::embed` →
//!   `stage::hierarchy` (per level: `stage::cluster` → `stage::summarize` → `stage::repartition`
//!   → re-embed) → `stage::enrich` → `stage::render`; `serve` and `eval` read the output.
//! - backends behind traits: `llm::Llm` (and `llm::batch`), `embed::Embedder`,
//!   `kmeans::KmeansBackend`; infrastructure: `db` (memo, executor), `http`, `matrix`, `config`.

pub mod cmd;
pub mod config;
pub mod db;
pub mod diag;
pub mod embed;
pub mod error;
pub mod eval;
pub mod format;
pub mod hash;
pub mod http;
pub mod ingest;
pub mod kmeans;
pub mod llm;
pub mod matrix;
pub mod paths;
pub mod pipeline;
pub mod progress;
pub mod publish;
pub mod retrieval;
pub mod rng;
pub mod serve;
pub mod stage;
pub mod text;
pub mod tree;

pub use cmd::run;
