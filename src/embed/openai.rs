//! The `openai` embedder: any OpenAI-compatible `/v1/embeddings` server (OpenAI, vLLM, TEI,
//! Ollama, llama.cpp `--embeddings`), batched under count and size caps, over the shared client.

use serde_json::{Value, json};

use super::{EmbedError, Embedder};
use crate::config::OpenAiEmbedConfig;
use crate::http::Client;

/// An embeddings endpoint.
pub struct OpenAiEmbed {
    client: Client,
    url: String,
    model: String,
    dims: Option<usize>,
    cfg: OpenAiEmbedConfig,
    seen_dims: std::sync::OnceLock<usize>,
}

impl OpenAiEmbed {
    pub fn new(cfg: &OpenAiEmbedConfig, dims: Option<usize>) -> Result<OpenAiEmbed, EmbedError> {
        let base = cfg
            .base_url
            .as_deref()
            .unwrap_or_default()
            .trim_end_matches('/');
        let client = Client::new(&cfg.limits, cfg.api_key_env.as_deref())
            .map_err(|e| EmbedError::Backend(e.to_string()))?;
        Ok(OpenAiEmbed {
            client,
            url: format!("{base}/embeddings"),
            model: cfg.model.clone().unwrap_or_default(),
            dims,
            cfg: cfg.clone(),
            seen_dims: std::sync::OnceLock::new(),
        })
    }

    /// Splits texts into requests under `batch_size` texts and `max_batch_chars` characters.
    fn requests<'a>(&self, texts: &'a [&'a str]) -> Vec<&'a [&'a str]> {
        let mut out = Vec::new();
        let mut start = 0;
        let mut chars = 0;
        for (i, t) in texts.iter().enumerate() {
            let n = t.len();
            if i > start
                && (i - start >= self.cfg.batch_size || chars + n > self.cfg.max_batch_chars)
            {
                out.push(&texts[start..i]);
                start = i;
                chars = 0;
            }
            chars += n;
        }
        if start < texts.len() {
            out.push(&texts[start..]);
        }
        out
    }

    fn call(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut body = json!({ "model": self.model, "input": texts });
        if let Some(d) = self.dims {
            body["dimensions"] = json!(d);
        }
        for (k, v) in &self.cfg.params {
            body[k] = serde_json::to_value(v).unwrap_or(Value::Null);
        }
        let headers: Vec<(&str, String)> = self
            .client
            .key()
            .map(|k| vec![("authorization", format!("Bearer {k}"))])
            .unwrap_or_default();
        let est = texts.iter().map(|t| t.len() as u64 / 4 + 1).sum();
        let answer = self
            .client
            .post_json(&self.url, &headers, &body, est)
            .map_err(|e| EmbedError::Backend(e.to_string()))?;
        parse_embeddings(&answer.body, texts.len())
            .map_err(|m| EmbedError::Backend(format!("{}: {m}", self.url)))
    }
}

/// Reads `data[].embedding` in `index` order; checks the count and that every vector has one size.
pub fn parse_embeddings(body: &Value, expected: usize) -> Result<Vec<Vec<f32>>, String> {
    let data = body
        .get("data")
        .and_then(Value::as_array)
        .ok_or("the answer has no `data` array")?;
    let mut rows: Vec<(usize, Vec<f32>)> = Vec::with_capacity(data.len());
    for (pos, item) in data.iter().enumerate() {
        let index = item
            .get("index")
            .and_then(Value::as_u64)
            .map_or(pos, |i| i as usize);
        let v: Vec<f32> = item
            .get("embedding")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                format!("data[{pos}] has no `embedding` array (base64 answers are not supported)")
            })?
            .iter()
            .map(|x| x.as_f64().map(|f| f as f32))
            .collect::<Option<_>>()
            .ok_or_else(|| format!("data[{pos}].embedding holds a non-number"))?;
        rows.push((index, v));
    }
    rows.sort_by_key(|(i, _)| *i);
    if rows.len() != expected || rows.iter().enumerate().any(|(i, (j, _))| i != *j) {
        return Err(format!(
            "asked for {expected} embeddings, got {} (indices must be 0..{expected})",
            rows.len()
        ));
    }
    let dims = rows.first().map_or(0, |(_, v)| v.len());
    if dims == 0 || rows.iter().any(|(_, v)| v.len() != dims) {
        return Err("the vectors in one answer differ in length (or are empty)".into());
    }
    Ok(rows
        .into_iter()
        .map(|(_, mut v)| {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            if n > 0.0 {
                v.iter_mut().for_each(|x| *x /= n);
            }
            v
        })
        .collect())
}

impl Embedder for OpenAiEmbed {
    fn model_id(&self) -> String {
        let dims = self
            .dims
            .map_or_else(|| "native".to_string(), |d| d.to_string());
        let params = serde_json::to_string(&self.cfg.params).unwrap_or_default();
        format!("openai:{}:{dims}:{params}", self.model)
    }

    fn dims(&self) -> usize {
        if let Some(&d) = self.seen_dims.get() {
            return d;
        }
        self.embed(&["dimension probe"])
            .ok()
            .and_then(|v| v.first().map(Vec::len))
            .unwrap_or(0)
    }

    fn batch_size(&self) -> usize {
        self.cfg.batch_size
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for req in self.requests(texts) {
            out.extend(self.call(req)?);
        }
        if let Some(first) = out.first() {
            let d = *self.seen_dims.get_or_init(|| first.len());
            if first.len() != d {
                return Err(EmbedError::Backend(format!(
                    "{} changed vector size from {d} to {} between requests",
                    self.url,
                    first.len()
                )));
            }
        }
        Ok(out)
    }

    fn device(&self) -> String {
        self.url.clone()
    }

    fn concurrency(&self) -> usize {
        self.client.concurrency()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_orders_by_index_and_normalizes() {
        let body = json!({"data": [
            {"index": 1, "embedding": [0.0, 2.0]},
            {"index": 0, "embedding": [3.0, 4.0]}
        ]});
        let v = parse_embeddings(&body, 2).unwrap();
        assert_eq!(v[0], vec![0.6, 0.8]);
        assert_eq!(v[1], vec![0.0, 1.0]);
        assert!(parse_embeddings(&body, 3).is_err());
        let ragged = json!({"data": [{"embedding": [1.0]}, {"embedding": [1.0, 2.0]}]});
        assert!(parse_embeddings(&ragged, 2).unwrap_err().contains("differ"));
        assert!(parse_embeddings(&json!({"nope": 1}), 1).is_err());
    }
}
