//! The grounding check of a final answer: the documents it cites (its `cite` list, `[id]` and
//! `` `id` `` in its text, or paths of document files), each resolved to a document id and
//! checked against the documents the agent opened.

use crate::serve::tools::Tools;

/// The citations of an answer, sorted into what the agent may and may not cite.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Citations {
    /// Opened documents the answer cites, in order.
    pub opened: Vec<String>,
    /// Documents the answer cites without having opened them.
    pub unopened: Vec<String>,
}

/// Sorts an answer's citations; candidates that name no document (`[1]`, `[note]`) are ignored.
pub fn citations(text: &str, cite: &[String], opened: &[String], tools: &Tools) -> Citations {
    let mut out = Citations::default();
    for c in cite.iter().map(String::as_str).chain(candidates(text)) {
        let Some(id) = tools.document_id(c) else {
            continue;
        };
        let list = if opened.contains(&id) {
            &mut out.opened
        } else {
            &mut out.unopened
        };
        if !list.contains(&id) {
            list.push(id);
        }
    }
    out
}

/// Words inside `[…]` (not a link's text) and `` `…` `` spans.
fn candidates(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (open, close) in [('[', ']'), ('`', '`')] {
        let mut rest = text;
        while let Some(a) = rest.find(open) {
            let after = &rest[a + open.len_utf8()..];
            let Some(b) = after.find(close) else { break };
            let inner = &after[..b];
            rest = &after[b + close.len_utf8()..];
            if open == '[' && rest.starts_with('(') {
                continue;
            }
            out.extend(
                inner
                    .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
                    .map(str::trim)
                    .filter(|w| !w.is_empty()),
            );
        }
    }
    out
}

/// What the model is told when its answer cites documents it never opened.
pub fn unopened_note(unopened: &[String], opened: &[String]) -> String {
    let opened = if opened.is_empty() {
        "none yet".to_string()
    } else {
        opened.join(", ")
    };
    format!(
        "Your answer cites {}, which you have not opened. Open a document (get_document) before citing it, or cite only documents you opened (opened so far: {opened}). Then answer again.",
        unopened.join(", ")
    )
}

/// What the model is told when its answer cites nothing it opened.
pub fn uncited_note(opened: &[String]) -> String {
    format!(
        "Your answer cites no document. Cite the opened documents that support it by id in square brackets (opened so far: {}), then answer again.",
        opened.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_skip_link_texts() {
        let c = candidates("Use [the guide](docs/x.md) or see [a1, b2] and `c3`.");
        assert_eq!(c, vec!["a1", "b2", "c3"]);
    }
}
