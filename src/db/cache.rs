//! The SQLite memo (`cache/c2s.sqlite`, WAL): the durable cache of every expensive result, keyed by
//! `blake3(serialized key)`, plus small named records (tree snapshots, key slots, live sets).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS memo (
        key BLOB PRIMARY KEY, stage TEXT NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS records (name TEXT PRIMARY KEY, value BLOB NOT NULL);
    CREATE TABLE IF NOT EXISTS rejected (
        key BLOB PRIMARY KEY, stage TEXT NOT NULL, reason TEXT NOT NULL) WITHOUT ROWID;";

/// Keys per read connection below which a lookup stays on the memo's own connection.
const PARALLEL_LOOKUP: usize = 4096;

/// What c2s writes into a cache folder it creates.
pub const GITIGNORE: &str = "# Created by c2s: the build memo, local to this machine.\n*\n";

/// Creates the memo's folder if needed. A folder c2s makes keeps itself out of git with a
/// `.gitignore` holding `*`, as ruff's and pytest's caches do; a folder that existed may hold
/// anything and is left as it is.
pub fn prepare_dir(dir: &Path) -> std::io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(".gitignore"), GITIGNORE)
}

/// A memo key: the blake3 of a serialized key struct.
pub type Key = [u8; 32];

/// Errors of the memo, with the file they concern.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error(
        "cannot open the cache {path}: {source}\n  help: check the path (cache.path in c2s.toml, or --set cache.path=FILE), or remove the file to start over (`c2s clean --cache`)"
    )]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error("cache {path}: {source}")]
    Sql {
        path: PathBuf,
        source: rusqlite::Error,
    },
}

/// What a key is made of (DESIGN.md §2). Serialized to JSON, hashed with blake3.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct KeyParts {
    pub stage: String,
    pub stage_version: u32,
    /// Hash of the prompt (or the extractive algorithm's version).
    pub prompt: String,
    /// Model identity and parameters.
    pub model: String,
    /// Content hashes of every input.
    pub inputs: Vec<String>,
}

impl KeyParts {
    pub fn key(&self) -> Key {
        let json = serde_json::to_vec(self).expect("key parts serialize");
        *blake3::hash(&json).as_bytes()
    }
}

/// Per-stage entry counts and sizes.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StageStats {
    pub entries: u64,
    pub bytes: u64,
}

/// The memo. Safe to share between threads; writes are serialized.
pub struct Memo {
    conn: Mutex<Connection>,
    path: PathBuf,
    /// The stages this process wrote, when the memo held no result as it was opened (a fresh
    /// clone's first build): a stage not among them has nothing to find, so it is not looked
    /// up. `None` when the memo held results.
    fresh: Option<Mutex<std::collections::HashSet<String>>>,
}

impl Memo {
    /// Opens (creating if needed) the memo at `path`, in WAL mode.
    pub fn open(path: &Path) -> Result<Memo, CacheError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let _ = prepare_dir(dir);
        }
        let open_err = |source| CacheError::Open {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(open_err)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(open_err)?;
        conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;")
            .map_err(open_err)?;
        conn.execute_batch(SCHEMA).map_err(open_err)?;
        let held: bool = conn
            .query_row("SELECT EXISTS (SELECT 1 FROM memo)", [], |r| r.get(0))
            .map_err(open_err)?;
        Ok(Memo {
            conn: Mutex::new(conn),
            path: path.to_path_buf(),
            fresh: (!held).then(Default::default),
        })
    }

    /// A throwaway memo in memory (a dry run with no cache file yet must not create one).
    pub fn in_memory() -> Result<Memo, CacheError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| CacheError::Open {
            path: path.clone(),
            source,
        })?;
        conn.execute_batch(SCHEMA)
            .map_err(|source| CacheError::Open {
                path: path.clone(),
                source,
            })?;
        Ok(Memo {
            conn: Mutex::new(conn),
            path,
            fresh: Some(Default::default()),
        })
    }

    /// Where the memo is (`:memory:` for a throwaway one).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn sql(&self, source: rusqlite::Error) -> CacheError {
        CacheError::Sql {
            path: self.path.clone(),
            source,
        }
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Looks up `keys`, all of `stage`, as [`Memo::get_many`] does; a memo that was empty when
    /// opened is not asked for a stage this process has not written (a fresh clone looks up
    /// tens of thousands of keys it cannot hold). Another process writing the same empty memo
    /// at the same time costs this build only work it could have reused.
    pub fn get_of(&self, stage: &str, keys: &[Key]) -> Result<HashMap<Key, Vec<u8>>, CacheError> {
        if let Some(written) = &self.fresh
            && !written
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .contains(stage)
        {
            return Ok(HashMap::new());
        }
        self.get_many(keys)
    }

    /// Notes that `stage` was written (see [`Memo::get_of`]).
    fn wrote(&self, stage: &str) {
        if let Some(written) = &self.fresh {
            let mut w = written.lock().unwrap_or_else(|e| e.into_inner());
            if !w.contains(stage) {
                w.insert(stage.to_string());
            }
        }
    }

    /// Looks up many keys at once; returns the values found. The keys are looked up in key
    /// order, so each page of the memo's B-tree is read once, not once per key; a large lookup
    /// (an edit build asks for every unchanged result) is split over read-only connections, one
    /// per core.
    pub fn get_many(&self, keys: &[Key]) -> Result<HashMap<Key, Vec<u8>>, CacheError> {
        use rayon::prelude::*;
        let mut sorted: Vec<&Key> = keys.iter().collect();
        sorted.sort_unstable();
        sorted.dedup();
        let parts = rayon::current_num_threads().min(sorted.len() / PARALLEL_LOOKUP);
        if parts < 2 || self.path == Path::new(":memory:") {
            return self.lookup(&self.conn(), &sorted);
        }
        let found: Vec<HashMap<Key, Vec<u8>>> = sorted
            .par_chunks(sorted.len().div_ceil(parts))
            .map(|chunk| {
                let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
                    | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
                let conn =
                    Connection::open_with_flags(&self.path, flags).map_err(|e| self.sql(e))?;
                conn.busy_timeout(std::time::Duration::from_secs(30))
                    .map_err(|e| self.sql(e))?;
                self.lookup(&conn, chunk)
            })
            .collect::<Result<_, _>>()?;
        let mut out = HashMap::with_capacity(sorted.len());
        found.into_iter().for_each(|part| out.extend(part));
        Ok(out)
    }

    /// Looks up `keys` (sorted) on `conn`.
    fn lookup(
        &self,
        conn: &Connection,
        keys: &[&Key],
    ) -> Result<HashMap<Key, Vec<u8>>, CacheError> {
        let mut stmt = conn
            .prepare_cached("SELECT value FROM memo WHERE key = ?1")
            .map_err(|e| self.sql(e))?;
        let mut out = HashMap::with_capacity(keys.len());
        for &k in keys {
            let v: Option<Vec<u8>> = stmt
                .query_row(params![&k[..]], |r| r.get(0))
                .optional()
                .map_err(|e| self.sql(e))?;
            if let Some(v) = v {
                out.insert(*k, v);
            }
        }
        Ok(out)
    }

    /// Stores entries in one transaction (committed when this returns).
    pub fn put_many<V: AsRef<[u8]>>(
        &self,
        stage: &str,
        entries: &[(Key, V)],
    ) -> Result<(), CacheError> {
        if entries.is_empty() {
            return Ok(());
        }
        self.wrote(stage);
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.sql(e))?;
        {
            let mut stmt = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO memo (key, stage, value) VALUES (?1, ?2, ?3)",
                )
                .map_err(|e| self.sql(e))?;
            // In key order: the B-tree is then filled page by page (a fresh clone seeds every
            // result of its state file at once), not at random places.
            let mut sorted: Vec<&(Key, V)> = entries.iter().collect();
            sorted.sort_unstable_by_key(|e| e.0);
            for (k, v) in sorted {
                stmt.execute(params![&k[..], stage, v.as_ref()])
                    .map_err(|e| self.sql(e))?;
            }
        }
        tx.commit().map_err(|e| self.sql(e))
    }

    /// Stores a stage's computed results in one transaction, each with why the model's answers
    /// were rejected when it is a stand-in (kept in `rejected`, so that later builds reuse it
    /// without asking, and `--retry-rejected` finds it); a result that is not a stand-in clears
    /// an earlier rejection of its key.
    pub fn put_results<V: AsRef<[u8]>>(
        &self,
        stage: &str,
        entries: &[(Key, V, Option<String>)],
    ) -> Result<(), CacheError> {
        if entries.is_empty() {
            return Ok(());
        }
        self.wrote(stage);
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| self.sql(e))?;
        // A memo with no rejection has none to clear (a fresh clone seeds its whole state).
        let any: bool = tx
            .query_row("SELECT EXISTS (SELECT 1 FROM rejected)", [], |r| r.get(0))
            .map_err(|e| self.sql(e))?;
        {
            let mut put = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO memo (key, stage, value) VALUES (?1, ?2, ?3)",
                )
                .map_err(|e| self.sql(e))?;
            let mut mark = tx
                .prepare_cached(
                    "INSERT OR REPLACE INTO rejected (key, stage, reason) VALUES (?1, ?2, ?3)",
                )
                .map_err(|e| self.sql(e))?;
            let mut clear = tx
                .prepare_cached("DELETE FROM rejected WHERE key = ?1")
                .map_err(|e| self.sql(e))?;
            // In key order: the B-tree is then filled page by page.
            let mut sorted: Vec<&(Key, V, Option<String>)> = entries.iter().collect();
            sorted.sort_unstable_by_key(|e| e.0);
            for (k, v, why) in sorted {
                put.execute(params![&k[..], stage, v.as_ref()])
                    .map_err(|e| self.sql(e))?;
                match why {
                    Some(why) => mark.execute(params![&k[..], stage, why]),
                    None if any => clear.execute(params![&k[..]]),
                    None => Ok(0),
                }
                .map_err(|e| self.sql(e))?;
            }
        }
        tx.commit().map_err(|e| self.sql(e))
    }

    /// The keys whose results are stand-ins for rejected answers, with the reason.
    pub fn rejected(&self) -> Result<HashMap<Key, String>, CacheError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT key, reason FROM rejected")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, String>(1)?))
            })
            .map_err(|e| self.sql(e))?;
        let mut out = HashMap::new();
        for row in rows {
            let (k, why) = row.map_err(|e| self.sql(e))?;
            if let Ok(k) = Key::try_from(k.as_slice()) {
                out.insert(k, why);
            }
        }
        Ok(out)
    }

    /// Reads a named record.
    pub fn record(&self, name: &str) -> Result<Option<Vec<u8>>, CacheError> {
        self.conn()
            .query_row(
                "SELECT value FROM records WHERE name = ?1",
                params![name],
                |r| r.get(0),
            )
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Whether a named record exists (its value is not read).
    pub fn has_record(&self, name: &str) -> Result<bool, CacheError> {
        self.conn()
            .query_row(
                "SELECT 1 FROM records WHERE name = ?1",
                params![name],
                |_| Ok(()),
            )
            .optional()
            .map(|found| found.is_some())
            .map_err(|e| self.sql(e))
    }

    /// Writes a named record.
    pub fn set_record(&self, name: &str, value: &[u8]) -> Result<(), CacheError> {
        self.conn()
            .execute(
                "INSERT OR REPLACE INTO records (name, value) VALUES (?1, ?2)",
                params![name, value],
            )
            .map(|_| ())
            .map_err(|e| self.sql(e))
    }

    /// Names of records starting with `prefix`.
    pub fn record_names(&self, prefix: &str) -> Result<Vec<String>, CacheError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare("SELECT name FROM records WHERE name >= ?1 ORDER BY name")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(params![prefix], |r| r.get::<_, String>(0))
            .map_err(|e| self.sql(e))?;
        let mut out = Vec::new();
        for r in rows {
            let name = r.map_err(|e| self.sql(e))?;
            if !name.starts_with(prefix) {
                break;
            }
            out.push(name);
        }
        Ok(out)
    }

    /// Deletes a named record.
    pub fn delete_record(&self, name: &str) -> Result<(), CacheError> {
        self.conn()
            .execute("DELETE FROM records WHERE name = ?1", params![name])
            .map(|_| ())
            .map_err(|e| self.sql(e))
    }

    /// Entry counts and value sizes per stage.
    pub fn stats(&self) -> Result<std::collections::BTreeMap<String, StageStats>, CacheError> {
        let conn = self.conn();
        let mut stmt = conn
            .prepare(
                "SELECT stage, COUNT(*), COALESCE(SUM(LENGTH(value)), 0) FROM memo GROUP BY stage",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .map_err(|e| self.sql(e))?;
        let mut out = std::collections::BTreeMap::new();
        for r in rows {
            let (stage, n, b) = r.map_err(|e| self.sql(e))?;
            out.insert(
                stage,
                StageStats {
                    entries: n as u64,
                    bytes: b as u64,
                },
            );
        }
        Ok(out)
    }

    /// Deletes every entry whose key is not in `live`; returns how many went.
    pub fn retain(&self, live: &std::collections::HashSet<Key>) -> Result<u64, CacheError> {
        let mut conn = self.conn();
        let keys: Vec<Vec<u8>> = {
            let mut stmt = conn
                .prepare("SELECT key FROM memo")
                .map_err(|e| self.sql(e))?;
            let rows = stmt
                .query_map([], |r| r.get::<_, Vec<u8>>(0))
                .map_err(|e| self.sql(e))?;
            rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))?
        };
        let dead: Vec<Vec<u8>> = keys
            .into_iter()
            .filter(|k| <[u8; 32]>::try_from(k.as_slice()).map_or(true, |k| !live.contains(&k)))
            .collect();
        let tx = conn.transaction().map_err(|e| self.sql(e))?;
        for k in &dead {
            tx.execute("DELETE FROM memo WHERE key = ?1", params![k])
                .map_err(|e| self.sql(e))?;
            tx.execute("DELETE FROM rejected WHERE key = ?1", params![k])
                .map_err(|e| self.sql(e))?;
        }
        tx.commit().map_err(|e| self.sql(e))?;
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE); VACUUM;")
            .map_err(|e| self.sql(e))?;
        Ok(dead.len() as u64)
    }
}

#[cfg(test)]
mod tests;
