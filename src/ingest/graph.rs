//! The salsa query graph over the sources: each source file is a low-durability input, the
//! ingest settings a high-durability one, and parsing is a pure tracked function of both. A
//! long-lived graph (`c2s watch`) re-parses only the files whose bytes changed.

use std::collections::HashMap;

use salsa::{Durability, Setter};

use crate::diag::{Diagnostics, Warning};
use crate::ingest::{Format, RawRecord, parse_records};

/// Settings that shape parsing (high durability: they change rarely).
#[salsa::input]
pub struct ParseSettings {
    pub max_file_bytes: u64,
}

/// One source file: where it is shown, its format, and its bytes (or why there are none).
#[salsa::input]
pub struct SourceInput {
    #[returns(ref)]
    pub display: String,
    pub format: Format,
    #[returns(ref)]
    pub bytes: Option<Vec<u8>>,
}

/// What parsing one file gave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    pub records: Vec<RawRecord>,
    pub warnings: Vec<Warning>,
}

/// Parses one source (pure: bytes and format in, records and warnings out).
#[salsa::tracked(returns(ref))]
pub fn parse_source(
    db: &dyn salsa::Database,
    src: SourceInput,
    _settings: ParseSettings,
) -> Parsed {
    parse_bytes(*src.format(db), src.bytes(db).as_deref(), src.display(db))
}

/// What [`parse_source`] computes, outside the graph.
fn parse_bytes(format: Format, bytes: Option<&[u8]>, display: &str) -> Parsed {
    let mut d = Diagnostics::default();
    let records = match bytes {
        Some(bytes) => parse_records(format, bytes, display, &mut d),
        None => Vec::new(),
    };
    Parsed {
        records,
        warnings: d.warnings,
    }
}

/// The database and its inputs, kept across builds by `c2s watch`.
pub struct Graph {
    db: salsa::DatabaseImpl,
    settings: Option<ParseSettings>,
    sources: HashMap<String, SourceInput>,
    /// How many parses ran in the last `parse_all` (re-parses after an edit).
    pub last_parses: usize,
    /// Whether the inputs and parses are kept for the next `parse_all` (`c2s watch`); a one-shot
    /// build drops them as soon as it has the records, since they hold every file's bytes.
    keep: bool,
}

impl Default for Graph {
    fn default() -> Self {
        Graph {
            db: salsa::DatabaseImpl::new(),
            settings: None,
            sources: HashMap::new(),
            last_parses: 0,
            keep: true,
        }
    }
}

/// A file to parse: display path, format, bytes (None when unreadable, too large or binary).
pub struct SourceBytes {
    pub display: String,
    pub format: Format,
    pub bytes: Option<Vec<u8>>,
}

impl Graph {
    /// A graph for one build: nothing is kept after parsing.
    pub fn one_shot() -> Self {
        Graph {
            keep: false,
            ..Graph::default()
        }
    }

    /// Sets the inputs (only what changed) and parses every file; results in input order.
    pub fn parse_all(&mut self, max_file_bytes: u64, files: Vec<SourceBytes>) -> Vec<Parsed> {
        if !self.keep {
            // A one-shot graph keeps nothing for a next call: the same pure parse, in parallel.
            use rayon::prelude::*;
            self.last_parses = files.len();
            return files
                .par_iter()
                .map(|f| parse_bytes(f.format, f.bytes.as_deref(), &f.display))
                .collect();
        }
        let settings = match self.settings {
            Some(s) => {
                if *s.max_file_bytes(&self.db) != max_file_bytes {
                    s.set_max_file_bytes(&mut self.db)
                        .with_durability(Durability::HIGH)
                        .to(max_file_bytes);
                }
                s
            }
            None => {
                let s = ParseSettings::builder(max_file_bytes)
                    .max_file_bytes_durability(Durability::HIGH)
                    .new(&self.db);
                self.settings = Some(s);
                s
            }
        };
        let mut inputs = Vec::with_capacity(files.len());
        let mut changed = 0;
        for f in files {
            let input = match self.sources.get(&f.display) {
                Some(&src) => {
                    if src.bytes(&self.db) != &f.bytes {
                        src.set_bytes(&mut self.db)
                            .with_durability(Durability::LOW)
                            .to(f.bytes);
                        changed += 1;
                    }
                    if *src.format(&self.db) != f.format {
                        src.set_format(&mut self.db).to(f.format);
                    }
                    src
                }
                None => {
                    changed += 1;
                    let src = SourceInput::builder(f.display.clone(), f.format, f.bytes)
                        .bytes_durability(Durability::LOW)
                        .new(&self.db);
                    self.sources.insert(f.display, src);
                    src
                }
            };
            inputs.push(input);
        }
        self.last_parses = changed;
        let db = &self.db;
        let parsed = inputs
            .iter()
            .map(|&src| parse_source(db, src, settings).clone())
            .collect();
        if !self.keep {
            *self = Graph {
                last_parses: changed,
                ..Graph::one_shot()
            };
        }
        parsed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> SourceBytes {
        SourceBytes {
            display: name.into(),
            format: Format::Text,
            bytes: Some(text.as_bytes().to_vec()),
        }
    }

    #[test]
    fn reparses_only_changed_files() {
        let mut g = Graph::default();
        let a = g.parse_all(100, vec![file("a.txt", "alpha"), file("b.txt", "beta")]);
        assert_eq!(a[0].records[0].text, "alpha");
        assert_eq!(g.last_parses, 2);
        let b = g.parse_all(100, vec![file("a.txt", "alpha"), file("b.txt", "beta two")]);
        assert_eq!(g.last_parses, 1);
        assert_eq!(b[1].records[0].text, "beta two");
    }

    #[test]
    fn a_one_shot_graph_keeps_nothing() {
        let mut g = Graph::one_shot();
        let a = g.parse_all(100, vec![file("a.txt", "alpha")]);
        assert_eq!(a[0].records[0].text, "alpha");
        assert!(g.sources.is_empty() && g.settings.is_none());
        g.parse_all(100, vec![file("a.txt", "alpha")]);
        assert_eq!(
            g.last_parses, 1,
            "nothing was kept, so the file is parsed again"
        );
    }
}
