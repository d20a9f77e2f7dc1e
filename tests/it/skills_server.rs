//! A loopback HTTP/1.1 server that speaks the Claude Skills API (create, versions, list,
//! delete, multipart `files[]` uploads) with the real rules (at most 200 files and 30 MB per
//! upload, one top-level folder holding a SKILL.md, versions deleted before their skill, an upload size cap answered with 413) and
//! injected 429s with `Retry-After`. Records every request.

use std::collections::BTreeMap;
use std::io::BufReader;
use std::net::TcpStream;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::llm_server::{find_header, listen, read_raw, respond};

/// One request as received (uploads parsed).
#[derive(Debug, Clone)]
pub struct Call {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// `files[]` parts: (file name, bytes).
    pub files: Vec<(String, Vec<u8>)>,
    pub display_title: Option<String>,
}

impl Call {
    pub fn header(&self, name: &str) -> Option<&str> {
        find_header(&self.headers, name)
    }
}

/// A skill held by the server.
#[derive(Debug, Clone)]
pub struct Skill {
    pub display_title: String,
    /// Versions, oldest first: (version, file names).
    pub versions: Vec<(String, Vec<String>)>,
}

#[derive(Default)]
struct State {
    calls: Vec<Call>,
    skills: BTreeMap<String, Skill>,
    next: u64,
    /// 429s (with `Retry-After: 1`) still to answer.
    throttle: usize,
    /// Bodies larger than this get 413.
    max_body: usize,
    /// Wait before answering an upload.
    delay: std::time::Duration,
}

#[derive(Clone)]
pub struct SkillsServer {
    pub url: String,
    pub key: String,
    state: Arc<Mutex<State>>,
}

impl SkillsServer {
    pub fn start(key: &str) -> SkillsServer {
        listen(
            |url| SkillsServer {
                url,
                key: key.to_string(),
                state: Arc::new(Mutex::new(State {
                    max_body: 8 * 1024 * 1024,
                    next: 1_759_178_010_641_129,
                    ..State::default()
                })),
            },
            SkillsServer::serve,
        )
    }

    pub fn calls(&self) -> Vec<Call> {
        self.state.lock().unwrap().calls.clone()
    }

    pub fn skills(&self) -> BTreeMap<String, Skill> {
        self.state.lock().unwrap().skills.clone()
    }

    /// The next `n` requests are answered 429 with `Retry-After: 1`.
    pub fn throttle(&self, n: usize) {
        self.state.lock().unwrap().throttle = n;
    }

    pub fn set_delay(&self, d: std::time::Duration) {
        self.state.lock().unwrap().delay = d;
    }

    pub fn set_max_body(&self, bytes: usize) {
        self.state.lock().unwrap().max_body = bytes;
    }

    fn serve(&self, stream: TcpStream) {
        let _ = stream.set_nodelay(true);
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut out = stream;
        while let Some((call, len)) = read_call(&mut reader) {
            let (code, headers, body) = self.answer(call, len);
            if !respond(&mut out, code, &headers, &body) {
                return;
            }
        }
    }

    fn answer(&self, call: Call, len: usize) -> (u16, Vec<(String, String)>, String) {
        let delay = self.state.lock().unwrap().delay;
        if call.method == "POST" {
            std::thread::sleep(delay);
        }
        let mut st = self.state.lock().unwrap();
        st.calls.push(call.clone());
        let err = |code: u16, msg: &str| {
            (
                code,
                Vec::new(),
                json!({"type": "error", "error": {"type": "invalid_request_error", "message": msg}})
                    .to_string(),
            )
        };
        if st.throttle > 0 {
            st.throttle -= 1;
            return (
                429,
                vec![("retry-after".into(), "1".into())],
                json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}})
                    .to_string(),
            );
        }
        if call.header("x-api-key") != Some(self.key.as_str()) {
            return err(401, "invalid x-api-key");
        }
        if !call
            .header("anthropic-beta")
            .is_some_and(|b| b.contains("skills-2025-10-02"))
        {
            return err(
                400,
                "the Skills API needs the anthropic-beta: skills-2025-10-02 header",
            );
        }
        if len > st.max_body {
            return err(413, "request too large");
        }
        let parts: Vec<&str> = call
            .path
            .split('?')
            .next()
            .unwrap()
            .trim_start_matches('/')
            .split('/')
            .collect();
        match (call.method.as_str(), parts.as_slice()) {
            ("POST", ["v1", "skills"]) => {
                if let Err(m) = check_upload(&call.files) {
                    return err(400, &m);
                }
                st.next += 1;
                let (id, version) = (
                    format!("skill_{:04}", st.skills.len() + 1),
                    st.next.to_string(),
                );
                let title = call.display_title.clone().unwrap_or_default();
                let names = call.files.iter().map(|f| f.0.clone()).collect();
                st.skills.insert(
                    id.clone(),
                    Skill {
                        display_title: title.clone(),
                        versions: vec![(version.clone(), names)],
                    },
                );
                (
                    200,
                    Vec::new(),
                    json!({"id": id, "type": "skill", "source": "custom", "display_title": title, "latest_version": version}).to_string(),
                )
            }
            ("POST", ["v1", "skills", id, "versions"]) => {
                if let Err(m) = check_upload(&call.files) {
                    return err(400, &m);
                }
                st.next += 1;
                let version = st.next.to_string();
                let Some(skill) = st.skills.get_mut(*id) else {
                    return err(404, "no such skill");
                };
                skill.versions.push((
                    version.clone(),
                    call.files.iter().map(|f| f.0.clone()).collect(),
                ));
                (
                    200,
                    Vec::new(),
                    json!({"id": format!("skillver_{version}"), "type": "skill_version", "skill_id": id, "version": version}).to_string(),
                )
            }
            ("GET", ["v1", "skills"]) => {
                // Two skills a page, to exercise pagination.
                let page: usize = call
                    .path
                    .split("page=")
                    .nth(1)
                    .and_then(|p| p.split('&').next())
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(0);
                let all: Vec<(&String, &Skill)> = st.skills.iter().collect();
                let data: Vec<Value> = all
                    .iter()
                    .skip(page * 2)
                    .take(2)
                    .map(|(id, s)| json!({"id": id, "display_title": s.display_title, "source": "custom"}))
                    .collect();
                let more = all.len() > (page + 1) * 2;
                (
                    200,
                    Vec::new(),
                    json!({"data": data, "has_more": more, "next_page": if more { Value::from((page + 1).to_string()) } else { Value::Null }}).to_string(),
                )
            }
            ("GET", ["v1", "skills", id, "versions"]) => match st.skills.get(*id) {
                Some(s) => {
                    let data: Vec<Value> = s
                        .versions
                        .iter()
                        .map(|(v, _)| json!({"version": v, "skill_id": id}))
                        .collect();
                    (
                        200,
                        Vec::new(),
                        json!({"data": data, "has_more": false}).to_string(),
                    )
                }
                None => err(404, "no such skill"),
            },
            ("DELETE", ["v1", "skills", id, "versions", v]) => match st.skills.get_mut(*id) {
                Some(s) => {
                    s.versions.retain(|(x, _)| x != v);
                    (
                        200,
                        Vec::new(),
                        json!({"id": v, "type": "skill_version_deleted"}).to_string(),
                    )
                }
                None => err(404, "no such skill"),
            },
            ("DELETE", ["v1", "skills", id]) => match st.skills.get(*id) {
                Some(s) if !s.versions.is_empty() => {
                    err(400, "delete every version of the skill before the skill")
                }
                Some(_) => {
                    st.skills.remove(*id);
                    (
                        200,
                        Vec::new(),
                        json!({"id": id, "type": "skill_deleted"}).to_string(),
                    )
                }
                None => err(404, "no such skill"),
            },
            _ => err(404, "unknown endpoint"),
        }
    }
}

/// Files and bytes one skill upload may hold (the Skills API's and claude.ai's limits).
pub const MAX_FILES: usize = 200;
pub const MAX_BYTES: usize = 30_000_000;

/// The API's rules: at most 200 files and 30 MB, every file in one top-level folder, with a
/// SKILL.md at its root whose name follows the naming rules.
fn check_upload(files: &[(String, Vec<u8>)]) -> Result<(), String> {
    if files.len() > MAX_FILES {
        return Err(format!(
            "a skill may hold at most {MAX_FILES} files; this upload has {}",
            files.len()
        ));
    }
    let bytes: usize = files.iter().map(|(_, b)| b.len()).sum();
    if bytes > MAX_BYTES {
        return Err(format!(
            "a skill may hold at most {MAX_BYTES} bytes; this upload has {bytes}"
        ));
    }
    let top: Vec<&str> = files
        .iter()
        .map(|(n, _)| n.split('/').next().unwrap_or(""))
        .collect();
    let Some(first) = top.first() else {
        return Err("no files".into());
    };
    if top.iter().any(|t| t != first) {
        return Err("all files must be in the same top-level directory".into());
    }
    let Some((_, skill_md)) = files
        .iter()
        .find(|(n, _)| *n == format!("{first}/SKILL.md"))
    else {
        return Err("SKILL.md is missing at the root of the top-level directory".into());
    };
    check_name(first, skill_md)
}

/// The API's naming rules: the SKILL.md `name` is 1-64 lowercase letters, digits and single
/// hyphens, contains neither reserved word, and is the top-level directory's name.
fn check_name(folder: &str, skill_md: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(skill_md);
    let Some(front) = text
        .strip_prefix("---\n")
        .and_then(|r| r.split_once("\n---").map(|(f, _)| f))
    else {
        return Err("SKILL.md must start with YAML frontmatter".into());
    };
    let name = front
        .lines()
        .find_map(|l| l.strip_prefix("name:"))
        .map(|n| n.trim().trim_matches('"').to_string())
        .ok_or("SKILL.md frontmatter has no name")?;
    let valid = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !valid {
        return Err(format!(
            "name {name:?}: at most 64 lowercase letters, digits and single hyphens"
        ));
    }
    if let Some(word) = ["anthropic", "claude"].iter().find(|w| name.contains(*w)) {
        return Err(format!("name {name:?} contains the reserved word {word:?}"));
    }
    if name != folder {
        return Err(format!(
            "name {name:?} differs from its directory {folder:?}"
        ));
    }
    Ok(())
}

fn read_call(r: &mut BufReader<TcpStream>) -> Option<(Call, usize)> {
    let raw = read_raw(r)?;
    let mut call = Call {
        method: raw.method,
        path: raw.path,
        headers: raw.headers,
        files: Vec::new(),
        display_title: None,
    };
    if let Some(boundary) = call
        .header("content-type")
        .and_then(|ct| ct.split("boundary=").nth(1).map(str::to_string))
    {
        parse_multipart(&raw.body, &boundary, &mut call);
    }
    Some((call, raw.body.len()))
}

/// Splits a `multipart/form-data` body into the call's `display_title` and `files[]`.
fn parse_multipart(body: &[u8], boundary: &str, call: &mut Call) {
    for (name, filename, content) in multipart_parts(body, boundary) {
        match name.as_str() {
            "display_title" => {
                call.display_title = Some(String::from_utf8_lossy(&content).to_string())
            }
            "files[]" => call.files.push((filename.unwrap_or_default(), content)),
            _ => {}
        }
    }
}

/// The parts of a `multipart/form-data` body: (name, file name, content).
pub fn multipart_parts(body: &[u8], boundary: &str) -> Vec<(String, Option<String>, Vec<u8>)> {
    let d = format!("--{boundary}").into_bytes();
    let mut starts = Vec::new();
    let mut i = 0;
    while i + d.len() <= body.len() {
        if body[i..i + d.len()] == d[..] {
            starts.push(i);
            i += d.len();
        } else {
            i += 1;
        }
    }
    let mut out = Vec::new();
    for w in starts.windows(2) {
        let part = &body[w[0] + d.len()..w[1]];
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        let Some(split) = part.windows(4).position(|x| x == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&part[..split]).to_string();
        let attr = |name: &str| {
            head.split(&format!("{name}=\""))
                .nth(1)
                .and_then(|r| r.split('"').next())
                .map(str::to_string)
        };
        out.push((
            attr("name").unwrap_or_default(),
            attr("filename"),
            part[split + 4..].to_vec(),
        ));
    }
    out
}

#[test]
fn the_stand_in_enforces_the_naming_rules() {
    let md = |name: &str| format!("---\nname: {name}\ndescription: x\n---\n# X\n").into_bytes();
    assert!(check_name("skill-00-billing", &md("skill-00-billing")).is_ok());
    for (folder, name) in [
        ("skill-00-claude-code", "skill-00-claude-code"),
        ("skill-01-anthropic", "skill-01-anthropic"),
        ("skill-02-Billing", "skill-02-Billing"),
        ("skill--03", "skill--03"),
        ("skill-04-a", "skill-04-b"),
    ] {
        assert!(
            check_name(folder, &md(name)).is_err(),
            "{name} was accepted"
        );
    }
    assert!(check_name("x", b"# no frontmatter").is_err());
    let long = "a".repeat(65);
    assert!(check_name(&long, &md(&long)).is_err());
}
