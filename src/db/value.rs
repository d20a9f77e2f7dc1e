//! What the memo stores: how a stage's results become bytes (JSON, or little-endian f32
//! vectors), stand-in results that are never stored, and the entries a build keeps for the
//! output's state file.

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::cache::Key;

/// How a result's memo bytes are written into the output's state file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The bytes are JSON.
    Json,
    /// The bytes are little-endian f32.
    F32,
}

/// One result a build used: its stage, memo key and memo bytes (what the state file keeps).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub stage: String,
    pub key: Key,
    pub form: Form,
    /// The stored bytes (shared with the record of used results they were read from).
    pub value: bytes::Bytes,
}

/// How a stage's results are stored in the memo.
pub trait MemoValue: Sized {
    /// How the bytes of [`MemoValue::encode`] are written into the state file.
    const FORM: Form;
    fn encode(&self) -> Vec<u8>;
    fn decode(bytes: &[u8]) -> Option<Self>;
    /// Why the model's answers for this result were rejected, when it is a stand-in: it is
    /// memoized with the reason (`db::cache`'s `rejected` table), so that a build with nothing
    /// changed does not ask again; `c2s build --retry-rejected` does.
    fn rejection(&self) -> Option<&str> {
        None
    }
}

/// A result that may be a stand-in: an LLM item whose answers were unusable falls back to the
/// extractive result, memoized with the reason its answers were rejected.
#[derive(Debug, Clone, PartialEq)]
pub struct Maybe<T> {
    pub value: T,
    pub rejected: Option<String>,
}

impl<T: MemoValue> MemoValue for Maybe<T> {
    const FORM: Form = T::FORM;
    fn encode(&self) -> Vec<u8> {
        self.value.encode()
    }
    fn decode(bytes: &[u8]) -> Option<Self> {
        T::decode(bytes).map(|value| Maybe {
            value,
            rejected: None,
        })
    }
    fn rejection(&self) -> Option<&str> {
        self.rejected.as_deref()
    }
}

/// JSON-stored values.
#[derive(Debug, Clone, PartialEq)]
pub struct Json<T>(pub T);

impl<T: Serialize + DeserializeOwned> MemoValue for Json<T> {
    const FORM: Form = Form::Json;
    fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(&self.0).expect("memo values serialize")
    }
    fn decode(bytes: &[u8]) -> Option<Self> {
        serde_json::from_slice(bytes).ok().map(Json)
    }
}

/// Vectors as little-endian f32.
impl MemoValue for Vec<f32> {
    const FORM: Form = Form::F32;
    fn encode(&self) -> Vec<u8> {
        self.iter().flat_map(|x| x.to_le_bytes()).collect()
    }
    fn decode(bytes: &[u8]) -> Option<Self> {
        bytes.len().is_multiple_of(4).then(|| {
            bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        })
    }
}
