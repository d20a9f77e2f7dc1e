//! A loopback HTTP/1.1 server that speaks OpenAI's Files and Batches APIs and Anthropic's
//! Message Batches API (upload, create, status transitions, output and error files or results,
//! cancel, expiry), answering each batched request as the chat test server would. Faults are
//! scripted per created batch; 429s can be injected on create. It also answers interactive
//! chat calls (for `--finish-interactive`). Records every call.

use std::collections::{BTreeMap, VecDeque};
use std::io::BufReader;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::llm_server::{Request, answer, find_header, listen, read_raw, respond};
use crate::skills_server::multipart_parts;

/// What happens to one created batch.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Plan {
    /// Every request answered.
    Complete,
    /// The first `n` requests fail (HTTP 500 in the error file / `errored`).
    PartFail(usize),
    /// The window runs out: the first half answered, the rest expired.
    Expire,
    /// The first result line is cut short (not JSON).
    Malformed,
}

/// One call as received.
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(Debug, Clone)]
struct Batch {
    id: String,
    anthropic: bool,
    input_file_id: String,
    /// `(custom_id, request body)`.
    requests: Vec<(String, Value)>,
    plan: Plan,
    status: String,
    polls: usize,
    cancelled: bool,
    output: Option<String>,
    errors: Option<String>,
    results: Vec<u8>,
}

#[derive(Default)]
struct State {
    calls: Vec<Call>,
    files: BTreeMap<String, Vec<u8>>,
    batches: Vec<Batch>,
    plans: VecDeque<Plan>,
    create_429s: usize,
    /// Batches stay in progress while set.
    hold: bool,
    /// custom_ids that failed, expired or were cut off, in order.
    failed: Vec<String>,
    next: usize,
}

#[derive(Clone)]
pub struct BatchServer {
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl BatchServer {
    pub fn start() -> BatchServer {
        listen(
            |url| BatchServer {
                url,
                state: Arc::default(),
            },
            BatchServer::serve,
        )
    }

    /// Plans for the next created batches, in order (then `Complete`).
    pub fn plan(&self, plans: &[Plan]) {
        self.state.lock().unwrap().plans.extend(plans);
    }

    /// Answers the next `n` creates with 429 and `Retry-After: 0`.
    pub fn throttle_creates(&self, n: usize) {
        self.state.lock().unwrap().create_429s = n;
    }

    pub fn hold(&self, on: bool) {
        self.state.lock().unwrap().hold = on;
    }

    pub fn calls(&self) -> Vec<Call> {
        self.state.lock().unwrap().calls.clone()
    }

    /// The custom_ids of each created batch, in creation order.
    pub fn created(&self) -> Vec<Vec<String>> {
        let st = self.state.lock().unwrap();
        st.batches
            .iter()
            .map(|b| b.requests.iter().map(|(id, _)| id.clone()).collect())
            .collect()
    }

    /// The stages of each created batch's requests (as the chat server tells them apart).
    pub fn stages(&self) -> Vec<std::collections::BTreeSet<&'static str>> {
        let st = self.state.lock().unwrap();
        st.batches
            .iter()
            .map(|b| {
                b.requests
                    .iter()
                    .map(|(_, body)| {
                        let path = if b.anthropic {
                            "/v1/messages"
                        } else {
                            "/v1/chat/completions"
                        };
                        Request {
                            path: path.into(),
                            headers: vec![],
                            body: body.clone(),
                        }
                        .stage()
                    })
                    .collect()
            })
            .collect()
    }

    pub fn failed(&self) -> Vec<String> {
        self.state.lock().unwrap().failed.clone()
    }

    /// Calls whose method and path start as given.
    pub fn count(&self, method: &str, path: &str) -> usize {
        self.calls()
            .iter()
            .filter(|c| c.method == method && c.path.starts_with(path))
            .count()
    }

    /// Interactive chat calls (either API).
    pub fn interactive(&self) -> usize {
        self.count("POST", "/v1/chat/completions") + self.count("POST", "/v1/messages")
            - self.count("POST", "/v1/messages/batches")
    }

    /// Interactive chat calls of one stage (`card`, `summary`, …).
    pub fn interactive_calls(&self, stage: &str) -> usize {
        self.calls()
            .into_iter()
            .filter(|c| {
                c.method == "POST"
                    && matches!(c.path.as_str(), "/v1/chat/completions" | "/v1/messages")
            })
            .filter(|c| {
                let body = serde_json::from_slice(&c.body).unwrap_or(Value::Null);
                Request {
                    path: c.path.clone(),
                    headers: vec![],
                    body,
                }
                .stage()
                    == stage
            })
            .count()
    }

    fn serve(&self, stream: TcpStream) {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut out = stream;
        while let Some(raw) = read_raw(&mut reader) {
            let call = Call {
                method: raw.method,
                path: raw.path,
                headers: raw.headers,
                body: raw.body,
            };
            let (code, headers, body) = self.handle(&call);
            self.state.lock().unwrap().calls.push(call);
            if !respond(&mut out, code, &headers, &body) {
                return;
            }
        }
    }

    fn handle(&self, c: &Call) -> (u16, Vec<(String, String)>, String) {
        let mut st = self.state.lock().unwrap();
        let path = c.path.as_str();
        let ok = |v: Value| (200, vec![], v.to_string());
        let json_body = || serde_json::from_slice::<Value>(&c.body).unwrap_or(Value::Null);
        match (c.method.as_str(), path) {
            ("POST", "/v1/files") => {
                let boundary = find_header(&c.headers, "content-type")
                    .and_then(|ct| ct.split("boundary=").nth(1))
                    .unwrap_or_default()
                    .to_string();
                let parts = multipart_parts(&c.body, &boundary);
                let purpose = parts.iter().find(|p| p.0 == "purpose").map(|p| p.2.clone());
                let Some(file) = parts.into_iter().find(|p| p.0 == "file") else {
                    return (
                        400,
                        vec![],
                        json!({"error": {"message": "no file part"}}).to_string(),
                    );
                };
                if purpose.as_deref() != Some(b"batch".as_slice()) {
                    return (
                        400,
                        vec![],
                        json!({"error": {"message": "purpose must be batch"}}).to_string(),
                    );
                }
                st.next += 1;
                let id = format!("file-{}", st.next);
                let bytes = file.2.len();
                st.files.insert(id.clone(), file.2);
                ok(
                    json!({"id": id, "object": "file", "bytes": bytes, "purpose": "batch", "filename": file.1}),
                )
            }
            ("POST", "/v1/batches") | ("POST", "/v1/messages/batches") => {
                if st.create_429s > 0 {
                    st.create_429s -= 1;
                    return (
                        429,
                        vec![("retry-after".into(), "0".into())],
                        json!({"error": {"message": "Enqueued token limit reached"}}).to_string(),
                    );
                }
                let anthropic = path == "/v1/messages/batches";
                let b = json_body();
                let (file, requests) = if anthropic {
                    let reqs = b["requests"].as_array().cloned().unwrap_or_default();
                    (
                        String::new(),
                        reqs.iter()
                            .map(|r| {
                                (
                                    r["custom_id"].as_str().unwrap_or("").to_string(),
                                    r["params"].clone(),
                                )
                            })
                            .collect::<Vec<_>>(),
                    )
                } else {
                    if b["endpoint"] != "/v1/chat/completions" || b["completion_window"] != "24h" {
                        return (
                            400,
                            vec![],
                            json!({"error": {"message": "bad endpoint or window"}}).to_string(),
                        );
                    }
                    let file = b["input_file_id"].as_str().unwrap_or("").to_string();
                    let Some(bytes) = st.files.get(&file) else {
                        return (
                            404,
                            vec![],
                            json!({"error": {"message": "no such file"}}).to_string(),
                        );
                    };
                    let mut reqs = Vec::new();
                    for line in String::from_utf8_lossy(bytes)
                        .lines()
                        .filter(|l| !l.trim().is_empty())
                    {
                        let v: Value = serde_json::from_str(line).expect("input lines are JSON");
                        assert_eq!(v["method"], "POST");
                        assert_eq!(v["url"], "/v1/chat/completions");
                        reqs.push((
                            v["custom_id"].as_str().unwrap().to_string(),
                            v["body"].clone(),
                        ));
                    }
                    (file, reqs)
                };
                st.next += 1;
                let id = if anthropic {
                    format!("msgbatch_{}", st.next)
                } else {
                    format!("batch_{}", st.next)
                };
                let plan = st.plans.pop_front().unwrap_or(Plan::Complete);
                let batch = Batch {
                    id,
                    anthropic,
                    input_file_id: file,
                    requests,
                    plan,
                    status: if anthropic {
                        "in_progress".into()
                    } else {
                        "validating".into()
                    },
                    polls: 0,
                    cancelled: false,
                    output: None,
                    errors: None,
                    results: Vec::new(),
                };
                let v = object(&batch, &self.url);
                st.batches.push(batch);
                ok(v)
            }
            ("GET", p) if p.starts_with("/v1/batches?") => {
                let data: Vec<Value> = st
                    .batches
                    .iter()
                    .filter(|b| !b.anthropic)
                    .map(|b| object(b, &self.url))
                    .collect();
                ok(json!({"object": "list", "data": data, "has_more": false}))
            }
            ("GET", p) if p.starts_with("/v1/files/") && p.ends_with("/content") => {
                let id = &p["/v1/files/".len()..p.len() - "/content".len()];
                match st.files.get(id) {
                    Some(b) => (200, vec![], String::from_utf8_lossy(b).into_owned()),
                    None => (
                        404,
                        vec![],
                        json!({"error": {"message": "no such file"}}).to_string(),
                    ),
                }
            }
            ("GET", p) if p.starts_with("/v1/messages/batches/") && p.ends_with("/results") => {
                let id = &p["/v1/messages/batches/".len()..p.len() - "/results".len()];
                match st
                    .batches
                    .iter()
                    .find(|b| b.id == id && b.status == "ended")
                {
                    Some(b) => (
                        200,
                        vec![],
                        String::from_utf8_lossy(&b.results).into_owned(),
                    ),
                    None => (
                        404,
                        vec![],
                        json!({"error": {"message": "not ended"}}).to_string(),
                    ),
                }
            }
            ("POST", p) if p.ends_with("/cancel") => {
                let id = p
                    .trim_end_matches("/cancel")
                    .rsplit('/')
                    .next()
                    .unwrap_or("")
                    .to_string();
                let Some(i) = st.batches.iter().position(|b| b.id == id) else {
                    return (
                        404,
                        vec![],
                        json!({"error": {"message": "no such batch"}}).to_string(),
                    );
                };
                let b = &mut st.batches[i];
                b.cancelled = true;
                b.status = if b.anthropic {
                    "canceling".into()
                } else {
                    "cancelling".into()
                };
                ok(object(b, &self.url))
            }
            ("GET", p)
                if p.starts_with("/v1/batches/") || p.starts_with("/v1/messages/batches/") =>
            {
                let id = p.rsplit('/').next().unwrap_or("").to_string();
                let hold = st.hold;
                let Some(i) = st.batches.iter().position(|b| b.id == id) else {
                    return (
                        404,
                        vec![],
                        json!({"error": {"message": "no such batch"}}).to_string(),
                    );
                };
                let mut b = st.batches[i].clone();
                let finished = advance(&mut b, hold);
                if let Some(failed) = finished {
                    let (out, err) = results(&b);
                    if b.anthropic {
                        b.results = out;
                    } else {
                        if !out.is_empty() {
                            st.next += 1;
                            let fid = format!("file-{}", st.next);
                            st.files.insert(fid.clone(), out);
                            b.output = Some(fid);
                        }
                        if !err.is_empty() {
                            st.next += 1;
                            let fid = format!("file-{}", st.next);
                            st.files.insert(fid.clone(), err);
                            b.errors = Some(fid);
                        }
                    }
                    st.failed.extend(failed);
                }
                let v = object(&b, &self.url);
                st.batches[i] = b;
                ok(v)
            }
            ("POST", "/v1/chat/completions") | ("POST", "/v1/messages") => {
                let req = Request {
                    path: path.to_string(),
                    headers: c.headers.clone(),
                    body: json_body(),
                };
                ok(answer(&req, false))
            }
            _ => (
                404,
                vec![],
                json!({"error": {"message": format!("no route {} {}", c.method, path)}})
                    .to_string(),
            ),
        }
    }
}

/// One status step per poll; returns the failed custom_ids when the batch just finished.
fn advance(b: &mut Batch, hold: bool) -> Option<Vec<String>> {
    b.polls += 1;
    let next = match (b.anthropic, b.status.as_str()) {
        (_, "cancelling" | "canceling") => {
            if b.anthropic {
                "ended"
            } else {
                "cancelled"
            }
        }
        (false, "validating") => "in_progress",
        (_, "in_progress") if hold => "in_progress",
        (false, "in_progress") => "finalizing",
        (false, "finalizing") => {
            if b.plan == Plan::Expire {
                "expired"
            } else {
                "completed"
            }
        }
        (true, "in_progress") => "ended",
        (_, s) => {
            return {
                let _ = s;
                None
            };
        }
    };
    b.status = next.to_string();
    matches!(next, "completed" | "expired" | "cancelled" | "ended").then(|| {
        let n = b.requests.len();
        b.requests
            .iter()
            .enumerate()
            .filter(|(i, _)| !answered(b, *i, n))
            .map(|(_, (id, _))| id.clone())
            .chain((b.plan == Plan::Malformed && !b.cancelled).then(|| b.requests[0].0.clone()))
            .collect()
    })
}

/// Whether request `i` of `n` gets an answer under the batch's plan.
fn answered(b: &Batch, i: usize, n: usize) -> bool {
    if b.cancelled || b.plan == Plan::Expire {
        return i < n / 2;
    }
    match b.plan {
        Plan::PartFail(k) => i >= k,
        _ => true,
    }
}

/// The output and error JSONL of a finished batch (for Anthropic, all results in the first).
fn results(b: &Batch) -> (Vec<u8>, Vec<u8>) {
    let (mut out, mut err) = (String::new(), String::new());
    let n = b.requests.len();
    for (i, (id, body)) in b.requests.iter().enumerate() {
        let path = if b.anthropic {
            "/v1/messages"
        } else {
            "/v1/chat/completions"
        };
        let req = Request {
            path: path.into(),
            headers: vec![],
            body: body.clone(),
        };
        let line = if answered(b, i, n) {
            if b.anthropic {
                json!({"custom_id": id, "result": {"type": "succeeded", "message": answer(&req, false)}})
            } else {
                json!({"id": format!("batch_req_{i}"), "custom_id": id, "response": {"status_code": 200, "request_id": format!("req_{i}"), "body": answer(&req, false)}, "error": null})
            }
        } else if b.anthropic {
            let t = if b.cancelled {
                "canceled"
            } else if b.plan == Plan::Expire {
                "expired"
            } else {
                "errored"
            };
            let mut r = json!({"type": t});
            if t == "errored" {
                r["error"] = json!({"type": "error", "error": {"type": "api_error", "message": "scripted failure"}});
            }
            json!({"custom_id": id, "result": r})
        } else if b.cancelled || b.plan == Plan::Expire {
            let code = if b.cancelled {
                "batch_cancelled"
            } else {
                "batch_expired"
            };
            json!({"id": format!("batch_req_{i}"), "custom_id": id, "response": null, "error": {"code": code, "message": "This request could not be executed before the completion window expired."}})
        } else {
            json!({"id": format!("batch_req_{i}"), "custom_id": id, "response": {"status_code": 500, "request_id": format!("req_{i}"), "body": {"error": {"message": "scripted failure", "type": "server_error"}}}, "error": null})
        };
        let mut text = line.to_string();
        if i == 0 && b.plan == Plan::Malformed && !b.cancelled {
            text.truncate(text.len() / 2);
        }
        let to_err = !b.anthropic && !answered(b, i, n);
        let dst = if to_err { &mut err } else { &mut out };
        dst.push_str(&text);
        dst.push('\n');
    }
    (out.into_bytes(), err.into_bytes())
}

/// The batch object as the API shows it.
fn object(b: &Batch, url: &str) -> Value {
    let n = b.requests.len() as u64;
    let done = matches!(
        b.status.as_str(),
        "completed" | "expired" | "cancelled" | "ended"
    );
    let succeeded = if done {
        (0..b.requests.len())
            .filter(|&i| answered(b, i, b.requests.len()))
            .count() as u64
    } else {
        0
    };
    if b.anthropic {
        json!({
            "id": b.id, "type": "message_batch", "processing_status": b.status,
            "request_counts": {"processing": if done { 0 } else { n }, "succeeded": succeeded,
                "errored": if done { n - succeeded } else { 0 }, "canceled": 0, "expired": 0},
            "results_url": if done { Value::from(format!("{url}/v1/messages/batches/{}/results", b.id)) } else { Value::Null },
        })
    } else {
        json!({
            "id": b.id, "object": "batch", "endpoint": "/v1/chat/completions", "status": b.status,
            "input_file_id": b.input_file_id, "completion_window": "24h",
            "output_file_id": b.output, "error_file_id": b.errors,
            "request_counts": {"total": n, "completed": succeeded, "failed": if done { n - succeeded } else { 0 }},
        })
    }
}
