//! Serving a compiled tree: the offline navigator (beam search over the skill tree).

pub mod navigator;
