//! A reproducible zip writer: deflated entries in the order given, with a fixed timestamp and
//! Unix file modes, so the same files give the same archive bytes (and the same digest).
//!
//! Only what skill archives need: regular files, no zip64 (an archive stays under 4 GiB and
//! 65,535 entries, far above any host's limit), no encryption.

use std::io::Write;

use flate2::Compression;
use flate2::write::DeflateEncoder;

/// Why an archive cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ZipError {
    #[error("{0}: an archive entry may not be empty, absolute, or contain '..' or '\\'")]
    BadName(String),
    #[error("{what} is over what a zip without zip64 holds ({limit})")]
    TooBig { what: String, limit: u64 },
    #[error("cannot compress {name}: {source}")]
    Deflate {
        name: String,
        source: std::io::Error,
    },
}

/// 1980-01-01 00:00:00 in MS-DOS time and date (the earliest a zip can say).
const DOS_TIME: u16 = 0;
const DOS_DATE: u16 = (1 << 5) | 1;
/// Made by Unix (3), zip 2.0; needed to extract: 2.0 (deflate).
const MADE_BY: u16 = (3 << 8) | 20;
const NEEDED: u16 = 20;
const DEFLATE: u16 = 8;
/// Bit 11: names are UTF-8.
const FLAGS: u16 = 1 << 11;
/// A regular file, rw-r--r--, in the high half of the external attributes.
const FILE_MODE: u32 = 0o100644 << 16;

struct Entry {
    name: String,
    crc: u32,
    compressed: u32,
    size: u32,
    offset: u32,
}

/// Builds one archive in memory.
pub struct ZipWriter {
    bytes: Vec<u8>,
    entries: Vec<Entry>,
}

impl Default for ZipWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl ZipWriter {
    pub fn new() -> ZipWriter {
        ZipWriter {
            bytes: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Adds a file at `name` (a relative path with `/` separators).
    pub fn add(&mut self, name: &str, data: &[u8]) -> Result<(), ZipError> {
        if name.is_empty()
            || name.starts_with('/')
            || name.contains('\\')
            || name.split('/').any(|c| c == ".." || c.is_empty())
        {
            return Err(ZipError::BadName(name.to_string()));
        }
        let mut enc = DeflateEncoder::new(Vec::new(), Compression::default());
        let packed = enc
            .write_all(data)
            .and_then(|()| enc.finish())
            .map_err(|source| ZipError::Deflate {
                name: name.to_string(),
                source,
            })?;
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let entry = Entry {
            name: name.to_string(),
            crc: crc.sum(),
            compressed: small(packed.len(), name)?,
            size: small(data.len(), name)?,
            offset: small(self.bytes.len(), "the archive")?,
        };
        let b = &mut self.bytes;
        b.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        for v in [NEEDED, FLAGS, DEFLATE, DOS_TIME, DOS_DATE] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        for v in [entry.crc, entry.compressed, entry.size] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&name_len(name)?.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        b.extend_from_slice(name.as_bytes());
        b.extend_from_slice(&packed);
        self.entries.push(entry);
        Ok(())
    }

    /// Writes the central directory and returns the archive's bytes.
    pub fn finish(mut self) -> Result<Vec<u8>, ZipError> {
        let start = small(self.bytes.len(), "the archive")?;
        let count = u16::try_from(self.entries.len()).map_err(|_| ZipError::TooBig {
            what: format!("{} entries", self.entries.len()),
            limit: u64::from(u16::MAX),
        })?;
        let b = &mut self.bytes;
        for e in &self.entries {
            b.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
            for v in [MADE_BY, NEEDED, FLAGS, DEFLATE, DOS_TIME, DOS_DATE] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            for v in [e.crc, e.compressed, e.size] {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.extend_from_slice(&name_len(&e.name)?.to_le_bytes());
            // Extra field, comment, disk number, internal attributes.
            for _ in 0..4 {
                b.extend_from_slice(&0u16.to_le_bytes());
            }
            b.extend_from_slice(&FILE_MODE.to_le_bytes());
            b.extend_from_slice(&e.offset.to_le_bytes());
            b.extend_from_slice(e.name.as_bytes());
        }
        let size = small(b.len(), "the archive")? - start;
        b.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        b.extend_from_slice(&0u32.to_le_bytes());
        b.extend_from_slice(&count.to_le_bytes());
        b.extend_from_slice(&count.to_le_bytes());
        b.extend_from_slice(&size.to_le_bytes());
        b.extend_from_slice(&start.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes());
        Ok(self.bytes)
    }
}

fn small(n: usize, what: &str) -> Result<u32, ZipError> {
    u32::try_from(n).map_err(|_| ZipError::TooBig {
        what: format!("{what} ({n} bytes)"),
        limit: u64::from(u32::MAX),
    })
}

fn name_len(name: &str) -> Result<u16, ZipError> {
    u16::try_from(name.len()).map_err(|_| ZipError::TooBig {
        what: format!("the name {name}"),
        limit: u64::from(u16::MAX),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_names_that_escape() {
        for bad in ["", "/etc/passwd", "a/../b", "a\\b", "a//b", "../x"] {
            assert!(
                ZipWriter::new().add(bad, b"x").is_err(),
                "{bad:?} was accepted"
            );
        }
    }

    #[test]
    fn same_files_same_bytes() {
        let make = || {
            let mut z = ZipWriter::new();
            z.add("s/SKILL.md", b"---\nname: s\n---\n").unwrap();
            z.add("s/docs/a.md", &b"hello ".repeat(1000)).unwrap();
            z.finish().unwrap()
        };
        let (a, b) = (make(), make());
        assert_eq!(a, b);
        // Ends with the end-of-central-directory record naming two entries.
        let eocd = &a[a.len() - 22..];
        assert_eq!(&eocd[..4], &0x0605_4b50u32.to_le_bytes());
        assert_eq!(u16::from_le_bytes([eocd[10], eocd[11]]), 2);
        // The repeated text compresses.
        assert!(a.len() < 1000, "{} bytes", a.len());
    }
}
