//! What hosted skill platforms cap, measured on an output: the number of top-level skills, and
//! the files and bytes of each skill folder. Over a cap is a warning, never an error.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::format::split_skill;

/// Skills one Claude API request may load (`container.skills`).
pub const MAX_SKILLS_PER_REQUEST: usize = 8;
pub use crate::config::MAX_SKILL_BYTES;

/// One top-level skill folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillSize {
    pub name: String,
    pub files: usize,
    pub bytes: u64,
}

/// The figures, and a warning per cap exceeded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlatformReport {
    pub skills: usize,
    pub max_skills_per_request: usize,
    pub max_skill_bytes: u64,
    pub per_skill: Vec<SkillSize>,
    pub warnings: Vec<String>,
}

/// Measures an output from its file sizes (output path → bytes).
pub fn measure<'a>(sizes: impl IntoIterator<Item = (&'a str, u64)>) -> PlatformReport {
    let mut per: BTreeMap<&str, SkillSize> = BTreeMap::new();
    for (path, bytes) in sizes {
        if let Some((name, _)) = split_skill(path) {
            let s = per.entry(name).or_insert_with(|| SkillSize {
                name: name.to_string(),
                files: 0,
                bytes: 0,
            });
            s.files += 1;
            s.bytes += bytes;
        }
    }
    let per_skill: Vec<SkillSize> = per.into_values().collect();
    let mut warnings = Vec::new();
    if per_skill.len() > MAX_SKILLS_PER_REQUEST {
        warnings.push(format!(
            "{} top-level skills: one Claude API request loads at most {MAX_SKILLS_PER_REQUEST} (lower tree.K to fit)",
            per_skill.len()
        ));
    }
    for s in per_skill.iter().filter(|s| s.bytes > MAX_SKILL_BYTES) {
        warnings.push(format!(
            "skill {} is {} bytes in {} files: over the Claude Skills API's {} MiB per skill",
            s.name,
            s.bytes,
            s.files,
            MAX_SKILL_BYTES / (1024 * 1024)
        ));
    }
    PlatformReport {
        skills: per_skill.len(),
        max_skills_per_request: MAX_SKILLS_PER_REQUEST,
        max_skill_bytes: MAX_SKILL_BYTES,
        per_skill,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_skill_and_warns_over_caps() {
        let big = MAX_SKILL_BYTES + 1;
        let mut files: Vec<(String, u64)> = (0..9)
            .map(|i| (format!("skills/skill-0{i}-x/SKILL.md"), 10))
            .collect();
        files.push(("skills/skill-00-x/docs/a.md".into(), big));
        files.push(("documents.json".into(), 99));
        let r = measure(files.iter().map(|(p, b)| (p.as_str(), *b)));
        assert_eq!(r.skills, 9);
        assert_eq!(r.per_skill[0].files, 2);
        assert_eq!(r.per_skill[0].bytes, big + 10);
        assert_eq!(r.warnings.len(), 2, "{:?}", r.warnings);
    }
}
