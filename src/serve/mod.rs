//! Serving a compiled tree: the offline navigator (beam search over the skill tree), the LLM
//! agent with its sandboxed tools, and the MCP server.

mod error;
pub use error::ServeError;
pub mod agent;
pub mod answer;
pub mod compiled;
pub mod guided;
pub mod http;
pub mod mcp;
pub mod navigator;
pub mod tools;
