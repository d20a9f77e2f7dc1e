//! The dry-run stand-in: keeps a backend's identity (so memo keys match a real build) but
//! computes every miss with the offline extractive backend, so `--dry-run` never calls a model.

use super::{Card, CardInput, ClusterInput, Extractive, Llm, LlmError, Stored, Tags};

/// Wraps the configured LLM for `build --dry-run`.
pub struct Standin(pub Box<dyn Llm>);

impl Llm for Standin {
    fn model_id(&self) -> String {
        self.0.model_id()
    }

    fn stage_model(&self, stage: &str) -> String {
        self.0.stage_model(stage)
    }

    fn prompt_version(&self, stage: &str) -> String {
        self.0.prompt_version(stage)
    }

    /// As the configured backend (the keys of the cluster stages depend on it).
    fn reads_marks(&self) -> bool {
        self.0.reads_marks()
    }

    fn card(&self, input: &CardInput) -> Result<Card, LlmError> {
        Extractive.card(input)
    }

    fn summarize(&self, input: &ClusterInput) -> Result<String, LlmError> {
        Extractive.summarize(input)
    }

    fn label(&self, input: &ClusterInput, summary: &str) -> Result<String, LlmError> {
        Extractive.label(input, summary)
    }

    fn tags(&self, input: &ClusterInput) -> Result<Tags, LlmError> {
        Extractive.tags(input)
    }

    /// The configured backend's checks (they never call a model); where that is the
    /// extractive one, the stand-in recomputes what it would.
    fn check_stored(&self, stored: Stored<'_>) -> Option<Result<(), String>> {
        self.0.check_stored(stored)
    }
}
