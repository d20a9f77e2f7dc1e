//! The configured backends of a build: the LLM, the embedder and (opened on first use) the
//! K-Means device; `--dry-run` swaps in stand-ins that keep their identities.

use std::path::Path;

use crate::config::{EmbedBackendKind, LlmBackendKind, Loaded};
use crate::embed::{Embedder, Hashed};
use crate::error::BuildError;
use crate::kmeans::{CpuKmeans, KmeansBackend};
use crate::llm::{Extractive, Llm};

/// The configured backends.
pub struct Backends {
    pub llm: Box<dyn Llm>,
    pub embedder: Box<dyn Embedder>,
    kmeans: std::sync::OnceLock<Box<dyn KmeansBackend>>,
    /// `[kmeans]`, for opening the K-Means backend on first use.
    kmeans_config: crate::config::KmeansConfig,
}

impl Backends {
    /// Opens the configured backends; relative paths resolve against the config's folder.
    pub fn from_config(loaded: &Loaded) -> Result<Backends, BuildError> {
        Backends::batched(loaded, None)
    }

    /// The configured backends; with a batcher, the LLM takes answers from batches and queues
    /// the requests of batch-mode stages.
    pub fn batched(
        loaded: &Loaded,
        batcher: Option<std::sync::Arc<crate::llm::batch::Batcher>>,
    ) -> Result<Backends, BuildError> {
        let c = &loaded.config;
        let llm: Box<dyn Llm> = match c.llm.backend {
            LlmBackendKind::Extractive => Box::new(Extractive),
            LlmBackendKind::Openai | LlmBackendKind::Anthropic => {
                let remote = crate::llm::Remote::new(&c.llm)?;
                Box::new(match batcher {
                    Some(b) => remote.with_batcher(b),
                    None => remote,
                })
            }
        };
        Ok(Backends {
            llm,
            embedder: crate::embed::open(&c.embed, &loaded.base_dir)?,
            kmeans: std::sync::OnceLock::new(),
            kmeans_config: c.kmeans.clone(),
        })
    }

    /// The backends of a dry run: the configured ones' identities (so keys match a real build)
    /// with misses computed offline ([`Backends::stand_in`]). A dry run sends nothing: it
    /// estimates without the API keys, and says which are missing.
    pub fn for_dry_run(
        loaded: &Loaded,
        progress: &crate::progress::Progress,
    ) -> Result<Backends, BuildError> {
        let mut loaded = loaded.clone();
        for (slot, what) in [
            (&mut loaded.config.llm.api_key_env, "llm.api_key_env"),
            (
                &mut loaded.config.embed.openai.api_key_env,
                "embed.openai.api_key_env",
            ),
        ] {
            let unset = |v: &String| std::env::var(v).ok().is_none_or(|k| k.is_empty());
            if let Some(var) = slot.clone().filter(unset) {
                progress.status(
                    "Note",
                    &format!(
                        "{what}: {var} is not set; the dry run estimates without it (a real build needs it)"
                    ),
                );
                *slot = None;
            }
        }
        let mut backends = Backends::from_config(&loaded)?;
        backends.stand_in();
        Ok(backends)
    }

    /// For `--dry-run`: keep every identity (so keys match a real build) but compute misses
    /// offline, so a dry run never calls a model or loads one.
    pub fn stand_in(&mut self) {
        let llm = std::mem::replace(&mut self.llm, Box::new(Extractive));
        self.llm = Box::new(crate::llm::Standin(llm));
        let embedder = std::mem::replace(&mut self.embedder, Box::new(Hashed { dims: 16 }));
        self.embedder = Box::new(crate::embed::Standin(embedder));
    }

    /// Model ids per role; a stage whose model differs from `[llm]`'s gets its own `llm.STAGE` entry.
    pub(crate) fn lock_models(&self) -> std::collections::BTreeMap<String, String> {
        let mut m = std::collections::BTreeMap::from([
            ("llm".to_string(), self.llm.model_id()),
            ("embed".to_string(), self.embedder.model_id()),
        ]);
        if self.llm.reviews_partitions() {
            for stage in crate::config::LLM_STAGES {
                m.insert(format!("llm.{stage}"), self.llm.stage_model(stage));
            }
        }
        m
    }

    /// Calls in flight at once for the executor: the largest remote concurrency configured.
    pub fn io_threads(&self) -> usize {
        self.llm.concurrency().max(self.embedder.concurrency())
    }
}

impl Backends {
    /// The K-Means backend, opened on first use (so builds that do not cluster never probe a GPU).
    pub fn kmeans(&self) -> &dyn KmeansBackend {
        self.kmeans
            .get_or_init(|| select_kmeans(&self.kmeans_config))
            .as_ref()
    }

    /// Which K-Means device ran, if clustering ran at all.
    pub fn kmeans_used(&self) -> String {
        self.kmeans
            .get()
            .map_or_else(|| "not used".to_string(), |k| k.device())
    }
}

/// The build's embedder settings, with model paths relative to the output folder (so the lock
/// is the same in every clone of a repository that holds both).
pub fn serve_embed(loaded: &Loaded, out: &Path) -> crate::format::lock::LockEmbed {
    let e = &loaded.config.embed;
    let onnx = (e.backend == EmbedBackendKind::Onnx).then(|| {
        let mut o = e.onnx.clone();
        o.model_dir = crate::format::lock::relative_path(out, &loaded.resolve(&o.model_dir));
        o.library = o
            .library
            .as_ref()
            .map(|l| loaded.resolve(l))
            .or_else(|| crate::embed::find_ort(&loaded.base_dir))
            .map(|l| crate::format::lock::relative_path(out, &l));
        o
    });
    crate::format::lock::LockEmbed {
        backend: e.backend,
        dims: e.dims,
        onnx,
        openai: (e.backend == EmbedBackendKind::Openai).then(|| e.openai.clone()),
    }
}

/// `kmeans.device`: `auto` takes a real GPU adapter only; `gpu` also takes a CPU-emulated one
/// (lavapipe, for shader tests); no adapter means the CPU path, said in one line. On a GPU,
/// runs smaller than `kmeans.gpu_min_work` stay on the CPU.
pub fn select_kmeans(config: &crate::config::KmeansConfig) -> Box<dyn KmeansBackend> {
    use crate::config::KmeansDevice;
    let device = config.device;
    let allow_emulated = match device {
        KmeansDevice::Cpu => return Box::new(CpuKmeans),
        // Without a GPU device node there is no real GPU to find; skip probing Vulkan at all
        // (software drivers would only be rejected, after printing their own noise).
        KmeansDevice::Auto if !has_gpu_device_node() => return Box::new(CpuKmeans),
        KmeansDevice::Auto => false,
        KmeansDevice::Gpu => true,
    };
    match crate::kmeans::GpuKmeans::new(allow_emulated) {
        Ok(g) => Box::new(g.with_min_work(config.gpu_min_work)),
        Err(e) => {
            if device == KmeansDevice::Gpu {
                eprintln!("warning: kmeans.device = \"gpu\" but {e}; K-Means runs on the CPU");
            }
            Box::new(CpuKmeans)
        }
    }
}

/// Whether the OS exposes a GPU: a DRM render node or an NVIDIA device (Linux); elsewhere, assume so.
fn has_gpu_device_node() -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    let any = |dir: &str, prefix: &str| {
        std::fs::read_dir(dir)
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.file_name().to_string_lossy().starts_with(prefix))
            })
            .unwrap_or(false)
    };
    any("/dev/dri", "renderD") || any("/dev", "nvidia")
}
