//! `c2s mcp`: a Model Context Protocol server over stdio (JSON-RPC 2.0, one message per line,
//! protocol version 2025-06-18) exposing the agent's tools and the top-level skills as resources.

use std::io::{BufRead, Write};
use std::path::Path;

use serde_json::{Value, json};

use super::agent::top_skills;
use super::tools::{Tools, specs};

/// The protocol version this server speaks.
pub const PROTOCOL_VERSION: &str = "2025-06-18";

/// Serves until stdin closes.
pub fn serve(out: &Path, input: impl BufRead, mut output: impl Write) -> Result<(), String> {
    let tools = Tools::open(out).map_err(|e| e.to_string())?;
    let server = Server { tools };
    for line in input.lines() {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = server.handle(&line) {
            writeln!(output, "{reply}").map_err(|e| format!("stdout: {e}"))?;
            output.flush().map_err(|e| format!("stdout: {e}"))?;
        }
    }
    Ok(())
}

struct Server {
    tools: Tools,
}

impl Server {
    /// One incoming line; `None` for notifications.
    fn handle(&self, line: &str) -> Option<Value> {
        let msg: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => return Some(error(Value::Null, -32700, &format!("parse error: {e}"))),
        };
        let id = msg.get("id").cloned();
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let id = id?; // notifications (no id) get no reply
        let params = msg.get("params").cloned().unwrap_or(json!({}));
        Some(match method {
            "initialize" => ok(id, self.initialize()),
            "ping" => ok(id, json!({})),
            "tools/list" => ok(id, tools_list()),
            "tools/call" => self.tools_call(id, &params),
            "resources/list" => ok(id, self.resources_list()),
            "resources/read" => self.resources_read(id, &params),
            other => error(id, -32601, &format!("method not found: {other}")),
        })
    }

    fn initialize(&self) -> Value {
        json!({
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"tools": {"listChanged": false}, "resources": {"listChanged": false}},
            "serverInfo": {"name": "c2s", "version": env!("CARGO_PKG_VERSION")},
            "instructions": super::agent::SYSTEM_PROMPT,
        })
    }

    fn tools_call(&self, id: Value, params: &Value) -> Value {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return error(id, -32602, "tools/call needs `name`");
        };
        if !specs().iter().any(|(n, _, _)| *n == name) {
            return error(id, -32602, &format!("unknown tool: {name}"));
        }
        let args = params.get("arguments").cloned().unwrap_or(json!({}));
        let (text, is_error) = match self.tools.call(name, &args) {
            Ok(t) => (t, false),
            Err(e) => (e.to_string(), true),
        };
        ok(
            id,
            json!({"content": [{"type": "text", "text": text}], "isError": is_error}),
        )
    }

    fn resources_list(&self) -> Value {
        let resources: Vec<Value> = top_skills(&self.tools)
            .into_iter()
            .map(|(name, desc)| {
                json!({"uri": format!("c2s://skills/{name}/SKILL.md"), "name": name,
                       "description": desc, "mimeType": "text/markdown"})
            })
            .collect();
        json!({"resources": resources})
    }

    fn resources_read(&self, id: Value, params: &Value) -> Value {
        let uri = params.get("uri").and_then(Value::as_str).unwrap_or("");
        let Some(rel) = uri.strip_prefix("c2s://") else {
            return error(id, -32602, &format!("unknown resource uri: {uri}"));
        };
        match self.tools.cat(rel) {
            Ok(text) => ok(
                id,
                json!({"contents": [{"uri": uri, "mimeType": "text/markdown", "text": text}]}),
            ),
            Err(e) => error(id, -32002, &format!("resource not found: {e}")),
        }
    }
}

fn tools_list() -> Value {
    let tools: Vec<Value> = specs()
        .into_iter()
        .map(|(n, d, p)| json!({"name": n, "description": d, "inputSchema": p}))
        .collect();
    json!({"tools": tools})
}

fn ok(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
