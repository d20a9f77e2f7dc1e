//! Build diagnostics: warnings that name the file (and line) and say what happened.

use serde::Serialize;

/// One warning about one input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Warning {
    /// The file it concerns, as shown to the user (relative where possible).
    pub file: String,
    /// 1-based line for line-oriented formats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Collects warnings in the order they were found.
#[derive(Debug, Default)]
pub struct Diagnostics {
    pub warnings: Vec<Warning>,
}

impl Diagnostics {
    pub fn warn(
        &mut self,
        file: impl Into<String>,
        line: Option<usize>,
        message: impl Into<String>,
    ) {
        self.warnings.push(Warning {
            file: file.into(),
            line,
            message: message.into(),
        });
    }
}
