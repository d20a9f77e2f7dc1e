//! The `onnx` embedder: a sentence encoder (`model.onnx` + `tokenizer.json`) run by ONNX Runtime,
//! loaded at run time from `libonnxruntime.so`, on CUDA when asked and available, else the CPU.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::ep::ExecutionProvider;
use ort::session::Session;
use ort::value::Tensor;
use tokenizers::{Tokenizer, TruncationParams};

use super::{EmbedError, Embedder};
use crate::config::{OnnxConfig, OnnxDevice, Pooling};

/// Where to get the runtime library, for every error that lacks it.
const FETCH_HELP: &str = "help: run `scripts/fetch-models.sh`, which downloads the pinned onnxruntime==1.32.0 wheel and prints the config lines; then set embed.onnx.library (or ORT_DYLIB_PATH) to its libonnxruntime.so.1.32.0";

/// ONNX Runtime is loaded once per process.
static RUNTIME: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();

/// A sentence encoder. The session is opened on first use, so builds that reuse every vector
/// never load the model.
pub struct Onnx {
    cfg: OnnxConfig,
    model_path: PathBuf,
    tokenizer_path: PathBuf,
    library: Option<PathBuf>,
    /// Hash of the model and tokenizer files, and the settings that change vectors.
    id: String,
    want_dims: Option<usize>,
    loaded: OnceLock<Result<Loaded, String>>,
}

struct Loaded {
    session: Mutex<Session>,
    tokenizer: Tokenizer,
    dims: usize,
    wants_token_types: bool,
    device: String,
}

impl Onnx {
    /// Checks the model folder and hashes its files; nothing is loaded yet.
    pub fn new(
        cfg: &OnnxConfig,
        model_dir: &Path,
        library: Option<PathBuf>,
        dims: Option<usize>,
    ) -> Result<Onnx, EmbedError> {
        let model_path = model_dir.join("model.onnx");
        let tokenizer_path = model_dir.join("tokenizer.json");
        let mut hasher = blake3::Hasher::new();
        for p in [&model_path, &tokenizer_path] {
            // Streamed: the model is hashed on every build that opens it, never held in memory.
            std::fs::File::open(p)
                .and_then(|f| hasher.update_reader(f).map(|_| ()))
                .map_err(|e| {
                EmbedError::Backend(format!(
                    "cannot read {}: {e}\n  help: embed.onnx.model_dir must hold model.onnx and tokenizer.json; `scripts/fetch-models.sh` fetches all-MiniLM-L6-v2 into models/",
                    p.display()
                ))
            })?;
        }
        let pooling = match cfg.pooling {
            Pooling::Mean => "mean",
            Pooling::Cls => "cls",
        };
        let id = format!(
            "onnx:{}:{pooling}:{}:{}",
            &hasher.finalize().to_hex()[..16],
            cfg.max_tokens,
            if cfg.normalize { "l2" } else { "raw" }
        );
        let library = library.or_else(|| std::env::var_os("ORT_DYLIB_PATH").map(PathBuf::from));
        Ok(Onnx {
            cfg: cfg.clone(),
            model_path,
            tokenizer_path,
            library,
            id,
            want_dims: dims,
            loaded: OnceLock::new(),
        })
    }

    /// The execution provider that ran (`cpu`, `cuda`), or `not loaded`.
    pub fn device(&self) -> String {
        match self.loaded.get() {
            Some(Ok(l)) => l.device.clone(),
            _ => "not loaded".into(),
        }
    }

    fn loaded(&self) -> Result<&Loaded, EmbedError> {
        self.loaded
            .get_or_init(|| self.load())
            .as_ref()
            .map_err(|e| EmbedError::Backend(e.clone()))
    }

    fn load(&self) -> Result<Loaded, String> {
        let mut tokenizer = Tokenizer::from_file(&self.tokenizer_path)
            .map_err(|e| format!("cannot load {}: {e}", self.tokenizer_path.display()))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: self.cfg.max_tokens,
                ..TruncationParams::default()
            }))
            .map_err(|e| format!("tokenizer truncation: {e}"))?;
        let (session, device) = self.open_session()?;
        let wants_token_types = session
            .inputs()
            .iter()
            .any(|i| i.name() == "token_type_ids");
        let mut l = Loaded {
            session: Mutex::new(session),
            tokenizer,
            dims: 0,
            wants_token_types,
            device,
        };
        l.dims = self.encode(&l, &["dimension probe"])?[0].len();
        if let Some(d) = self.want_dims
            && d != l.dims
        {
            return Err(format!(
                "{} gives {}-dimensional vectors, but embed.dims = {d}\n  help: remove embed.dims or set it to {}",
                self.model_path.display(),
                l.dims,
                l.dims
            ));
        }
        Ok(l)
    }

    /// Opens the session on the configured device; CUDA falls back to the CPU with a note.
    fn open_session(&self) -> Result<(Session, String), String> {
        // Every ort call needs the library loaded first.
        load_runtime(self.library.as_deref())?;
        let want_cuda = match self.cfg.device {
            OnnxDevice::Cpu => false,
            OnnxDevice::Cuda => true,
            OnnxDevice::Auto => ort::ep::CUDA::is_available().unwrap_or(false),
        };
        if want_cuda {
            match self.session_with(true) {
                Ok(s) => return Ok((s, "cuda".into())),
                Err(e) => eprintln!(
                    "note: embed: the CUDA execution provider did not start ({}); running on the CPU",
                    first_line(&e)
                ),
            }
        } else if self.cfg.device == OnnxDevice::Auto {
            eprintln!("note: embed: ONNX Runtime on the CPU (this library has no CUDA provider)");
        }
        self.session_with(false).map(|s| (s, "cpu".into()))
    }

    fn session_with(&self, cuda: bool) -> Result<Session, String> {
        let fail = |e: &dyn std::fmt::Display| {
            format!(
                "ONNX Runtime session for {}: {e}",
                self.model_path.display()
            )
        };
        let env = load_runtime(self.library.as_deref())?;
        let mut b = Session::builder(env)
            .and_then(|b| {
                b.with_optimization_level(ort::session::builder::GraphOptimizationLevel::All)
                    .map_err(Into::into)
            })
            .map_err(|e| fail(&e))?;
        if self.cfg.threads > 0 {
            b = b
                .with_intra_threads(self.cfg.threads)
                .map_err(|e| fail(&e))?;
        }
        if cuda {
            b = b
                .with_execution_providers([ort::ep::CUDA::default().build().error_on_failure()])
                .map_err(|e| fail(&e))?;
        }
        b.commit_from_file(&self.model_path).map_err(|e| fail(&e))
    }

    /// Tokenizes all texts, then encodes them in batches of similar token counts (so padding
    /// stays small); returns one pooled vector per text, in input order.
    fn encode(&self, l: &Loaded, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let enc = l
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| format!("tokenizer: {e}"))?;
        let mut order: Vec<usize> = (0..enc.len()).collect();
        order.sort_by_key(|&i| enc[i].len());
        let mut out: Vec<Vec<f32>> = vec![Vec::new(); enc.len()];
        for chunk in order.chunks(self.cfg.batch_size) {
            let batch: Vec<&tokenizers::Encoding> = chunk.iter().map(|&i| &enc[i]).collect();
            for (&i, v) in chunk.iter().zip(self.run_batch(l, &batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// Runs one padded batch through the model and pools each row.
    fn run_batch(
        &self,
        l: &Loaded,
        enc: &[&tokenizers::Encoding],
    ) -> Result<Vec<Vec<f32>>, String> {
        let rows = enc.len();
        let width = enc.iter().map(|e| e.len()).max().unwrap_or(0).max(1);
        let mut ids = vec![0i64; rows * width];
        let mut mask = vec![0i64; rows * width];
        let mut types = vec![0i64; rows * width];
        for (r, e) in enc.iter().enumerate() {
            for (c, ((&id, &m), &t)) in e
                .get_ids()
                .iter()
                .zip(e.get_attention_mask())
                .zip(e.get_type_ids())
                .enumerate()
            {
                ids[r * width + c] = id as i64;
                mask[r * width + c] = m as i64;
                types[r * width + c] = t as i64;
            }
        }
        let shape = [rows, width];
        let tensor =
            |v: Vec<i64>| Tensor::from_array((shape, v)).map_err(|e| format!("tensor: {e}"));
        let mut inputs = ort::inputs![
            "input_ids" => tensor(ids)?,
            "attention_mask" => tensor(mask.clone())?,
        ];
        if l.wants_token_types {
            inputs.push(("token_type_ids".into(), tensor(types)?.into()));
        }
        let mut session = l
            .session
            .lock()
            .map_err(|_| "ONNX session poisoned".to_string())?;
        let outputs = session.run(inputs).map_err(|e| format!("inference: {e}"))?;
        let (out_shape, data) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| format!("model output: {e}"))?;
        if out_shape.len() != 3 || out_shape[0] as usize != rows || out_shape[1] as usize != width {
            return Err(format!(
                "{} returned shape {:?}; expected [batch, tokens, dims] token vectors",
                self.model_path.display(),
                &out_shape[..]
            ));
        }
        let dims = out_shape[2] as usize;
        Ok((0..rows)
            .map(|r| {
                let tokens = |c: usize| &data[(r * width + c) * dims..(r * width + c + 1) * dims];
                let mut v = match self.cfg.pooling {
                    Pooling::Cls => tokens(0).to_vec(),
                    Pooling::Mean => mean_pool(
                        (0..width).filter(|&c| mask[r * width + c] != 0).map(tokens),
                        dims,
                    ),
                };
                if self.cfg.normalize {
                    l2_normalize(&mut v);
                }
                v
            })
            .collect())
    }
}

impl Embedder for Onnx {
    fn model_id(&self) -> String {
        self.id.clone()
    }

    fn check_stored(&self, _text: super::Lazy<'_>, v: &[f32]) -> Option<Result<(), String>> {
        Some(super::plausible(v, self.cfg.normalize))
    }

    fn dims(&self) -> usize {
        self.loaded().map(|l| l.dims).unwrap_or(0)
    }

    /// Texts per call: several inference batches, so sorting by token count has room to work.
    fn batch_size(&self) -> usize {
        self.cfg.batch_size * 8
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let l = self.loaded()?;
        self.encode(l, texts).map_err(EmbedError::Backend)
    }

    fn device(&self) -> String {
        Onnx::device(self)
    }
}

/// Loads `libonnxruntime` once; later calls return the first outcome.
fn load_runtime(library: Option<&Path>) -> Result<&'static ort::environment::Environment, String> {
    let outcome = RUNTIME.get_or_init(|| {
        let path = library.ok_or_else(|| {
            format!("the onnx embedder needs the ONNX Runtime library, and neither embed.onnx.library nor ORT_DYLIB_PATH names it\n  {FETCH_HELP}")
        })?;
        if !path.is_file() {
            return Err(format!("ONNX Runtime library {} does not exist\n  {FETCH_HELP}", path.display()));
        }
        ort::init_from(path)
            .map_err(|e| format!("cannot load ONNX Runtime from {}: {e}\n  {FETCH_HELP}", path.display()))?
            .with_name("c2s")
            .build()
            .map_err(|e| format!("ONNX Runtime environment: {e}"))
    });
    outcome.as_ref().map_err(Clone::clone)
}

fn mean_pool<'a>(rows: impl Iterator<Item = &'a [f32]>, dims: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; dims];
    let mut n = 0usize;
    for row in rows {
        for (s, x) in sum.iter_mut().zip(row) {
            *s += x;
        }
        n += 1;
    }
    let n = n.max(1) as f32;
    sum.iter_mut().for_each(|s| *s /= n);
    sum
}

fn l2_normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_pool_averages_masked_rows() {
        let a = [1.0f32, 2.0];
        let b = [3.0f32, 6.0];
        assert_eq!(mean_pool([&a[..], &b[..]].into_iter(), 2), vec![2.0, 4.0]);
        assert_eq!(mean_pool(std::iter::empty(), 2), vec![0.0, 0.0]);
    }

    #[test]
    fn l2_normalize_gives_unit_length_and_keeps_zero() {
        let mut v = vec![3.0f32, 4.0];
        l2_normalize(&mut v);
        assert!((v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6);
        let mut z = vec![0.0f32; 3];
        l2_normalize(&mut z);
        assert_eq!(z, vec![0.0; 3]);
    }

    #[test]
    fn missing_model_folder_names_the_file_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let e = Onnx::new(&OnnxConfig::default(), dir.path(), None, None)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("model.onnx") && e.contains("fetch-models.sh"),
            "{e}"
        );
    }
}
