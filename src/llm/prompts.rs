//! The method's prompts, compiled into the binary from `src/llm/prompts/*.txt`: each has a version
//! line, a system part and a user template; its hash goes into every memo key of its stage.

/// One prompt.
#[derive(Debug, Clone)]
pub struct Prompt {
    /// The file's name: `card`, `summary_leaf`, …
    pub name: &'static str,
    pub system: &'static str,
    pub user: &'static str,
    /// `name@vN:hash` of the whole file.
    pub id: String,
}

const FILES: [(&str, &str); 6] = [
    ("card", include_str!("prompts/card.txt")),
    ("summary_leaf", include_str!("prompts/summary_leaf.txt")),
    ("summary_higher", include_str!("prompts/summary_higher.txt")),
    ("label", include_str!("prompts/label.txt")),
    ("tags", include_str!("prompts/tags.txt")),
    ("repartition", include_str!("prompts/repartition.txt")),
];

/// The prompt of one name (`card`, `summary_leaf`, `summary_higher`, `label`, `tags`, `repartition`).
pub fn prompt(name: &str) -> Prompt {
    let (name, text) = FILES
        .iter()
        .find(|(n, _)| *n == name)
        .copied()
        .unwrap_or_else(|| panic!("no prompt named {name}"));
    parse(name, text)
}

/// The memo-key identity of a stage's prompts (the summary stage uses two).
pub fn stage_prompt_id(stage: &str) -> String {
    match stage {
        "summary" => format!(
            "{}+{}",
            prompt("summary_leaf").id,
            prompt("summary_higher").id
        ),
        other => prompt(other).id,
    }
}

fn parse(name: &'static str, text: &'static str) -> Prompt {
    let version = text
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("version:"))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or_else(|| panic!("prompt {name}: first line must be `version: N`"));
    let sys_at = text
        .find("--- system\n")
        .unwrap_or_else(|| panic!("prompt {name}: no `--- system` part"));
    let user_at = text
        .find("--- user\n")
        .unwrap_or_else(|| panic!("prompt {name}: no `--- user` part"));
    let system = text[sys_at + "--- system\n".len()..user_at].trim();
    let user = text[user_at + "--- user\n".len()..].trim();
    let hash = blake3::hash(text.as_bytes()).to_hex();
    Prompt {
        name,
        system,
        user,
        id: format!("{name}@v{version}:{}", &hash[..12]),
    }
}

/// Fills `{name}` placeholders.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = template.to_string();
    for (k, v) in values {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_parses_with_a_version_and_placeholders() {
        for (name, _) in FILES {
            let p = prompt(name);
            assert!(
                p.id.contains("@v")
                    && !p.id.contains("@v0:")
                    && !p.system.is_empty()
                    && p.user.contains('{'),
                "{name}"
            );
            assert!(p.id.starts_with(name));
        }
        assert!(stage_prompt_id("summary").contains("summary_higher@v2"));
        assert_eq!(fill("a {x} b", &[("x", "1")]), "a 1 b");
    }
}
