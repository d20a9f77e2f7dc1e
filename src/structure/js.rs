//! JavaScript literals read as data, without running JavaScript: objects, arrays, strings,
//! numbers, booleans; an expression (a name, a call, a template that computes) is skipped as
//! unknown, and what cannot be read at all is an error naming the byte where it stopped.

/// Where the value of the first `key:` outside strings and comments starts.
pub(super) fn find_key(text: &str, key: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find(key) {
        let at = from + i;
        let before = text[..at].chars().next_back();
        let rest = text[at + key.len()..].trim_start();
        let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
        if before.is_none_or(|c| !ident(c)) && rest.starts_with(':') {
            let colon = text.len() - rest.len();
            return Some(colon + 1);
        }
        from = at + key.len();
    }
    None
}

/// The string value of the first `key:` (a literal string; None for any other value).
pub(super) fn string_at(text: &str, key: &str) -> Option<String> {
    let i = find_key(text, key)?;
    let mut p = Parser {
        s: text.as_bytes(),
        i,
    };
    match p.value().ok()? {
        Js::Str(s) => Some(s),
        _ => None,
    }
}

/// A JavaScript literal.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Js {
    Obj(Vec<(String, Js)>),
    Arr(Vec<Js>),
    Str(String),
    /// A number, boolean or null.
    Other,
    /// An expression, not read.
    Unknown,
}

impl Js {
    pub(super) fn str(&self) -> Option<&str> {
        match self {
            Js::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(super) fn arr(&self) -> Option<&[Js]> {
        match self {
            Js::Arr(a) => Some(a),
            _ => None,
        }
    }
}

pub(super) fn get<'a>(o: &'a [(String, Js)], key: &str) -> Option<&'a Js> {
    o.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// A reader of JavaScript literals; an error names the byte where it stopped and why.
pub(super) struct Parser<'a> {
    pub(super) s: &'a [u8],
    pub(super) i: usize,
}

type Failed = (usize, &'static str);

impl Parser<'_> {
    fn skip(&mut self) {
        loop {
            while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
                self.i += 1;
            }
            if self.s[self.i..].starts_with(b"//") {
                while self.i < self.s.len() && self.s[self.i] != b'\n' {
                    self.i += 1;
                }
            } else if self.s[self.i..].starts_with(b"/*") {
                let end = self.s[self.i + 2..].windows(2).position(|w| w == b"*/");
                self.i = end.map_or(self.s.len(), |e| self.i + 2 + e + 2);
            } else {
                return;
            }
        }
    }

    pub(super) fn value(&mut self) -> Result<Js, Failed> {
        self.skip();
        match self.s.get(self.i) {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'\'' | b'"' | b'`') => Ok(self.string()?.map_or(Js::Unknown, Js::Str)),
            Some(c) if c.is_ascii_digit() || *c == b'-' => {
                while self.i < self.s.len()
                    && (self.s[self.i].is_ascii_alphanumeric() || b"-+.".contains(&self.s[self.i]))
                {
                    self.i += 1;
                }
                Ok(Js::Other)
            }
            _ => {
                for word in [&b"true"[..], b"false", b"null", b"undefined"] {
                    if self.s[self.i..].starts_with(word) {
                        self.i += word.len();
                        return Ok(Js::Other);
                    }
                }
                // An expression (a name, a call): not read; its entry goes without it.
                self.skip_expression();
                Ok(Js::Unknown)
            }
        }
    }

    /// Past an expression: up to the `,`, `}` or `]` that ends it (brackets and strings in
    /// it are skipped whole).
    fn skip_expression(&mut self) {
        let mut depth = 0usize;
        while let Some(&c) = self.s.get(self.i) {
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' if depth == 0 => return,
                b')' | b']' | b'}' => depth -= 1,
                b',' if depth == 0 => return,
                b'\'' | b'"' | b'`' => {
                    let q = c;
                    self.i += 1;
                    while let Some(&d) = self.s.get(self.i) {
                        if d == b'\\' {
                            self.i += 1;
                        } else if d == q {
                            break;
                        }
                        self.i += 1;
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    fn object(&mut self) -> Result<Js, Failed> {
        self.i += 1;
        let mut fields = Vec::new();
        loop {
            self.skip();
            match self.s.get(self.i) {
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Js::Obj(fields));
                }
                Some(b'\'' | b'"') => {
                    let k = self.string()?.unwrap_or_default();
                    fields.push((k, self.after_key()?));
                }
                Some(c) if c.is_ascii_alphabetic() || *c == b'_' || *c == b'$' => {
                    let start = self.i;
                    while self.i < self.s.len()
                        && (self.s[self.i].is_ascii_alphanumeric()
                            || b"_$".contains(&self.s[self.i]))
                    {
                        self.i += 1;
                    }
                    let k = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                    fields.push((k, self.after_key()?));
                }
                _ => return Err((self.i, "an object entry that is not `key: literal`")),
            }
            self.skip();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {}
                _ => return Err((self.i, "a missing `,` or `}`")),
            }
        }
    }

    fn after_key(&mut self) -> Result<Js, Failed> {
        self.skip();
        if self.s.get(self.i) != Some(&b':') {
            return Err((self.i, "a shorthand or computed entry"));
        }
        self.i += 1;
        self.value()
    }

    fn array(&mut self) -> Result<Js, Failed> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.skip();
            if self.s.get(self.i) == Some(&b']') {
                self.i += 1;
                return Ok(Js::Arr(items));
            }
            if self.s[self.i..].starts_with(b"...") {
                return Err((self.i, "a spread"));
            }
            items.push(self.value()?);
            self.skip();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {}
                _ => return Err((self.i, "a missing `,` or `]`")),
            }
        }
    }

    /// A string literal; None for a template that computes (`${}`), skipped.
    fn string(&mut self) -> Result<Option<String>, Failed> {
        let quote = self.s[self.i];
        let start = self.i;
        self.i += 1;
        let mut out = Vec::new();
        while let Some(&c) = self.s.get(self.i) {
            self.i += 1;
            match c {
                b'\\' => {
                    if let Some(&n) = self.s.get(self.i) {
                        out.push(n);
                        self.i += 1;
                    }
                }
                b'$' if quote == b'`' && self.s.get(self.i) == Some(&b'{') => {
                    // A template that computes: not read.
                    self.i = start;
                    self.skip_expression();
                    return Ok(None);
                }
                c if c == quote => return Ok(Some(String::from_utf8_lossy(&out).into_owned())),
                c => out.push(c),
            }
        }
        Err((start, "a string that does not end"))
    }
}
