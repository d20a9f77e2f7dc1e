//! What every networked backend section shares: the `limits` of one HTTP endpoint, and the
//! checks of its settings.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Limits of one HTTP endpoint: concurrency, rate, timeouts and retries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Requests in flight at once.
    pub concurrency: usize,
    /// Seconds before one request is abandoned (and retried).
    pub timeout_s: f64,
    /// Retries after the first attempt, for 429, 529, 5xx, timeouts and dropped connections.
    pub max_retries: u32,
    /// First backoff in seconds; doubles per retry, with jitter, capped at `max_backoff_s`.
    pub backoff_s: f64,
    pub max_backoff_s: f64,
    /// Optional requests-per-minute cap.
    pub requests_per_minute: Option<u32>,
    /// Optional tokens-per-minute cap (input estimate plus the output budget).
    pub tokens_per_minute: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            concurrency: 20,
            timeout_s: 120.0,
            max_retries: 6,
            backoff_s: 1.0,
            max_backoff_s: 60.0,
            requests_per_minute: None,
            tokens_per_minute: None,
        }
    }
}

pub(super) fn need(v: &Option<String>, field: &str, example: &str) -> Result<(), ConfigError> {
    match v {
        Some(s) if !s.trim().is_empty() => Ok(()),
        _ => Err(ConfigError::invalid(
            field,
            &format!("must be set for this backend (e.g. {field} = \"{example}\")"),
        )),
    }
}

pub(super) fn check_limits(field: &str, l: &Limits) -> Result<(), ConfigError> {
    if l.concurrency < 1 || l.concurrency > 1024 {
        return Err(ConfigError::invalid(
            &format!("{field}.concurrency"),
            "must be between 1 and 1024",
        ));
    }
    if l.timeout_s.is_nan() || l.timeout_s <= 0.0 {
        return Err(ConfigError::invalid(
            &format!("{field}.timeout_s"),
            "must be positive",
        ));
    }
    if l.backoff_s.is_nan() || l.backoff_s < 0.0 || l.max_backoff_s < l.backoff_s {
        return Err(ConfigError::invalid(
            &format!("{field}.backoff_s"),
            "must be ≥ 0 and ≤ max_backoff_s",
        ));
    }
    if l.requests_per_minute == Some(0) || l.tokens_per_minute == Some(0) {
        return Err(ConfigError::invalid(
            field,
            "requests_per_minute and tokens_per_minute must be positive when set",
        ));
    }
    Ok(())
}
