//! What the hosts of skills cap, measured on an output against `[output] host`'s limits: the
//! number of top-level skills, the files and bytes of each skill folder, and the estimated
//! tokens of each file. Over a limit is a warning, never an error; only a corpus whose bytes no
//! packing can fit is refused, before the build.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::config::{BYTES_PER_TOKEN, DocumentsIn, Host, HostLimits};
use crate::format::split_skill;

/// Skills one Claude API request may load (`container.skills`).
pub const MAX_SKILLS_PER_REQUEST: usize = 8;

/// One top-level skill folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillSize {
    pub name: String,
    pub files: usize,
    pub bytes: u64,
}

/// The longest file of the skills, by estimated tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LongestFile {
    pub path: String,
    pub bytes: u64,
    pub tokens: u64,
}

/// The figures against the host's limits, and a warning per limit exceeded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlatformReport {
    /// `[output] host`.
    pub host: String,
    /// The limits measured against (the host's, with `[output.limits]` applied).
    pub limits: HostLimits,
    pub skills: usize,
    pub per_skill: Vec<SkillSize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub longest_file: Option<LongestFile>,
    /// Files of the skills over `tokens_per_file`.
    pub files_over_tokens: usize,
    pub warnings: Vec<String>,
}

/// Estimated tokens of a file of `bytes` bytes (`BYTES_PER_TOKEN`).
pub fn tokens(bytes: u64) -> u64 {
    bytes.div_ceil(BYTES_PER_TOKEN)
}

/// Measures an output from its file sizes (output path → bytes) against `host`'s `limits`:
/// the skill folders, which are what a host loads.
pub fn measure<'a>(
    sizes: impl IntoIterator<Item = (&'a str, u64)>,
    host: Host,
    limits: HostLimits,
    documents: DocumentsIn,
) -> PlatformReport {
    let mut per: BTreeMap<&str, SkillSize> = BTreeMap::new();
    let mut longest: Option<(&str, u64)> = None;
    let mut over = 0;
    for (path, bytes) in sizes {
        let Some((name, _)) = split_skill(path) else {
            continue;
        };
        let s = per.entry(name).or_insert_with(|| SkillSize {
            name: name.to_string(),
            files: 0,
            bytes: 0,
        });
        s.files += 1;
        s.bytes += bytes;
        if longest.is_none_or(|(p, b)| bytes > b || (bytes == b && path < p)) {
            longest = Some((path, bytes));
        }
        over += limits.tokens_per_file.is_some_and(|t| tokens(bytes) > t) as usize;
    }
    let per_skill: Vec<SkillSize> = per.into_values().collect();
    let longest_file = longest.map(|(path, bytes)| LongestFile {
        path: path.to_string(),
        bytes,
        tokens: tokens(bytes),
    });
    let warnings = warnings(
        &per_skill,
        longest_file.as_ref(),
        over,
        host,
        &limits,
        documents,
    );
    PlatformReport {
        host: host.name().to_string(),
        limits,
        skills: per_skill.len(),
        per_skill,
        longest_file,
        files_over_tokens: over,
        warnings,
    }
}

/// One warning per limit exceeded, naming the skill or file and what to do.
fn warnings(
    per_skill: &[SkillSize],
    longest: Option<&LongestFile>,
    over: usize,
    host: Host,
    limits: &HostLimits,
    documents: DocumentsIn,
) -> Vec<String> {
    let mut w = Vec::new();
    let host = format!("[output] host = \"{}\"", host.name());
    if let Some(max) = limits.skills.filter(|&m| per_skill.len() > m) {
        w.push(format!(
            "{} top-level skills: one Claude API request loads at most {max} (lower tree.K to fit; {host})",
            per_skill.len()
        ));
    }
    let not_uploaded =
        "or, if the output is not uploaded, set [output] host = \"claude-code\" or \"files\"";
    let (packed, by_id) = match documents {
        DocumentsIn::InSkills => (
            "its documents are already in bundles",
            "set [output] documents = \"by-id\" (the skills keep only navigation; agents open documents with get_document), ",
        ),
        DocumentsIn::ById => ("its documents are served by id", ""),
    };
    for s in per_skill {
        if let Some(max) = limits.files_per_skill.filter(|&m| s.files > m) {
            w.push(format!(
                "skill {} has {} files: the Claude Skills API and claude.ai accept at most {max} per skill ({host}), and {packed} with as many leaf groups folded into their parents' pages as the token limit allows: set a larger tree.p (fewer, bigger groups), {by_id}split the corpus into several outputs, {not_uploaded}",
                s.name, s.files
            ));
        }
        if let Some(max) = limits.bytes_per_skill.filter(|&m| s.bytes > m) {
            w.push(format!(
                "skill {} is {} bytes in {} files: the Claude Skills API and claude.ai accept at most {max} bytes per skill ({host}) (bundles hold the same bytes as document files): split the corpus into several outputs, {not_uploaded}",
                s.name, s.bytes, s.files
            ));
        }
    }
    if let (Some(max), Some(l)) = (limits.tokens_per_file, longest.filter(|_| over > 0)) {
        w.push(format!(
            "{over} files are longer than {max} tokens (estimated at {BYTES_PER_TOKEN} bytes a token; the longest, {}, about {}): Claude Code's Read tool refuses them without an offset ({host})",
            l.path, l.tokens
        ));
    }
    w
}

/// Bytes of one document's row on a navigation page (title, one-line, phrases, id), about: what
/// a skill holds per document when documents are served by id.
pub const ROW_BYTES: u64 = 200;

/// Refuses, before anything expensive, a corpus whose documents alone are more than the host's
/// skills can hold: every document's text is in some skill's files, or with
/// `documents = "by-id"` every document's row.
pub fn fits_the_host(
    documents: usize,
    bytes: u64,
    output: &crate::config::OutputConfig,
) -> Result<(), crate::error::BuildError> {
    let by_id = output.documents == DocumentsIn::ById;
    let (what, bytes, help) = if by_id {
        (
            "their rows on the navigation pages, about 200 bytes each",
            documents as u64 * ROW_BYTES,
            "split the corpus into several outputs, or set [output] host = \"claude-code\" or \"files\" if the output is not uploaded",
        )
    } else {
        (
            "their text",
            bytes,
            "set [output] documents = \"by-id\" to keep the documents out of the skill folders (agents open them by id with get_document, through `c2s mcp` or `c2s ask`), split the corpus into several outputs, or set [output] host = \"claude-code\" or \"files\" if the output is not uploaded",
        )
    };
    let limits = output.limits();
    // Files of at most the token limit bound a skill too, however its documents are packed.
    let by_files = limits
        .files_per_skill
        .zip(limits.tokens_per_file)
        .map(|(f, t)| f as u64 * t * crate::config::BYTES_PER_TOKEN);
    let (why, per_skill) = match (limits.bytes_per_skill, by_files) {
        (Some(b), Some(f)) if f < b => (
            format!(
                "{} files of at most {} tokens",
                limits.files_per_skill.unwrap_or_default(),
                limits.tokens_per_file.unwrap_or_default()
            ),
            f,
        ),
        (Some(b), _) => (format!("{b} bytes per upload"), b),
        (None, Some(f)) => (format!("files of at most {f} bytes in all"), f),
        (None, None) => return Ok(()),
    };
    let Some(skills) = limits.skills else {
        return Ok(());
    };
    let capacity = per_skill.saturating_mul(skills as u64);
    if bytes <= capacity {
        return Ok(());
    }
    Err(crate::error::BuildError::DoesNotFit(format!(
        "{documents} documents ({what}: {bytes} bytes) cannot fit [output] host = \"{}\": at most \
         {skills} skills of {per_skill} bytes each ({why}) hold {capacity} bytes; nothing was \
         built\n  help: {help}",
        output.host.name()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_skill_and_warns_over_each_limit() {
        let big = 30_000_001;
        let mut files: Vec<(String, u64)> = (0..9)
            .map(|i| (format!("skills/skill-0{i}-x/SKILL.md"), 10))
            .collect();
        files.push(("skills/skill-00-x/docs/a.md".into(), big));
        for i in 0..201 {
            files.push((format!("skills/skill-01-x/docs/{i}.md"), 100));
        }
        files.push(("documents.json".into(), 99_000_000));
        let sizes = || files.iter().map(|(p, b)| (p.as_str(), *b));
        let r = measure(
            sizes(),
            Host::All,
            Host::All.limits(),
            DocumentsIn::InSkills,
        );
        assert_eq!(r.skills, 9);
        assert_eq!(r.per_skill[0].files, 2);
        assert_eq!(r.per_skill[0].bytes, big + 10);
        assert_eq!(r.files_over_tokens, 1, "documents.json is not a skill file");
        let l = r.longest_file.as_ref().unwrap();
        assert_eq!(
            (l.path.as_str(), l.tokens),
            ("skills/skill-00-x/docs/a.md", 7_500_001)
        );
        assert_eq!(r.warnings.len(), 4, "{:#?}", r.warnings);
        assert!(
            r.warnings[1].contains("skill-00-x is 30000011 bytes"),
            "{}",
            r.warnings[1]
        );
        assert!(
            r.warnings[2].contains("skill-01-x has 202 files"),
            "{}",
            r.warnings[2]
        );
        let files_host = measure(
            sizes(),
            Host::Files,
            Host::Files.limits(),
            DocumentsIn::InSkills,
        );
        assert!(files_host.warnings.is_empty());
        let code = measure(
            sizes(),
            Host::ClaudeCode,
            Host::ClaudeCode.limits(),
            DocumentsIn::InSkills,
        );
        assert_eq!(
            code.warnings.len(),
            1,
            "only the token limit: {:?}",
            code.warnings
        );
    }
}
