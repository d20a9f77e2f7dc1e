//! Embedders behind one trait: the offline `hashed` backend, ONNX Runtime (`onnx`) and an
//! OpenAI-compatible endpoint (`openai`); `open` builds the one a config describes.

mod hashed;
mod onnx;
mod openai;

pub use hashed::Hashed;
pub use onnx::Onnx;
pub use openai::OpenAiEmbed;

use std::path::{Path, PathBuf};

use crate::config::{EmbedBackendKind, EmbedConfig};

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
    /// Checks a vector for `text` read from a committed build state (untrusted input): `None`
    /// when computing it again is cheap and exact (it is recomputed and compared), else
    /// whether it can be this model's (finite, not empty, unit length when the model's are). A
    /// model's vector is not recomputed: that is the cost the state saves, and a vector routes
    /// a document but never becomes text.
    fn check_stored(&self, text: Lazy<'_>, v: &[f32]) -> Option<Result<(), String>> {
        let _ = text;
        Some(plausible(v, true))
    }
    /// Calls to run at once (a remote backend's concurrency); 0 for the CPU's own parallelism.
    fn concurrency(&self) -> usize {
        0
    }
    /// What ran the model (`cpu`, `cuda`, an endpoint), for the build report.
    fn device(&self) -> String {
        "cpu".into()
    }
}

/// A stored vector's text, made only when a check needs it (`None`: its document no longer has
/// it).
pub type Lazy<'t> = &'t dyn Fn() -> Option<String>;

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

    /// The configured embedder's check; where that is a recomputation, it is done with the
    /// configured embedder (the stand-in computes other vectors).
    fn check_stored(&self, text: Lazy<'_>, v: &[f32]) -> Option<Result<(), String>> {
        self.0.check_stored(text, v).or_else(|| {
            let Some(text) = text() else {
                return Some(Err("its text is no longer in its document".into()));
            };
            Some(match self.0.embed(&[&text]) {
                Ok(fresh) if fresh.first().is_some_and(|f| f.as_slice() == v) => Ok(()),
                Ok(_) => Err("it differs from what this build computes from the same input".into()),
                Err(e) => Err(format!("it could not be computed again to compare ({e})")),
            })
        })
    }

    fn device(&self) -> String {
        "dry run (hashed stand-in)".into()
    }
}

/// Whether a stored vector can be a model's: not empty, finite, and (`unit`: the backend
/// normalizes) of unit length when it is not zero.
pub(crate) fn plausible(v: &[f32], unit: bool) -> Result<(), String> {
    if v.is_empty() {
        return Err("the vector is empty".into());
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err("the vector holds a value that is not a finite number".into());
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if unit && norm != 0.0 && (norm - 1.0).abs() > 1e-3 {
        return Err(format!("the vector's length is {norm}, not 1"));
    }
    Ok(())
}

/// The embedder `e` describes; relative model paths are resolved against `base`.
pub fn open(e: &EmbedConfig, base: &Path) -> Result<Box<dyn Embedder>, EmbedError> {
    let resolve = |p: &Path| {
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            base.join(p)
        }
    };
    Ok(match e.backend {
        EmbedBackendKind::Hashed => Box::new(Hashed {
            dims: e.dims.unwrap_or(256),
        }),
        EmbedBackendKind::Onnx => {
            let library = e
                .onnx
                .library
                .as_deref()
                .map(resolve)
                .or_else(|| find_ort(base));
            Box::new(Onnx::new(
                &e.onnx,
                &resolve(&e.onnx.model_dir),
                library,
                e.dims,
            )?)
        }
        EmbedBackendKind::Openai => Box::new(OpenAiEmbed::new(&e.openai, e.dims)?),
    })
}

/// ONNX Runtime fetched by `scripts/fetch-models.sh` into `models/` beside the config, when
/// neither `embed.onnx.library` nor `ORT_DYLIB_PATH` names one.
pub fn find_ort(base: &Path) -> Option<PathBuf> {
    if std::env::var_os("ORT_DYLIB_PATH").is_some() {
        return None;
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(base.join("models"))
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("onnxruntime-"))
        .flat_map(|e| std::fs::read_dir(e.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libonnxruntime.so."))
        })
        .collect();
    found.sort();
    found.pop()
}
