//! `ServeError`: what stops the serve phase (`ask`, `mcp`, `eval`): opening a compiled output,
//! embedding the question, the LLM agent, the MCP session.

use std::path::PathBuf;

/// Errors of the serve phase (`ask`, `mcp`, `eval`).
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The MCP session failed: the client's handshake was refused, or stdio broke (the client
    /// went away mid-message, a closed pipe).
    #[error("MCP server: {0}")]
    Mcp(String),
    #[error(
        "{path} is not a compiled c2s output: {why}\n  help: run `c2s build` first, or pass --out DIR naming the folder that holds c2s.lock"
    )]
    NotOutput { path: PathBuf, why: String },
    #[error(
        "{path}: {message}\n  help: rebuild the output with `c2s build` (the file was edited, or written by another c2s version)"
    )]
    Corrupt { path: PathBuf, message: String },
    /// `c2s mcp --http` cannot start: the address, the port or the token.
    #[error("{0}\n  help: {1}")]
    Http(String, String),
    #[error("{context} {path}: {source}")]
    Io {
        context: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// The LLM agent could not be set up, or failed on a question.
    #[error("LLM backend failed: {0}")]
    Agent(#[from] super::agent::AgentError),
    #[error("cannot embed the question the way {out} was built: {message}\n  help: {help}")]
    Embedder {
        out: PathBuf,
        message: String,
        help: String,
    },
}
