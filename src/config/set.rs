//! `--set key=value` overrides: dotted (`tree.p`) or bare (`p`) keys, values as TOML literals.

use super::{Config, ConfigError};

impl Config {
    /// Applies one `key=value` override without validating. `key` is dotted (`tree.p`) or a
    /// bare knob (`p`).
    fn set_unchecked(&mut self, arg: &str) -> Result<(), ConfigError> {
        let err = |message: String| ConfigError::Set {
            arg: arg.to_string(),
            message: super::load::in_words(&message),
        };
        let (key, raw) = arg
            .split_once('=')
            .ok_or_else(|| err("missing `=`".into()))?;
        let key = key.trim();
        let mut table = toml::Table::try_from(&*self).map_err(|e| err(e.to_string()))?;
        // Sections left out of the serialized config while at their defaults.
        for (name, default) in [
            (
                "judge",
                toml::Value::try_from(super::JudgeConfig::default()),
            ),
            (
                "serve",
                toml::Value::try_from(super::ServeConfig::default()),
            ),
        ] {
            if let Ok(default) = default {
                table.entry(name).or_insert(default);
            }
        }
        let path = resolve_key(&table, key).map_err(err)?;
        let value = parse_value(raw.trim());
        let (leaf, parents) = path.split_last().expect("a key has a field");
        let mut sect = &mut table;
        for name in parents {
            sect = sect
                .entry(name.clone())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()))
                .as_table_mut()
                .ok_or_else(|| err(format!("`{name}` is a value, not a section")))?;
        }
        sect.insert(leaf.clone(), value);
        let text = toml::to_string(&table).map_err(|e| err(e.to_string()))?;
        let next: Config = toml::from_str(&text).map_err(|e| err(first_line(&e.to_string())))?;
        *self = next;
        Ok(())
    }

    /// Applies one `key=value` override and validates the result.
    pub fn apply_set(&mut self, arg: &str) -> Result<(), ConfigError> {
        self.apply_sets(&[arg.to_string()])
    }

    /// Applies every override, then validates once (so `--set llm.backend=openai --set
    /// llm.base_url=...` works in either order).
    pub fn apply_sets(&mut self, args: &[String]) -> Result<(), ConfigError> {
        let mut next = self.clone();
        for a in args {
            next.set_unchecked(a)?;
        }
        next.validate().map_err(|e| ConfigError::Set {
            arg: args.join(" --set "),
            message: e.to_string(),
        })?;
        *self = next;
        Ok(())
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .rfind(|l| !l.trim().is_empty() && !l.contains('|'))
        .unwrap_or(s)
        .trim()
        .to_string()
}

/// Finds the table path of a dotted (`embed.onnx.threads`) or bare (`p`) key.
fn resolve_key(table: &toml::Table, key: &str) -> Result<Vec<String>, String> {
    if key.contains('.') {
        let parts: Vec<&str> = key.split('.').collect();
        let (field, sections) = parts.split_last().expect("split gives one part");
        let mut path = Vec::new();
        let mut sect = Some(table);
        for (depth, name) in sections.iter().enumerate() {
            let found = sect.and_then(|t| canonical_field(t, name));
            if depth == 0 && found.is_none() {
                return Err(format!("unknown section `{name}`"));
            }
            let name = found.unwrap_or_else(|| name.to_string());
            sect = sect.and_then(|t| t.get(&name)).and_then(|v| v.as_table());
            path.push(name);
        }
        // Optional settings that are unset do not appear in the table: pass the key through and
        // let deserialization (which rejects unknown fields) have the last word.
        let field = sect
            .and_then(|t| canonical_field(t, field))
            .unwrap_or_else(|| field.to_string());
        path.push(field);
        return Ok(path);
    }
    let hits: Vec<Vec<String>> = table
        .iter()
        .filter_map(|(s, v)| {
            let sect = v.as_table()?;
            canonical_field(sect, key)
                .filter(|f| !sect[f].is_table())
                .map(|f| vec![s.clone(), f])
        })
        .collect();
    match hits.len() {
        1 => Ok(hits.into_iter().next().expect("one hit")),
        0 => Err(format!("unknown key `{key}`")),
        _ => Err(format!(
            "`{key}` is ambiguous; use one of {}",
            hits.iter()
                .map(|p| p.join("."))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn canonical_field(sect: &toml::Table, field: &str) -> Option<String> {
    if sect.contains_key(field) {
        return Some(field.to_string());
    }
    sect.keys().find(|k| k.eq_ignore_ascii_case(field)).cloned()
}

/// Parses a `--set` value as a TOML literal, else takes it as a string.
fn parse_value(raw: &str) -> toml::Value {
    let doc = format!("v = {raw}");
    match toml::from_str::<toml::Table>(&doc) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(raw.into())),
        Err(_) => toml::Value::String(raw.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn set_dotted_bare_and_k() {
        let mut c = Config::default();
        c.apply_set("tree.p=5").unwrap();
        c.apply_set("tau=0.1").unwrap();
        c.apply_set("K=4").unwrap();
        c.apply_set("output.dir=elsewhere").unwrap();
        assert_eq!(c.tree.p, 5);
        assert_eq!(c.tree.k, 4);
        assert!((c.tree.tau - 0.1).abs() < 1e-6);
        assert_eq!(c.output.dir, PathBuf::from("elsewhere"));
        assert!(c.apply_set("nope=1").is_err());
        let e = c.apply_set("tree.nope=1").unwrap_err().to_string();
        assert!(e.contains("nope"), "{e}");
        c.apply_set("llm.price_input_per_mtok=0.5").unwrap();
        assert_eq!(c.llm.price_input_per_mtok, Some(0.5));
        assert!(c.apply_set("tree.p=1").is_err());
        assert!(c.apply_set("tree.p=abc").is_err());
        c.apply_set("embed.onnx.threads=2").unwrap();
        assert_eq!(c.embed.onnx.threads, 2);
        c.apply_set("llm.limits.concurrency=7").unwrap();
        assert_eq!(c.llm.limits.concurrency, 7);
        c.apply_set("llm.stages.card.model=small").unwrap();
        assert_eq!(c.llm.stages["card"].model.as_deref(), Some("small"));
        let e = c
            .apply_set("llm.stages.bogus.model=x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("bogus"), "{e}");
        assert!(c.apply_set("embed.onnx.nope=1").is_err());
    }
}
