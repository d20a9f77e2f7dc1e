//! An OpenAPI operation as the page an API reference shows for it (Mintlify's endpoint pages,
//! `openapi: "/openapi.json GET /users"`): its summary and description, its parameters, its
//! request body's fields and its responses, with `$ref`s, `allOf` and arrays resolved (OpenAPI
//! 3 and Swagger 2, JSON or YAML).

use serde_json::{Map, Value};

/// Fields nested deeper than this are left out (and a schema that refers to itself stops).
const MAX_DEPTH: usize = 4;

/// What an endpoint page documents: one operation or one webhook.
#[derive(Debug, Clone, PartialEq)]
pub enum Operation {
    Endpoint { method: String, path: String },
    Webhook(String),
}

/// An endpoint page's `openapi` value: `[FILE] METHOD /path` or `[FILE] webhook NAME`; the
/// spec file (None when not named) and the operation. None when it is neither form.
pub fn parse(value: &str) -> Option<(Option<&str>, Operation)> {
    let words: Vec<&str> = value.split_whitespace().collect();
    let is_method = |w: &str| {
        [
            "get", "post", "put", "patch", "delete", "head", "options", "trace",
        ]
        .contains(&w.to_ascii_lowercase().as_str())
    };
    let (file, rest) = match words.as_slice() {
        [first, ..] if is_method(first) || first.eq_ignore_ascii_case("webhook") => {
            (None, &words[..])
        }
        [file, rest @ ..] => (Some(*file), rest),
        [] => return None,
    };
    match rest {
        [m, path] if is_method(m) && path.starts_with('/') => Some((
            file,
            Operation::Endpoint {
                method: m.to_ascii_lowercase(),
                path: path.to_string(),
            },
        )),
        [w, name] if w.eq_ignore_ascii_case("webhook") => {
            Some((file, Operation::Webhook(name.to_string())))
        }
        _ => None,
    }
}

/// The operation's page in Markdown; None when the spec does not have it.
pub fn render(spec: &Value, op: &Operation) -> Option<String> {
    let (item, heading) = match op {
        Operation::Endpoint { method, path } => (
            spec.get("paths")?.get(path)?.get(method)?,
            format!("{} {path}", method.to_ascii_uppercase()),
        ),
        Operation::Webhook(name) => {
            let hook = spec.get("webhooks")?.get(name)?;
            let item = ["post", "put", "get"].iter().find_map(|m| hook.get(*m))?;
            (item, format!("Webhook {name}"))
        }
    };
    let mut out = format!("## {heading}\n\n");
    for key in ["summary", "description"] {
        if let Some(t) = item
            .get(key)
            .and_then(Value::as_str)
            .filter(|t| !t.trim().is_empty())
        {
            out.push_str(t.trim());
            out.push_str("\n\n");
        }
    }
    let r = Resolver { spec };
    let mut params: Vec<&Value> = Vec::new();
    if let Operation::Endpoint { path, .. } = op {
        params.extend(
            spec["paths"][path]
                .get("parameters")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        );
    }
    params.extend(
        item.get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten(),
    );
    let mut body: Option<&Value> = None;
    let mut lines = Vec::new();
    for p in params {
        let p = r.resolve(p);
        if p.get("in").and_then(Value::as_str) == Some("body") {
            body = p.get("schema");
            continue;
        }
        let name = p.get("name").and_then(Value::as_str).unwrap_or("?");
        let place = p.get("in").and_then(Value::as_str).unwrap_or("");
        let schema = p.get("schema").unwrap_or(p);
        let required = p.get("required").and_then(Value::as_bool) == Some(true);
        lines.push(field_line(
            name,
            &format!("{place}, {}", r.type_of(schema, 0)),
            required,
            p,
            0,
        ));
    }
    section(&mut out, "Parameters", &lines);
    let request = item.get("requestBody").map(|b| r.resolve(b));
    if let Some((ty, schema)) = request
        .and_then(|b| first_content(b))
        .or(body.map(|s| ("", s)))
    {
        let mut lines = Vec::new();
        r.fields(schema, 0, &mut lines);
        let title = match ty {
            "" => "Request body".to_string(),
            ty => format!("Request body ({ty})"),
        };
        if let Some(d) = request
            .and_then(|b| b.get("description"))
            .and_then(Value::as_str)
        {
            lines.insert(0, d.trim().to_string());
        }
        section(&mut out, &title, &lines);
    }
    if let Some(Value::Object(responses)) = item.get("responses") {
        let mut lines = Vec::new();
        for (code, resp) in responses {
            let resp = r.resolve(resp);
            let d = resp
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim();
            lines.push(format!(
                "- `{code}`{}",
                if d.is_empty() {
                    String::new()
                } else {
                    format!(": {}", one_line(d))
                }
            ));
            let schema = first_content(resp)
                .map(|(_, s)| s)
                .or_else(|| resp.get("schema"));
            if let Some(schema) = schema {
                r.fields(schema, 1, &mut lines);
            }
        }
        section(&mut out, "Responses", &lines);
    }
    Some(out.trim_end().to_string() + "\n")
}

fn section(out: &mut String, title: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    out.push_str(&format!("### {title}\n\n"));
    for l in lines {
        out.push_str(l);
        out.push('\n');
    }
    out.push('\n');
}

/// The first media type of a request body or response, and its schema.
fn first_content(v: &Value) -> Option<(&str, &Value)> {
    let content = v.get("content")?.as_object()?;
    content
        .iter()
        .find_map(|(ty, m)| m.get("schema").map(|s| (ty.as_str(), s)))
}

/// One field as a list item, indented by its depth: `` `name` (type, required): description``.
fn field_line(name: &str, ty: &str, required: bool, v: &Value, depth: usize) -> String {
    let mut notes = vec![ty.to_string()];
    if required {
        notes.push("required".into());
    }
    let schema = v.get("schema");
    if let Some(d) = v
        .get("default")
        .or_else(|| schema.and_then(|s| s.get("default")))
        .filter(|d| !d.is_null())
    {
        notes.push(format!("default `{}`", scalar(d)));
    }
    if let Some(Value::Array(e)) = v.get("enum").or_else(|| schema.and_then(|s| s.get("enum"))) {
        let shown: Vec<String> = e
            .iter()
            .take(12)
            .map(|x| format!("`{}`", scalar(x)))
            .collect();
        notes.push(format!("one of {}", shown.join(", ")));
    }
    let d = v
        .get("description")
        .and_then(Value::as_str)
        .map(one_line)
        .unwrap_or_default();
    format!(
        "{}- `{name}` ({}){}",
        "  ".repeat(depth),
        notes.join(", "),
        if d.is_empty() {
            String::new()
        } else {
            format!(": {d}")
        }
    )
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A description on one line (a list item's text).
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

struct Resolver<'a> {
    spec: &'a Value,
}

impl<'a> Resolver<'a> {
    /// A `$ref` (`#/components/schemas/User`) followed, a few times at most; other values as
    /// they are.
    fn resolve(&self, mut v: &'a Value) -> &'a Value {
        for _ in 0..8 {
            let Some(r) = v.get("$ref").and_then(Value::as_str) else {
                return v;
            };
            let Some(target) = r.strip_prefix('#').and_then(|p| self.spec.pointer(p)) else {
                return v;
            };
            v = target;
        }
        v
    }

    /// A schema's type as a reader sees it: `string`, `array of User`, `object`.
    fn type_of(&self, schema: &Value, depth: usize) -> String {
        let named = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
            .map(str::to_string);
        let s = self.resolve(schema);
        if let Some(t) = s.get("type") {
            let t = match t {
                Value::Array(ts) => ts.iter().map(scalar).collect::<Vec<_>>().join(" | "),
                t => scalar(t),
            };
            if t == "array" && depth < MAX_DEPTH {
                let items = s.get("items").map(|i| self.type_of(i, depth + 1));
                return format!("array of {}", items.unwrap_or_else(|| "any".into()));
            }
            let format = s.get("format").and_then(Value::as_str);
            return match (named, format) {
                (Some(n), _) if t == "object" => n,
                (_, Some(f)) => format!("{t} ({f})"),
                _ => t,
            };
        }
        for k in ["oneOf", "anyOf"] {
            if let Some(Value::Array(vs)) = s.get(k) {
                let ts: Vec<String> = vs.iter().map(|v| self.type_of(v, depth + 1)).collect();
                return ts.join(" | ");
            }
        }
        named.unwrap_or_else(|| {
            if s.get("properties").is_some() {
                "object".into()
            } else {
                "any".into()
            }
        })
    }

    /// The fields of an object schema (through arrays, `allOf` and `$ref`s) as list items; a
    /// schema inside itself (a user's `friends`) is named, not opened again.
    fn fields(&self, schema: &Value, depth: usize, out: &mut Vec<String>) {
        self.fields_in(schema, depth, out, &mut Vec::new());
    }

    fn fields_in<'s>(
        &self,
        schema: &'s Value,
        depth: usize,
        out: &mut Vec<String>,
        open: &mut Vec<&'s str>,
    ) where
        'a: 's,
    {
        if depth > MAX_DEPTH {
            return;
        }
        let named = schema.get("$ref").and_then(Value::as_str);
        if named.is_some_and(|r| open.contains(&r)) {
            return;
        }
        open.extend(named);
        let s: &'s Value = self.resolve(schema);
        let is_array = s.get("type").and_then(Value::as_str) == Some("array");
        if let Some(items) = s.get("items").filter(|_| is_array) {
            self.fields_in(items, depth, out, open);
        } else {
            for p in s
                .get("allOf")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                self.fields_in(p, depth, out, open);
            }
            self.properties(s, depth, out, open);
        }
        if named.is_some() {
            open.pop();
        }
    }

    /// An object schema's own properties, each followed by its fields.
    fn properties<'s>(
        &self,
        s: &'s Value,
        depth: usize,
        out: &mut Vec<String>,
        open: &mut Vec<&'s str>,
    ) where
        'a: 's,
    {
        let Some(Value::Object(props)) = s.get("properties") else {
            return;
        };
        let required: Vec<&str> = s
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, p) in props as &Map<String, Value> {
            let resolved = self.resolve(p);
            let ty = self.type_of(p, 0);
            out.push(field_line(
                name,
                &ty,
                required.contains(&name.as_str()),
                resolved,
                depth,
            ));
            self.fields_in(p, depth + 1, out, open);
        }
    }
}

#[cfg(test)]
#[path = "openapi_tests.rs"]
mod tests;
