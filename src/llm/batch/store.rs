//! What batch inference keeps in the memo: each submitted batch (`batch:<local id>` records:
//! provider id, its requests, state), per-request failure counts, and the answers themselves
//! (stage `batch_answer`, keyed by the request's memo key).

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};

use crate::db::cache::{CacheError, Key, Memo};
use crate::llm::wire::ChatAnswer;

/// The memo stage of batch answers.
pub const ANSWER_STAGE: &str = "batch_answer";
const PREFIX: &str = "batch:";
const FAILURES: &str = "batch-failures";

/// One batch as c2s submitted it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BatchRecord {
    /// `openai`, `anthropic`, or `export` (files written for an external runner).
    pub provider: String,
    /// c2s's own name for it (unique per memo).
    pub local: String,
    /// The provider's batch id, once created.
    pub id: Option<String>,
    /// OpenAI: the uploaded input file.
    pub input_file_id: Option<String>,
    /// Seconds since the Unix epoch.
    pub submitted: u64,
    /// `(custom_id, stage)` of every request.
    pub requests: Vec<(String, String)>,
    /// The provider's last word on it.
    pub status: String,
    pub done: u64,
    pub failed: u64,
    /// Its results were read into the memo (nothing more will come).
    pub collected: bool,
}

impl BatchRecord {
    /// Submitted (or being submitted) and not yet collected: its requests must not be sent again.
    pub fn outstanding(&self) -> bool {
        !self.collected && self.provider != "export"
    }
}

/// A request's failed batch attempts and the last reason.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub attempts: u32,
    pub last: String,
}

/// A stored answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    text: String,
    input_tokens: u64,
    output_tokens: u64,
}

/// The memo key of a `custom_id` (its hex), if it is one.
pub fn key_of(custom_id: &str) -> Option<Key> {
    blake3::Hash::from_hex(custom_id)
        .ok()
        .map(|h| *h.as_bytes())
}

/// The `custom_id` of a memo key.
pub fn custom_id(key: &Key) -> String {
    blake3::Hash::from_bytes(*key).to_hex().to_string()
}

pub fn save(memo: &Memo, rec: &BatchRecord) -> Result<(), CacheError> {
    let bytes = serde_json::to_vec(rec).expect("records serialize");
    memo.set_record(&format!("{PREFIX}{}", rec.local), &bytes)
}

/// Every batch record, oldest first.
pub fn all(memo: &Memo) -> Result<Vec<BatchRecord>, CacheError> {
    let mut out = Vec::new();
    for name in memo.record_names(PREFIX)? {
        if let Some(r) = memo
            .record(&name)?
            .and_then(|b| serde_json::from_slice::<BatchRecord>(&b).ok())
        {
            out.push(r);
        }
    }
    out.sort_by(|a, b| (a.submitted, &a.local).cmp(&(b.submitted, &b.local)));
    Ok(out)
}

/// Forgets every collected batch and the failure counts (after a complete build).
pub fn forget_collected(memo: &Memo) -> Result<(), CacheError> {
    for r in all(memo)? {
        if r.collected {
            memo.delete_record(&format!("{PREFIX}{}", r.local))?;
        }
    }
    memo.delete_record(FAILURES)
}

pub fn failures(memo: &Memo) -> Result<BTreeMap<String, Failure>, CacheError> {
    Ok(memo
        .record(FAILURES)?
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default())
}

pub fn save_failures(memo: &Memo, f: &BTreeMap<String, Failure>) -> Result<(), CacheError> {
    memo.set_record(
        FAILURES,
        &serde_json::to_vec(f).expect("failures serialize"),
    )
}

/// Commits answers in one transaction.
pub fn put_answers(memo: &Memo, answers: &[(Key, ChatAnswer)]) -> Result<(), CacheError> {
    let entries: Vec<(Key, Vec<u8>)> = answers
        .iter()
        .map(|(k, a)| {
            let s = Stored {
                text: a.text.clone(),
                input_tokens: a.input_tokens,
                output_tokens: a.output_tokens,
            };
            (*k, serde_json::to_vec(&s).expect("answers serialize"))
        })
        .collect();
    memo.put_many(ANSWER_STAGE, &entries)
}

/// The stored answer of a request.
pub fn answer(memo: &Memo, key: &Key) -> Result<Option<ChatAnswer>, CacheError> {
    Ok(memo
        .get_many(std::slice::from_ref(key))?
        .remove(key)
        .and_then(|b| serde_json::from_slice::<Stored>(&b).ok())
        .map(|s| ChatAnswer {
            text: s.text,
            input_tokens: s.input_tokens,
            output_tokens: s.output_tokens,
        }))
}

/// The answers `cache gc` must keep: those of batches still on record.
pub fn live_keys(memo: &Memo) -> Result<HashSet<Key>, CacheError> {
    Ok(all(memo)?
        .iter()
        .flat_map(|r| r.requests.iter().filter_map(|(id, _)| key_of(id)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_ids_round_trip_and_records_persist() {
        let k: Key = *blake3::hash(b"x").as_bytes();
        assert_eq!(key_of(&custom_id(&k)), Some(k));
        assert_eq!(key_of("zz"), None);
        let memo = Memo::in_memory().unwrap();
        let rec = BatchRecord {
            provider: "openai".into(),
            local: "1-a".into(),
            requests: vec![(custom_id(&k), "card".into())],
            ..Default::default()
        };
        save(&memo, &rec).unwrap();
        assert_eq!(all(&memo).unwrap(), vec![rec.clone()]);
        assert_eq!(live_keys(&memo).unwrap().len(), 1);
        let a = ChatAnswer {
            text: "t".into(),
            input_tokens: 1,
            output_tokens: 2,
        };
        put_answers(&memo, &[(k, a.clone())]).unwrap();
        assert_eq!(answer(&memo, &k).unwrap(), Some(a));
        forget_collected(&memo).unwrap();
        assert_eq!(all(&memo).unwrap().len(), 1, "an uncollected batch stays");
        save(
            &memo,
            &BatchRecord {
                collected: true,
                ..rec
            },
        )
        .unwrap();
        forget_collected(&memo).unwrap();
        assert!(all(&memo).unwrap().is_empty());
    }
}
