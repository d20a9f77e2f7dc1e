//! LLM stages behind one trait: document cards, cluster summaries, labels and entity/doc-type tags.
//! The offline `extractive` backend lives here; networked backends plug into the same trait.

mod extractive;
pub mod terms;

pub use extractive::{EXTRACTIVE_VERSION, Extractive};
use serde::{Deserialize, Serialize};

/// A document's card: its row in INDEX.md and part of its embedding text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    pub title: String,
    pub one_line: String,
    pub phrases: Vec<String>,
}

impl Card {
    /// The card as text, the first part of a document's embedding input.
    pub fn render(&self) -> String {
        format!(
            "{}\n{}\n{}",
            self.title,
            self.one_line,
            self.phrases.join("; ")
        )
    }
}

/// What a card is made from.
#[derive(Debug, Clone, Copy)]
pub struct CardInput<'a> {
    pub title: Option<&'a str>,
    pub description: Option<&'a str>,
    pub text: &'a str,
}

/// One member of a cluster as shown to the summarizer: a document (title + excerpt)
/// or a child cluster (label + summary excerpt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterItem {
    pub title: String,
    pub text: String,
}

/// The input of the cluster stages (summary, label, tags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterInput {
    /// True for clusters of documents, false for clusters of clusters.
    pub leaf: bool,
    pub items: Vec<ClusterItem>,
}

/// Entity and document-type tags of a cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tags {
    pub entities: Vec<String>,
    pub doc_types: Vec<String>,
}

/// Why an LLM stage failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("{0}")]
    Backend(String),
}

/// The LLM stages of the method. Every call depends only on its own input.
pub trait Llm: Send + Sync {
    /// Model identity (goes into every memo key and the manifest).
    fn model_id(&self) -> String;
    /// Version (or hash) of the prompt a stage uses; part of the stage's memo keys.
    fn prompt_version(&self, stage: &str) -> String;
    fn card(&self, input: &CardInput) -> Result<Card, LlmError>;
    fn summarize(&self, input: &ClusterInput) -> Result<String, LlmError>;
    /// A 2–5 word label for a cluster (sanitized into a slug by the caller).
    fn label(&self, input: &ClusterInput, summary: &str) -> Result<String, LlmError>;
    fn tags(&self, input: &ClusterInput) -> Result<Tags, LlmError>;
}
