//! The compile stages, in data-flow order: card, embed, cluster, summarize, label, repartition, enrich, render.

pub mod card;
pub mod chunk;
pub mod cluster;
pub mod embed;
pub mod enrich;
pub mod fallback;
pub mod hierarchy;
pub mod incremental;
pub mod label;
pub mod render;
pub mod repartition;
pub mod summarize;
