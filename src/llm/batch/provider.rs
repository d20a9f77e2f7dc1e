//! The providers' batch APIs over the shared HTTP client: OpenAI's Files + Batches
//! (`/files`, `/batches`) and Anthropic's Message Batches (`/v1/messages/batches`).

use serde_json::{Value, json};

use super::lines::OPENAI_ENDPOINT;
use super::store::BatchRecord;
use crate::config::LlmBackendKind;
use crate::db::cache::CacheError;
use crate::http::{Body, Client, HttpError, Part, Request};
use crate::llm::wire;

/// Why a call to a provider's batch API failed.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    #[error(transparent)]
    Http(#[from] HttpError),
    #[error("the batch API's answer has no `{field}`: {answer}")]
    Missing { field: &'static str, answer: String },
    /// Recording the uploaded file in the memo failed (between upload and create).
    #[error(transparent)]
    Cache(#[from] CacheError),
}

/// Per-batch limits of the provider: requests and input bytes.
pub fn limits(kind: LlmBackendKind) -> (usize, u64) {
    match kind {
        LlmBackendKind::Anthropic => (100_000, 256_000_000),
        _ => (50_000, 200_000_000),
    }
}

/// A batch's state as the provider reports it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    /// The provider's word (`in_progress`, `completed`, `ended`, …).
    pub status: String,
    /// No further change will come: results can be read.
    pub terminal: bool,
    pub done: u64,
    pub failed: u64,
    pub total: u64,
    /// OpenAI: the output and error files, when there are any.
    pub output_file: Option<String>,
    pub error_file: Option<String>,
    /// Why the whole batch failed (OpenAI validation errors).
    pub errors: Vec<String>,
}

/// One provider's batch endpoints.
pub struct Api {
    kind: LlmBackendKind,
    base: String,
    client: Client,
}

impl Api {
    pub fn new(kind: LlmBackendKind, base: &str, client: Client) -> Api {
        Api {
            kind,
            base: base.trim_end_matches('/').to_string(),
            client,
        }
    }

    fn call(&self, method: reqwest::Method, path: &str, body: Body) -> Result<Value, HttpError> {
        let headers = wire::headers(self.kind, self.client.key());
        self.client
            .call(method, &format!("{}{path}", self.base), &headers, body)
    }

    fn download(&self, path: &str) -> Result<Vec<u8>, HttpError> {
        let url = format!("{}{path}", self.base);
        let headers = wire::headers(self.kind, self.client.key());
        let req = Request {
            method: reqwest::Method::GET,
            url: &url,
            headers: &headers,
            body: Body::None,
        };
        self.client.send_raw(&req)
    }

    /// Submits `input` (JSONL lines for OpenAI, request objects for Anthropic). For OpenAI the
    /// file is uploaded first and `rec.input_file_id` saved through `save` before the batch is
    /// created, so a build killed in between finds the batch again instead of paying twice.
    pub fn submit(
        &self,
        rec: &mut BatchRecord,
        input: &[Vec<u8>],
        save: &dyn Fn(&BatchRecord) -> Result<(), CacheError>,
    ) -> Result<(), ProviderError> {
        match self.kind {
            LlmBackendKind::Anthropic => {
                let mut body = b"{\"requests\":[".to_vec();
                for (i, line) in input.iter().enumerate() {
                    if i > 0 {
                        body.push(b',');
                    }
                    body.extend_from_slice(line);
                }
                body.extend_from_slice(b"]}");
                let raw = Body::Raw {
                    content_type: "application/json".into(),
                    bytes: body,
                };
                let v = self.call(reqwest::Method::POST, "/v1/messages/batches", raw)?;
                rec.id = Some(field(&v, "id")?);
                Ok(())
            }
            _ => {
                if rec.input_file_id.is_none() {
                    let v =
                        self.call(reqwest::Method::POST, "/files", upload(&rec.local, input))?;
                    rec.input_file_id = Some(field(&v, "id")?);
                    save(rec)?;
                }
                self.create_openai(rec)
            }
        }
    }

    /// Creates the OpenAI batch of an uploaded file, unless one already exists for it.
    fn create_openai(&self, rec: &mut BatchRecord) -> Result<(), ProviderError> {
        let file = rec.input_file_id.clone().unwrap_or_default();
        if let Some(id) = self.find_openai_batch(&file)? {
            rec.id = Some(id);
            return Ok(());
        }
        let body = json!({
            "input_file_id": file,
            "endpoint": OPENAI_ENDPOINT,
            "completion_window": "24h",
            "metadata": {"c2s": rec.local},
        });
        let v = self.call(reqwest::Method::POST, "/batches", Body::Json(&body))?;
        rec.id = Some(field(&v, "id")?);
        Ok(())
    }

    /// The batch already created from `file` (the newest 100 batches are searched).
    fn find_openai_batch(&self, file: &str) -> Result<Option<String>, ProviderError> {
        let v = self.call(reqwest::Method::GET, "/batches?limit=100", Body::None)?;
        Ok(v["data"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|b| b["input_file_id"].as_str() == Some(file))
            .and_then(|b| b["id"].as_str())
            .map(str::to_string))
    }

    /// The batch's state now.
    pub fn poll(&self, id: &str) -> Result<Status, ProviderError> {
        match self.kind {
            LlmBackendKind::Anthropic => {
                let v = self.call(
                    reqwest::Method::GET,
                    &format!("/v1/messages/batches/{id}"),
                    Body::None,
                )?;
                let n = |k: &str| v["request_counts"][k].as_u64().unwrap_or(0);
                let status = v["processing_status"]
                    .as_str()
                    .unwrap_or("unknown")
                    .to_string();
                let failed = n("errored") + n("canceled") + n("expired");
                Ok(Status {
                    terminal: status == "ended",
                    done: n("succeeded"),
                    failed,
                    total: n("processing") + n("succeeded") + failed,
                    status,
                    ..Status::default()
                })
            }
            _ => {
                let v = self.call(reqwest::Method::GET, &format!("/batches/{id}"), Body::None)?;
                let status = v["status"].as_str().unwrap_or("unknown").to_string();
                let n = |k: &str| v["request_counts"][k].as_u64().unwrap_or(0);
                let file = |k: &str| v[k].as_str().filter(|s| !s.is_empty()).map(str::to_string);
                let errors = v["errors"]["data"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|e| e["message"].as_str().map(str::to_string))
                    .collect();
                Ok(Status {
                    terminal: matches!(
                        status.as_str(),
                        "completed" | "failed" | "expired" | "cancelled"
                    ),
                    done: n("completed"),
                    failed: n("failed"),
                    total: n("total"),
                    output_file: file("output_file_id"),
                    error_file: file("error_file_id"),
                    errors,
                    status,
                })
            }
        }
    }

    /// The result files of a finished batch (output, then errors), as JSONL bytes.
    pub fn results(&self, id: &str, status: &Status) -> Result<Vec<Vec<u8>>, ProviderError> {
        let get = |p: &str| self.download(p).map_err(ProviderError::from);
        match self.kind {
            LlmBackendKind::Anthropic => {
                Ok(vec![get(&format!("/v1/messages/batches/{id}/results"))?])
            }
            _ => [&status.output_file, &status.error_file]
                .into_iter()
                .flatten()
                .map(|f| get(&format!("/files/{f}/content")))
                .collect(),
        }
    }

    /// Asks the provider to cancel a batch (finished requests stay in its results).
    pub fn cancel(&self, id: &str) -> Result<(), ProviderError> {
        let path = match self.kind {
            LlmBackendKind::Anthropic => format!("/v1/messages/batches/{id}/cancel"),
            _ => format!("/batches/{id}/cancel"),
        };
        self.call(reqwest::Method::POST, &path, Body::None)?;
        Ok(())
    }
}

/// The `multipart/form-data` upload of a batch input file (`purpose=batch`).
fn upload<'a>(local: &str, lines: &[Vec<u8>]) -> Body<'a> {
    let mut file = Vec::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines {
        file.extend_from_slice(l);
        file.push(b'\n');
    }
    let filename = format!("c2s-batch-{local}.jsonl");
    crate::http::multipart(&[
        Part {
            name: "purpose",
            file: None,
            bytes: b"batch",
        },
        Part {
            name: "file",
            file: Some((&filename, "application/jsonl")),
            bytes: &file,
        },
    ])
}

fn field(v: &Value, name: &'static str) -> Result<String, ProviderError> {
    v[name]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| ProviderError::Missing {
            field: name,
            answer: v.to_string(),
        })
}
