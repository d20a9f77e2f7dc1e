//! Embedders behind one trait. The offline `hashed` backend lives here; neural backends plug into the same trait.

mod hashed;
mod onnx;
mod openai;

pub use hashed::Hashed;
pub use onnx::Onnx;
pub use openai::OpenAiEmbed;

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
    /// The vector size (a neural backend loads its model to tell).
    fn dims(&self) -> usize;
    /// Texts per call that suit this backend; callers group misses into calls of this size.
    fn batch_size(&self) -> usize {
        1
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError>;
    /// Calls to run at once (a remote backend's concurrency); 0 for the CPU's own parallelism.
    fn concurrency(&self) -> usize {
        0
    }
    /// What ran the model (`cpu`, `cuda`, an endpoint), for the build report.
    fn device(&self) -> String {
        "cpu".into()
    }
}

/// The dry-run stand-in: keeps the configured embedder's identity (so memo keys match a real
/// build) but computes misses with the hashed embedder, so `--dry-run` never loads a model or
/// calls an endpoint.
pub struct Standin(pub Box<dyn Embedder>);

impl Embedder for Standin {
    fn model_id(&self) -> String {
        self.0.model_id()
    }

    fn dims(&self) -> usize {
        Hashed { dims: 256 }.dims()
    }

    fn batch_size(&self) -> usize {
        256
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Hashed { dims: 256 }.embed(texts)
    }

    fn device(&self) -> String {
        "dry run (hashed stand-in)".into()
    }
}
