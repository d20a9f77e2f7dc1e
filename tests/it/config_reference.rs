//! The configuration reference (`docs/src/configuration.md`) against the schema: every key the
//! config accepts is documented there, every documented key exists, and every key written out
//! shows its default.

use std::cell::RefCell;
use std::collections::BTreeSet;

use c2s::config::Config;
use serde::de::value::{Error, StrDeserializer};
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;

/// The dotted keys of every field that `Config`'s deserializer knows, found by deserializing it
/// from a source that offers every field of every struct: a map or list field (`llm.params`,
/// `llm.stages`) is one key, its entries are the user's.
fn schema_keys() -> BTreeSet<String> {
    let seen = RefCell::new(BTreeSet::new());
    let config: Result<Config, Error> = serde::Deserialize::deserialize(Fields {
        path: String::new(),
        seen: &seen,
    });
    config.expect("the recorder satisfies Config's deserializer");
    let all = seen.into_inner();
    // Only leaves: a struct's own key is a section.
    all.iter()
        .filter(|k| !all.iter().any(|o| o.starts_with(&format!("{k}."))))
        .cloned()
        .collect()
}

/// A deserializer that offers every field of a struct, records its dotted path, and gives each
/// leaf the simplest value of its type.
struct Fields<'a> {
    path: String,
    seen: &'a RefCell<BTreeSet<String>>,
}

impl<'de> de::Deserializer<'de> for Fields<'_> {
    type Error = Error;
    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_unit()
    }
    fn deserialize_bool<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_bool(false)
    }
    fn deserialize_u8<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_u16<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_u32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_u64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_u64(1)
    }
    fn deserialize_i32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_i64(1)
    }
    fn deserialize_i64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_i64(1)
    }
    fn deserialize_f32<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_f64(0.5)
    }
    fn deserialize_f64<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_f64(0.5)
    }
    fn deserialize_str<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("x")
    }
    fn deserialize_string<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_str("x")
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_some(self)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_newtype_struct(self)
    }
    fn deserialize_seq<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_seq(
            de::value::SeqDeserializer::<std::iter::Empty<i64>, Error>::new(std::iter::empty()),
        )
    }
    fn deserialize_map<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Error> {
        v.visit_map(de::value::MapDeserializer::<
            std::iter::Empty<(i64, i64)>,
            Error,
        >::new(std::iter::empty()))
    }
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_map(Each {
            fields: fields.iter(),
            current: "",
            path: self.path,
            seen: self.seen,
        })
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Error> {
        v.visit_enum(variants[0].into_deserializer())
    }
    forward_to_deserialize_any! {
        i8 i16 i128 u128 char bytes byte_buf unit unit_struct tuple tuple_struct identifier
        ignored_any
    }
}

/// The fields of one struct, offered in turn.
struct Each<'a> {
    fields: std::slice::Iter<'static, &'static str>,
    current: &'static str,
    path: String,
    seen: &'a RefCell<BTreeSet<String>>,
}

impl<'de> de::MapAccess<'de> for Each<'_> {
    type Error = Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Error> {
        // A field's aliases follow its name in serde's list (`K`, then `k`): one spelling only,
        // or the struct sees a duplicate.
        let mut next = self.fields.next();
        while let Some(f) = next
            && f.eq_ignore_ascii_case(self.current)
            && !self.current.is_empty()
        {
            next = self.fields.next();
            let _ = f;
        }
        let Some(field) = next else {
            return Ok(None);
        };
        self.current = field;
        let name: StrDeserializer<Error> = field.into_deserializer();
        seed.deserialize(name).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Error> {
        let path = if self.path.is_empty() {
            self.current.to_string()
        } else {
            format!("{}.{}", self.path, self.current)
        };
        self.seen.borrow_mut().insert(path.clone());
        seed.deserialize(Fields {
            path,
            seen: self.seen,
        })
    }
}

/// The reference's TOML block, and the dotted keys it documents: set (`key = value`) or shown
/// commented out (`# key = value`), under the `[section]` or `# [section]` above them.
/// A `[section]` header alone documents a map of the user's entries (`[embed.openai.params]`).
fn reference() -> (String, BTreeSet<String>) {
    let block = crate::common::doc_block("configuration.md", "# Configuration", "toml");
    let mut section = String::new();
    let mut keys = BTreeSet::new();
    for line in block.lines() {
        let bare = line.strip_prefix('#').unwrap_or(line).trim_start();
        if line.starts_with(' ') {
            continue; // a comment continued from the line above
        }
        if let Some(head) = bare.strip_prefix('[') {
            section = head.split(']').next().unwrap().trim().to_string();
            keys.insert(format!("[{section}]"));
            continue;
        }
        let Some((key, _)) = bare.split_once('=') else {
            continue;
        };
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        keys.insert(format!("{section}.{key}"));
    }
    (block, keys)
}

/// A documented key as the schema names it: the entries of a map are the map's
/// (`llm.stages.card.model` documents `llm.stages`, `llm.params.temperature` documents
/// `llm.params`).
fn as_schema_key(key: &str, schema: &BTreeSet<String>) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    (1..=parts.len())
        .map(|n| parts[..n].join("."))
        .find(|prefix| schema.contains(prefix))
        .unwrap_or_else(|| key.to_string())
}

#[test]
fn every_config_key_is_documented_and_every_documented_key_exists() {
    let schema = schema_keys();
    assert!(
        schema.len() > 60,
        "the recorder found too few keys: {schema:?}"
    );
    let (_, documented) = reference();
    let named: BTreeSet<String> = documented
        .iter()
        .filter_map(|k| match k.strip_prefix('[') {
            // A header names a section: a map of the user's entries is documented by it alone.
            Some(h) => Some(h.trim_end_matches(']').to_string()).filter(|h| schema.contains(h)),
            None => Some(as_schema_key(k, &schema)),
        })
        .collect();
    let undocumented: Vec<&String> = schema.difference(&named).collect();
    assert!(
        undocumented.is_empty(),
        "keys the config accepts that docs/src/configuration.md does not show (add each, with \
         its default, to its section of the reference block): {undocumented:?}"
    );
    let unknown: Vec<&String> = named.difference(&schema).collect();
    assert!(
        unknown.is_empty(),
        "keys docs/src/configuration.md shows that the config does not accept: {unknown:?}"
    );
}

#[test]
fn the_reference_shows_every_default_it_sets() {
    let (block, _) = reference();
    let shown: Config = toml::from_str(&block).expect("the reference block is a config");
    let mut expected = Config::default();
    // The one value the reference sets on purpose: a corpus folder to read.
    expected.corpus.paths = shown.corpus.paths.clone();
    assert_eq!(
        toml::to_string(&shown).unwrap(),
        toml::to_string(&expected).unwrap(),
        "a value set in docs/src/configuration.md's block is not the default"
    );
    // Every key shown commented out is a key too: uncommented, the block still parses.
    let uncommented: String = block
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest) if rest.contains(" = ") || rest.starts_with('[') => rest,
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let all: Result<Config, _> = toml::from_str(&uncommented);
    assert!(all.is_ok(), "{}", all.unwrap_err());
}
