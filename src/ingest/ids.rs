//! Document ids (sanitized record ids or a blake3 of the source path), uniqueness and content dedup.

use std::collections::{HashMap, HashSet};

/// Turns a record's own id into a safe, readable id: `[A-Za-z0-9._-]`, at most 128 chars.
/// Returns `None` when nothing usable is left.
pub fn sanitize_id(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut last_dash = false;
    for c in raw.trim().chars() {
        let ok = c.is_ascii_alphanumeric() || c == '.' || c == '_' || c == '-';
        if ok && !(c == '-' && last_dash) {
            out.push(c);
            last_dash = c == '-';
        } else if !ok && !last_dash {
            out.push('-');
            last_dash = true;
        }
    }
    let trimmed = out.trim_matches(|c| c == '-' || c == '.');
    let clipped: String = trimmed.chars().take(128).collect();
    (!clipped.is_empty()).then_some(clipped)
}

/// A 16-hex blake3 id of a source location (path, plus record position for multi-record files).
pub fn path_id(location: &str) -> String {
    blake3::hash(location.as_bytes()).to_hex()[..16].to_string()
}

/// Hands out unique ids: a repeated id gets `-2`, `-3`, ... appended.
#[derive(Default)]
pub struct IdAllocator {
    used: HashSet<String>,
    next_suffix: HashMap<String, usize>,
}

impl IdAllocator {
    /// Returns the id to use and whether it had to be changed.
    pub fn allocate(&mut self, wanted: &str) -> (String, bool) {
        if self.used.insert(wanted.to_string()) {
            return (wanted.to_string(), false);
        }
        let n = self.next_suffix.entry(wanted.to_string()).or_insert(2);
        loop {
            let candidate = format!("{wanted}-{n}");
            *n += 1;
            if self.used.insert(candidate.clone()) {
                return (candidate, true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitize_keeps_gold_ids() {
        assert_eq!(sanitize_id("section_12").as_deref(), Some("section_12"));
        let hex = "01e329b27ef95b8d6da00ab4ef5edde1b08837190925fefaaa23a1cbbc5bf855";
        assert_eq!(sanitize_id(hex).as_deref(), Some(hex));
        assert_eq!(sanitize_id("../etc/passwd").as_deref(), Some("etc-passwd"));
        assert_eq!(sanitize_id("a b  c").as_deref(), Some("a-b-c"));
        assert_eq!(sanitize_id("///"), None);
    }

    #[test]
    fn allocator_suffixes() {
        let mut a = IdAllocator::default();
        assert_eq!(a.allocate("x"), ("x".into(), false));
        assert_eq!(a.allocate("x"), ("x-2".into(), true));
        assert_eq!(a.allocate("x-2"), ("x-2-2".into(), true));
        assert_eq!(a.allocate("x"), ("x-3".into(), true));
    }
}
