//! `c2s mcp`: a Model Context Protocol server on stdio, built on `rmcp` (the protocol's official
//! Rust SDK), exposing the agent's sandboxed tools and the top-level skills as resources.
//!
//! The SDK owns the protocol: the `initialize` handshake and version negotiation, JSON-RPC
//! framing, `ping`, cancellation and the error codes for unknown methods. This module only maps
//! the output's tools ([`Tools`]) and skills onto it.

use std::path::Path;
use std::sync::Arc;

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

/// The server's state: the tools bound to one output, and their descriptions for `tools/list`.
pub struct McpServer {
    tools: Tools,
    listed: Vec<Tool>,
}

impl McpServer {
    /// Opens the output at `out`.
    pub fn open(out: &Path) -> Result<Self, ServeError> {
        let tools = Tools::open(out).map_err(|e| ServeError::NotOutput {
            path: out.to_path_buf(),
            why: e.to_string(),
        })?;
        Ok(Self {
            tools,
            listed: tool_list(),
        })
    }

    /// `tools/call`: a tool's failure (a refused path, a missing document) goes back to the
    /// model as a result with `isError`, the way the agent loop sees it.
    fn call(&self, params: &CallToolRequestParams) -> Result<CallToolResult, ErrorData> {
        let name = params.name.as_ref();
        if !self.listed.iter().any(|t| t.name == name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool: {name}"),
                None,
            ));
        }
        let args = Value::Object(params.arguments.clone().unwrap_or_default());
        Ok(match self.tools.call(name, &args) {
            Ok(text) => CallToolResult::success(vec![ContentBlock::text(text)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(e.to_string())]),
        })
    }

    /// `resources/list`: one resource per top-level skill.
    fn resources(&self) -> Vec<Resource> {
        top_skills(&self.tools)
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
        let text = self
            .tools
            .cat(rel)
            .map_err(|e| ErrorData::resource_not_found(format!("resource not found: {e}"), None))?;
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
        Ok(ListToolsResult::with_all_items(self.listed.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(&request).map(Into::into)
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
