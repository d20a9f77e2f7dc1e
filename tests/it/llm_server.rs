//! A loopback HTTP/1.1 server that speaks the OpenAI chat and embeddings APIs and Anthropic's
//! Messages API, with scripted answers and injected faults. Records every request.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// A fault the server injects instead of (or before) a normal answer.
#[derive(Debug, Clone)]
pub enum Fault {
    /// An HTTP status with extra headers and a body.
    Status(u16, Vec<(String, String)>, String),
    /// Sleep, then answer normally.
    Slow(Duration),
    /// 200 with a body that is not JSON.
    MalformedJson,
    /// Promise more bytes than are sent, then close.
    Truncated,
    /// Close the connection without an answer (a reset).
    Reset,
    /// 200 whose answer text is unusable for the stage (not the JSON asked for).
    Garbage,
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }

    /// The system prompt (either API).
    pub fn system(&self) -> String {
        if let Some(s) = self.body["system"].as_str() {
            return s.to_string();
        }
        if let Some(blocks) = self.body["system"].as_array() {
            return blocks.iter().filter_map(|b| b["text"].as_str()).collect();
        }
        self.body["messages"][0]["content"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    /// The last user message.
    pub fn user(&self) -> String {
        let m = self.body["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        m.last()
            .and_then(|x| x["content"].as_str())
            .unwrap_or("")
            .to_string()
    }

    /// `card`, `summary`, `label`, `tags`, `repartition`, `embeddings`, or the serve phase's
    /// `agent`, `search_agent` (the agent with search only), `rag` and `judge`.
    pub fn stage(&self) -> &'static str {
        let s = self.system();
        if self.path.ends_with("/embeddings") {
            "embeddings"
        } else if s.contains("catalog cards") {
            "card"
        } else if s.contains("routing summaries") {
            "summary"
        } else if s.contains("You name groups") {
            "label"
        } else if s.contains("entity index") {
            "tags"
        } else if s.contains("review how documents were grouped") {
            "repartition"
        } else if s.contains("Grounding rule") && s.contains("tree of skills") {
            "agent"
        } else if s.contains("Grounding rule") {
            "search_agent"
        } else if s.contains("documents given with the question") {
            "rag"
        } else if s.contains("You grade answers") {
            "judge"
        } else if s.contains("organized as a tree of topics")
            && self.user().contains("<document key=")
        {
            "guided_answer"
        } else if s.contains("organized as a tree of topics") {
            "guided"
        } else {
            "other"
        }
    }
}

#[derive(Default)]
struct State {
    requests: Vec<Request>,
    /// Faults per stage, consumed in order.
    faults: Vec<(&'static str, VecDeque<Fault>)>,
    /// Scripted raw answers (whole response bodies) per stage, consumed in order.
    scripts: Vec<(&'static str, VecDeque<Value>)>,
    /// Fixed delay before every answer.
    latency: Duration,
    /// Requests being answered now, and the most there ever were at once.
    in_flight: usize,
    max_in_flight: usize,
    /// Summaries that change with everything the request shows (see [`Server::vary_summaries`]).
    vary: bool,
    /// The context of a llama.cpp server in tokens (0: none): a longer request is refused as
    /// llama.cpp refuses it.
    context: usize,
}

/// The server; stops when dropped (its thread exits with the test process).
#[derive(Clone)]
pub struct Server {
    pub url: String,
    state: Arc<Mutex<State>>,
    pub answered: Arc<AtomicUsize>,
}

impl Server {
    pub fn start() -> Server {
        listen(
            |url| Server {
                url,
                state: Arc::new(Mutex::new(State::default())),
                answered: Arc::new(AtomicUsize::new(0)),
            },
            Server::serve,
        )
    }

    /// Queues faults for the next requests of one stage.
    pub fn fail(&self, stage: &'static str, faults: Vec<Fault>) {
        self.state
            .lock()
            .unwrap()
            .faults
            .push((stage, faults.into()));
    }

    /// Queues whole response bodies for the next requests of one stage.
    pub fn script(&self, stage: &'static str, bodies: Vec<Value>) {
        self.state
            .lock()
            .unwrap()
            .scripts
            .push((stage, bodies.into()));
    }

    /// From now on a summary depends on its whole prompt, as a real model's does: any change of
    /// a group's input changes its summary (by default the summary is fixed).
    pub fn vary_summaries(&self) {
        self.state.lock().unwrap().vary = true;
    }

    /// Refuses requests of more than `tokens` (4 characters each), as llama.cpp's server does
    /// beyond its `--ctx`.
    pub fn set_context(&self, tokens: usize) {
        self.state.lock().unwrap().context = tokens;
    }

    pub fn set_latency(&self, d: Duration) {
        self.state.lock().unwrap().latency = d;
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The most requests that were ever being answered at once.
    pub fn max_in_flight(&self) -> usize {
        self.state.lock().unwrap().max_in_flight
    }

    pub fn count(&self, stage: &str) -> usize {
        self.requests()
            .iter()
            .filter(|r| r.stage() == stage)
            .count()
    }

    fn serve(&self, stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut out = stream;
        loop {
            let Some(req) = read_request(&mut reader) else {
                return;
            };
            let stage = req.stage();
            let (fault, latency, scripted_body, vary, context) = {
                let mut st = self.state.lock().unwrap();
                st.requests.push(req.clone());
                let body = st
                    .scripts
                    .iter_mut()
                    .find(|(s, q)| *s == stage && !q.is_empty())
                    .and_then(|(_, q)| q.pop_front());
                let f = st
                    .faults
                    .iter_mut()
                    .find(|(s, q)| *s == stage && !q.is_empty())
                    .and_then(|(_, q)| q.pop_front());
                st.in_flight += 1;
                st.max_in_flight = st.max_in_flight.max(st.in_flight);
                (f, st.latency, body, st.vary, st.context)
            };
            std::thread::sleep(latency);
            let tokens = req.body["messages"].to_string().len() / 4;
            let refusal = if context > 0 && tokens > context {
                Some(
                    json!({"error": {"code": 400, "message": format!("the request exceeds the available context size ({tokens} > {context} tokens), try increasing it"), "type": "exceed_context_size_error"}}),
                )
            } else {
                guided_refusal(&req)
            };
            let reply = match fault {
                _ if refusal.is_some() => {
                    Reply::Full(400, Vec::new(), refusal.unwrap_or_default().to_string())
                }
                None if scripted_body.is_some() => Reply::Full(
                    200,
                    Vec::new(),
                    scripted_body.unwrap_or_default().to_string(),
                ),
                None if vary && stage == "summary" => {
                    Reply::Full(200, Vec::new(), varied_summary(&req).to_string())
                }
                None => Reply::Full(200, Vec::new(), answer(&req, false).to_string()),
                Some(Fault::Slow(d)) => {
                    std::thread::sleep(d);
                    Reply::Full(200, Vec::new(), answer(&req, false).to_string())
                }
                Some(Fault::Garbage) => {
                    Reply::Full(200, Vec::new(), answer(&req, true).to_string())
                }
                Some(Fault::Status(code, headers, body)) => Reply::Full(code, headers, body),
                Some(Fault::MalformedJson) => {
                    Reply::Full(200, Vec::new(), "{\"choices\": [{\"message\": ".to_string())
                }
                Some(Fault::Truncated) => Reply::Truncated(answer(&req, false).to_string()),
                Some(Fault::Reset) => Reply::Reset,
            };
            // The request stops counting as in flight once its reply is ready, before it is
            // written: a client may send its next request (on another connection) the moment
            // it has read this reply, and that request must not count as concurrent with it.
            self.state.lock().unwrap().in_flight -= 1;
            let keep = match reply {
                Reply::Full(code, headers, body) => respond(&mut out, code, &headers, &body),
                Reply::Truncated(body) => {
                    let head = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
                        body.len() + 500
                    );
                    let _ = out.write_all(head.as_bytes());
                    let _ = out.write_all(&body.as_bytes()[..body.len() / 2]);
                    let _ = out.flush();
                    false
                }
                Reply::Reset => {
                    let _ = out.shutdown(std::net::Shutdown::Both);
                    false
                }
            };
            self.answered.fetch_add(1, Ordering::SeqCst);
            if !keep {
                return;
            }
        }
    }
}

/// Binds a loopback port, makes the server from its URL, and serves each connection on its own
/// thread (also used by the Skills API and batch servers).
pub fn listen<S: Clone + Send + 'static>(
    make: impl FnOnce(String) -> S,
    serve: fn(&S, TcpStream),
) -> S {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let server = make(format!("http://{}", listener.local_addr().unwrap()));
    let s = server.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let s = s.clone();
            std::thread::spawn(move || serve(&s, stream));
        }
    });
    server
}

/// One HTTP/1.1 request as it came: method, path, headers and body bytes (also used by the
/// Skills API server).
pub struct RawRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// The value of a header, by case-insensitive name.
pub fn find_header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Reads the next request of a keep-alive connection; `None` at its end.
pub fn read_raw(r: &mut BufReader<TcpStream>) -> Option<RawRequest> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let path = words.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    let len: usize = find_header(&headers, "content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    Some(RawRequest {
        method,
        path,
        headers,
        body,
    })
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let raw = read_raw(r)?;
    Some(Request {
        path: raw.path,
        headers: raw.headers,
        body: serde_json::from_slice(&raw.body).unwrap_or(Value::Null),
    })
}

/// Writes one JSON response; false when the client is gone.
/// What the server sends back for one request.
enum Reply {
    /// A whole response: status, headers, body.
    Full(u16, Vec<(String, String)>, String),
    /// Half a body under a content-length that promises more, then the connection closes.
    Truncated(String),
    /// The connection is reset without a response.
    Reset,
}

pub fn respond(out: &mut TcpStream, code: u16, headers: &[(String, String)], body: &str) -> bool {
    let mut head = format!(
        "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    out.write_all(head.as_bytes()).is_ok()
        && out.write_all(body.as_bytes()).is_ok()
        && out.flush().is_ok()
}

/// The scripted answer, in the protocol the request came in.
pub fn answer(req: &Request, garbage: bool) -> Value {
    if req.stage() == "embeddings" {
        let inputs = req.body["input"].as_array().cloned().unwrap_or_default();
        let data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"index": i, "embedding": fake_vector(t.as_str().unwrap_or(""))}))
            .collect();
        return json!({"data": data, "model": req.body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}});
    }
    let text = if garbage {
        "I am not able to help with that.".to_string()
    } else {
        scripted(req)
    };
    let input_tokens = (req.system().len() + req.user().len()) / 4;
    if req.path.ends_with("/v1/messages") {
        json!({"id": "msg_1", "type": "message", "role": "assistant",
               "content": [{"type": "text", "text": text}],
               "usage": {"input_tokens": input_tokens, "output_tokens": 7}})
    } else {
        json!({"id": "c1", "object": "chat.completion",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": input_tokens, "completion_tokens": 7}})
    }
}

/// A summary chosen by a hash of the whole prompt among 64 sentences of plain words.
fn varied_summary(req: &Request) -> Value {
    let h = blake3::hash(req.user().as_bytes());
    let (a, b) = (h.as_bytes()[0] as usize % 8, h.as_bytes()[1] as usize % 8);
    let lead = [
        "Readers", "Users", "Teams", "Owners", "Admins", "Members", "Visitors", "Staff",
    ];
    let verb = [
        "find", "read", "see", "get", "learn", "check", "review", "use",
    ];
    let text = format!("{} {} the text about each topic here.", lead[a], verb[b]);
    let mut body = answer(req, false);
    body["choices"][0]["message"]["content"] = Value::String(text);
    body
}

/// Answers that depend only on the request: cards name the document's first line.
fn scripted(req: &Request) -> String {
    let user = req.user();
    match req.stage() {
        "card" => {
            let doc = user.split("<<<").nth(1).unwrap_or("").trim();
            let first = doc
                .lines()
                .next()
                .unwrap_or("untitled")
                .trim_start_matches('#')
                .trim();
            format!(
                "Here is the card:\n```json\n{}\n```",
                json!({"title": format!("Model: {first}"), "one_line": format!("Explains {first}."), "phrases": ["scripted phrase"]})
            )
        }
        "summary" => "Scripted summary of the group. It covers the members listed.".to_string(),
        // The last two words of the first member's title: words the label check finds in the members.
        "label" => first_title_words(&user, 2),
        "tags" => json!({"entities": ["Scripted Entity"], "doc_types": ["how-to"]}).to_string(),
        "repartition" => json!({"changes": []}).to_string(),
        "guided" | "guided_answer" => guided_reply(req),
        // The first document given, cited, and its first words as the answer.
        "rag" => {
            let key = user
                .split("<document key=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap_or("none");
            let body = user.split("<document ").nth(1).unwrap_or("");
            let text = body.split('>').nth(1).unwrap_or("").trim();
            let words: Vec<&str> = text.split_whitespace().take(6).collect();
            json!({"answer": format!("{} [{key}]", words.join(" ")), "cite": [key]}).to_string()
        }
        _ => "ok".into(),
    }
}

/// The last `n` words (of 4 letters or more, "Model" aside) of the first `- title` line of a
/// prompt.
fn first_title_words(user: &str, n: usize) -> String {
    let title = user
        .lines()
        .find(|l| l.starts_with("- "))
        .unwrap_or("- misc topic")
        .trim_start_matches("- ");
    let words: Vec<&str> = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4 && *w != "Model")
        .collect();
    words[words.len().saturating_sub(n)..]
        .join(" ")
        .to_lowercase()
}

/// A deterministic 8-dimensional vector from a text's bytes.
pub fn fake_vector(t: &str) -> Vec<f32> {
    let mut v = vec![0.1f32; 8];
    for (i, b) in t.bytes().enumerate() {
        v[(i + b as usize) % 8] += (b % 7) as f32;
    }
    v
}

/// A guided request must bind its reply to a schema whose choices are an enum; `Some`: the 400
/// that a schema-enforcing server gives a request without one.
fn guided_refusal(req: &Request) -> Option<Value> {
    if !req.stage().starts_with("guided") || req.path.ends_with("/v1/messages") {
        return None;
    }
    if guided_keys(&req.body).is_empty() {
        return Some(
            json!({"error": {"code": 400, "message": "guided request without a schema whose choices are an enum", "type": "invalid_request_error"}}),
        );
    }
    None
}

/// The enum of a guided request's schema: the menu's keys, or the shown documents' keys.
pub fn guided_keys(req: &Value) -> Vec<String> {
    let p = &req["response_format"]["json_schema"]["schema"]["properties"];
    p["pick"]["items"]["enum"]
        .as_array()
        .or(p["cite"]["items"]["enum"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// What a schema-bound model says unscripted: the menu's first key (the navigator's best), or
/// the first shown document's first words, cited.
fn guided_reply(req: &Request) -> String {
    let keys = guided_keys(&req.body);
    let first = keys.first().cloned().unwrap_or_default();
    if req.body["response_format"]["json_schema"]["schema"]["properties"]["pick"].is_object() {
        return json!({"reason": "It looks closest.", "pick": [first]}).to_string();
    }
    let user = req.user();
    let text = user
        .split("<document key=")
        .nth(1)
        .and_then(|d| d.split_once('>'))
        .map_or("", |x| x.1);
    let words: Vec<&str> = text.split_whitespace().take(8).collect();
    let mut r = json!({"reason": "The document says so.", "answer": format!("{} [{first}]", words.join(" ")), "cite": [first]});
    // The walk's last answer has no verdict to give.
    if req.body["response_format"]["json_schema"]["schema"]["properties"]["verdict"].is_object() {
        r["verdict"] = json!("answers");
    }
    r.to_string()
}
