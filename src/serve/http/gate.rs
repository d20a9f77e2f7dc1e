//! The gate in front of the SDK's HTTP service: the bearer token (401 and nothing else without
//! it), `GET /healthz`, the limits (request body 413, a slow body 408, requests per second per
//! session 429, sessions at once 503) and one structured log line per request (method, JSON-RPC
//! method, tool, status, duration; never a document's text, a token or a session id).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, LengthLimitError, Limited};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use tower_service::Service;

use super::{Health, MCP_PATH};
use crate::config::ServeConfig;
use crate::serve::mcp::McpServer;

type Body = BoxBody<Bytes, Infallible>;

/// Rate-limit entries kept before idle ones are dropped.
const MAX_BUCKETS: usize = 4096;

pub(super) struct Gate {
    mcp: StreamableHttpService<McpServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    token: Option<String>,
    settings: ServeConfig,
    health: Arc<RwLock<Health>>,
    /// Per session (or client address): tokens left and when they were counted.
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

/// What one request's log line says.
#[derive(Default)]
struct Log {
    rpc: Option<String>,
    tool: Option<String>,
    session: Option<String>,
}

impl Gate {
    pub(super) fn new(
        mcp: StreamableHttpService<McpServer, LocalSessionManager>,
        sessions: Arc<LocalSessionManager>,
        token: Option<String>,
        settings: ServeConfig,
        health: Arc<RwLock<Health>>,
    ) -> Gate {
        Gate {
            mcp,
            sessions,
            token,
            settings,
            health,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Answers one request and logs it.
    pub(super) async fn handle(
        self: Arc<Self>,
        req: Request<Incoming>,
        peer: SocketAddr,
    ) -> Result<Response<Body>, Infallible> {
        let started = Instant::now();
        let (method, path) = (req.method().clone(), req.uri().path().to_string());
        let mut log = Log {
            session: header(&req, "mcp-session-id")
                .map(|s| crate::hash::content_hash(s.as_bytes())[..8].to_string()),
            ..Log::default()
        };
        let resp = self.route(req, peer, &mut log).await;
        let line = json!({
            "method": method.as_str(),
            "path": path,
            "rpc": log.rpc,
            "tool": log.tool,
            "session": log.session,
            "status": resp.status().as_u16(),
            "ms": (started.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0,
        });
        super::log_line(&line.to_string());
        Ok(resp)
    }

    async fn route(
        &self,
        req: Request<Incoming>,
        peer: SocketAddr,
        log: &mut Log,
    ) -> Response<Body> {
        if !self.authorized(&req) {
            let mut r = reply(
                StatusCode::UNAUTHORIZED,
                json!({"error": "unauthorized: send the server's token as Authorization: Bearer <token>"}),
            );
            r.headers_mut().insert(
                hyper::header::WWW_AUTHENTICATE,
                "Bearer".parse().expect("a header value"),
            );
            return r;
        }
        match req.uri().path() {
            "/healthz" if req.method() == Method::GET => return self.health(),
            "/healthz" => {
                return reply(
                    StatusCode::METHOD_NOT_ALLOWED,
                    json!({"error": "GET /healthz"}),
                );
            }
            MCP_PATH => {}
            other => {
                return reply(
                    StatusCode::NOT_FOUND,
                    json!({"error": format!("nothing at {other}: MCP is served at {MCP_PATH}, health at /healthz")}),
                );
            }
        }
        let key = header(&req, "mcp-session-id").unwrap_or_else(|| peer.ip().to_string());
        if let Err(wait) = self.take(&key) {
            let mut r = rpc_error(
                StatusCode::TOO_MANY_REQUESTS,
                -32000,
                &format!(
                    "over {} requests per second: slow down",
                    self.settings.requests_per_second
                ),
            );
            r.headers_mut()
                .insert(hyper::header::RETRY_AFTER, wait.as_secs().max(1).into());
            return r;
        }
        let (parts, body) = req.into_parts();
        let limit = self.settings.max_body_bytes;
        let read = Limited::new(body, limit).collect();
        let bytes = match tokio::time::timeout(
            Duration::from_secs(self.settings.read_timeout_s.max(1)),
            read,
        )
        .await
        {
            Err(_) => {
                return rpc_error(
                    StatusCode::REQUEST_TIMEOUT,
                    -32000,
                    "the request body was not sent in time",
                );
            }
            Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
                return rpc_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    -32600,
                    &format!("the request body is over {limit} bytes ([serve] max_body_bytes)"),
                );
            }
            Ok(Err(_)) => {
                return rpc_error(
                    StatusCode::BAD_REQUEST,
                    -32700,
                    "the request body could not be read",
                );
            }
            Ok(Ok(c)) => c.to_bytes(),
        };
        if parts.method == Method::POST {
            if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
                log.rpc = v["method"].as_str().map(str::to_string);
                log.tool = v["params"]["name"]
                    .as_str()
                    .filter(|_| log.rpc.as_deref() == Some("tools/call"))
                    .map(str::to_string);
            }
            let opens = log.rpc.as_deref() == Some("initialize")
                && !parts.headers.contains_key("mcp-session-id");
            if opens && self.sessions.sessions.read().await.len() >= self.settings.max_sessions {
                let mut r = rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    -32000,
                    &format!(
                        "{} sessions are open ([serve] max_sessions): try again later",
                        self.settings.max_sessions
                    ),
                );
                r.headers_mut().insert(hyper::header::RETRY_AFTER, 5.into());
                return r;
            }
        }
        let req = Request::from_parts(parts, Full::new(bytes));
        let mut mcp = self.mcp.clone();
        match mcp.call(req).await {
            Ok(r) => r,
            Err(never) => match never {},
        }
    }

    /// Whether the request carries the token (compared in constant time), or none is needed.
    fn authorized(&self, req: &Request<Incoming>) -> bool {
        let Some(want) = &self.token else {
            return true;
        };
        let given = header(req, "authorization").unwrap_or_default();
        let given = given.strip_prefix("Bearer ").unwrap_or("").trim();
        given.len() == want.len()
            && given
                .bytes()
                .zip(want.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0
    }

    /// Takes a request from `key`'s bucket (refilled at `requests_per_second`, holding two
    /// seconds' worth); `Err`: how long until one is there.
    fn take(&self, key: &str) -> Result<(), Duration> {
        let rate = self.settings.requests_per_second.max(0.001);
        let burst = (rate * 2.0).max(1.0);
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.len() >= MAX_BUCKETS {
            buckets.retain(|_, (_, at)| now.duration_since(*at).as_secs_f64() * rate < burst);
        }
        let (tokens, at) = buckets.entry(key.to_string()).or_insert((burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * rate).min(burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            Ok(())
        } else {
            Err(Duration::from_secs_f64((1.0 - *tokens) / rate))
        }
    }

    fn health(&self) -> Response<Body> {
        let h = self
            .health
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        let unix = |t: Option<SystemTime>| {
            t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map(|d| d.as_secs())
        };
        reply(
            StatusCode::OK,
            json!({
                "status": "ok",
                "lock": h.lock_hash,
                "built_unix": unix(h.built),
                "documents": h.documents,
                "loaded_unix": unix(h.loaded),
                "reloads": h.reloads,
                "not_served": h.not_served,
            }),
        )
    }
}

fn header(req: &Request<Incoming>, name: &str) -> Option<String> {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// A JSON body with `status`.
fn reply(status: StatusCode, body: Value) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        "application/json".parse().expect("a header value"),
    );
    r
}

/// A JSON-RPC error (no id: the request was not read) with an HTTP status.
fn rpc_error(status: StatusCode, code: i64, message: &str) -> Response<Body> {
    reply(
        status,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}),
    )
}
