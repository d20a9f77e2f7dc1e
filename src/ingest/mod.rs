//! Ingest: walks the corpus paths (respecting .gitignore and globs) and turns files into `Document`s.

pub mod extract;
mod formats;
pub mod graph;
mod hidden;
mod ids;
pub mod include;
pub mod parsed;
mod read;
mod records;
mod restructured;
mod walk;

use crate::paths::display;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::Serialize;

use crate::db::cache::Key;
use crate::db::statindex::{OnDisk, Stat};
use crate::diag::Diagnostics;
use crate::error::BuildError;
use crate::ingest::graph::{Graph, SourceBytes};
pub use formats::{Format, RawRecord};
pub use parsed::ParsedCache;
use read::read_bytes;
pub use read::{Found, ReadAhead};
use records::{Location, Scan, add_document};
use walk::{Candidate, Globs, collect_files};

/// One document of the corpus.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Document {
    pub id: String,
    /// Where it came from: a relative path, with `:line` for JSONL records.
    pub source: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub tags: Vec<String>,
    pub text: String,
    /// Ids of records with the same text that were folded into this one.
    pub aliases: Vec<String>,
    /// blake3 of title, description, tags and text (32 hex).
    pub content_hash: String,
    /// The text navigation is made from, when it differs from `text`: without HTML comments and
    /// the sentences `flags` names (planted instructions).
    #[serde(skip)]
    pub navigation: Option<String>,
    /// Sentences that address an AI model or ask for a secret, flagged at ingest.
    #[serde(skip)]
    pub flags: Vec<crate::planted::Flag>,
    /// Where its file was found (None for a document the serving side read back).
    #[serde(skip)]
    pub origin: Option<Origin>,
}

/// Where a document's file was found: the walk's own account, which the tree step follows when
/// it reads the authors' structure.
#[derive(Debug, Clone, PartialEq)]
pub struct Origin {
    /// Its corpus folder, as an index into the corpus paths.
    pub root: usize,
    /// Its path below that folder, with `/` separators.
    pub rel: String,
    /// A file of many records (JSONL): its records form a section of their own.
    pub multi: bool,
    /// The file line the text starts on (0 when lines of the text are not lines of the file).
    pub line: usize,
    /// Its place among its folder's pages, from its frontmatter (`sidebar_position`, `weight`).
    pub position: Option<f64>,
}

impl Document {
    /// The text cards, summaries, excerpts and entities are made from.
    pub fn nav_text(&self) -> &str {
        self.navigation.as_deref().unwrap_or(&self.text)
    }

    /// A document as the serving side reads it back (no frontmatter, no flags: those are
    /// computed at build time).
    pub fn served(
        id: String,
        source: String,
        title: String,
        text: String,
        aliases: Vec<String>,
    ) -> Document {
        Document {
            id,
            source,
            title: Some(title),
            description: None,
            tags: Vec::new(),
            text,
            aliases,
            content_hash: String::new(),
            navigation: None,
            flags: Vec::new(),
            origin: None,
        }
    }
}

/// A source file and the hash of its bytes, for the manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceFile {
    pub path: String,
    pub hash: String,
    /// The file's stat, taken before its bytes were read (None when it could not be stat'ed).
    #[serde(skip)]
    pub stat: Option<Stat>,
    /// Read by an include directive, not a page of the walk.
    #[serde(skip)]
    pub included: bool,
}

/// The ingested corpus.
#[derive(Debug, Default)]
pub struct Corpus {
    pub documents: Vec<Document>,
    pub sources: Vec<SourceFile>,
    /// Files skipped because c2s does not read their type, by extension.
    pub unsupported: HashMap<String, usize>,
    /// Source files read and parsed (the others came from the parsed-source record: their stat
    /// unchanged, or, for PDF and Word files, their bytes).
    pub read: usize,
    /// Files left out as not pages of the site (navigation files, partials, drafts), as shown,
    /// with why.
    pub not_pages: Vec<String>,
    /// The parsed sources, for the next build (when the build read the parsed-source record).
    pub parsed: Option<parsed::Kept>,
}

/// What to read and what to leave out.
pub struct IngestOptions<'a> {
    pub paths: Vec<PathBuf>,
    pub include: &'a [String],
    pub exclude: &'a [String],
    pub max_file_bytes: u64,
    /// Characters of a document embedded whole; longer ones get a warning, unless chunking
    /// (`embed.chunk_tokens`) embeds the rest as passages (its own warning covers the cap).
    pub max_doc_chars: Option<usize>,
    /// Paths shown to the user are relative to this folder.
    pub display_base: PathBuf,
    /// Folders never read (the output, the cache).
    pub skip_dirs: Vec<PathBuf>,
    /// The folder of `c2s.toml`, when there is one: includes read nothing outside it.
    pub top: Option<PathBuf>,
}

impl<'a> IngestOptions<'a> {
    /// The options for a configuration: its corpus paths, globs and caps; the output is never read.
    pub fn from_config(
        loaded: &'a crate::config::Loaded,
        out: &Path,
        display_base: &Path,
    ) -> IngestOptions<'a> {
        let cfg = &loaded.config;
        IngestOptions {
            paths: cfg.corpus.paths.iter().map(|p| loaded.resolve(p)).collect(),
            include: &cfg.corpus.include,
            exclude: &cfg.corpus.exclude,
            max_file_bytes: cfg.corpus.max_file_bytes,
            max_doc_chars: (cfg.embed.chunk_tokens == 0).then_some(cfg.tree.max_doc_chars),
            display_base: display_base.to_path_buf(),
            skip_dirs: vec![out.to_path_buf()],
            top: loaded
                .path
                .as_ref()
                .and_then(|p| p.parent())
                .map(Path::to_path_buf),
        }
    }
}

/// The files a walk of the corpus found, with their stats and the walk's warnings (the
/// examination's walk, handed to the build that follows it).
pub struct Walk {
    files: Vec<Candidate>,
    warnings: Diagnostics,
    not_pages: Vec<String>,
}

/// Walks the corpus paths and stats every file (a corpus path that does not exist is an error).
pub fn walk(opts: &IngestOptions) -> Result<Walk, BuildError> {
    let include = Globs::new("include", opts.include)?;
    let exclude = Globs::new("exclude", opts.exclude)?;
    let mut warnings = Diagnostics::default();
    let mut not_pages = Vec::new();
    let files = collect_files(opts, &include, &exclude, &mut warnings, &mut not_pages)?;
    Ok(Walk {
        files,
        warnings,
        not_pages,
    })
}

/// What a build knows of the sources before it reads them: the examination's walk, the hashes
/// of the files whose stat the stat index trusts, and the sources the last build parsed.
pub struct Prior<'a> {
    pub walk: Walk,
    pub sources: &'a OnDisk,
    pub parsed: ParsedCache,
    /// The sources the examination read whole.
    pub read: ReadAhead,
}

/// Reads every corpus path into documents through the query graph. Bad input becomes warnings;
/// an empty corpus is an error.
pub fn ingest(
    opts: &IngestOptions,
    graph: &mut Graph,
    diags: &mut Diagnostics,
) -> Result<Corpus, BuildError> {
    ingest_with(opts, graph, diags, None)
}

/// One source, as the build got it: from the parsed-source record, or read now (with the key
/// its parse is recorded under, when it was read whole).
enum Got {
    Recorded(Key, parsed::Entry),
    Read(SourceBytes, Option<Key>),
}

/// [`ingest`], with what the build knows beforehand: a source whose stat the stat index trusts
/// and whose parse the record holds is neither read nor parsed. The parses of the others are
/// recorded for the next build. Either way, the same documents and warnings.
pub fn ingest_with(
    opts: &IngestOptions,
    graph: &mut Graph,
    diags: &mut Diagnostics,
    prior: Option<Prior>,
) -> Result<Corpus, BuildError> {
    // The planted-instruction rules compile while the sources are found and read.
    std::thread::spawn(crate::planted::warm_up);
    let (walked, known, cache, mut read) = match prior {
        Some(p) => (p.walk, Some(p.sources), Some(p.parsed), p.read),
        None => (walk(opts)?, None, None, ReadAhead::default()),
    };
    diags.warnings.extend(walked.warnings.warnings);
    let files = walked.files;
    let not_pages = walked.not_pages;
    let supported: Vec<&Candidate> = files.iter().filter(|c| c.format.is_some()).collect();
    let ahead: Vec<Option<(Vec<u8>, String)>> =
        supported.iter().map(|c| read.remove(&c.display)).collect();
    let loaded: Vec<(Got, (String, Option<Stat>), Diagnostics)> = supported
        .par_iter()
        .zip(ahead)
        .map(|(c, ahead)| {
            let format = c.format.expect("supported");
            let stat = c.stat.as_ref().and_then(|s| s.as_ref().ok());
            let recorded = known.zip(cache.as_ref()).zip(stat).and_then(|((k, p), s)| {
                let hash = k.known(&c.display, s)?;
                let key = parsed::key(&c.display, format, hash, opts.max_file_bytes);
                Some((key, p.get(&key)?, hash.to_string()))
            });
            if let Some((key, entry, hash)) = recorded {
                return (
                    Got::Recorded(key, entry),
                    (hash, stat.copied()),
                    Diagnostics::default(),
                );
            }
            let mut d = Diagnostics::default();
            let (bytes, hash, stat) = read_bytes(c, opts, ahead, &mut d);
            let key = (bytes.is_some() && cache.is_some())
                .then(|| parsed::key(&c.display, format, &hash, opts.max_file_bytes));
            // A PDF or Word file whose bytes the record knows is not extracted again, whatever
            // its stat (extraction is slow; `touch` or a checkout moves the stat).
            let by_bytes = key
                .filter(|_| extract::kind_of(format).is_some())
                .and_then(|k| Some((k, cache.as_ref()?.get(&k)?)));
            if let Some((key, entry)) = by_bytes {
                return (Got::Recorded(key, entry), (hash, stat), d);
            }
            let src = SourceBytes {
                display: c.display.clone(),
                format,
                bytes,
            };
            (Got::Read(src, key), (hash, stat), d)
        })
        .collect();
    let mut corpus = Corpus::default();
    let mut got = Vec::with_capacity(loaded.len());
    let mut to_parse = Vec::new();
    let mut load_warnings = Vec::with_capacity(loaded.len());
    for (c, (g, (hash, stat), d)) in supported.iter().zip(loaded) {
        corpus.sources.push(SourceFile {
            path: c.display.clone(),
            hash,
            stat,
            included: false,
        });
        load_warnings.push(d);
        got.push(match g {
            Got::Read(src, key) => {
                to_parse.push(src);
                Err(key)
            }
            Got::Recorded(key, entry) => Ok((key, entry)),
        });
    }
    corpus.read = to_parse.len();
    let parsed_now = graph.parse_all(opts.max_file_bytes, to_parse);
    // What each record's text alone decides, in parallel; ids and duplicates follow in order.
    let scans_now: Vec<Vec<Scan>> = parsed_now
        .par_iter()
        .map(|p| p.records.iter().map(|r| Scan::of(&r.text)).collect())
        .collect();
    let mut now = parsed_now.into_iter().zip(scans_now);
    let mut hits = Vec::new();
    let mut fresh_keys = Vec::new();
    let entries: Vec<(graph::Parsed, Vec<Scan>)> = got
        .into_iter()
        .enumerate()
        .map(|(at, g)| match g {
            Ok((key, e)) => {
                hits.push(key);
                (e.parsed, e.scans)
            }
            Err(key) => {
                fresh_keys.extend(key.map(|k| (k, at)));
                now.next().expect("one parse per source read")
            }
        })
        .collect();
    if let Some(cache) = cache {
        let fresh: Vec<(Key, Vec<u8>)> = fresh_keys
            .par_iter()
            .map(|&(key, at)| (key, parsed::encode(&entries[at].0, &entries[at].1)))
            .collect();
        corpus.parsed = Some(cache.kept(hits, fresh));
    }
    let mut ids = ids::IdAllocator::default();
    let mut seen_text: HashMap<String, usize> = HashMap::new();
    let mut includers = include::Includers::new(opts);
    for ((c, (p, scans)), d) in supported.iter().zip(entries).zip(load_warnings) {
        diags.warnings.extend(d.warnings);
        diags.warnings.extend(p.warnings);
        let multi = p.records.len() > 1 || p.records.iter().any(|r| r.line.is_some());
        for (rec, scan) in p.records.into_iter().zip(scans) {
            let (rec, scan) = match c.format {
                Some(Format::Markdown | Format::Rst) => includers.expand(c, (rec, scan), diags),
                _ => (rec, scan),
            };
            let loc = Location {
                file: &c.display,
                rel: &c.rel,
                root: c.root,
                multi,
            };
            add_document(
                (rec, scan),
                &loc,
                opts,
                &mut ids,
                &mut seen_text,
                &mut corpus.documents,
                diags,
            );
        }
    }
    includers.add_inputs(&mut corpus.sources, &opts.display_base);
    corpus.unsupported = files_unsupported(&files);
    corpus.not_pages = not_pages;
    if corpus.documents.is_empty() {
        return Err(BuildError::EmptyCorpus {
            paths: opts
                .paths
                .iter()
                // Relative to where the command runs: the root itself would show as `.`.
                .map(|p| display(p, &std::env::current_dir().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    Ok(corpus)
}

fn files_unsupported(files: &[Candidate]) -> HashMap<String, usize> {
    let mut m = HashMap::new();
    for f in files.iter().filter(|f| f.format.is_none()) {
        *m.entry(f.ext.clone()).or_insert(0) += 1;
    }
    m
}

/// Parses a file's bytes: binary check, UTF-8 decoding (lossy, with a warning), then the format.
pub fn parse_records(
    format: Format,
    bytes: &[u8],
    display: &str,
    d: &mut Diagnostics,
) -> Vec<RawRecord> {
    if let Some(kind) = extract::kind_of(format) {
        return extract::records(kind, bytes, display, d);
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        d.warn(display, None, "binary file (contains NUL bytes); skipped");
        return Vec::new();
    }
    let text = decode(bytes.to_vec(), display, d);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    formats::parse(format, text, display, d)
}

impl Walk {
    /// Every source file the build would read, with its stat (or why there is none), without
    /// reading or parsing anything (what `c2s check` compares, stat first).
    pub fn found(&self) -> Vec<Found<'_>> {
        self.files
            .iter()
            .filter(|c| c.format.is_some())
            .map(|c| Found {
                stat: match &c.stat {
                    Some(Ok(s)) => Ok(*s),
                    Some(Err(e)) => Err(e.as_str()),
                    None => Err("not stat'ed"),
                },
                display: &c.display,
                path: &c.path,
            })
            .collect()
    }
}

impl std::fmt::Debug for Walk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Walk({} files)", self.files.len())
    }
}

fn decode(bytes: Vec<u8>, file: &str, d: &mut Diagnostics) -> String {
    match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            d.warn(
                file,
                None,
                format!(
                    "not valid UTF-8 (first bad byte at offset {at}); decoded lossily with U+FFFD"
                ),
            );
            String::from_utf8_lossy(e.as_bytes()).into_owned()
        }
    }
}

#[cfg(test)]
mod tests;
