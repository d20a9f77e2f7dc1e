//! The Claude Skills API (`/v1/skills`, beta `skills-2025-10-02`) over the shared HTTP client:
//! create a skill from a folder's files (multipart `files[]`, each named by its path inside the
//! skill's top-level folder), add a version, list skills and versions, delete.

use serde_json::Value;

use crate::config::PublishConfig;
use crate::http::{Body, Client, Part};
use crate::publish::PublishError;

/// The beta the Skills API requires.
pub const SKILLS_BETA: &str = "skills-2025-10-02";
use crate::llm::wire::ANTHROPIC_VERSION;

/// One file of an upload: its path (`<skill folder>/<path inside>`) and bytes.
pub type UploadFile = (String, Vec<u8>);

/// A remote skill as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSkill {
    pub id: String,
    pub display_title: String,
}

/// A client of one Skills API root.
pub struct SkillsApi {
    client: Client,
    base: String,
}

impl SkillsApi {
    /// Opens the API: the key comes from `cfg.api_key_env` (an error names the variable).
    pub fn new(cfg: &PublishConfig) -> Result<SkillsApi, PublishError> {
        let client = Client::new(&cfg.limits, Some(&cfg.api_key_env))?;
        Ok(SkillsApi {
            client,
            base: base_url(cfg),
        })
    }

    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut h = vec![
            ("anthropic-version", ANTHROPIC_VERSION.to_string()),
            ("anthropic-beta", SKILLS_BETA.to_string()),
        ];
        if let Some(k) = self.client.key() {
            h.push(("x-api-key", k.to_string()));
        }
        h
    }

    fn call(&self, method: reqwest::Method, path: &str, body: Body) -> Result<Value, PublishError> {
        let url = format!("{}{path}", self.base);
        Ok(self.client.call(method, &url, &self.headers(), body)?)
    }

    /// `POST /v1/skills`: returns the new skill's id and version.
    pub fn create(
        &self,
        display_title: &str,
        files: &[UploadFile],
    ) -> Result<(String, String), PublishError> {
        let v = self.call(
            reqwest::Method::POST,
            "/v1/skills",
            multipart(Some(display_title), files),
        )?;
        Ok((field(&v, "id")?, field(&v, "latest_version")?))
    }

    /// `POST /v1/skills/{id}/versions`: returns the new version.
    pub fn new_version(&self, id: &str, files: &[UploadFile]) -> Result<String, PublishError> {
        let v = self.call(
            reqwest::Method::POST,
            &format!("/v1/skills/{id}/versions"),
            multipart(None, files),
        )?;
        field(&v, "version")
    }

    /// Every custom skill (`GET /v1/skills?source=custom`, all pages).
    pub fn list(&self) -> Result<Vec<RemoteSkill>, PublishError> {
        let mut out = Vec::new();
        let mut page: Option<String> = None;
        loop {
            let mut path = "/v1/skills?source=custom&limit=100".to_string();
            if let Some(p) = &page {
                path.push_str(&format!("&page={p}"));
            }
            let v = self.call(reqwest::Method::GET, &path, Body::None)?;
            for s in v["data"].as_array().into_iter().flatten() {
                out.push(RemoteSkill {
                    id: s["id"].as_str().unwrap_or_default().to_string(),
                    display_title: s["display_title"].as_str().unwrap_or_default().to_string(),
                });
            }
            page = v["next_page"].as_str().map(str::to_string);
            if !v["has_more"].as_bool().unwrap_or(false) || page.is_none() {
                return Ok(out);
            }
        }
    }

    /// Deletes a skill: its versions first, as the API requires, then the skill.
    pub fn delete(&self, id: &str) -> Result<(), PublishError> {
        let v = self.call(
            reqwest::Method::GET,
            &format!("/v1/skills/{id}/versions?limit=100"),
            Body::None,
        )?;
        for ver in v["data"].as_array().into_iter().flatten() {
            let version = ver["version"].as_str().unwrap_or_default();
            self.call(
                reqwest::Method::DELETE,
                &format!("/v1/skills/{id}/versions/{version}"),
                Body::None,
            )?;
        }
        self.call(
            reqwest::Method::DELETE,
            &format!("/v1/skills/{id}"),
            Body::None,
        )?;
        Ok(())
    }
}

/// The API root of the configuration.
pub fn base_url(cfg: &PublishConfig) -> String {
    cfg.base_url
        .as_deref()
        .unwrap_or("https://api.anthropic.com")
        .trim_end_matches('/')
        .to_string()
}

fn field(v: &Value, name: &str) -> Result<String, PublishError> {
    v[name]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| PublishError::Answer(format!("the answer has no `{name}`: {v}")))
}

/// A `multipart/form-data` body: `display_title` (when given), then one `files[]` part per file.
pub fn multipart<'a>(display_title: Option<&str>, files: &[UploadFile]) -> Body<'a> {
    let title = display_title.map(|t| Part {
        name: "display_title",
        file: None,
        bytes: t.as_bytes(),
    });
    let parts: Vec<Part> = title
        .into_iter()
        .chain(files.iter().map(|(name, bytes)| Part {
            name: "files[]",
            file: Some((name.as_str(), content_type(name))),
            bytes,
        }))
        .collect();
    crate::http::multipart(&parts)
}

fn content_type(name: &str) -> &'static str {
    if name.ends_with(".md") {
        "text/markdown"
    } else if name.ends_with(".json") {
        "application/json"
    } else {
        "application/octet-stream"
    }
}
