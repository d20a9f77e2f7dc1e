//! The compile stages, in data-flow order: `card`, `chunk` + `embed` (texts: `embed_input`), then per level (`hierarchy`)
//! `cluster` → `node_input` (each node's summarizer input and key) → `summarize` (summaries,
//! labels via the LLM, tags) → `label` (slug names) →
//! `repartition`; `incremental` updates a previous tree in place; `sections` makes the tree from
//! the authors' structure instead; `enrich` and `render` finish.
//! `fallback` is what an LLM stage does with unusable answers.

pub mod card;
pub mod chunk;
pub mod cluster;
pub mod embed;
pub mod embed_input;
pub mod enrich;
pub mod fallback;
pub mod hierarchy;
pub mod incremental;
pub mod label;
pub mod node_input;
pub mod render;
pub mod repartition;
pub mod sections;
pub mod summarize;
