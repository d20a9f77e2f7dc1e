//! `[output] host` and `[output.limits]`: the hosts that load skills, each a named set of
//! limits (skills per request, files and bytes per skill, tokens per file, description
//! characters), and per-limit overrides.

use serde::{Deserialize, Serialize};

use super::ConfigError;

/// Estimated characters (bytes of mostly-ASCII text) per token: how file sizes are turned into
/// tokens against `tokens_per_file`. English prose runs at about 4; code and other scripts lower,
/// so the estimate errs on the side of files being small.
pub const BYTES_PER_TOKEN: u64 = 4;

/// A host of skills.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Host {
    /// Every host below at once (the strictest limit of each): a default build can be copied,
    /// uploaded or published as it is.
    #[default]
    All,
    /// The Claude Skills API and claude.ai uploads.
    SkillsApi,
    /// Claude Code (`.claude/skills`).
    ClaudeCode,
    /// Plain files: no limit.
    Files,
}

/// Where the documents' text goes (`[output] documents`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DocumentsIn {
    /// In the skill folders: a file per document, or bundles when the host's files cap needs.
    #[default]
    InSkills,
    /// Only in `documents.json`: the skills hold the navigation pages, whose rows give each
    /// document's id, and an agent opens a document with `get_document` (`c2s mcp`,
    /// `c2s ask`), as the reference code serves them.
    ById,
}

impl DocumentsIn {
    pub fn is_in_skills(&self) -> bool {
        *self == DocumentsIn::InSkills
    }
}

/// The limits of a host; `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HostLimits {
    /// Top-level skills one request loads (the Skills API's `container.skills`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<usize>,
    /// Files in one skill upload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_per_skill: Option<usize>,
    /// Bytes of one skill upload, all files together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_per_skill: Option<u64>,
    /// Estimated tokens of one file (Claude Code's Read refuses longer files without an
    /// offset).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens_per_file: Option<u64>,
    /// Characters of a skill's `description` the host's listing keeps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description_chars: Option<usize>,
}

impl Host {
    /// The host's name as written in `c2s.toml`.
    pub fn name(self) -> &'static str {
        match self {
            Host::All => "all",
            Host::SkillsApi => "skills-api",
            Host::ClaudeCode => "claude-code",
            Host::Files => "files",
        }
    }

    /// What the host accepts: the Skills API and claude.ai take 8 skills per request, 200
    /// files and 30 MB per skill; Claude Code reads files of up to 10,000 tokens and lists
    /// 1,536 characters of a description.
    pub fn limits(self) -> HostLimits {
        let api = HostLimits {
            skills: Some(8),
            files_per_skill: Some(200),
            bytes_per_skill: Some(30_000_000),
            ..HostLimits::default()
        };
        let code = HostLimits {
            tokens_per_file: Some(10_000),
            description_chars: Some(1_536),
            ..HostLimits::default()
        };
        match self {
            Host::SkillsApi => api,
            Host::ClaudeCode => code,
            Host::All => HostLimits {
                tokens_per_file: code.tokens_per_file,
                description_chars: code.description_chars,
                ..api
            },
            Host::Files => HostLimits::default(),
        }
    }
}

impl HostLimits {
    /// `self` with each limit that `overrides` sets replaced.
    pub fn with(self, overrides: &HostLimits) -> HostLimits {
        HostLimits {
            skills: overrides.skills.or(self.skills),
            files_per_skill: overrides.files_per_skill.or(self.files_per_skill),
            bytes_per_skill: overrides.bytes_per_skill.or(self.bytes_per_skill),
            tokens_per_file: overrides.tokens_per_file.or(self.tokens_per_file),
            description_chars: overrides.description_chars.or(self.description_chars),
        }
    }

    /// Refuses a limit of zero (nothing would fit), naming the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let zero = [
            ("skills", self.skills.map(|v| v as u64)),
            ("files_per_skill", self.files_per_skill.map(|v| v as u64)),
            ("bytes_per_skill", self.bytes_per_skill),
            ("tokens_per_file", self.tokens_per_file),
            (
                "description_chars",
                self.description_chars.map(|v| v as u64),
            ),
        ]
        .into_iter()
        .find(|(_, v)| *v == Some(0));
        match zero {
            Some((field, _)) => Err(ConfigError::invalid(
                &format!("output.limits.{field}"),
                "must be at least 1 (leave it out to keep the host's limit)",
            )),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_is_the_strictest_of_every_host_and_overrides_win() {
        let all = Host::All.limits();
        assert_eq!(all.skills, Some(8));
        assert_eq!(all.files_per_skill, Some(200));
        assert_eq!(all.tokens_per_file, Some(10_000));
        assert_eq!(Host::Files.limits(), HostLimits::default());
        let o = HostLimits {
            files_per_skill: Some(500),
            ..HostLimits::default()
        };
        let l = Host::SkillsApi.limits().with(&o);
        assert_eq!(l.files_per_skill, Some(500));
        assert_eq!(l.bytes_per_skill, Some(30_000_000));
        let zero = HostLimits {
            skills: Some(0),
            ..HostLimits::default()
        };
        assert!(
            zero.validate()
                .unwrap_err()
                .to_string()
                .contains("output.limits.skills")
        );
    }
}
