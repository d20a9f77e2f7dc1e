//! `multipart/form-data` request bodies (file uploads: the Skills API, OpenAI's Files API).

use super::Body;

/// One part: its field name, a `(file name, content type)` for file parts, and its bytes.
pub struct Part<'a> {
    pub name: &'a str,
    pub file: Option<(&'a str, &'a str)>,
    pub bytes: &'a [u8],
}

/// The body of `parts`, in order. The boundary is derived from the contents, so no part can
/// contain it by chance.
pub fn multipart<'a>(parts: &[Part]) -> Body<'a> {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(p.name.as_bytes());
        h.update(p.bytes);
    }
    let boundary = format!("c2s-{}", crate::hash::short_hash(&h.finalize()));
    let mut body: Vec<u8> = Vec::new();
    for p in parts {
        let head = match p.file {
            Some((filename, content_type)) => format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"; filename=\"{filename}\"\r\nContent-Type: {content_type}\r\n\r\n",
                p.name
            ),
            None => format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"\r\n\r\n",
                p.name
            ),
        };
        body.extend_from_slice(head.as_bytes());
        body.extend_from_slice(p.bytes);
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    Body::Raw {
        content_type: format!("multipart/form-data; boundary={boundary}"),
        bytes: body,
    }
}
