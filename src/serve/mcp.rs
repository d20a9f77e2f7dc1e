//! `c2s mcp`: a Model Context Protocol server, built on `rmcp` (the protocol's official Rust
//! SDK), exposing the agent's sandboxed tools and the top-level skills as resources: on stdio
//! here, over streamable HTTP by `c2s mcp --http`. Each request answers from the output being
//! served when it arrived ([`Live`]), which HTTP's hot reload replaces between requests.
//!
//! The SDK owns the protocol: the `initialize` handshake and version negotiation, JSON-RPC
//! framing, `ping`, cancellation and the error codes for unknown methods. This module only maps
//! the output's tools ([`Tools`]) and skills onto it.

use std::path::Path;
use std::sync::{Arc, RwLock};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::ServeError;
use super::agent::top_skills;
use super::tools::{Tools, specs};

/// The scheme of the resources this server lists: `c2s://skills/<name>/SKILL.md`.
const URI_SCHEME: &str = "c2s://";

/// Serves the output at `out` on stdin/stdout until the client closes stdin.
pub fn serve(out: &Path) -> Result<(), ServeError> {
    let server = McpServer::open(out)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError::Mcp(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ServeError::Mcp(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| ServeError::Mcp(e.to_string()))?;
        Ok(())
    })
}

/// One output as served: its tools, and whatever must live as long as they do (over HTTP, the
/// private copy they read).
pub struct Served {
    pub tools: Tools,
    pub keep: Option<Box<dyn std::any::Any + Send + Sync>>,
}

/// The output being served now, shared by every session; [`Live::set`] switches to another one
/// atomically (a request holds the one it started on until it ends).
#[derive(Clone)]
pub struct Live(Arc<RwLock<Arc<Served>>>);

impl Live {
    pub fn new(served: Served) -> Live {
        Live(Arc::new(RwLock::new(Arc::new(served))))
    }

    /// The output to answer the next request from.
    pub fn get(&self) -> Arc<Served> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Serves `served` from the next request on.
    pub fn set(&self, served: Served) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(served);
    }
}

/// The server's state: the output served, and the tools' descriptions for `tools/list`.
#[derive(Clone)]
pub struct McpServer {
    live: Live,
    listed: Arc<Vec<Tool>>,
    /// Bytes of one tool result at most (over HTTP, `[serve] max_output_bytes`).
    max_output: Option<usize>,
}

impl McpServer {
    /// Opens the output at `out`.
    pub fn open(out: &Path) -> Result<Self, ServeError> {
        let tools = Tools::open(out).map_err(|e| ServeError::NotOutput {
            path: out.to_path_buf(),
            why: e.to_string(),
        })?;
        Ok(Self::over(Live::new(Served { tools, keep: None })))
    }

    /// A server answering from whatever `live` serves.
    pub fn over(live: Live) -> Self {
        Self {
            live,
            listed: Arc::new(tool_list()),
            max_output: None,
        }
    }

    /// Cuts every tool result to `bytes`, with a notice.
    pub fn with_max_output(mut self, bytes: usize) -> Self {
        self.max_output = Some(bytes.max(64));
        self
    }

    /// `tools/call`: a tool's failure (a refused path, a missing document) goes back to the
    /// model as a result with `isError`, the way the agent loop sees it. The tool runs off the
    /// async threads (a grep of a large output takes a while).
    async fn call(&self, params: CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let name = params.name.to_string();
        if !self.listed.iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {name}"),
                None,
            ));
        }
        let args = Value::Object(params.arguments.unwrap_or_default());
        let served = self.live.get();
        let result = tokio::task::spawn_blocking(move || served.tools.call(&name, &args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("the tool failed: {e}"), None))?;
        Ok(match result {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(self.capped(text))]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        })
    }

    /// `text` within the output cap, cut with a notice as the tools cut theirs.
    fn capped(&self, text: String) -> String {
        self.max_output
            .and_then(|max| super::tools::cut_to(&text, max))
            .unwrap_or(text)
    }

    /// `resources/list`: one resource per top-level skill.
    fn resources(&self) -> Vec<Resource> {
        top_skills(&self.live.get().tools)
            .into_iter()
            .map(|(name, description)| {
                Resource::new(format!("{URI_SCHEME}skills/{name}/SKILL.md"), name)
                    .with_description(description)
                    .with_mime_type("text/markdown")
            })
            .collect()
    }

    /// `resources/read`: any file the `cat` tool may read, by `c2s://<path>`.
    fn read(&self, uri: &str) -> Result<ReadResourceResult, ErrorData> {
        let Some(rel) = uri.strip_prefix(URI_SCHEME) else {
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown resource uri: {uri} (this server's resources start with {URI_SCHEME})"
                ),
                None,
            ));
        };
        let text =
            self.live.get().tools.cat(rel).map_err(|e| {
                ErrorData::resource_not_found(format!("resource not found: {e}"), None)
            })?;
        Ok(ReadResourceResult::new(vec![
            ResourceContents::text(text, uri).with_mime_type("text/markdown"),
        ]))
    }
}

/// The tools as MCP describes them; every one only reads the output.
fn tool_list() -> Vec<Tool> {
    specs()
        .into_iter()
        .map(|(name, description, schema)| {
            let Value::Object(schema) = schema else {
                unreachable!("every tool's parameters are a JSON object schema")
            };
            Tool::new(name, description, Arc::new(schema)).with_annotations(
                ToolAnnotations::new()
                    .read_only(true)
                    .destructive(false)
                    .idempotent(true)
                    .open_world(false),
            )
        })
        .collect()
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .build(),
        )
        .with_server_info(Implementation::new("c2s", env!("CARGO_PKG_VERSION")))
        .with_instructions(super::agent::instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request).await.map(Into::into)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.resources()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read(&request.uri).map(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_schema_is_an_object_and_read_only() {
        let tools = tool_list();
        assert_eq!(tools.len(), specs().len());
        for t in &tools {
            assert_eq!(t.input_schema.get("type"), Some(&Value::from("object")));
            assert_eq!(
                t.annotations.as_ref().and_then(|a| a.read_only_hint),
                Some(true)
            );
        }
    }

    #[test]
    fn a_folder_without_an_output_is_refused_before_serving() {
        let dir = tempfile::tempdir().unwrap();
        let err = McpServer::open(&dir.path().join("missing"))
            .err()
            .expect("no output there");
        assert!(
            err.to_string().contains("not a compiled c2s output"),
            "{err}"
        );
    }
}
