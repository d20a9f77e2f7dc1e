//! LLM stages behind one trait: document cards, cluster summaries, labels and entity/doc-type tags.
//! The offline `extractive` backend lives here; networked backends plug into the same trait, and
//! `batch` turns their requests into provider batches.

pub mod batch;
pub mod chat;
pub mod check;
mod extractive;
pub mod names;
pub mod parse;
pub mod phrases;
pub mod prompts;
mod remote;
pub use remote::schema_refusal;
pub mod schema;
mod standin;
pub mod terms;
pub mod wire;

use std::collections::BTreeMap;

use crate::tree::Tags;
pub use extractive::{EXTRACTIVE_VERSION, Extractive, members_of};
pub use remote::{Remote, Usage};
use serde::{Deserialize, Serialize};
pub use standin::Standin;

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

/// A result of an LLM stage read from a committed build state, with what it was made from.
#[derive(Clone, Copy)]
pub enum Stored<'a> {
    Card(&'a CardInput<'a>, &'a Card),
    Summary(&'a ClusterInput, &'a str),
    Label(&'a ClusterInput, &'a str),
    Tags(&'a ClusterInput, &'a Tags),
}

/// One member of a cluster as shown to the summarizer: a document (title + excerpt)
/// or a child cluster (label + summary excerpt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterItem {
    pub title: String,
    pub text: String,
    /// A document's headings and names, from the same part of its text as `text`; empty for a
    /// child cluster. Only the extractive backend reads them ([`Llm::reads_marks`]), so only its
    /// keys hold them.
    pub marks: Marks,
}

/// What a document's text marks out: its headings (other than its title) and the names in it
/// (products, settings, commands, codes; see [`names::of_document`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Marks {
    pub headings: Vec<String>,
    pub names: Vec<String>,
}

/// The input of the cluster stages (summary, label, tags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterInput {
    /// True for clusters of documents, false for clusters of clusters.
    pub leaf: bool,
    pub items: Vec<ClusterItem>,
    /// Words that most groups of this level share in their members' titles, and words that
    /// most documents carry (a brand, a product name): a label holding one tells the group from
    /// no other. Sorted; read by the extractive label only ([`Llm::reads_marks`]).
    pub avoid: Vec<String>,
}

/// One change proposed by verify-and-repartition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Change {
    /// Move a member (by id) into group `to`.
    Move { item: String, to: usize },
    /// Merge group `b` into group `a`.
    Merge { a: usize, b: usize },
}

/// One group as the repartition prompt shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepartitionGroup {
    pub label: String,
    pub summary: String,
    /// `(id, title)` of each member.
    pub members: Vec<(String, String)>,
}

/// The groups of one level, with the size cap a group may not exceed after changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepartitionInput {
    pub groups: Vec<RepartitionGroup>,
    pub max_size: usize,
}

impl RepartitionInput {
    /// The prompt text: numbered groups with label, summary and members.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (i, g) in self.groups.iter().enumerate() {
            out.push_str(&format!(
                "Group {i}: {}\nSummary: {}\nMembers:\n",
                g.label, g.summary
            ));
            for (id, title) in &g.members {
                out.push_str(&format!("- {id}: {title}\n"));
            }
            out.push('\n');
        }
        out
    }

    /// Checks changes against the groups: known ids and groups, no emptied group, size caps.
    pub fn validate(&self, changes: &[Change]) -> Result<(), String> {
        let n = self.groups.len();
        let mut sizes: Vec<usize> = self.groups.iter().map(|g| g.members.len()).collect();
        let mut merged = vec![false; n];
        for c in changes {
            match c {
                Change::Move { item, to } => {
                    let from = self
                        .groups
                        .iter()
                        .position(|g| g.members.iter().any(|(id, _)| id == item))
                        .ok_or_else(|| format!("no member `{item}`"))?;
                    if *to >= n {
                        return Err(format!("there is no group {to}"));
                    }
                    if from != *to {
                        if sizes[from] <= 1 {
                            return Err(format!("moving `{item}` would empty group {from}"));
                        }
                        sizes[from] -= 1;
                        sizes[*to] += 1;
                    }
                }
                Change::Merge { a, b } => {
                    if *a >= n || *b >= n {
                        return Err(format!("there is no group {}", a.max(b)));
                    }
                    if merged[*a] || merged[*b] {
                        return Err("a group takes part in at most one merge".into());
                    }
                    merged[*a] = true;
                    merged[*b] = true;
                    sizes[*a] += sizes[*b];
                    sizes[*b] = 0;
                }
            }
        }
        if let Some(i) = sizes.iter().position(|&s| s > self.max_size) {
            return Err(format!(
                "group {i} would hold {} members, more than {}",
                sizes[i], self.max_size
            ));
        }
        Ok(())
    }
}

/// Why the LLM backend cannot be set up from the config.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(
        "llm.base_url must be set for the openai backend\n  help: set [llm] base_url to the API root, e.g. \"https://api.openai.com/v1\" or a local server's \"http://127.0.0.1:8080/v1\""
    )]
    NoBaseUrl,
    #[error(transparent)]
    Client(#[from] crate::http::HttpError),
}

/// Why an LLM stage failed.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The backend failed for good (HTTP refused, retries exhausted): the build stops.
    #[error("{0}")]
    Backend(String),
    /// The model answered, but twice with nothing usable: the item falls back to the
    /// extractive result, memoized with the reason (see `stage::fallback`).
    #[error("{0}")]
    Unusable(String),
    /// The request waits for a batch (queued now, or in one already submitted): the item is
    /// computed in a later build round.
    #[error("the request waits for a batch")]
    Pending,
}

/// The LLM stages of the method. Every call depends only on its own input.
pub trait Llm: Send + Sync {
    /// Model identity (goes into every memo key and the manifest).
    fn model_id(&self) -> String;
    /// The model and parameters one stage runs with (memo keys): stages may use different models.
    fn stage_model(&self, stage: &str) -> String {
        let _ = stage;
        self.model_id()
    }
    /// Version (or hash) of the prompt a stage uses; part of the stage's memo keys.
    fn prompt_version(&self, stage: &str) -> String;
    /// Whether the cluster stages read the members' [`Marks`] (then they enter the keys).
    fn reads_marks(&self) -> bool {
        false
    }
    fn card(&self, input: &CardInput) -> Result<Card, LlmError>;
    fn summarize(&self, input: &ClusterInput) -> Result<String, LlmError>;
    /// A 2–5 word label for a cluster (sanitized into a slug by the caller).
    fn label(&self, input: &ClusterInput, summary: &str) -> Result<String, LlmError>;
    fn tags(&self, input: &ClusterInput) -> Result<Tags, LlmError>;
    /// Verify-and-repartition of one level: `None` when the backend has no opinion (the offline
    /// rule applies), else validated changes.
    fn repartition(&self, input: &RepartitionInput) -> Result<Option<Vec<Change>>, LlmError> {
        let _ = input;
        Ok(None)
    }
    /// Checks a result read from a committed build state (untrusted input: a pull request can
    /// change the state and the lock together) before the build uses it. `None`: computing it
    /// again is cheap and exact, so it is recomputed and compared (the default, for the
    /// offline backends). A model's result must pass the checks a fresh answer passes
    /// (grounding in what the model was shown, no planted text, length limits) and come out
    /// of them unchanged.
    fn check_stored(&self, stored: Stored<'_>) -> Option<Result<(), String>> {
        let _ = stored;
        None
    }
    /// Whether `repartition` asks a model (else the offline merge rule runs).
    fn reviews_partitions(&self) -> bool {
        false
    }
    /// Calls to run at once (a remote backend's concurrency); 0 for the CPU's own parallelism.
    fn concurrency(&self) -> usize {
        0
    }
    /// Tokens (and cost) per stage so far.
    fn usage(&self) -> BTreeMap<String, Usage> {
        BTreeMap::new()
    }
    /// What the build report should say about the backend (a refused schema, say).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
}
