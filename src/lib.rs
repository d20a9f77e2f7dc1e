//! c2s compiles a folder of documents into a navigable tree of agent skills (the Corpus2Skill method).
//!
//! Layers, each importing only those below it:
//! - `cmd`: the commands (`build`, `check`, `watch`, `ask`, `mcp`, `eval`, …) and exit codes;
//!   `publish` uploads a built output.
//! - `pipeline`: build orchestration (`build`, `batched`), backends, memo records, freshness,
//!   output writing and the lock (`manifest`).
//! - the stages, in data-flow order: `ingest` → `stage::card` → `stage::embed` →
//!   `stage::hierarchy` (per level: `stage::cluster` → `stage::summarize` → `stage::repartition`
//!   → re-embed) → `stage::enrich` → `stage::render`; where the corpus has an authors'
//!   structure (`structure`: folders, `mkdocs.yml`'s nav, mdBook's `SUMMARY.md`),
//!   `stage::sections` makes the tree from it instead of the level loop; `serve` and `eval`
//!   read the output.
//! - backends behind traits: `llm::Llm` (and `llm::batch`), `embed::Embedder`,
//!   `kmeans::KmeansBackend`; infrastructure: `db` (memo, executor), `http`, `matrix`, `config`;
//!   `planted` (sentences planted for AI models), which every layer that shows text consults.

pub mod cmd;
pub mod config;
pub(crate) mod db;
pub(crate) mod diag;
pub mod embed;
pub(crate) mod error;
pub(crate) mod eval;
pub(crate) mod format;
pub(crate) mod hash;
pub(crate) mod http;
pub(crate) mod ingest;
pub mod kmeans;
pub(crate) mod llm;
pub(crate) mod markdown;
pub mod matrix;
pub(crate) mod paths;
pub(crate) mod pipeline;
pub(crate) mod planted;
pub(crate) mod progress;
pub(crate) mod publish;
pub(crate) mod retrieval;
pub mod rng;
pub(crate) mod rst;
pub mod serve;
pub(crate) mod stage;
pub(crate) mod structure;
pub(crate) mod text;
pub mod tree;

pub use cmd::run;

// The library's public surface is what the binary, the benchmarks and the integration tests
// use: the commands and CLI (`cmd`), `config`, the backends (`embed`, `kmeans`), `matrix`,
// `rng`, the serve-phase tools (`serve`) and the tree's name rule (`tree`). Everything else
// is crate-private.
