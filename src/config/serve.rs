//! `[serve]`: how `c2s mcp --http` serves a team: where the bearer token is read from and the
//! limits that keep one client from taking the server (serve phase; not part of the output's
//! hash).

use serde::{Deserialize, Serialize};

/// `[serve]`: the HTTP server of `c2s mcp --http` and `c2s watch --serve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServeConfig {
    /// Name of the environment variable that holds the bearer token every request must carry
    /// (never the token itself). Unset: no token, allowed only on a loopback address.
    pub token_env: Option<String>,
    /// Bytes of one request body; a larger one is answered 413.
    pub max_body_bytes: usize,
    /// Bytes of one tool result (after the tools' own caps: 16 KiB for `cat`); a longer one is
    /// cut with a notice saying how much was shown.
    pub max_output_bytes: usize,
    /// MCP sessions open at once; a new one past it is answered 503.
    pub max_sessions: usize,
    /// Requests one session (or, without a session, one client address) may make per second,
    /// on average; past it, 429. Bursts of up to twice this are allowed.
    pub requests_per_second: f64,
    /// Seconds a client may take to send a request's headers and body; a slower one is
    /// answered 408 and its connection closed.
    pub read_timeout_s: u64,
    /// Host names (with or without `:port`) a request's `Host` header may carry besides the
    /// loopback names and the address served on (a guard against DNS rebinding); add the name
    /// a team's URL uses.
    pub allowed_hosts: Vec<String>,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            token_env: None,
            max_body_bytes: 1 << 20,
            max_output_bytes: 32 * 1024,
            max_sessions: 256,
            requests_per_second: 50.0,
            read_timeout_s: 10,
            allowed_hosts: Vec::new(),
        }
    }
}
