//! What an LLM stage does with an item whose answers were unusable: the stand-in result,
//! memoized with the reason (so that an unchanged item is not asked again), and a warning
//! naming the item.

use crate::db::exec::{Json, Maybe, WarningSink};
use crate::diag::Warning;
use crate::error::BuildError;
use crate::llm::LlmError;

/// How one item is named when it falls back or fails.
pub struct Item<'a> {
    /// The file (or group) the warning names.
    pub file: &'a str,
    /// The warning's prefix, e.g. "card for `id`".
    pub what: &'a str,
    /// What happens instead, e.g. "using the extractive card (...)".
    pub instead: &'a str,
    /// The error's prefix when the backend failed for good.
    pub context: &'a str,
}

/// The model's result; or, when its answers were unusable, `fallback()`'s, memoized with why,
/// with a warning; or the build error.
pub fn or_fallback<T>(
    result: Result<T, LlmError>,
    item: Item,
    sink: &WarningSink,
    fallback: impl FnOnce() -> Result<T, LlmError>,
) -> Result<Maybe<Json<T>>, BuildError> {
    match result {
        Ok(v) => Ok(Maybe {
            value: Json(v),
            rejected: None,
        }),
        Err(LlmError::Unusable(why)) => {
            sink.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(Warning {
                    file: item.file.to_string(),
                    line: None,
                    message: format!(
                        "{}: {why}; {} (remembered: the next build asks again only with `--retry-rejected`)",
                        item.what, item.instead
                    ),
                });
            let v = fallback().map_err(|source| BuildError::LlmStage {
                context: item.context.to_string(),
                source,
            })?;
            Ok(Maybe {
                value: Json(v),
                rejected: Some(why),
            })
        }
        Err(LlmError::Pending) => Err(BuildError::Pending),
        Err(source) => Err(BuildError::LlmStage {
            context: item.context.to_string(),
            source,
        }),
    }
}
