//! Results whose model answers an earlier build rejected: their stand-ins are in the memo with
//! the reason (`db::cache`'s `rejected` table). A build reuses them and says so; with
//! `--retry-rejected` it asks the model again.

use std::collections::HashMap;

use bytes::Bytes;

use crate::db::cache::Key;
use crate::diag::Warning;

/// The rejections the memo holds, and what this build does with them.
#[derive(Debug, Default)]
pub struct Earlier {
    /// Why each key's answers were rejected.
    pub by_key: HashMap<Key, String>,
    /// `--retry-rejected`: a rejected result is a miss, computed again.
    pub retry: bool,
    /// The stand-ins this build reused, one warning each.
    pub reused: Vec<Warning>,
}

impl Earlier {
    /// Screens a stage's lookups: a stand-in found for a rejected key is dropped (a miss) when
    /// retrying, and otherwise noted as reused. `subject` names item `i`.
    pub fn screen(
        &mut self,
        stage: &str,
        keys: &[Key],
        found: &mut [Option<Bytes>],
        subject: impl Fn(usize) -> String,
    ) {
        if self.by_key.is_empty() {
            return;
        }
        for (i, (k, f)) in keys.iter().zip(found.iter_mut()).enumerate() {
            let Some(why) = self.by_key.get(k) else {
                continue;
            };
            if f.is_none() {
                continue;
            }
            if self.retry {
                *f = None;
                continue;
            }
            let why = why.clone();
            self.note(stage, subject(i), &why);
        }
    }

    /// Notes a stand-in this build reused, with a warning.
    pub fn note(&mut self, stage: &str, subject: String, why: &str) {
        self.reused.push(Warning {
            file: subject,
            line: None,
            message: format!(
                "{stage}: the model's answers were rejected by an earlier build ({why}); its stand-in is used again (`c2s build --retry-rejected` asks the model again)"
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rejected_key_is_reused_and_noted_or_dropped_when_retrying() {
        let keys = [[1u8; 32], [2u8; 32]];
        let stored = || {
            vec![
                Some(Bytes::from_static(b"a")),
                Some(Bytes::from_static(b"b")),
            ]
        };
        let mut e = Earlier::default();
        e.by_key.insert([2u8; 32], "no JSON".into());
        let mut found = stored();
        e.screen("label", &keys, &mut found, |i| format!("group {i}"));
        assert!(found.iter().all(Option::is_some));
        assert_eq!(e.reused.len(), 1);
        assert_eq!(e.reused[0].file, "group 1");
        assert!(e.reused[0].message.contains("no JSON"));
        e.retry = true;
        let mut found = stored();
        e.screen("label", &keys, &mut found, |i| format!("group {i}"));
        assert!(found[0].is_some() && found[1].is_none());
    }
}
