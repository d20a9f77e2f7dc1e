//! Embedders behind one trait. The offline `hashed` backend lives here; neural backends plug into the same trait.

mod hashed;

pub use hashed::Hashed;

/// Why an embedder failed.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("{0}")]
    Backend(String),
}

/// Turns texts into L2-normalized vectors of a fixed dimension.
pub trait Embedder: Send + Sync {
    /// Model identity, for memo keys and the manifest.
    fn model_id(&self) -> String;
    fn dims(&self) -> usize;
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
}
