//! The shared HTTP client of the LLM and embedding backends: one tokio runtime, a concurrency
//! semaphore, request and token rate limits, per-request timeouts, and retries with backoff.

mod limiter;
mod multipart;
mod retry;

pub use multipart::{Part, multipart};

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

pub use retry::{Outcome, classify_as};

use crate::config::Limits;
use limiter::RateLimiter;

/// Why a request failed for good.
#[derive(Debug, Clone, thiserror::Error)]
pub enum HttpError {
    #[error("{url}: the server refused the request with HTTP {status}: {message}\n  help: {help}")]
    Rejected {
        url: String,
        status: u16,
        message: String,
        help: String,
    },
    #[error("{url}: gave up after {attempts} attempts; last error: {last}")]
    Exhausted {
        url: String,
        attempts: u32,
        last: String,
    },
    #[error(
        "environment variable {var} is not set\n  help: export {var}=<your API key> (keys are read only from the environment)"
    )]
    MissingKey { var: String },
    #[error("HTTP client: {0}")]
    Setup(String),
}

/// One JSON answer and what it took to get it.
#[derive(Debug, Clone)]
pub struct Answer {
    pub body: serde_json::Value,
}

/// One request for `Client::send`.
pub struct Request<'a> {
    pub method: reqwest::Method,
    pub url: &'a str,
    pub headers: &'a [(&'a str, String)],
    pub body: Body<'a>,
}

/// A request body.
pub enum Body<'a> {
    None,
    Json(&'a serde_json::Value),
    /// Bytes with their content type (e.g. `multipart/form-data; boundary=…`).
    Raw {
        content_type: String,
        bytes: Vec<u8>,
    },
}

/// A client for one endpoint family (the chat model, or the embedding model).
pub struct Client {
    rt: tokio::runtime::Runtime,
    http: reqwest::Client,
    sem: Arc<Semaphore>,
    limiter: RateLimiter,
    limits: Limits,
    key: Option<String>,
    jitter: std::sync::Mutex<crate::rng::Rng>,
}

impl Client {
    /// Builds the client; the API key is read from `api_key_env` now, so a missing key fails
    /// before any work.
    pub fn new(limits: &Limits, api_key_env: Option<&str>) -> Result<Client, HttpError> {
        let key = match api_key_env.filter(|v| !v.is_empty()) {
            None => None,
            Some(var) => Some(
                std::env::var(var)
                    .ok()
                    .filter(|k| !k.trim().is_empty())
                    .ok_or_else(|| HttpError::MissingKey {
                        var: var.to_string(),
                    })?,
            ),
        };
        // reqwest is built without a default crypto provider; ring is ours.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs_f64(limits.timeout_s.min(30.0)))
            .pool_max_idle_per_host(limits.concurrency)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| HttpError::Setup(e.to_string()))?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .thread_name("c2s-http")
            .build()
            .map_err(|e| HttpError::Setup(e.to_string()))?;
        Ok(Client {
            rt,
            http,
            sem: Arc::new(Semaphore::new(limits.concurrency)),
            limiter: RateLimiter::new(limits.requests_per_minute, limits.tokens_per_minute),
            limits: limits.clone(),
            key,
            jitter: std::sync::Mutex::new(crate::rng::Rng::new(0x6a17)),
        })
    }

    /// The configured concurrency: callers run this many requests from their own threads.
    pub fn concurrency(&self) -> usize {
        self.limits.concurrency
    }

    /// The API key, for the backend to put in its auth header.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// Removes the API key from a text (server messages may echo request headers).
    pub fn redact(&self, text: &str) -> String {
        match &self.key {
            Some(k) if k.len() >= 4 => text.replace(k.as_str(), "[redacted]"),
            _ => text.to_string(),
        }
    }

    /// POSTs JSON and returns the JSON answer, retrying what is worth retrying. Blocks the
    /// calling thread; safe to call from many threads at once.
    pub fn post_json(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &serde_json::Value,
        est_tokens: u64,
    ) -> Result<Answer, HttpError> {
        let req = Request {
            method: reqwest::Method::POST,
            url,
            headers,
            body: Body::Json(body),
        };
        self.rt
            .block_on(self.send_with_retries(&req, est_tokens, true))
            .map(json_answer)
    }

    /// Sends any request (GET, DELETE, a multipart POST) and returns the JSON answer, with the
    /// same retries, limits and key redaction as `post_json`.
    pub fn send(&self, req: &Request) -> Result<Answer, HttpError> {
        self.rt
            .block_on(self.send_with_retries(req, 0, true))
            .map(json_answer)
    }

    /// `send` for a request given by its parts; returns the JSON body.
    pub fn call(
        &self,
        method: reqwest::Method,
        url: &str,
        headers: &[(&str, String)],
        body: Body,
    ) -> Result<serde_json::Value, HttpError> {
        let req = Request {
            method,
            url,
            headers,
            body,
        };
        Ok(self.send(&req)?.body)
    }

    /// Sends a request whose answer is not JSON (a file download) and returns its bytes, with
    /// the same retries, limits and key redaction.
    pub fn send_raw(&self, req: &Request) -> Result<Vec<u8>, HttpError> {
        match self.rt.block_on(self.send_with_retries(req, 0, false))? {
            Outcome::Raw(bytes) => Ok(bytes),
            Outcome::Done(v) => Ok(v.to_string().into_bytes()),
            _ => unreachable!("send_with_retries returns only finished outcomes"),
        }
    }

    /// The finished outcome (`Done` or `Raw`).
    async fn send_with_retries(
        &self,
        req: &Request<'_>,
        est_tokens: u64,
        json: bool,
    ) -> Result<Outcome, HttpError> {
        let url = req.url;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let outcome = {
                let _permit = self
                    .sem
                    .acquire()
                    .await
                    .map_err(|e| HttpError::Setup(e.to_string()))?;
                self.limiter.wait(est_tokens).await;
                self.send_once(req, json).await
            };
            match outcome {
                done @ (Outcome::Done(_) | Outcome::Raw(_)) => return Ok(done),
                Outcome::Fatal { status, message } => {
                    return Err(HttpError::Rejected {
                        url: url.to_string(),
                        status,
                        message: self.redact(&message),
                        help: retry::help_for(status).to_string(),
                    });
                }
                Outcome::Retry { reason, after } => {
                    if attempt > self.limits.max_retries {
                        return Err(HttpError::Exhausted {
                            url: url.to_string(),
                            attempts: attempt,
                            last: self.redact(&reason),
                        });
                    }
                    tokio::time::sleep(self.backoff(attempt, after)).await;
                }
            }
        }
    }

    async fn send_once(&self, r: &Request<'_>, json: bool) -> Outcome {
        let mut req = self
            .http
            .request(r.method.clone(), r.url)
            .timeout(Duration::from_secs_f64(self.limits.timeout_s));
        req = match &r.body {
            Body::None => req,
            Body::Json(v) => req.json(v),
            Body::Raw {
                content_type,
                bytes,
            } => req
                .header("content-type", content_type.as_str())
                .body(bytes.clone()),
        };
        for (name, value) in r.headers {
            req = req.header(*name, value);
        }
        let resp = match req.send().await {
            Ok(r) => r,
            Err(e) => return retry::transport_failure(&e),
        };
        let status = resp.status().as_u16();
        let after = retry::retry_after(resp.headers());
        match resp.bytes().await {
            Ok(bytes) => classify_as(status, after, &bytes, json),
            Err(e) => retry::transport_failure(&e),
        }
    }

    /// Exponential backoff with full jitter, at least the server's `Retry-After`.
    fn backoff(&self, attempt: u32, after: Option<Duration>) -> Duration {
        let base = self.limits.backoff_s * 2f64.powi(attempt.saturating_sub(1).min(20) as i32);
        let cap = base.min(self.limits.max_backoff_s);
        let r = self.jitter.lock().map(|mut g| g.next_f64()).unwrap_or(0.5);
        let jittered = Duration::from_secs_f64(cap * (0.5 + 0.5 * r));
        match after {
            Some(a) => a.max(jittered.min(a + Duration::from_millis(250))),
            None => jittered,
        }
    }
}

/// The JSON answer of a finished JSON request.
fn json_answer(outcome: Outcome) -> Answer {
    let body = match outcome {
        Outcome::Done(v) => v,
        Outcome::Raw(bytes) => serde_json::from_slice(&bytes).unwrap_or_default(),
        _ => serde_json::Value::Null,
    };
    Answer { body }
}
